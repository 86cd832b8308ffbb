"""The guards around every buffer (reducebench/verify/guard_regions.py), without a GPU: the guard
value of each type as bits, the layout's offsets and alignment, what a guard region that
changed says, the verdict's words for a read and a write outside a buffer, planted host
"kernels" that read or write one element outside a buffer failing through the host
executor for every finish, `sanitize`'s checked program asking for exact allocations,
and the planted GPU kernels of tests/test_gpu_guards.py compiling through NVRTC. Expected
values are worked out by hand in the comments."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

from reducebench.cli import cli
from reducebench.core.dtypes import DTYPES
from reducebench.ladder import nvrtc
from reducebench.ladder.case import Case
from reducebench.ladder.plan import Plan, POISON_INT, TICKET
from reducebench.ladder.registry import LADDER
from reducebench.ladder.sources import rung_expressions, rung_source
from reducebench.measuring import hostexec
from reducebench.measuring.hostexec import HostBackend
from reducebench.measuring.runner import run
from reducebench.measuring.settings import RunSettings
from reducebench.verify import guard_regions
from reducebench.verify.guard_regions import (GuardedArray, GuardLayout, InputGuards, INT_GUARD,
                                       READ_OUTSIDE, guard_read_evidence, guard_scalar,
                                       overwritten)
from reducebench.verify.inputs import HostInput
from reducebench.verify.compute_sanitizer import (EXACT_ALLOCATIONS_ENV, checked_environment,
                                         exact_allocations, parse_report)
from reducebench.verify.verdict import verify

from guard_kernels import BUGS, CORRECT, FINISHES, planted_rung

F32, I32, F16 = DTYPES["float32"], DTYPES["int32"], DTYPES["float16"]


# -- the guard values ---------------------------------------------------------------------

@pytest.mark.parametrize("storage, bits", [
    (np.float32, 0xFF800000),           # sign 1, exponent all ones, mantissa 0: -inf
    (np.float64, 0xFFF0000000000000),
    (np.float16, 0xFC00),
    (np.uint16, 0xFF80),                # bfloat16 travels as its bits: float32's top half
    (np.int32, 1640531527),
    (np.uint32, 1640531527),
])
def test_each_storage_type_gets_its_own_guard_bit_pattern(storage, bits):
    value = np.array([guard_scalar(np.dtype(storage))], dtype=storage)
    unsigned = value.view(np.dtype(f"u{value.dtype.itemsize}"))[0]
    assert int(unsigned) == bits


def test_the_int_guard_is_odd_and_its_first_64_multiples_stay_far_from_zero():
    """Odd: k guard reads change an int32 sum for every k below 2^32. And no difference a
    few elements of at most 2^20 make (33 of them at most 33 x 2^20) is k x INT_GUARD
    modulo 2^32 for k up to 64."""
    assert INT_GUARD % 2 == 1
    distances = [min(k * INT_GUARD % 2**32, -k * INT_GUARD % 2**32) for k in range(1, 65)]
    assert min(distances) > 33 * 2**20
    assert guard_regions.MAX_GUARD_READS == 64


# -- the layout ---------------------------------------------------------------------------

@pytest.mark.parametrize("itemsize, before", [(4, 1024), (2, 2048), (8, 512)])
def test_a_4096_byte_guard_each_side_in_whole_elements(itemsize, before):
    layout = GuardLayout(1000003, itemsize)
    assert (layout.before, layout.after) == (before, before)
    assert layout.total == 1000003 + 2 * before
    assert layout.offset_bytes == 4096 and layout.offset_bytes % 256 == 0


def test_no_guard_is_an_exact_allocation():
    layout = GuardLayout(1000003, 4, guard_bytes=0)
    assert (layout.before, layout.after, layout.total, layout.offset_bytes) == \
        (0, 0, 1000003, 0)


@pytest.mark.parametrize("guard_bytes", [100, 384])  # not a multiple of 256
def test_a_guard_that_would_move_the_buffer_off_its_alignment_is_refused(guard_bytes):
    with pytest.raises(ValueError, match="alignment"):
        GuardLayout(10, 4, guard_bytes)


def test_a_guarded_array_puts_its_view_4096_bytes_into_one_allocation():
    guarded = GuardedArray(np, "partials0", 10, np.float32)
    start = guarded.view.__array_interface__["data"][0]
    base = guarded.whole.__array_interface__["data"][0]
    assert start - base == 4096 and guarded.whole.size == 10 + 2 * 1024
    assert np.all(np.isneginf(guarded.whole[:1024])) and np.all(np.isneginf(guarded.whole[-1024:]))
    assert guarded.check() == []


def test_input_guards_find_an_uploads_allocation_from_its_view_only():
    registry = InputGuards()
    guarded = GuardedArray(np, "input", 8, np.int32)
    view = registry.add(guarded)
    assert view is guarded.view and registry.of(view) is guarded
    assert registry.of(np.zeros(8, np.int32)) is None  # a view it never gave out
    registry.forget(view)
    assert registry.of(view) is None


# -- a guard that changed -----------------------------------------------------------------

def test_an_overwritten_guard_after_a_buffer_names_the_buffer_and_the_nearest_element():
    g = np.array([INT_GUARD], dtype=np.int32)
    before = np.full(4, INT_GUARD, dtype=np.int32)
    after = np.array([INT_GUARD, 0, INT_GUARD, 7], dtype=np.int32)
    # elements 1 and 3 of the guard after a 1000-element buffer: [1001] and [1003]
    assert overwritten("partials0", 1000, before, after, g) == [
        "wrote outside partials0: the guard after it was overwritten "
        "(2 elements, the nearest partials0[1001])"]


def test_an_overwritten_guard_before_a_buffer_counts_back_from_its_start():
    g = np.array([-np.inf], dtype=np.float32)
    before = np.array([9, -np.inf, 5, -np.inf], dtype=np.float32)  # elements -4 and -2
    after = np.full(4, -np.inf, dtype=np.float32)
    assert overwritten("input", 10, before, after, g) == [
        "wrote outside input: the guard before it was overwritten "
        "(2 elements, the nearest input[-2])"]


def test_a_nan_or_positive_infinity_in_a_float_guard_is_seen_bit_for_bit():
    g = np.array([-np.inf], dtype=np.float32)
    intact = np.full(2, -np.inf, dtype=np.float32)
    assert overwritten("x", 2, intact, np.array([-np.inf, np.nan], np.float32), g)
    assert overwritten("x", 2, np.array([np.inf, -np.inf], np.float32), intact, g)
    assert overwritten("x", 2, intact, intact, g) == []


def test_checking_restores_an_overwritten_guard_so_the_next_case_is_not_blamed():
    guarded = GuardedArray(np, "input", 16, np.float16)
    guarded.whole[guarded.layout.before + 16] = 3  # input[16], one past the end
    assert len(guarded.check()) == 1
    assert guarded.check() == []


# -- a guard value in the sum -------------------------------------------------------------

def test_minus_infinity_is_evidence_of_a_guard_read_and_nan_is_not():
    assert guard_read_evidence(float("-inf"), 1000, True)
    assert guard_read_evidence(float("nan"), 1000, True) is None   # the result's poison
    assert guard_read_evidence(float("inf"), 1000, True) is None
    assert guard_read_evidence(999.0, 1000, True) is None


def test_the_reference_plus_k_guard_values_modulo_2_to_the_32_is_evidence_for_int32():
    reference = 123456
    # one guard read, as an int32 result: 123456 + 1640531527 = 1640654983 < 2^31
    assert "1 x" in guard_read_evidence(1640654983, reference, False)
    # three: 123456 + 4921594581 = 4921718037, minus 2^32 = 626750741
    assert "3 x" in guard_read_evidence(626750741, reference, False)
    # two: 123456 + 3281063054 = 3281186510, minus 2^32 = -1013780786 as an int32
    assert "2 x" in guard_read_evidence(-1013780786, reference, False)
    assert guard_read_evidence(reference + 1, reference, False) is None
    assert guard_read_evidence(reference - 2**20, reference, False) is None
    # 65 reads: 123456 + 65 x 1640531527 modulo 2^32, past MAX_GUARD_READS
    assert guard_read_evidence((reference + 65 * INT_GUARD) % 2**32, reference, False) is None
    # the last k recognised, 64, and the one before it
    assert guard_read_evidence((reference + 64 * INT_GUARD) % 2**32, reference, False) == (
        "that is the reference plus 64 x the guard value 1640531527, modulo 2^32")
    assert "63 x" in guard_read_evidence((reference + 63 * INT_GUARD) % 2**32, reference,
                                         False)
    # the reference itself is no guard read (0 reads)
    assert guard_read_evidence(reference, reference, False) is None
    assert guard_read_evidence(float("-inf"), 1000, True) == (
        "-inf is the guard value, and every input element is finite")


def test_a_type_reducebench_never_stores_has_no_guard():
    with pytest.raises(ValueError, match="^no guard value for int64$"):
        guard_scalar(np.int64)


def test_a_guarded_array_without_guards_is_the_buffer_alone():
    exact = GuardedArray(np, "out", 10, np.float32, guard_bytes=0)
    assert exact.whole.size == 10 and exact.view.size == 10 and exact.check() == []


def exact_input(values, dtype=np.float32) -> HostInput:
    data = np.asarray(values, dtype=dtype)
    total = int(np.asarray(values, dtype=np.int64).sum())
    return HostInput(data, total, float(np.abs(data).sum()), seed=1)


def test_a_written_guard_fails_a_case_whose_sum_is_right():
    host = exact_input([1, 2, 3])
    breach = "wrote outside result: the guard after it was overwritten (1 element, the nearest result[1])"
    verdict = verify([6.0, 6.0], host, F32, Plan(), [breach, breach])
    assert not verdict.ok and verdict.message == breach  # once, however often it was found


def test_a_sum_of_minus_infinity_fails_as_a_read_outside_the_input():
    verdict = verify([float("-inf"), float("-inf")], exact_input([1, 2, 3]), F32, Plan())
    assert not verdict.ok
    assert verdict.message.startswith(f"{READ_OUTSIDE}: result -inf")


def test_an_int32_sum_one_guard_value_off_fails_as_a_read_outside_the_input():
    host = exact_input([1, 2, 3], np.int32)
    verdict = verify([6 + INT_GUARD] * 3, host, I32, Plan())
    assert not verdict.ok and verdict.message.startswith(READ_OUTSIDE)


def test_an_unwritten_result_is_a_wrong_sum_not_a_read_outside():
    """NaN is the float poison and POISON_INT the int one: neither is evidence of a read."""
    for dtype, value, data in ((F32, float("nan"), np.float32), (I32, POISON_INT, np.int32)):
        verdict = verify([value], exact_input([1, 2, 3], data), dtype, Plan())
        assert not verdict.ok and READ_OUTSIDE not in verdict.message
        assert verdict.message.startswith(f"result {value!r} vs reference 6")


def test_a_write_and_a_read_outside_are_both_said():
    breach = "wrote outside workspace: the guard after it was overwritten (1 element, the nearest workspace[4])"
    verdict = verify([float("-inf")], exact_input([1, 2]), F32, Plan(), [breach])
    assert verdict.message.startswith(breach + "; " + READ_OUTSIDE)


# -- planted host kernels, through the host executor ---------------------------------------

# One ladder rung per finish whose grid is a grid-stride one (no block leaves elements
# uncovered), so a host "kernel" that reads one element more still adds all n.
FINISH_RUNGS = {"atomic": "gridstride_atomic", "relaunch": "multi_elem",
                "single": "single_pass", "pingpong": "pingpong"}
HOST_SIZES = (4096, 4097, 1000003)
# The buffer each finish's block totals go to, which past_partials writes one past.
TOTALS_BUFFER = {"atomic": "result", "relaunch": "partials0", "single": "workspace",
                 "pingpong": "result"}


def outside(view: np.ndarray, before: int, after: int) -> np.ndarray:
    """The view widened into its allocation's guards: what a kernel that indexes past
    either end of its buffer reaches."""
    whole = view.base
    start = (view.__array_interface__["data"][0]
             - whole.__array_interface__["data"][0]) // view.itemsize
    assert start >= before and start + view.size + after <= whole.size
    return whole[start - before:start + view.size + after]


@pytest.fixture
def reads_outside(monkeypatch):
    """Every launch's blocks also add one element just before (-1) or after (+1) the
    elements they cover."""
    original = hostexec.block_sums

    def plant(where: int):
        def block_sums(src, grid, block, per_block):
            return original(outside(src, where < 0, where > 0), grid, block, per_block)
        monkeypatch.setattr(hostexec, "block_sums", block_sums)
    return plant


@pytest.fixture
def writes_past_totals(monkeypatch):
    """Every launch also stores 0 one element past the buffer its block totals go to."""
    original = hostexec.PlanRun.launch

    def launch(self, launch):
        original(self, launch)
        totals = launch.args[3] if launch.writes == TICKET else launch.dst
        outside(self.buffer(totals), 0, 1)[-1] = 0
    monkeypatch.setattr(hostexec.PlanRun, "launch", launch)


def checked(finish: str, dtype, sizes=HOST_SIZES):
    rung = LADDER[FINISH_RUNGS[finish]]
    cases = [Case(rung, dtype, n, 256, dict(rung.params)) for n in sizes]
    return run(RunSettings(timed=False, seed=5), HostBackend(), lambda r: None, cases=cases)


def statuses(records) -> list[str]:
    return [f"n={r.n}: {r.status} {r.error}" for r in records]


@pytest.mark.parametrize("dtype", [F32, I32, F16], ids=lambda d: d.name)
@pytest.mark.parametrize("finish", FINISHES)
def test_host_plans_pass_inside_their_guards(finish, dtype):
    assert all(r.status == "ok" for r in checked(finish, dtype)), statuses(checked(finish, dtype))


@pytest.mark.parametrize("where", [1, -1], ids=["one_past_end", "one_before_start"])
@pytest.mark.parametrize("dtype", [F32, I32, F16], ids=lambda d: d.name)
@pytest.mark.parametrize("finish", FINISHES)
def test_a_host_kernel_that_reads_outside_its_input_fails_as_a_read_outside(
        reads_outside, finish, dtype, where):
    reads_outside(where)
    records = checked(finish, dtype)
    assert all(r.status == "FAIL" and f"input: {READ_OUTSIDE}" in r.error
               for r in records), statuses(records)


@pytest.mark.parametrize("dtype", [F32, I32], ids=lambda d: d.name)
@pytest.mark.parametrize("finish", FINISHES)
def test_a_host_kernel_that_writes_past_its_totals_fails_naming_the_buffer(
        writes_past_totals, finish, dtype):
    records = checked(finish, dtype)
    expected = f"wrote outside {TOTALS_BUFFER[finish]}: the guard after it was overwritten"
    assert all(r.status == "FAIL" and expected in r.error for r in records), statuses(records)
    assert all(r.abs_error == 0 for r in records)  # the sum itself is right


@pytest.mark.parametrize("where, nearest", [(1, "input[1000003]"), (-1, "input[-1]")])
def test_a_host_kernel_that_writes_outside_its_input_fails_naming_the_input(
        monkeypatch, where, nearest):
    original = hostexec.PlanRun.launch

    def launch(self, launch):
        original(self, launch)
        widened = outside(self.buffers["input"], where < 0, where > 0)
        widened[-1 if where > 0 else 0] = 0
    monkeypatch.setattr(hostexec.PlanRun, "launch", launch)
    records = checked("atomic", F32, sizes=(1000003,))
    assert records[0].status == "FAIL" and records[0].error.endswith(
        f"wrote outside input: the guard {'after' if where > 0 else 'before'} it was "
        f"overwritten (1 element, the nearest {nearest})"), statuses(records)


def test_host_uploads_are_guarded_and_released():
    backend = HostBackend()
    host = exact_input([1, 2, 3])
    view = backend.upload(host)
    assert np.array_equal(view, host.data) and backend.input_guards.of(view) is not None
    backend.release(view)
    assert backend.input_guards.of(view) is None


# -- sanitize: exact allocations -------------------------------------------------------------

def test_the_checked_program_asks_for_exact_allocations_and_keeps_the_rest():
    env = checked_environment({"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "1"})
    assert env == {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "1", EXACT_ALLOCATIONS_ENV: "1"}
    assert exact_allocations(env) and not exact_allocations({"PATH": "/bin"})


def test_sanitize_starts_check_with_exact_allocations(monkeypatch, tmp_path):
    import reducebench.verify.compute_sanitizer as command

    started = []

    def run_child(argv, timeout=None, capture=True, env=None):
        started.append((list(argv), env))
        return subprocess.CompletedProcess(argv, 0, "========= ERROR SUMMARY: 0 errors\n", "")

    monkeypatch.setattr(command.shutil, "which", lambda name: "/opt/cuda/bin/" + name)
    monkeypatch.setattr(command, "run_child", run_child)
    monkeypatch.setenv("SOME_SETTING", "kept")
    result = CliRunner().invoke(cli, ["sanitize", "--size", "1000", "--rung", "shfl",
                                      "--tool", "memcheck", "--out", str(tmp_path / "s.md")])
    assert result.exit_code == 0, result.output
    (argv, env), = started
    assert argv[:4] == ["/opt/cuda/bin/compute-sanitizer", "--tool", "memcheck",
                        "--print-limit"]
    assert argv[argv.index("-m") + 1:argv.index("-m") + 3] == ["reducebench", "check"]
    assert env[EXACT_ALLOCATIONS_ENV] == "1" and env["SOME_SETTING"] == "kept"


class FakeCupy:
    """What device/guarded_buffers.guard_bytes touches of CuPy: the allocator."""

    def __init__(self) -> None:
        self.allocators = []
        self.cuda = self

    def set_allocator(self, allocator) -> None:
        self.allocators.append(allocator)


def test_the_device_drops_the_pool_and_the_guards_only_when_asked(monkeypatch):
    from reducebench.device.guarded_buffers import guard_bytes

    cupy = FakeCupy()
    monkeypatch.delenv(EXACT_ALLOCATIONS_ENV, raising=False)
    assert guard_bytes(cupy) == 4096 and cupy.allocators == []
    monkeypatch.setenv(EXACT_ALLOCATIONS_ENV, "1")
    assert guard_bytes(cupy) == 0 and cupy.allocators == [None]  # None: no memory pool


MEMCHECK_REPORT = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at void one_past_end_atomic<float, float, 256u>(const T1 *, T2 *, long long)+0x1b0
=========     by thread (3,0,0) in block (4,0,0)
=========     Address 0x7f0000f42410 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f0000800000 of size 4000012 bytes
=========
========= ERROR SUMMARY: 1 error
"""


