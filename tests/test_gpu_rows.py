"""On the GPU: every row rung, at every block size in float32 and the smallest and largest
in the other dtypes (at each of its parameter variants in float32, the first and last in
the others: VARIANTS), returns each row's exact sum at the odd shapes of issue 42 (1 x 1,
1 x 2^24+1, 2^20 x 1, 3 x 1000003, 1000 x 33) in float32, int32, float16 and bfloat16,
three poisoned runs a case (torch.sum(x, dim=1) too, where PyTorch is installed); a
planted row kernel that writes a row's sum into its neighbour's slot FAILs naming the
row, one whose last row reads past the input is named as a guard read, and a vector
kernel that skips a row's tail, a split kernel that stores its part instead of adding it
and a cluster kernel that writes one block's part as the row's each FAIL; row_cluster
runs on compute capability 9.0 and is refused in one line before it; and `reducebench
run --shape` measures the row rungs end to end. The library references (torch.sum(x,
dim=1) where PyTorch is installed, CUB's segmented sum in the types it takes, the Triton row
sum where Triton is installed) are checked the same way; and the same-shape read reads
every word and writes every row's value, moves a row sum's bytes (two shapes of one n:
two reads), is no slower than the fastest row rung at 4096 x 4096, and is what each
shape's `% read` is computed against. `tune --shapes` writes row bands that `row_auto`
then runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.case import Case
from reducebench.ladder.geometry import (SPLIT_ATOMIC, SPLIT_CLUSTER, WHOLE_BLOCK,
                                         lanes_per_row, tile_elements)
from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS, ROWS, Rung
from reducebench.core.stats import StopRule
from reducebench.measuring.backend_protocol import Sampling
from reducebench.measuring.runner import gpu_refusal, run
from reducebench.measuring.settings import RunSettings

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parent.parent
LONG_ROW = (1, 2**24 + 1)
SHAPES = ((1, 1), LONG_ROW, (2**20, 1), (3, 1000003), (1000, 33))
DTYPE_NAMES = ("float32", "int32", "float16", "bfloat16")
WIDTHS = (2, 4, 8, 16)
# The parameter values each rung is checked at (its defaults where it has none here).
# Each variant of a template parameter is one compile a dtype, so not every product:
# row_vec_group a thread, a group and a warp a row, with one, four and two loads (a lane
# with a partial last set, a whole set, both); row_vec_block one and four loads, four
# with evict-first loads; row_split and row_two_pass the default grid and one block per
# SM with one load (fewer blocks a row, longer parts; row_split's with the L2 hint), and
# row_split's grid with two loads and both hints; row_cluster clusters of 2 and 8;
# row_tile tiles of one, four and sixteen loads, four with both hints, sixteen
# evict-first; row_multi a thread, a group and a warp a row, owning 4, 2 and 3 rows (the
# group's with evict-first loads, the last warp's with those and the L2 hint), and a warp
# owning one row (its own path for aligned rows). The other dtypes take the first and the
# last variant: the last streams in every rung that can.
VARIANTS: dict[str, list[dict]] = {
    "row_group": [{"width": w} for w in WIDTHS],
    "row_vec_group": [{"lanes": 1, "loads": 4}, {"lanes": 4, "loads": 1},
                      {"lanes": 32, "loads": 2}],
    "row_vec_block": [{"loads": 1}, {"loads": 4}, {"loads": 4, "evict_first": 1}],
    "row_split": [{"blocks_per_sm": 8, "loads": 4},
                  {"blocks_per_sm": 1, "loads": 1, "l2_prefetch": 1},
                  {"blocks_per_sm": 8, "loads": 2, "l2_prefetch": 1, "evict_first": 1}],
    "row_two_pass": [{"blocks_per_sm": 8, "loads": 4}, {"blocks_per_sm": 1, "loads": 1}],
    "row_cluster": [{"cluster": 2, "loads": 1}, {"cluster": 8, "loads": 4}],
    "row_tile": [{"loads": 1}, {"loads": 4}, {"loads": 4, "l2_prefetch": 1, "evict_first": 1},
                 {"loads": 16, "evict_first": 1}],
    "row_multi": [{"lanes": 1, "group_rows": 4, "loads": 1},
                  {"lanes": 4, "group_rows": 2, "loads": 2, "l2_prefetch": 0,
                   "evict_first": 1},
                  {"lanes": 32, "group_rows": 1, "loads": 2},
                  {"lanes": 32, "group_rows": 3, "loads": 1, "l2_prefetch": 1,
                   "evict_first": 1}],
}
# Rows that start on 16-byte boundaries in every dtype (COLS x size a multiple of 16 for
# float32, int32, and the halves: 4 (4-byte types), 8, 32, 128, 1024, 4104 elements),
# where the vector rungs take their whole-vector path: a row of one vector a lane, a
# group's rows past the last row, a row wider than a round of loads. row_multi's fast path
# (a row exactly one round of its group's loads, a block of whole rows) runs in every
# dtype: 5000 x 4 and 777 x 128 in the 4-byte types (its first and last variants, the
# last with evict-first loads), 1000 x 32 in float32 (its second, evict-first), 4097 x 8
# in the halves (its first, without the hint); each shape's last block holds the last
# rows and takes the other path.
ALIGNED_SHAPES = ((4097, 8), (1000, 32), (3, 1024), (77, 4104), (5000, 4), (777, 128))
KERNELS = REPO / "tests" / "fixtures" / "kernels"
PLANTED = KERNELS / "rows_planted.cu"


@pytest.fixture(scope="session")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


def check(backend, cases):
    """The records of `cases`, each run three times poisoned and verified, as `check`
    does; ordered so that each shape's input is uploaded once per dtype."""
    ordered = sorted(cases, key=lambda c: (c.n, c.rows, c.dtype.name))
    return run(RunSettings(timed=False, seed=20261127), backend, lambda record: None,
               cases=ordered)


