"""On the GPU: the guards around every buffer (reducebench/verify/guard_regions.py) catch a kernel
that reads or writes one element outside a buffer, at every n and dtype, whether or not
n x the element size is a multiple of the allocator's 512 bytes (without guards, a read
of in[n] there finds the pool's zero padding and the sum passes).

The planted kernels (tests/fixtures/kernels/outside_buffers.cu, as rungs through
tests/guard_kernels.py) read in[n], read in[-1], or store one element past the buffer
their block totals go to, in each finish: each must be FAIL with the message that names
the access, and the same kernels without the bug must pass. `sanitize` (compute-sanitizer
over exact allocations) must call the one-past-the-end kernel dirty."""

import os
import shutil
import subprocess
import sys

import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.case import Case
from reducebench.verify.guard_regions import READ_OUTSIDE
from reducebench.verify.inputs import make_input

from gpu_support import check_cases, failures
from guard_kernels import BUGS, CORRECT, FINISHES, KERNEL_FILE, REPO, planted_rung

pytestmark = pytest.mark.gpu

# 2^20 elements is a multiple of 128 (and of 512 bytes in every dtype); the others are not.
SIZES = (2**20, 2**20 + 1, 1000003, 2**24 + 1)
DTYPE_NAMES = ("float32", "int32", "float16")
BLOCK = 256
# What the error of each bug's rows must say. past_partials stores past the buffer its
# block totals go to: the result (atomic, pingpong: the first run's accumulator), the
# first pass's partials (relaunch) or the workspace (single).
WRITTEN = {"atomic": "result", "relaunch": "partials0", "single": "workspace",
           "pingpong": "result"}


def expected_message(bug: str, finish: str) -> str:
    if bug == "past_partials":
        return f"wrote outside {WRITTEN[finish]}: the guard after it was overwritten"
    return READ_OUTSIDE


@pytest.fixture(scope="module")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


def cases(kind: str, finish: str, dtype_name: str) -> list[Case]:
    rung = planted_rung(kind, finish)
    return [Case(rung, DTYPES[dtype_name], n, BLOCK) for n in SIZES]


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
@pytest.mark.parametrize("finish", FINISHES)
@pytest.mark.parametrize("bug", BUGS)
def test_an_access_outside_a_buffer_fails_with_its_message(backend, bug, finish, dtype_name):
    records = check_cases(backend, cases(bug, finish, dtype_name))
    message = expected_message(bug, finish)
    missed = [f"n={r.n}: {r.status} {r.error}" for r in records
              if r.status != "FAIL" or message not in r.error]
    assert not missed, f"{bug}_{finish} {dtype_name}, expected FAIL with {message!r}:\n" + \
        "\n".join(missed)


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
@pytest.mark.parametrize("finish", FINISHES)
def test_the_same_kernels_in_bounds_pass(backend, finish, dtype_name):
    records = check_cases(backend, cases(CORRECT, finish, dtype_name))
    assert not failures(records), "\n".join(failures(records))


@pytest.mark.parametrize("dtype_name", ["float32", "float16", "bfloat16", "float64"])
def test_an_upload_keeps_the_input_256_byte_aligned_between_intact_guards(backend, dtype_name):
    host = make_input(1000003, DTYPES[dtype_name], 5, "exact")
    view = backend.upload(host)
    try:
        assert view.data.ptr % 256 == 0 and view.size == 1000003
        guarded = backend.input_guards.of(view)
        assert guarded is not None and guarded.check() == []
        assert (view.get() == host.data).all()
    finally:
        backend.release(view)


def sanitize(kernel: str, out) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "reducebench", "sanitize", "--size", "1000003",
         "--dtype", "float32", "--rung", "none", "--tool", "memcheck",
         "--kernel", f"{KERNEL_FILE.relative_to(REPO)}:{kernel}", "--finish", "atomic",
         "--grid", "per-sm=8", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "200"})


needs_sanitizer = pytest.mark.skipif(shutil.which("compute-sanitizer") is None,
                                     reason="compute-sanitizer is not on the PATH")


@needs_sanitizer
@pytest.mark.parametrize("kernel, returncode, row", [
    pytest.param("one_past_end_atomic", 1, "| one_past_end_atomic | dirty",
                 id="one-past-the-end-dirty"),
    pytest.param("in_bounds_atomic", 0, "| in_bounds_atomic | clean |", id="in-bounds-clean"),
])
def test_sanitize_calls_a_planted_kernel_dirty_and_its_correct_twin_clean(tmp_path, kernel,
                                                                           returncode, row):
    done = sanitize(kernel, tmp_path / "s.md")
    report = (tmp_path / "s.md").read_text()
    assert done.returncode == returncode, done.stdout + done.stderr
    assert row in report, report