def test_memcheck_errors_in_a_users_kernel_are_that_kernels():
    rung = planted_rung("one_past_end", "atomic")
    report = parse_report("memcheck", MEMCHECK_REPORT, [rung])
    assert report.total_errors == 1
    assert report.verdict("one_past_end_atomic") == "dirty (1)"
    assert report.verdict("shfl") == "clean" and report.unattributed == []


# -- the planted GPU kernels compile -------------------------------------------------------

needs_nvrtc = pytest.mark.skipif(not nvrtc.available(),
                                 reason="NVRTC (cuda-bindings) or CUDA headers not installed")


@needs_nvrtc
@pytest.mark.parametrize("finish", FINISHES)
def test_the_planted_kernels_of_a_finish_compile_for_every_dtype(finish):
    rungs = [planted_rung(kind, finish) for kind in (*BUGS, CORRECT)]
    assert all(r.finish == finish for r in rungs)
    expressions = sorted({e for rung in rungs for dtype in DTYPES.values()
                          for e in rung_expressions(rung, dtype)})
    done = nvrtc.compile_source(rung_source(rungs[0]), expressions, file_name=rungs[0].source)
    assert done.ok, done.log
    assert "warning" not in done.log.lower(), done.log
    assert set(done.lowered) == set(expressions)