def failures(records) -> list[str]:
    return [f"{r.rung} {r.dtype} {r.rows}x{r.cols} block={r.block} {r.params}: "
            f"{r.status} {r.error}" for r in records if r.status != "ok"]


def variants(rung: Rung, dtype_name: str = "float32") -> list[dict]:
    """Every variant in float32; the first and the last in the other dtypes."""
    chosen = [{**rung.params, **v} for v in VARIANTS.get(rung.name, [{}])]
    return chosen if dtype_name == "float32" else list({str(v): v for v in
                                                        (chosen[0], chosen[-1])}.values())


def refused_here(backend, rung: Rung) -> str | None:
    """Why this GPU cannot run the rung (row_cluster before compute capability 9.0)."""
    return gpu_refusal(rung, str(backend.device_info()["compute_capability"]))


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
@pytest.mark.parametrize("rung", ROW_RUNGS, ids=lambda r: r.name)
def test_every_row_is_exact_at_the_odd_shapes(backend, rung, dtype_name):
    if refused_here(backend, rung):
        pytest.skip(refused_here(backend, rung))
    dtype = DTYPES[dtype_name]
    blocks = [0] if rung.is_library or rung.dispatch else rung_blocks(rung, dtype_name)
    cases = [Case(rung, dtype, rows * cols, block, params, rows=rows)
             for rows, cols in SHAPES for block in blocks
             for params in variants(rung, dtype_name)
             if rows_per_block_fits(rung, block, params)
             and fits_the_tile(rung, dtype, block, params, cols)
             and ((rows, cols) != LONG_ROW or reads_the_long_row(rung, block, blocks, params))]
    records = check(backend, cases)
    if rung.is_library and all(r.status == "skipped" for r in records):
        pytest.skip(records[0].error)
    assert len(records) == len(cases)
    assert not failures(records), "\n".join(failures(records)[:20])


# The rungs that read rows with 16-byte loads through rb::row_share (row_vectors.cuh),
# where a row on 16-byte boundaries at both ends is all body, no head and no tail, and
# row_multi, whose fast path needs such rows.
ALIGNED_ROW_RUNGS = [ROW_LADDER[name] for name in ("row_vec_group", "row_vec_block",
                                                     "row_split", "row_two_pass",
                                                     "row_cluster", "row_multi")]


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
@pytest.mark.parametrize("rung", ALIGNED_ROW_RUNGS, ids=lambda r: r.name)
def test_every_row_is_exact_where_rows_start_on_16_byte_boundaries(backend, rung, dtype_name):
    if refused_here(backend, rung):
        pytest.skip(refused_here(backend, rung))
    dtype = DTYPES[dtype_name]
    cases = [Case(rung, dtype, rows * cols, block, params, rows=rows)
             for rows, cols in ALIGNED_SHAPES for block in rung_blocks(rung, dtype_name)
             for params in variants(rung, dtype_name)]
    records = check(backend, cases)
    assert len(records) == len(cases)
    assert not failures(records), "\n".join(failures(records)[:20])


