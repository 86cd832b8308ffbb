"""The user's own row reductions and random rows on the CPU (the host executor of every
plan): `--kernel FILE.cu:NAME --grid lanes-per-row=L` with `--shape` (the contract read
from the source, the row geometry worked out by hand, each case verified row by row),
`--callable` with `--shape` (the function gets the ROWS x COLS array and returns one
value a row, judged row by row), and `--inputs random` with `--shape` (each row within
its rounding bound); and what cannot work refused in one line before any GPU."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.ladder.case import Case
from reducebench.ladder.custom import (KernelSpec, check_contract, parse_kernel_option,
                                       user_rungs)
from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS, ROWS
from reducebench.ladder.user_callables import parse_callable_option
from reducebench.measuring import hostexec
from reducebench.measuring.runner import run
from reducebench.measuring.settings import settings_from
from reducebench.results.files import read_results

from cli_runner import invoke, one_error_line
from fakes import FakeBackend

REPO = Path(__file__).resolve().parent.parent
ROWS_USER = REPO / "tests" / "fixtures" / "kernels" / "rows_user.cu"
EXAMPLE = "examples/row_sum.cu:row_sum_warp4"


# -- a row kernel: the option, the contract, the rung -------------------------------------

def test_a_lanes_per_row_grid_makes_a_row_kernel():
    spec = parse_kernel_option("k.cu:f", grid="lanes-per-row=32")
    assert (spec.finish, spec.grid, spec.sums_rows) == (ROWS, "lanes-per-row=32", True)
    assert parse_kernel_option("k.cu:f", grid="lanes-per-row=block").finish == ROWS
    assert parse_kernel_option("k.cu:f", finish="rows",
                               grid="lanes-per-row=1").grid == "lanes-per-row=1"
    assert not parse_kernel_option("k.cu:f").sums_rows


@pytest.mark.parametrize("finish, grid, fragment", [
    (None, "lanes-per-row=3", "lanes-per-row is a power of two from 1 to 1024, or block"),
    (None, "lanes-per-row=0", "lanes-per-row is a power of two from 1 to 1024"),
    (None, "lanes-per-row=2048", "lanes-per-row is a power of two from 1 to 1024"),
    (None, "lanes-per-row=x", "lanes-per-row is a power of two"),
    ("atomic", "lanes-per-row=32", "is a row kernel's, which writes each row's sum to "
                                   "out[row]; finish 'atomic' sums to one value"),
    ("rows", None, "a row kernel says how many lanes share a row: --grid lanes-per-row=L"),
    ("rows", "per-sm=8", "not 'per-sm=8'"),
])
def test_a_row_kernels_grid_and_finish_are_checked(finish, grid, fragment):
    with pytest.raises(UsageError, match=re.escape(fragment)):
        parse_kernel_option("k.cu:f", finish=finish, grid=grid)


ROW_SPEC = KernelSpec("k.cu", "k", finish=ROWS, grid="lanes-per-row=32")


@pytest.mark.parametrize("text, fragment", [
    ("__global__ void k(const float* in, float* out, long long n) {}",
     "takes 3 parameter(s); with --grid lanes-per-row=32 the harness calls (const T* in, "
     "Acc* out, long long rows, long long cols)"),
    ("__global__ void k(const float* in, float* out, int rows, long long cols) {}",
     "rows is 'int rows'; it must be a 64-bit integer"),
    ("__global__ void k(const float* in, float* out, long long rows, unsigned cols) {}",
     "cols is 'unsigned cols'; it must be a 64-bit integer"),
    ("__global__ void k(const __half* in, __half* out, long long rows, long long cols) {}",
     "must be float*"),
])
def test_row_contract_breaches_are_named(text, fragment):
    with pytest.raises(UsageError, match=re.escape(fragment)):
        check_contract(ROW_SPEC, text)


def test_a_row_kernel_is_a_row_rung_whose_blocks_hold_whole_rows():
    (plain,) = user_rungs([KernelSpec(str(ROWS_USER), "row_sum_thread_f32", ROWS,
                                      "lanes-per-row=1")])
    assert (plain.finish, plain.lanes_per_row, plain.dtypes) == (ROWS, 1, ("float32",))
    assert plain.template is None and plain.origin == "user"
    (wide,) = user_rungs([KernelSpec(str(REPO / "examples/row_sum.cu"), "row_sum_warp4",
                                     ROWS, "lanes-per-row=64")])
    assert wide.blocks == (64, 128, 256, 512, 1024) and wide.template is not None
    (block,) = user_rungs([KernelSpec(str(ROWS_USER), "row_sum_block", ROWS,
                                      "lanes-per-row=block")])
    assert block.blocks == (32, 64, 128, 256, 512, 1024)


# lanes -> (rows per block, grid for 1000 rows, chain for 33 columns) at block 256, by
# hand: 1 lane a row: 256 rows a block, 4 blocks, 33 each; 32: 8 rows, 125 blocks,
# ceil(33 / 32) = 2; the whole block: 1 row, 1000 blocks, 1.
@pytest.mark.parametrize("grid, per_block, blocks, chain", [
    ("lanes-per-row=1", 256, 4, 33), ("lanes-per-row=32", 8, 125, 2),
    ("lanes-per-row=block", 1, 1000, 1)])
def test_a_row_kernels_launch_as_worked_out_by_hand(grid, per_block, blocks, chain):
    (rung,) = user_rungs([KernelSpec(str(ROWS_USER), "row_sum_block", ROWS, grid)])
    plan = rung.plan(1000 * 33, DTYPES["float32"], 256, 132, rows=1000)
    (launch,) = plan.launches
    assert (launch.rows_per_block, launch.grid, plan.chain) == (per_block, blocks, chain)
    assert launch.args == ("src", "dst", "rows", "cols") and plan.row_outputs == 1000


@pytest.mark.parametrize("name, grid", [("row_sum_block", "lanes-per-row=block"),
                                        ("row_sum_thread_f32", "lanes-per-row=1")])
def test_nvrtc_compiles_the_row_kernels_for_every_dtype_they_take(name, grid):
    from reducebench.ladder import nvrtc
    from reducebench.ladder.sources import rung_expressions, rung_source

    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")
    (rung,) = user_rungs([KernelSpec(str(ROWS_USER), name, ROWS, grid)])
    for dtype in rung.dtypes:
        done = nvrtc.compile_source(rung_source(rung),
                                    rung_expressions(rung, DTYPES[dtype]),
                                    file_name=rung.source)
        assert done.ok, done.log


# -- run --shape --kernel ------------------------------------------------------------------

def test_run_shape_measures_a_users_row_kernel_row_by_row(tmp_path, fake_device):
    out = tmp_path / "mine.csv"
    result = invoke("run", "--shape", "1000x33,3x5", "--dtype", "float32,int32", "--rung",
                    "row_warp", "--kernel", EXAMPLE, "--grid", "lanes-per-row=32",
                    "--out", out, "--seed", 4)
    assert result.exit_code == 0, result.output
    frame = read_results(out)
    mine = frame[frame["rung"] == "row_sum_warp4"]
    assert len(mine) == 4 and set(mine["status"]) == {"ok"}
    assert set(zip(mine["rows"], mine["cols"])) == {(1000, 33), (3, 5)}
    assert set(mine["grid"]) == {125, 1} and set(mine["finish"]) == {ROWS}
    assert set(mine["source"]) == {"examples/row_sum.cu"}
    # the ladder's rung first, then the user's (tables read: the ladder, yours, libraries)
    assert list(frame["rung"])[:2] == ["row_warp", "row_sum_warp4"]
    options = json.loads(frame["options"].iloc[0])
    assert options["kernel"] == [{"path": "examples/row_sum.cu", "name": "row_sum_warp4",
                                  "finish": ROWS, "grid": "lanes-per-row=32"}]


def test_a_row_kernel_run_resumes_from_what_its_file_recorded(tmp_path, fake_device):
    out = tmp_path / "mine.csv"
    assert invoke("run", "--shape", "1000x33,33x1000", "--rung", "none", "--kernel",
                  EXAMPLE, "--grid", "lanes-per-row=32", "--out", out).exit_code == 0
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-1]))
    result = invoke("run", "--resume", out)
    assert result.exit_code == 0, result.output
    frame = read_results(out)
    assert sorted(frame["rows"]) == [33, 1000] and set(frame["status"]) == {"ok"}


def test_a_row_kernel_whose_rows_land_in_the_wrong_slots_fails(fake_device, monkeypatch):
    def shifted(src, rows, cols):
        return np.roll(src.astype(np.int64).reshape(rows, cols).sum(axis=1), 1)

    monkeypatch.setattr(hostexec, "row_sums", shifted)
    result = invoke("check", "--shape", "1000x33", "--dtype", "int32", "--rung", "none",
                    "--kernel", f"{ROWS_USER}:row_sum_block", "--grid", "lanes-per-row=block")
    assert result.exit_code == 1, result.output
    assert "row_sum_block int32 shape=1000x33 block=256: FAIL" in result.output
    assert "row 0 of 1000: expected" in result.output


@pytest.mark.parametrize("args, says", [
    (("--shape", "4x4", "--kernel", EXAMPLE),
     "--shape sums each row: kernel row_sum_warp4 (examples/row_sum.cu) sums one array to "
     "one value (finish atomic); a row kernel takes (in, out, rows, cols) and says how many "
     "lanes share a row: --grid lanes-per-row=L"),
    (("--size", "2^10", "--kernel", EXAMPLE, "--grid", "lanes-per-row=32"),
     "kernel row_sum_warp4 (examples/row_sum.cu) is a row kernel (grid lanes-per-row=32): "
     "give --shape ROWSxCOLS to run it"),
    (("--shape", "4x4", "--kernel", EXAMPLE, "--grid", "lanes-per-row=64", "--block", "32"),
     "--block 32: row_sum_warp4 takes blocks 64-1024 (lanes-per-row=64: a block holds "
     "whole rows)"),
    (("--shape", "4x4", "--kernel", EXAMPLE, "--grid", "lanes-per-row=6"),
     "lanes-per-row is a power of two"),
    (("--shape", "4x4", "--kernel", f"{ROWS_USER}:row_sum_thread_f32", "--grid",
      "lanes-per-row=1", "--dtype", "int32", "--rung", "none"),
     "--dtype int32: no chosen rung takes it (row_sum_thread_f32 takes float32); rungs "
     "that do: " + ", ".join(r.name for r in ROW_RUNGS)),
    (("--shape", "4x4", "--rung", "none"), "nothing to run"),
])
def test_what_a_row_kernel_cannot_do_is_one_line_before_any_gpu(args, says, fake_device):
    one_error_line(invoke("run", *args), says)
    assert not fake_device.opened


def test_a_row_kernel_may_not_take_a_row_rungs_name(tmp_path):
    with pytest.raises(UsageError, match="label 'row_warp' is a built-in rung's name"):
        user_rungs([KernelSpec(str(ROWS_USER), "row_sum_block", ROWS, "lanes-per-row=block",
                               label="row_warp")])


def test_a_config_table_may_give_a_row_kernel(tmp_path):
    from reducebench.measuring.settings import load_config, merge

    config = tmp_path / "rows.toml"
    config.write_text(f'shape = "1000x33"\nrung = "none"\n\n[[kernel]]\npath = '
                      f'"{ROWS_USER}"\nname = "row_sum_block"\ngrid = "lanes-per-row=block"\n')
    settings = settings_from(merge(load_config(config), {}, {}))
    (rung,) = settings.rungs
    assert (rung.finish, rung.lanes_per_row, rung.name) == (ROWS, "block", "row_sum_block")


def test_measure_takes_a_row_kernel_with_its_grid(monkeypatch):
    import reducebench
    import reducebench.device
    from fakes import FakeCliBackend

    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: FakeCliBackend())
    result = reducebench.measure(f"{REPO}/{EXAMPLE}", shape="1000x33", dtype="bfloat16",
                                 grid="lanes-per-row=32")
    assert result.verified and (result.record.rows, result.record.grid) == (1000, 125)


# -- run --shape --callable ----------------------------------------------------------------

ROW_FUNCTIONS = '''
import numpy as np

SEEN = []


def accumulator(x):
    return np.float32 if x.dtype == np.float16 else x.dtype


def row_sum(x):
    SEEN.append(x.shape)
    return x.sum(axis=1, dtype=accumulator(x))


def neighbours(x):
    return np.roll(x.sum(axis=1, dtype=accumulator(x)), 1)


def one_value(x):
    return x.sum(dtype=accumulator(x))


def in_double(x):
    return x.sum(axis=1, dtype=np.float64)
'''


def write_functions(folder: Path) -> Path:
    path = folder / "row_functions.py"
    path.write_text(textwrap.dedent(ROW_FUNCTIONS).lstrip())
    return path


def run_rows(values: dict, backend=None) -> list:
    settings = settings_from({"shape": "1000x33", "seed": 7, "rung": "none", **values})
    return run(settings, backend or FakeBackend(), lambda record: None)


def test_a_row_function_gets_the_rows_x_cols_array_and_is_judged_row_by_row(tmp_path):
    path = write_functions(tmp_path)
    specs = [parse_callable_option(f"{path}:{name}")
             for name in ("row_sum", "neighbours", "one_value", "in_double")]
    records = run_rows({"callables": specs, "dtype": "float32,int32,float16"})
    verdicts = {(r.rung, r.dtype): (r.status, r.error) for r in records}
    for dtype in ("float32", "int32", "float16"):
        assert verdicts[("row_sum", dtype)] == ("ok", ""), dtype
        assert verdicts[("neighbours", dtype)][0] == "FAIL"
        assert "row 0 of 1000: expected" in verdicts[("neighbours", dtype)][1]
    assert verdicts[("one_value", "float32")] == (
        "error", "one_value returned an array of shape (); expected a 1-D array of 1000 "
                 "float32 values, one per row (e.g. x.sum(axis=1))")
    assert verdicts[("in_double", "float32")] == (
        "error", "in_double returned float64; expected float32, the accumulator of this "
                 "input (e.g. sum(x, axis=1, dtype=float32))")
    import sys

    seen = next(m for m in sys.modules.values()
                if getattr(m, "__file__", None) == str(path.resolve())).SEEN
    assert set(seen) == {(1000, 33)}
    record = next(r for r in records if r.rung == "row_sum")
    assert (record.rows, record.cols, record.finish, record.block) == (1000, 33, ROWS, 0)


def test_run_shape_measures_a_row_function_and_resumes_it(tmp_path, fake_device):
    path = write_functions(tmp_path)
    out = tmp_path / "mine.csv"
    assert invoke("run", "--shape", "1000x33,7x5", "--rung", "torch_rows", "--callable",
                  f"{path}:row_sum", "--out", out).exit_code == 0
    frame = read_results(out)
    assert list(frame["rung"]) == ["row_sum", "torch_rows", "row_sum", "torch_rows"]
    assert set(frame["status"]) == {"ok"} and set(frame["finish"]) == {ROWS}
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-2]))
    result = invoke("run", "--resume", out)
    assert result.exit_code == 0, result.output
    assert sorted(zip(read_results(out)["rung"], read_results(out)["rows"])) == [
        ("row_sum", 7), ("row_sum", 1000), ("torch_rows", 7), ("torch_rows", 1000)]


def test_measure_takes_a_row_function_object(monkeypatch):
    import reducebench
    import reducebench.device
    from fakes import FakeCliBackend

    def summed(x):
        return x.sum(axis=1, dtype=x.dtype)

    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: FakeCliBackend())
    result = reducebench.measure(summed, shape="2^10x3", dtype="int32")
    assert result.verified and result.record.rows == 1024


def test_a_row_function_may_not_take_a_row_rungs_name(tmp_path):
    path = write_functions(tmp_path)
    with pytest.raises(UsageError, match="label 'torch_rows' is a built-in rung's name"):
        settings_from({"shape": "4x4", "callables": [
            parse_callable_option(f"{path}:row_sum", label="torch_rows")]})


# -- --inputs random with --shape ------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "int32", "bfloat16", "float64"])
def test_random_rows_keep_each_rows_sum_and_magnitudes(dtype):
    from reducebench.verify.inputs import bfloat16_bits_to_float32
    from reducebench.verify.row_inputs import row_inputs

    (host,) = row_inputs(300, 7, DTYPES[dtype], 5, "random")
    data = bfloat16_bits_to_float32(host.data) if dtype == "bfloat16" else host.data
    values = data.astype(np.float64).reshape(300, 7)
    assert np.array_equal(host.row_references, values.sum(axis=1))
    assert np.array_equal(host.row_abs_sums, np.abs(values).sum(axis=1))
    assert host.kind == "random" and host.exact == (dtype == "int32")
    assert (values != 0).all() and len(np.unique(values)) > 7


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16", "bfloat16", "float64"])
def test_every_row_rung_passes_random_rows_within_each_rows_bound(dtype):
    records = run_rows({"rung": "all", "dtype": dtype, "inputs": "random"})
    # CUB sums in the input type, so cub_rows takes no half types (skipped, saying so)
    half = dtype in ("float16", "bfloat16")
    assert [(r.rung, r.status, r.error) for r in records] == \
        [(rung.name, "skipped", f"cub_rows does not take {dtype}")
         if half and rung.name == "cub_rows" else (rung.name, "ok", "")
         for rung in ROW_RUNGS]
    if dtype != "int32":
        assert all(r.tolerance > 0 for r in records if r.status == "ok")


def test_a_random_row_in_its_neighbours_slot_fails_naming_the_row(monkeypatch):
    def shifted(src, rows, cols):
        return np.roll(src.astype(np.float64).reshape(rows, cols).sum(axis=1), 1)

    monkeypatch.setattr(hostexec, "row_sums", shifted)
    (record,) = run_rows({"rung": "row_warp", "inputs": "random"})
    assert record.status == "FAIL"
    assert re.search(r"row 0 of 1000: expected \S+, got \S+ \(error \S+ where tolerance "
                     r"\S+\) \(\d+ of 1000 rows wrong\)", record.error), record.error


@pytest.mark.parametrize("error, status", [(5e-7, "ok"), (1e-4, "FAIL")])
def test_a_rows_rounding_passes_within_its_bound_and_an_error_beyond_it_fails(
        monkeypatch, error, status):
    """The bound of a float32 row of 33 random elements (magnitudes about 1, a block per
    row: chain 1) is 5e-6 to 1.1e-5 (tolerance.py): an error of 5e-7 a row (a few ulps)
    is rounding, one of 1e-4 is not."""
    def nudged(src, rows, cols):
        return src.astype(np.float64).reshape(rows, cols).sum(axis=1) + error

    monkeypatch.setattr(hostexec, "row_sums", nudged)
    (record,) = run_rows({"rung": "row_block", "inputs": "random", "dtype": "float32"})
    assert record.status == status, record.error
    assert 4e-6 < record.tolerance < 2e-5  # the largest of the rows' bounds


def test_run_shape_inputs_random_records_its_inputs(tmp_path, fake_device):
    out = tmp_path / "random.csv"
    result = invoke("run", "--shape", "1000x33", "--inputs", "random", "--rung", "row_warp",
                    "--out", out)
    assert result.exit_code == 0, result.output
    raw = pd.read_csv(out)
    assert list(raw["status"]) == ["ok"] and list(raw["inputs"]) == ["random"]
    assert json.loads(raw["options"].iloc[0])["inputs"] == "random"
