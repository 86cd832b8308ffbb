"""Plans executed honestly on the CPU (reducebench.measuring.hostexec): every rung's plan sums every
element exactly once at awkward sizes, for every dtype and block size, three times in a row;
and a plan with a pass too few, a grid too small, an accumulator not zeroed or the
ping-pong pair swapped fails. The kernels are tested on the GPU; this is their plans."""

from dataclasses import replace

import numpy as np
import pytest

from reducebench.measuring.settings import RunSettings
from reducebench.core.dtypes import DTYPES
from reducebench.measuring.hostexec import HostBackend
from reducebench.verify.inputs import make_input
from reducebench.ladder.case import Case
from reducebench.ladder.plan import NEXT, RESULT, TICKET_COUNTER
from reducebench.measuring.backend_protocol import Sampling
from reducebench.ladder.registry import LADDER, RUNGS
from reducebench.measuring.runner import run
from reducebench.core.stats import StopRule
from reducebench.verify.verdict import verify

SIZES = (1, 31, 33, 1000, 4097, 2**17 + 3)
KERNEL_RUNGS = [r for r in RUNGS if not r.is_library and not r.dispatch]


def checked(cases, sm_count=132, timed=False):
    settings = RunSettings(timed=timed, seed=99)
    return run(settings, HostBackend(sm_count=sm_count), lambda r: None, cases=cases)


@pytest.mark.parametrize("rung", KERNEL_RUNGS, ids=lambda r: r.name)
@pytest.mark.parametrize("sm_count", [132, 2])   # 2: grid-stride grids wrap many times
def test_every_plan_sums_every_element_exactly_once(rung, sm_count):
    cases = [Case(rung, DTYPES[d], n, block, dict(rung.params))
             for n in SIZES for d in rung.dtypes for block in rung.blocks]
    records = checked(cases, sm_count)
    bad = [f"{r.dtype} n={r.n} block={r.block}: {r.status} {r.error}"
           for r in records if r.status != "ok"]
    assert not bad, "\n".join(bad[:10])


@pytest.mark.parametrize("rung", KERNEL_RUNGS, ids=lambda r: r.name)
def test_every_plan_survives_warm_up_samples_and_a_final_read(rung):
    """Timed: two warm-ups, a verified run, samples, then the last sample's result: state
    a run leaves behind (a ticket, the ping-pong pair) must be right for the next."""
    cases = [Case(rung, DTYPES["int32"], n, 256, dict(rung.params)) for n in (1000, 4097)]
    records = checked(cases, timed=True)
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]


# -- broken plans must fail -------------------------------------------------------------

F32 = DTYPES["float32"]
N = 100_003


def values_of(rung_name, plan_change, timed=False):
    """The values a host execution of the rung's plan, changed by plan_change, returns."""
    rung = LADDER[rung_name]
    case = Case(rung, F32, N, 256, dict(rung.params))
    host = make_input(N, F32, 7)
    backend = HostBackend()
    plan = plan_change(rung.plan(N, F32, 256, backend.sm_count(), rung.params))
    sampling = Sampling(StopRule(), cold=True) if timed else None
    measured = backend.execute(case, plan, backend.upload(host), sampling)
    return verify(measured.values, host, F32, plan), plan


def test_the_unchanged_plans_pass():
    for name in ("shfl", "vector_load", "single_pass", "pingpong", "gmem"):
        assert values_of(name, lambda plan: plan)[0].ok, name


def test_a_relaunch_plan_missing_its_last_pass_fails():
    verdict, plan = values_of("shfl", lambda p: replace(p, launches=p.launches[:-1]))
    assert len(plan.launches) == 2 and not verdict.ok   # 100003 -> 391 -> 2, no -> 1


def test_a_grid_one_block_short_fails():
    def shorter(plan):
        first = plan.launches[0]
        return replace(plan, launches=(replace(first, grid=first.grid - 1),
                                       *plan.launches[1:]))
    assert not values_of("smem_sequential", shorter)[0].ok


def test_an_atomic_accumulator_not_zeroed_fails():
    assert not values_of("vector_load", lambda p: replace(p, zero_before=()))[0].ok


def test_the_ping_pong_pair_swapped_fails():
    """The launch adds into `next` and zeroes `result`: what is read is wrong."""
    def swapped(plan):
        launch = plan.launches[0]
        return replace(plan, launches=(replace(launch, args=("src", NEXT, "n", "dst")),))
    assert not values_of("pingpong", swapped, timed=True)[0].ok


