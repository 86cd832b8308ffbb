"""On the GPU: user kernels get what built-in rungs get. The example is correct for every
dtype and block size at awkward sizes; a wrong kernel is FAIL with a non-zero exit; a
compile error points at the user's line; an illegal address ends the run with the rows
so far saved and the kernel named (issue #6's CUDA-error test)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reducebench.ladder.custom import KernelSpec, user_rungs
from reducebench.core.dtypes import DTYPES
from reducebench.ladder.case import Case
from reducebench.results.files import read_results

from gpu_support import check_cases, failures

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parent.parent
KERNELS = REPO / "tests" / "fixtures" / "kernels"
EXAMPLE = REPO / "examples" / "grid_stride_sum.cu"
SIZES = (1, 31, 33, 1000, 2**20 - 1, 1000003, 2**24 + 3)


@pytest.fixture(scope="module")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


def verify_everywhere(backend, rung, dtype_names, sizes=SIZES):
    assert backend.compile_log(rung, DTYPES[dtype_names[0]]) is None
    cases = [Case(rung, DTYPES[name], n, block)
             for name in dtype_names for n in sizes for block in rung.blocks]
    records = check_cases(backend, cases)
    assert not failures(records), "\n".join(failures(records)[:20])


@pytest.mark.parametrize("grid", ["per-sm=8", "per-thread=1", "per-block=5000"])
def test_the_example_sums_every_dtype_and_block_correctly(backend, grid):
    rung = user_rungs([KernelSpec(str(EXAMPLE), "grid_stride_sum", "atomic", grid)])[0]
    verify_everywhere(backend, rung, list(DTYPES))


def test_a_plain_extern_c_kernel_with_a_relaunch_finish(backend):
    rung = user_rungs([KernelSpec(str(KERNELS / "contract_forms.cu"), "plain_block_sum",
                                  "relaunch", "per-thread=1")])[0]
    verify_everywhere(backend, rung, ["float32"])


def test_a_template_kernel_with_a_single_pass_finish(backend):
    rung = user_rungs([KernelSpec(str(KERNELS / "contract_forms.cu"), "ticket_sum",
                                  "single", "per-sm=4")])[0]
    verify_everywhere(backend, rung, ["float32", "int32", "bfloat16"], sizes=(33, 1000003))


def reducebench(*args, cwd):
    return subprocess.run([sys.executable, "-m", "reducebench", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


def test_a_wrong_kernel_is_fail_and_the_exit_code_says_so(tmp_path):
    out = tmp_path / "wrong.csv"
    done = reducebench("run", "--size", "1000003", "--rung", "none", "--kernel",
                       f"{KERNELS}/drops_last_element.cu:drops_last_element", "--grid",
                       "per-sm=4", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    row = read_results(out).iloc[0]
    assert row["status"] == "FAIL" and "the reference is exact" in row["error"]
    assert "1 case(s) failed" in done.stdout


def test_a_compile_error_on_the_device_points_at_the_users_line(tmp_path):
    done = reducebench("run", "--size", "1000", "--kernel",
                       f"{KERNELS}/does_not_compile.cu:does_not_compile", cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "does_not_compile.cu:7: error" in done.stderr
    assert not (tmp_path / "results").exists()


def test_an_illegal_address_ends_the_run_saving_rows_and_naming_the_kernel(tmp_path):
    out = tmp_path / "crash.csv"
    done = reducebench("run", "--size", "2^20", "--rung", "shfl,cub", "--kernel",
                       f"{KERNELS}/illegal_address.cu:illegal_address", "--out", str(out),
                       cwd=tmp_path)
    text = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 1, text
    assert "the CUDA context was lost in illegal_address float32 n=1048576" in text
    assert "Traceback" not in text
    frame = read_results(out)
    assert list(frame["rung"]) == ["shfl", "illegal_address"]  # cub never ran
    assert list(frame["status"]) == ["ok", "error"]
    assert "illegal" in frame["error"].iloc[1].lower()
