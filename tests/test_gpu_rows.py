"""On the GPU: every row rung, at every block size in float32 and the smallest and largest
in the other dtypes (row_group at every width), returns
each row's exact sum at the odd shapes of issue 42 (1 x 1, 1 x 2^24+1, 2^20 x 1,
3 x 1000003, 1000 x 33) in float32, int32, float16 and bfloat16, three poisoned runs a
case (torch.sum(x, dim=1) too, where PyTorch is installed); a planted row kernel that writes a row's sum into its neighbour's slot FAILs naming
the row, and one whose last row reads past the input is named as a guard read;
`reducebench run --shape` measures the row rungs end to end; and `tune --shapes` writes
row bands that `row_auto` then runs."""

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
    blocks = [0] if rung.is_library or rung.dispatch else rung_blocks(rung, dtype_name)
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
    library reference and row_auto have no block (0) and always fit."""
    return rung.is_library or rung.dispatch or params.get("width", 1) <= block


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
    ours = frame[frame["rung"] != "torch_rows"]      # torch_rows: skipped without PyTorch
    assert set(ours["status"]) <= {"ok", "suspect"}, ours[["rung", "status", "error"]]
    assert (frame["median_us"] > 0).all() and set(frame["schema_version"]) == {6}


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