def test_a_ping_pong_plan_that_never_swaps_fails_after_the_first_run():
    """Without the swap each run adds into the total of the run before."""
    verdict, _ = values_of("pingpong", lambda p: replace(p, ping_pong=False), timed=True)
    assert not verdict.ok


def test_a_ping_pong_launch_that_never_zeroes_next_fails_when_only_checked(monkeypatch):
    """`check` has no warm-ups: its runs add into the first accumulator, the second, then
    the first again, so only the third finds a `next` the launch forgot to zero."""
    from reducebench.measuring import hostexec

    def forgetful(self, launch):
        src, dst, n, *_ = self.arguments(launch)
        partials = hostexec.block_sums(src[:n], launch.grid, launch.block, launch.per_block)
        dst[0] = hostexec._store(hostexec._widen(dst[0]) + hostexec.exact_sum(partials), self.acc)

    monkeypatch.setattr(hostexec.PlanRun, "launch", forgetful)
    assert not values_of("pingpong", lambda p: p)[0].ok
    assert not values_of("one_shot", lambda p: p)[0].ok


def test_a_ticket_plan_whose_last_block_never_draws_the_last_ticket_fails():
    """A ticket counter left at a non-zero value: no block sees itself as the last, and
    the result stays as poisoned (what `ticket never reset` does to the second run)."""
    class StaleTicket(HostBackend):
        def execute(self, case, plan, handle, sampling):
            from reducebench.measuring.hostexec import PlanRun
            from reducebench.measuring.execution import run_case

            execution = PlanRun(plan, handle, case.dtype.acc_name)
            execution.buffers["ticket"][0] = 5
            return run_case(execution, sampling, self.sampler())

    rung = LADDER["single_pass"]
    records = run(RunSettings(timed=False, seed=1), StaleTicket(), lambda r: None,
                  cases=[Case(rung, F32, N, 256, dict(rung.params))])
    assert records[0].status == "FAIL"


def test_library_plans_sum_on_the_host_too():
    cases = [Case(LADDER[name], F32, 1000, 0) for name in ("cub", "cupy", "torch")]
    assert [r.status for r in checked(cases)] == ["ok", "ok", "ok"]


def test_a_result_buffer_that_is_never_written_fails():
    def no_result(plan):
        return replace(plan, launches=tuple(replace(l, dst="partials0") if l.dst == RESULT
                                            else l for l in plan.launches))
    assert not values_of("shfl", no_result)[0].ok


# -- the binding: buffers as the kernels declare them ----------------------------------------

def bound(rung_name, dtype_name, n=1000):
    """The rung's plan bound to host buffers, as HostBackend binds it, not yet run."""
    rung, dtype = LADDER[rung_name], DTYPES[dtype_name]
    backend = HostBackend()
    handle = backend.upload(make_input(n, dtype, 7))
    case = Case(rung, dtype, n, 256, dict(rung.params))
    return backend.bind(case, rung.plan(n, dtype, 256, backend.sm_count(), rung.params), handle)


def test_the_ticket_counter_is_one_zeroed_unsigned_int_as_the_kernels_declare_it():
    ticket = bound("single_pass", "float64").buffers[TICKET_COUNTER]
    assert ticket.dtype == np.uint32 and ticket.shape == (1,) and ticket[0] == 0


def test_an_in_place_rungs_scratch_copy_holds_the_whole_input_in_the_accumulator_type():
    execution = bound("gmem", "float32")
    assert execution.plan.scratch_copy
    scratch = execution.buffers["scratch"]
    assert scratch.dtype == np.float32 and scratch.shape == (1000,)


def test_an_unwritten_float_result_reads_nan_and_an_int_one_the_int_poison():
    for dtype_name, is_unwritten in (("float32", np.isnan),
                                     ("int32", lambda value: value == -(2**31) + 7)):
        execution = bound("shfl", dtype_name)
        assert all(is_unwritten(v) for v in execution.buffers[RESULT]), dtype_name
        execution.enqueue()
        assert not is_unwritten(execution.read()), dtype_name
        execution.poison()
        assert is_unwritten(execution.buffer(RESULT)[0]), dtype_name
