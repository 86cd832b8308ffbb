"""On the GPU: what every command does with --shape. A user's row kernel (`--kernel
FILE.cu:NAME --grid lanes-per-row=L`) returns each row's exact sum at the odd shapes of
issue 42, in each form (a template, a plain float32 function) and lane count (1, 32, a
whole block), and fails, naming the row, where its rows land in the wrong slots or where
it is given fewer lanes a row than it uses; a row function (`--callable`) gets the ROWS x
COLS array and is verified row by row, a wrong one FAILs; random rows pass every row
rung within their rounding bound and a planted kernel fails them; `run --shape --metrics`
reads each row case's counters from its own launches under ncu and `explain --shape`
steps through them; `sanitize --shape` finds a read past the last row.

    pytest -m gpu tests/test_gpu_rows_commands.py"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.case import Case
from reducebench.ladder.custom import KernelSpec, user_rungs
from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS, ROWS, Rung
from reducebench.ladder.user_callables import callable_rungs, parse_callable_option
from reducebench.measuring.runner import run
from reducebench.measuring.settings import RunSettings

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parent.parent
KERNELS = REPO / "tests" / "fixtures" / "kernels"
EXAMPLE = REPO / "examples" / "row_sum.cu"
# issue 42's odd shapes; a thread-per-row kernel skips the one long row (one thread
# adding 2^24 elements one after the other takes seconds)
SHAPES = ((1, 1), (1, 2**24 + 1), (2**20, 1), (3, 1000003), (1000, 33))
SHORT_ROWS = ((1, 1), (2**20, 1), (3, 100003), (1000, 33), (7, 4099))
DTYPE_NAMES = ("float32", "int32", "float16", "bfloat16")


@pytest.fixture(scope="module")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


def check(backend, cases, inputs="exact"):
    """The records of `cases`, each run three times poisoned and verified, as `check`
    does; ordered so that each shape's input is uploaded once per dtype."""
    ordered = sorted(cases, key=lambda c: (c.n, c.rows, c.dtype.name))
    return run(RunSettings(timed=False, seed=20261128, inputs=inputs), backend,
               lambda record: None, cases=ordered)


def failures(records) -> list[str]:
    return [f"{r.rung} {r.dtype} {r.rows}x{r.cols} block={r.block} {r.params}: "
            f"{r.status} {r.error}" for r in records if r.status not in ("ok", "skipped")]


def row_kernel(path: Path, name: str, grid: str) -> Rung:
    (rung,) = user_rungs([KernelSpec(str(path), name, ROWS, grid)])
    return rung


def cases_of(rung: Rung, shapes, dtype_names=DTYPE_NAMES) -> list[Case]:
    """Every block size the rung takes in float32, the smallest and largest in the
    others (the geometry does not depend on the dtype, and each dtype is a compile)."""
    out = []
    for name in dtype_names:
        if name not in rung.dtypes:
            continue
        blocks = rung.blocks if name == "float32" else (rung.blocks[0], rung.blocks[-1])
        out += [Case(rung, DTYPES[name], rows * cols, block, dict(rung.params), rows=rows)
                for rows, cols in shapes for block in blocks]
    return out


def reducebench(*args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reducebench", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200"})


# -- the user's row kernels ----------------------------------------------------------------

def test_the_example_row_kernel_sums_every_row_at_every_block_and_dtype(backend):
    rung = row_kernel(EXAMPLE, "row_sum_warp4", "lanes-per-row=32")
    assert backend.compile_log(rung, DTYPES["float32"]) is None
    records = check(backend, cases_of(rung, SHAPES))
    assert records and not failures(records), "\n".join(failures(records)[:20])


@pytest.mark.parametrize("name, grid, shapes", [
    ("row_sum_thread_f32", "lanes-per-row=1", SHORT_ROWS),   # a plain float32 function
    ("row_sum_block", "lanes-per-row=block", SHAPES),        # a template, a block a row
])
def test_a_row_kernel_in_each_form_and_lane_count_sums_every_row(backend, name, grid, shapes):
    rung = row_kernel(KERNELS / "rows_user.cu", name, grid)
    records = check(backend, cases_of(rung, shapes))
    assert records and not failures(records), "\n".join(failures(records)[:20])