def rung_blocks(rung: Rung, dtype_name: str) -> tuple[int, ...]:
    """Every block size in float32; the other dtypes at the smallest and the largest
    (the geometry does not depend on the dtype, and every block size is a compile)."""
    return rung.blocks if dtype_name == "float32" else (rung.blocks[0], rung.blocks[-1])


def rows_per_block_fits(rung: Rung, block: int, params: dict) -> bool:
    """A group wider than the block is refused by the plan (never at these widths); a
    library reference and row_auto have no block (0) and always fit."""
    return rung.is_library or rung.dispatch or params.get("width", 1) <= block


def fits_the_tile(rung: Rung, dtype, block: int, params: dict, cols: int) -> bool:
    """row_tile takes rows no wider than its tile (block x loads 16-byte vectors, at most
    32 KB); a wider one is skipped by its plan, not run. Every other rung takes any row."""
    return not rung.tiled or cols <= tile_elements(block, params["loads"], dtype.itemsize)


def reads_the_long_row(rung: Rung, block: int, blocks, params: dict) -> bool:
    """Whether a case reads the one row of 2^24 + 1 elements at this block size: always
    where a warp or more shares a row; where fewer lanes do (a thread or a group a row),
    at the smallest block only: one thread or group reads all of it whatever the block
    (seconds a case), so each block size would repeat the same work."""
    if rung.is_library or rung.dispatch or rung.lanes_per_row == WHOLE_BLOCK:
        return True
    return lanes_per_row(rung.lanes_per_row, block, params) >= 32 or block == min(blocks)


def planted(kernel: str) -> Rung:
    return Rung(f"planted_{kernel}", "planted fault", ROWS, str(PLANTED), kernel,
                lanes_per_row=32, origin="user")


# row_vec_block, row_split and row_cluster with one thing wrong each (see the files)
PLANTED_NO_TAIL = Rung("planted_no_tail", "planted fault", ROWS,
                       str(KERNELS / "rows_vector_planted.cu"), "reduce_rows_vec_no_tail",
                       template="{T}, {Acc}, {block}, {loads}", params={"loads": 4},
                       lanes_per_row=WHOLE_BLOCK, origin="user")
PLANTED_SPLIT_STORES = Rung("planted_split_stores", "planted fault", ROWS,
                            str(KERNELS / "rows_vector_planted.cu"),
                            "reduce_rows_split_stores",
                            template="{T}, {Acc}, {block}, {loads}",
                            params={"blocks_per_sm": 8, "loads": 4}, lanes_per_row=WHOLE_BLOCK,
                            row_split=SPLIT_ATOMIC, deterministic=False, origin="user")
PLANTED_CLUSTER_OWN = Rung("planted_cluster_own_total", "planted fault", ROWS,
                           str(KERNELS / "rows_cluster_planted.cu"),
                           "reduce_rows_cluster_own_total",
                           template="{T}, {Acc}, {block}, {cluster}, {loads}",
                           params={"cluster": 4, "loads": 4}, lanes_per_row=WHOLE_BLOCK,
                           row_split=SPLIT_CLUSTER, min_cc=(9, 0),
                           min_cc_for="thread-block clusters", origin="user")


@pytest.mark.parametrize("dtype_name", ("float32", "bfloat16"))
@pytest.mark.parametrize("planted_rung, correct, shapes", [
    (PLANTED_NO_TAIL, "row_vec_block", ((1000, 33), (3, 1000003))),
    (PLANTED_SPLIT_STORES, "row_split", ((3, 1000003), LONG_ROW)),
    # rows of several sets of 256 x 4 vectors, so that block 0's part is not the row
    (PLANTED_CLUSTER_OWN, "row_cluster", ((16, 65539), (3, 1000003))),
], ids=("no_tail", "split_stores", "cluster_own_total"))
def test_a_vector_or_split_kernel_with_one_thing_wrong_fails_where_the_rung_passes(
        backend, planted_rung, correct, shapes, dtype_name):
    """Each planted kernel is its rung with one line different: at each shape the
    planted one FAILs naming a row, and the rung itself passes the same cases."""
    if refused_here(backend, planted_rung):
        pytest.skip(refused_here(backend, planted_rung))
    dtype = DTYPES[dtype_name]
    for rung in (planted_rung, ROW_LADDER[correct]):
        records = check(backend, [Case(rung, dtype, rows * cols, 256, dict(rung.params),
                                       rows=rows) for rows, cols in shapes])
        assert len(records) == len(shapes)
        for record in records:
            if rung is planted_rung:
                assert record.status == "FAIL", (record.rows, record.cols, record.error)
                assert f" of {record.rows}: expected " in record.error, record.error
            else:
                assert record.status == "ok", (record.rows, record.cols, record.error)


