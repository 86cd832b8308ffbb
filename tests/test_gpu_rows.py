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
run --shape` measures the row rungs end to end."""

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
                                         lanes_per_row)
from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS, ROWS, Rung
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
# with a partial last set, a whole set, both); row_vec_block one and four loads;
# row_split and row_two_pass the default grid and one block per SM with one load (fewer
# blocks a row, longer parts); row_cluster clusters of 2 and 8.
VARIANTS: dict[str, list[dict]] = {
    "row_group": [{"width": w} for w in WIDTHS],
    "row_vec_group": [{"lanes": 1, "loads": 4}, {"lanes": 4, "loads": 1},
                      {"lanes": 32, "loads": 2}],
    "row_vec_block": [{"loads": 1}, {"loads": 4}],
    "row_split": [{"blocks_per_sm": 8, "loads": 4}, {"blocks_per_sm": 1, "loads": 1}],
    "row_two_pass": [{"blocks_per_sm": 8, "loads": 4}, {"blocks_per_sm": 1, "loads": 1}],
    "row_cluster": [{"cluster": 2, "loads": 1}, {"cluster": 8, "loads": 4}],
}
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
    blocks = [0] if rung.is_library else rung_blocks(rung, dtype_name)
    cases = [Case(rung, dtype, rows * cols, block, params, rows=rows)
             for rows, cols in SHAPES for block in blocks
             for params in variants(rung, dtype_name)
             if rows_per_block_fits(rung, block, params)
             and ((rows, cols) != LONG_ROW or reads_the_long_row(rung, block, blocks, params))]
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


def reads_the_long_row(rung: Rung, block: int, blocks, params: dict) -> bool:
    """Whether a case reads the one row of 2^24 + 1 elements at this block size: always
    where a warp or more shares a row; where fewer lanes do (a thread or a group a row),
    at the smallest block only: one thread or group reads all of it whatever the block
    (seconds a case), so each block size would repeat the same work."""
    if rung.is_library or rung.lanes_per_row == WHOLE_BLOCK:
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
    # torch_rows: skipped without PyTorch; row_cluster before compute capability 9.0
    skippable = {"torch_rows", "row_cluster"}
    ours = frame[~frame["rung"].isin(skippable)]
    assert set(ours["status"]) <= {"ok", "suspect"}, ours[["rung", "status", "error"]]
    assert set(frame["status"]) <= {"ok", "suspect", "skipped"}, frame[["rung", "status"]]
    timed = frame[frame["status"] != "skipped"]
    assert (timed["median_us"] > 0).all() and set(frame["schema_version"]) == {6}