def test_a_kernel_given_fewer_lanes_a_row_than_it_uses_leaves_rows_unwritten(backend):
    """row_sum_warp4 finds its row as blockIdx.x * (BLOCK / 32) + warp: told 1 lane a
    row, the harness launches ceil(1000 / 256) = 4 blocks of 256, which write rows 0 to
    31 only; told 32, it launches 125 and every row is written."""
    shape = [(1000, 33)]
    wrong = check(backend, cases_of(row_kernel(EXAMPLE, "row_sum_warp4", "lanes-per-row=1"),
                                    shape, ["float32"]))
    at_256 = [r for r in wrong if r.block == 256]
    assert at_256 and at_256[0].status == "FAIL", at_256
    assert "row 32 of 1000: expected " in at_256[0].error and "got nan" in at_256[0].error
    right = check(backend, cases_of(row_kernel(EXAMPLE, "row_sum_warp4", "lanes-per-row=32"),
                                    shape, ["float32"]))
    assert not failures(right), failures(right)


def test_check_shape_with_a_planted_row_kernel_fails_naming_the_row():
    """The command line end to end: the planted kernel writes row r's sum into slot r + 1,
    and the exit code and the line of each case say so; row_warp beside it passes."""
    done = reducebench("check", "--shape", "1000x33,3x1000003", "--dtype", "float32,int32",
                       "--rung", "row_warp", "--kernel",
                       "tests/fixtures/kernels/rows_planted.cu:reduce_rows_wrong_slot",
                       "--grid", "lanes-per-row=32")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    planted = [line for line in lines if line.startswith("reduce_rows_wrong_slot")]
    assert len(planted) == 4 and all(": FAIL " in line for line in planted), planted
    assert all(" of 1000: expected " in line for line in planted if "1000x33" in line)
    assert all(" of 3: expected " in line for line in planted if "3x1000003" in line)
    ladder = [line for line in lines if line.startswith("row_warp ")]
    assert len(ladder) == 4 and all(": ok " in line for line in ladder), ladder


# -- the user's row functions --------------------------------------------------------------

FUNCTIONS = '''
import cupy


def accumulator(x):
    return cupy.float32 if x.dtype == cupy.float16 else x.dtype


def strict_row_sum(x):
    # the ROWS x COLS array: 2-D, row-major, a CuPy array on reducebench's stream
    if x.ndim != 2 or not x.flags.c_contiguous:
        raise ValueError(f"got shape {x.shape}")
    return cupy.sum(x, axis=1, dtype=accumulator(x))


def neighbours(x):
    return cupy.roll(cupy.sum(x, axis=1, dtype=accumulator(x)), 1)


def one_value(x):
    return cupy.sum(x, dtype=accumulator(x))
'''


def row_functions(tmp_path: Path, *names: str) -> list[Rung]:
    path = tmp_path / "row_functions.py"
    path.write_text(textwrap.dedent(FUNCTIONS).lstrip())
    return callable_rungs([parse_callable_option(f"{path}:{n}") for n in names], rows=True)


def function_cases(rung: Rung, shapes, dtype_names) -> list[Case]:
    return [Case(rung, DTYPES[d], rows * cols, 0, rows=rows)
            for d in dtype_names for rows, cols in shapes]


def test_a_row_function_gets_the_rows_x_cols_array_and_each_row_is_verified(backend, tmp_path):
    strict, = row_functions(tmp_path, "strict_row_sum")
    example, = callable_rungs([parse_callable_option(f"{REPO}/examples/cupy_sum.py:"
                                                     "cupy_row_sum")], rows=True)
    cases = [c for rung in (strict, example)
             for c in function_cases(rung, SHAPES, ("float32", "int32", "float16"))]
    records = check(backend, cases)
    assert len(records) == len(cases) and not failures(records), failures(records)[:20]
    assert {r.status for r in records} == {"ok"}


def test_a_wrong_row_function_fails_and_a_single_value_is_an_error(backend, tmp_path):
    wrong, single = row_functions(tmp_path, "neighbours", "one_value")
    records = check(backend, function_cases(wrong, [(1000, 33), (3, 1000003)], ["float32"])
                    + function_cases(single, [(1000, 33)], ["float32"]))
    by = {(r.rung, r.rows): r for r in records}
    for rows in (1000, 3):
        assert by[("neighbours", rows)].status == "FAIL"
        assert f" of {rows}: expected " in by[("neighbours", rows)].error
    assert by[("one_value", 1000)].status == "error"
    assert "returned an array of shape ()" in by[("one_value", 1000)].error


def test_the_torch_row_example_sums_every_dtype(backend):
    pytest.importorskip("torch")
    rung, = callable_rungs([parse_callable_option(f"{REPO}/examples/torch_sum.py:"
                                                  "torch_row_sum")], rows=True)
    records = check(backend, function_cases(rung, SHAPES, DTYPE_NAMES))
    assert not failures(records) and {r.status for r in records} == {"ok"}, failures(records)


# -- random rows ----------------------------------------------------------------------------