def test_row_cluster_runs_from_compute_capability_9_and_is_refused_in_one_line_before(
        backend):
    """On a GPU with clusters, `check --rung row_cluster` verifies every row; on one
    without (compute capability below 9.0), it stops with one line and exit code 2."""
    done = subprocess.run(
        [sys.executable, "-m", "reducebench", "check", "--shape", "16x2^16,3x1000003",
         "--rung", "row_cluster", "--dtype", "float32,int32"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "200"})
    refusal = refused_here(backend, ROW_LADDER["row_cluster"])
    if refusal:
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stdout + done.stderr
        assert done.stderr.strip().splitlines() == [f"reducebench: error: {refusal}"]
    else:
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.count(": ok ") == 4, done.stdout


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
def test_a_row_sum_in_its_neighbours_slot_fails_naming_the_row(backend, dtype_name):
    dtype = DTYPES[dtype_name]
    shapes = ((1000, 33), (3, 1000003), (2**20, 1))
    records = check(backend, [Case(planted("reduce_rows_wrong_slot"), dtype, r * c, 256,
                                   rows=r) for r, c in shapes])
    for record, (rows, _) in zip(sorted(records, key=lambda r: r.n),
                                 sorted(shapes, key=lambda s: s[0] * s[1])):
        assert record.status == "FAIL", (record.rows, record.error)
        # row r's sum in slot r + 1: rows 1.. always differ from it (row r sums to r
        # modulo 3); slot 0 holds the last row's, which differs but for a coincidence
        first = "row 0 of" if f"({rows} of {rows} rows wrong)" in record.error else "row 1 of"
        assert f"{first} {rows}: expected " in record.error, record.error
        assert ", got " in record.error


def test_the_correct_warp_kernel_passes_where_the_planted_one_fails(backend):
    """The planted file's kernels are row_warp with one line changed: row_warp itself
    passes the same cases."""
    cases = [Case(ROW_LADDER["row_warp"], DTYPES["float32"], 1000 * 33, 256, rows=1000)]
    assert not failures(check(backend, cases))


@pytest.mark.parametrize("dtype_name", ("float32", "int32"))
def test_a_read_past_the_last_row_is_named_as_a_guard_read(backend, dtype_name):
    records = check(backend, [Case(planted("reduce_rows_read_past"), DTYPES[dtype_name],
                                   1000 * 33, 256, rows=1000)])
    (record,) = records
    assert record.status == "FAIL"
    assert "row 999 of 1000" in record.error and "guard value" in record.error, record.error


