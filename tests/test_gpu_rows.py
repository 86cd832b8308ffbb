"""On the GPU: every row rung, at every block size in float32 and the smallest and largest
in the other dtypes (row_group at every width), returns
each row's exact sum at the odd shapes of issue 42 (1 x 1, 1 x 2^24+1, 2^20 x 1,
3 x 1000003, 1000 x 33) in float32, int32, float16 and bfloat16, three poisoned runs a
case (the library references too: torch.sum(x, dim=1) where PyTorch is installed, CUB's
segmented sum in the types it takes, the Triton row sum where Triton is installed); a
planted row kernel that writes a row's sum into its neighbour's slot FAILs naming
the row, and one whose last row reads past the input is named as a guard read;
`reducebench run --shape` measures the row rungs end to end; and the same-shape read
reads every word and writes every row's value, moves a row sum's bytes (two shapes of
one n: two reads), is no slower than the fastest row rung at 4096 x 4096, and is what
each shape's `% read` is computed against."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.case import Case
from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS, ROWS, Rung
from reducebench.core.stats import StopRule
from reducebench.measuring.backend_protocol import Sampling
from reducebench.measuring.runner import run
from reducebench.measuring.settings import RunSettings

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parent.parent
SHAPES = ((1, 1), (1, 2**24 + 1), (2**20, 1), (3, 1000003), (1000, 33))
DTYPE_NAMES = ("float32", "int32", "float16", "bfloat16")
WIDTHS = (2, 4, 8, 16)
PLANTED = REPO / "tests" / "fixtures" / "kernels" / "rows_planted.cu"


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


def variants(rung: Rung) -> list[dict]:
    return [{"width": w} for w in WIDTHS] if "width" in rung.params else [dict(rung.params)]


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
@pytest.mark.parametrize("rung", ROW_RUNGS, ids=lambda r: r.name)
def test_every_row_is_exact_at_the_odd_shapes(backend, rung, dtype_name):
    dtype = DTYPES[dtype_name]
    blocks = [0] if rung.is_library else rung_blocks(rung, dtype_name)
    cases = [Case(rung, dtype, rows * cols, block, params, rows=rows)
             for rows, cols in SHAPES for block in blocks for params in variants(rung)
             if rows_per_block_fits(rung, block, params)]
    records = check(backend, cases)
    if rung.is_library and all(r.status == "skipped" for r in records):
        pytest.skip(records[0].error)
    assert len(records) == len(cases)
    assert not failures(records), "\n".join(failures(records)[:20])


def rung_blocks(rung: Rung, dtype_name: str) -> tuple[int, ...]:
    """Every block size in float32; the other dtypes at the smallest and the largest
    (the geometry does not depend on the dtype, and every block size is a compile)."""
    return rung.blocks if dtype_name == "float32" else (rung.blocks[0], rung.blocks[-1])


def rows_per_block_fits(rung: Rung, block: int, params: dict) -> bool:
    """A group wider than the block is refused by the plan (never at these widths); a
    library reference has no block (0) and always fits."""
    return rung.is_library or params.get("width", 1) <= block


def planted(kernel: str) -> Rung:
    return Rung(f"planted_{kernel}", "planted fault", ROWS, str(PLANTED), kernel,
                lanes_per_row=32, origin="user")


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
    # torch_rows and triton_rows: skipped without PyTorch and Triton
    ours = frame[~frame["rung"].isin(["torch_rows", "triton_rows"])]
    assert set(ours["status"]) <= {"ok", "suspect"}, ours[["rung", "status", "error"]]
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