RANDOM_SHAPES = ((1000, 33), (3, 1000003), (2**16, 64), (1, 2**20 + 1))


@pytest.mark.parametrize("dtype_name", ("float32", "float16", "bfloat16", "int32"))
def test_random_rows_pass_every_row_rung_within_their_bounds(backend, dtype_name):
    ours = [r for r in ROW_RUNGS if not r.is_library]
    cases = [Case(rung, DTYPES[dtype_name], rows * cols, 256, dict(rung.params), rows=rows)
             for rung in ours for rows, cols in RANDOM_SHAPES]
    records = check(backend, cases, inputs="random")
    assert len(records) == len(cases) and not failures(records), failures(records)[:20]
    # a case a rung cannot plan (row_tile: a row wider than its tile) is skipped and says
    # why; it has no result, so no tolerance
    ran = [r for r in records if r.status == "ok"]
    assert ran and all(r.error for r in records if r.status == "skipped")
    if dtype_name != "int32":
        assert all(r.tolerance > 0 for r in ran)


def test_random_rows_fail_a_kernel_that_writes_each_row_in_its_neighbours_slot(backend):
    planted = row_kernel(KERNELS / "rows_planted.cu", "reduce_rows_wrong_slot",
                         "lanes-per-row=32")
    records = check(backend, [Case(planted, DTYPES["float32"], 1000 * 33, 256, rows=1000)],
                    inputs="random")
    (record,) = records
    assert record.status == "FAIL" and "where tolerance" in record.error, record.error


# -- --metrics and explain, sanitize ------------------------------------------------------------

def test_run_shape_metrics_reads_each_row_cases_counters_and_explain_steps_through(tmp_path):
    from reducebench.core.errors import UsageError
    from reducebench.measuring.counters import find_ncu

    try:
        find_ncu()
    except UsageError as exc:
        pytest.skip(str(exc))
    out = tmp_path / "rows.csv"
    done = reducebench("run", "--shape", "2^20x8,1000x33", "--rung", "row_warp,row_block",
                       "--metrics", "--rounds", "1", "--max-time", "0.05", "--out", out)
    assert done.returncode == 0, done.stdout + done.stderr
    frame = pd.read_csv(out)
    assert len(frame) == 4 and set(frame["status"]) <= {"ok", "suspect"}
    assert frame["ncu_error"].isna().all(), frame["ncu_error"].tolist()
    for row in frame.to_dict("records"):
        assert row["ncu_kernels"] == 1, row
        assert str(row["ncu_grids"]) == str(row["grid"]), row   # the row case's own launch
    big = frame[frame["rows"] == 2**20]   # 32 MiB of float32, from DRAM (caches flushed)
    assert big["ncu_dram_read_per_input"].between(0.9, 1.2).all(), big
    shown = reducebench("explain", "--from", out, "--shape", "2^20x8", "--format", "text")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "row_warp -> row_block" in " ".join(shown.stdout.split())


@pytest.mark.skipif(shutil.which("compute-sanitizer") is None,
                    reason="compute-sanitizer is not on the PATH")
def test_sanitize_shape_finds_a_read_past_the_last_row_and_nothing_in_row_warp(tmp_path):
    report = tmp_path / "s.md"
    done = reducebench("sanitize", "--shape", "1000x33", "--dtype", "float32", "--rung",
                       "row_warp", "--tool", "memcheck", "--kernel",
                       "tests/fixtures/kernels/rows_planted.cu:reduce_rows_read_past",
                       "--grid", "lanes-per-row=32", "--out", report)
    text = report.read_text()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "| row_warp | clean |" in text, text
    assert "| reduce_rows_read_past | dirty" in text, text


def test_a_shape_run_of_a_users_kernel_and_function_with_random_rows_end_to_end(tmp_path):
    out = tmp_path / "mine.csv"
    done = reducebench("run", "--shape", "1000x33,2^16x64", "--rung", "row_warp",
                       "--kernel", "examples/row_sum.cu:row_sum_warp4", "--grid",
                       "lanes-per-row=32", "--callable", "examples/cupy_sum.py:cupy_row_sum",
                       "--inputs", "random", "--rounds", "2", "--max-time", "0.05",
                       "--out", out)
    assert done.returncode == 0, done.stdout + done.stderr
    frame = pd.read_csv(out)
    assert list(frame["rung"]) == ["row_warp", "row_sum_warp4", "cupy_row_sum"] * 2
    assert set(frame["status"]) <= {"ok", "suspect"}, frame[["rung", "status", "error"]]
    assert (frame["median_us"] > 0).all() and set(frame["inputs"]) == {"random"}
    assert set(frame["finish"]) == {ROWS}