def test_run_shape_measures_the_row_rungs(tmp_path):
    out = tmp_path / "rows.csv"
    done = subprocess.run(
        [sys.executable, "-m", "reducebench", "run", "--shape", "1000x33,2^20x8,8x2^20",
         "--param", "width=4,16", "--rounds", "2", "--max-time", "0.05", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stdout + done.stderr
    frame = pd.read_csv(out)
    assert len(frame) == 3 * (len(ROW_RUNGS) + 1)   # row_group at two widths
    # torch_rows and triton_rows: skipped without PyTorch and Triton; row_cluster before
    # compute capability 9.0
    skippable = {"torch_rows", "triton_rows", "row_cluster"}
    # row_tile's rows must fit its tile (4096 floats at block 256 x 4 loads): 8 x 2^20 not
    too_wide = (frame["rung"] == "row_tile") & (frame["cols"] == 2**20)
    assert list(frame.loc[too_wide, "status"]) == ["skipped"]
    ours = frame[~frame["rung"].isin(skippable) & ~too_wide]
    assert set(ours["status"]) <= {"ok", "suspect"}, ours[["rung", "status", "error"]]
    assert set(frame["status"]) <= {"ok", "suspect", "skipped"}, frame[["rung", "status"]]
    timed = frame[frame["status"].isin(["ok", "suspect"])]
    assert (timed["median_us"] > 0).all() and set(frame["schema_version"]) == {6}
    # every timed row has its shape's read: 2^20 x 8 and 8 x 2^20 are one n, two reads
    ok = frame[frame["status"] == "ok"]
    assert (ok["read_us"] > 0).all()
    assert ((ok["pct_read"] - 100 * ok["read_us"] / ok["median_us"]).abs() < 1e-6).all()
    reads = ok.groupby(["rows", "cols"])["read_us"].unique()
    assert all(len(r) == 1 for r in reads), reads
    assert reads[(2**20, 8)][0] != reads[(8, 2**20)][0], reads


# -- the same-shape read ------------------------------------------------------------------

def test_every_row_read_kernel_reads_every_word_and_writes_every_row_value(backend):
    """Each twin of cuda_src/row_read.cu over a buffer of zeros with one word marked with
    the keep-alive sentinel: the thread that reads it stores the sentinel (the word was
    read), every word of `out` is written (none keeps the fill) and not one word past it.
    Twice: with fewer words to write than the grid has threads, and with more (a thread
    writes several)."""
    import numpy as np

    from reducebench.device.compile import get_functions
    from reducebench.measuring.read_ceiling import (KEEP_ALIVE_SENTINEL, KERNELS,
                                                    ROW_READ_SOURCE)

    cupy, sm_count = backend.cupy, backend.info.sm_count
    one_pass = max(k.block * k.loads * (k.blocks_per_sm or 1) for k in KERNELS) * sm_count
    words = 2 * one_pass + 8192 + 2047
    buffer = cupy.zeros(4 * words, dtype=cupy.int32)
    sink = cupy.zeros(1, dtype=cupy.int32)
    fill, tail = np.int32(0x55555555), 64
    functions = get_functions(ROW_READ_SOURCE, [k.row_expression for k in KERNELS])
    wrong = []
    for word in (0, words - 1):
        buffer[4 * word + word % 4] = KEEP_ALIVE_SENTINEL
        for kernel in KERNELS:
            grid = kernel.grid(words, sm_count)
            for out_words in (1000, 3 * grid * kernel.block + 5):
                out = cupy.full(out_words + tail, fill, dtype=cupy.int32)
                sink[0] = 0
                functions[kernel.row_expression]((grid,), (kernel.block,),
                                                 (buffer, np.int64(words), sink, out,
                                                  np.int64(out_words)))
                written = out[:out_words].get()
                if int(sink[0]) != KEEP_ALIVE_SENTINEL:
                    wrong.append(f"{kernel.name}: word {word} of {words} not read")
                if (written == fill).any():
                    wrong.append(f"{kernel.name}: {(written == fill).sum()} of {out_words} "
                                 "words not written")
                if not (out[out_words:].get() == fill).all():
                    wrong.append(f"{kernel.name}: wrote past {out_words} words")
        buffer[4 * word + word % 4] = 0
    assert not wrong, "\n".join(wrong)


READ_STOP = StopRule(min_samples=10, max_noise=0.01, max_time=0.2)


def test_the_same_shape_read_moves_a_row_sums_bytes(backend):
    """One n, two shapes: 1 x 2^24 writes one float, so it reads as the 1-D read does;
    2^24 x 1 writes 64 MiB beside its 64 MiB read (more than the L2 holds), so it takes
    markedly longer. A read that wrote nothing, or the 1-D read, would be the same for
    both."""
    cupy = backend.cupy
    buffer = cupy.arange(2**24, dtype=cupy.int32) | 1
    sampling = Sampling(READ_STOP)
    flat = backend.read_reference_us(buffer, 2**24, 4, sampling)
    wide = backend.row_read_reference_us(buffer, 1, 2**24, 4, 4, sampling)
    tall = backend.row_read_reference_us(buffer, 2**24, 1, 4, 4, sampling)
    assert abs(wide / flat - 1) < 0.05, (wide, flat)
    assert tall > 1.25 * flat, (tall, flat)
    # bytes moved over time stay under the theoretical peak
    assert 2 * 2**26 / (tall * 1e3) <= backend.info.peak_gbps, tall


def test_each_shapes_percent_read_is_against_its_own_read(backend):
    """A timed run of 2^24 x 1 and 4096 x 4096 (one n): each record's read_us is its
    shape's same-shape read (the 2^24 rows write 64 MiB, more than the L2 holds, the 4096
    16 KiB), and pct_read is 100 x read_us / median_us."""
    cupy = backend.cupy
    shapes = ((2**24, 1, "row_thread"), (4096, 4096, "row_warp"))
    cases = [Case(ROW_LADDER[name], DTYPES["float32"], rows * cols, 256, rows=rows)
             for rows, cols, name in shapes]
    settings = RunSettings(seed=7, rounds=2, stop=StopRule(max_time=0.1))
    records = run(settings, backend, lambda record: None, cases=cases)
    assert [r.status for r in records] == ["ok", "ok"], [(r.status, r.error) for r in records]
    tall, square = records
    assert tall.rows == 2**24 and square.rows == 4096
    for r in records:
        assert r.read_us > 0 and abs(r.pct_read - 100 * r.read_us / r.median_us) < 1e-9
    assert tall.read_us > 1.25 * square.read_us, (tall.read_us, square.read_us)
    buffer = cupy.arange(2**24, dtype=cupy.int32) | 1
    for r, (rows, cols, _) in zip(records, shapes):
        direct = backend.row_read_reference_us(buffer, rows, cols, 4, 4, Sampling(READ_STOP))
        assert abs(r.read_us / direct - 1) < 0.1, (rows, cols, r.read_us, direct)


def test_the_same_shape_read_is_no_slower_than_the_fastest_row_rung(backend):
    """At 4096 x 4096 float32: the read of the shape, which moves only a row sum's bytes,
    takes no more than 3% longer than the fastest verified row rung (kernels and library
    references); a read much slower would make every `% read` flatter than it is."""
    dtype = DTYPES["float32"]
    cases = [Case(ROW_LADDER[name], dtype, 4096 * 4096, block, rows=4096)
             for name, blocks in (("row_warp", (256, 1024)), ("row_block", (256, 512, 1024)))
             for block in blocks]
    cases += [Case(rung, dtype, 4096 * 4096, 0, rows=4096) for rung in ROW_RUNGS
              if rung.is_library]
    settings = RunSettings(seed=11, rounds=2, stop=StopRule(max_time=0.2))
    records = [r for r in run(settings, backend, lambda record: None, cases=cases)
               if r.status == "ok"]
    assert {r.rung for r in records} >= {"row_warp", "row_block", "cub_rows"}, records
    fastest = min(records, key=lambda r: r.median_us)
    (read,) = {r.read_us for r in records}  # one read for the shape
    assert read <= 1.03 * fastest.median_us, (read, fastest.rung, fastest.block,
                                              fastest.median_us)
    assert all(r.pct_read < 103 for r in records), [(r.rung, r.block, r.pct_read)
                                                    for r in records]


def test_tune_shapes_writes_row_bands_that_row_auto_runs(tmp_path):
    """`tune --shapes --quick` at two small shapes writes two row bands into a tuning
    file of its own (XDG_CONFIG_HOME a scratch folder), and `run --rung row_auto` at
    those shapes runs what they name, verified."""
    env = {**os.environ, "COLUMNS": "200", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run(
        [sys.executable, "-m", "reducebench", "tune", "--shapes", "2^12x4,2^8x64", "--quick"],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (table_path,) = (tmp_path / "config" / "reducebench" / "tuning").glob("*.toml")
    from reducebench.ladder.auto import load_table

    table = load_table(table_path)
    assert len(table.row_bands) == 2 and not table.bands
    out = tmp_path / "auto.csv"
    done = subprocess.run(
        [sys.executable, "-m", "reducebench", "run", "--shape", "2^12x4,2^8x64", "--rung",
         "row_auto", "--rounds", "1", "--max-time", "0.05", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    frame = pd.read_csv(out)
    assert set(frame["status"]) <= {"ok", "suspect"}
    ran = [v.split(" (")[0] for v in frame["variant"]]
    assert ran == [band.variant.describe() for band in table.row_bands]
    assert all("(tuned for " in v for v in frame["variant"])
