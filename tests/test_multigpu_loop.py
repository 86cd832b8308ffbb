"""The multi-GPU loop's bookkeeping (multigpu/loop.py), with the host backend of
tests/test_multigpu.py and values worked by hand: what each row says about its case,
its times and its verdict, the run's seed and progress, rows written once, the host
inputs kept, an interrupted run's count, rounds pooled, and speed-ups only where both
rows were verified."""

from __future__ import annotations

import math

import pytest

from test_multigpu import HostBackend, HostSession, measure, settings

import reducebench.multigpu.loop as loop
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import CaseSkipped
from reducebench.core.interrupt import Interrupted
from reducebench.ladder.registry import get_rung
from reducebench.multigpu.cases import FLOOR, SHARDED, MultiGpuCase
from reducebench.multigpu.loop import (HostInputs, MultiMeasurement, combine, fill_collective,
                                       fill_sharded, fill_times, nccl_environment, new_record,
                                       run_multigpu)
from reducebench.multigpu.shards import ALLREDUCE
from reducebench.results.schema import MultiGpuRecord
from reducebench.verify.inputs import derive_seed, make_input

F32 = DTYPES["float32"]
PINGPONG = get_rung("pingpong")


def sharded(n=1000, gpus=2, dtype=F32) -> MultiGpuCase:
    return MultiGpuCase(SHARDED, dtype, n, gpus, PINGPONG, 256)


# -- a row's case and figures ----------------------------------------------------------------

def test_a_rows_case_columns():
    record = new_record(sharded(), {"seed": 1}, {"nccl": "2.99.0"})
    assert (record.case, record.rung, record.dtype, record.n, record.gpus, record.block) == (
        SHARDED, "sharded_sum:pingpong", "float32", 1000, 2, 256)
    assert (record.params, record.local_rung, record.in_place, record.bytes) == (
        "gpus=2", "pingpong", False, 4000)
    assert record.meta == {"seed": 1} and record.nccl == "2.99.0"
    collective = new_record(MultiGpuCase(ALLREDUCE, F32, 1024, 2, in_place=True), {}, {})
    assert (collective.local_rung, collective.in_place, collective.block) == ("", True, 0)
    assert collective.params == "gpus=2;in_place=1"


def test_times_noise_spread_and_bandwidth():
    record = new_record(sharded(), {}, {})
    # 10, 12, 14: median 12, mean 12, stdev 2 (4 + 0 + 4 over 2); spreads 1, 3, 2: median 2
    fill_times(record, MultiMeasurement([10.0, 12.0, 14.0], [1.0, 3.0, 2.0]))
    assert (record.samples, record.median_us, record.min_us, record.max_us) == (3, 12.0, 10.0,
                                                                              14.0)
    assert record.noise_pct == pytest.approx(100 * 2 / 12) and record.spread_us == 2.0
    assert record.gbps == pytest.approx(4000 / 12e3)        # bytes / us / 1000
    untimed = new_record(sharded(), {}, {})
    fill_times(untimed, MultiMeasurement([]))
    assert untimed.samples == 0 and math.isnan(untimed.median_us)


def test_a_sharded_sum_with_nothing_read_back_is_an_error_row():
    host = make_input(1000, F32, 3)
    record = new_record(sharded(), {}, {})
    fill_sharded(record, MultiMeasurement([5.0], shard_sizes=(500, 500)), host, sharded())
    assert (record.status, record.error) == ("error", "no result was read back")
    assert record.reference == host.reference and record.shards == "500;500"


def test_the_tolerance_of_a_random_input_grows_with_its_chain_and_atomics():
    host = make_input(1000, F32, 3, "random")
    tolerances = {}
    for chain, atomics in ((1, 0), (8, 0), (1, 4)):
        record = new_record(sharded(), {}, {})
        m = MultiMeasurement([5.0], results=[host.reference], chain=chain, atomics=atomics)
        fill_sharded(record, m, host, sharded())
        assert record.status == "ok"
        tolerances[chain, atomics] = record.tolerance
    assert tolerances[8, 0] > tolerances[1, 0] and tolerances[1, 4] > tolerances[1, 0]


def test_a_collectives_wrong_elements_are_counted_in_its_error():
    case = MultiGpuCase(ALLREDUCE, F32, 1024, 2)
    record = new_record(case, {}, {})
    fill_collective(record, MultiMeasurement([80.0], wrong=3, checked_elements=1024), case)
    assert record.status == "FAIL" and record.error == (
        "3 of 1024 checked elements differ from the elementwise sum over ranks")


def test_the_nccl_variables_it_was_started_with(monkeypatch):
    import os

    for name in [k for k in os.environ if k.startswith("NCCL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("NCCL_PROTO", "Simple")
    monkeypatch.setenv("NCCL_ALGO", "Ring")
    monkeypatch.setenv("nccl_lower", "x")
    monkeypatch.setenv("MY_NCCL_X", "y")
    assert nccl_environment() == "NCCL_ALGO=Ring;NCCL_PROTO=Simple"


# -- the run ---------------------------------------------------------------------------------

def test_the_runs_seed_and_each_sizes_input_from_it():
    rows = measure(HostBackend(), nccl_bytes=[], sizes=[1000], gpus=[1], seed=7)
    assert {r.meta["seed"] for r in rows} == {7}
    one = next(r for r in rows if r.case == SHARDED)
    assert one.reference == make_input(1000, F32, derive_seed(7, 1000, F32)).reference
    unseeded = measure(HostBackend(), nccl_bytes=[], sizes=[1000], gpus=[1], seed=None)
    seeds = {r.meta["seed"] for r in unseeded}
    assert len(seeds) == 1 and isinstance(seeds.pop(), int)


def test_the_cases_given_are_the_ones_run():
    rows = []
    returned = run_multigpu(settings(), HostBackend(), rows.append, cases=[sharded(gpus=1)])
    assert [(r.case, r.gpus) for r in rows] == [(SHARDED, 1)] and returned == rows
    assert math.isnan(rows[0].floor_us)          # no floor measured in this run


def test_progress_counts_every_case_of_every_round():
    seen = []
    cases = [sharded(gpus=1), sharded(gpus=2)]
    run_multigpu(settings(rounds=2), HostBackend(), lambda r: None,
                 on_case=lambda case, i, total: seen.append((case.gpus, i, total)),
                 cases=cases)
    assert seen == [(1, 0, 4), (2, 1, 4), (1, 2, 4), (2, 3, 4)]


def test_one_round_asked_is_one_round():
    rows = measure(HostBackend(), nccl_bytes=[], sizes=[1000], gpus=[1], rounds=1)
    assert {(r.rounds, r.round_medians_us) for r in rows} == {(1, "")}
    assert next(r for r in rows if r.case == FLOOR).samples == 1


def test_a_case_skipped_in_its_first_round_is_written_once_and_returned():
    rows = []
    returned = run_multigpu(settings(rounds=3, nccl_bytes=[], sizes=[1000]),
                            HostBackend(present=1), rows.append)
    skipped = [r for r in rows if r.status == "skipped"]
    assert [(r.case, r.gpus) for r in skipped] == [(FLOOR, 2), (SHARDED, 2)]
    # written as each is done (the skipped ones at once), returned in the cases' order
    assert [(r.case, r.gpus) for r in rows] == [(FLOOR, 2), (SHARDED, 2), (FLOOR, 1),
                                                (SHARDED, 1)]
    assert [(r.case, r.gpus) for r in returned] == [(FLOOR, 1), (FLOOR, 2), (SHARDED, 1),
                                                    (SHARDED, 2)]
    assert {id(r) for r in returned} == {id(r) for r in rows}


def test_a_skip_or_failure_inside_a_session_says_why():
    class Skipping(HostSession):
        def sharded_sum(self, case, host, stop, cold):
            raise CaseSkipped("the local rung needs 2^20 elements a shard")

    backend = HostBackend()
    backend.sessions[1] = Skipping(1, {1: 100.0})
    rows = measure(backend, nccl_bytes=[], sizes=[1000], gpus=[1])
    row = next(r for r in rows if r.case == SHARDED)
    assert (row.status, row.error) == ("skipped", "the local rung needs 2^20 elements a shard")
    failed = measure(HostBackend(broken_k=2), nccl_bytes=[], sizes=[1000], gpus=[2])
    assert {(r.status, r.error) for r in failed} == {
        ("error", "setting up 2 GPU(s) with NCCL failed: no peers")}


def test_each_rows_gpus_and_a_launchers_layout():
    class Launched(HostBackend):
        def layout(self, k):
            return 2, k // 2, True

    rows = measure(Launched(), nccl_bytes=[], sizes=[1000], gpus=[2])
    row = next(r for r in rows if r.case == SHARDED)
    assert row.devices == "0:Fake GPU;1:Fake GPU"
    assert (row.nodes, row.gpus_per_node, row.cross_node) == (2, 1, True)
    plain = next(r for r in measure(HostBackend(), nccl_bytes=[], sizes=[1000], gpus=[2])
                 if r.case == SHARDED)
    assert (plain.nodes, plain.gpus_per_node, plain.cross_node) == (1, 0, False)


def test_an_interrupt_counts_the_cases_measured_in_some_rounds_only():
    class Interrupting(HostSession):
        def sharded_sum(self, case, host, stop, cold):
            raise Interrupted(2)

    backend = HostBackend()
    backend.sessions[2] = Interrupting(2, {})
    # round 1: the floor of 1 GPU measured, then the 2-GPU sum interrupted; the third case
    # not begun
    with pytest.raises(Interrupted) as stopped:
        run_multigpu(settings(rounds=2), backend, lambda r: None,
                     cases=[MultiGpuCase(FLOOR, F32, 1, 1), sharded(gpus=2), sharded(gpus=1)])
    assert stopped.value.unfinished == 1


# -- host inputs kept ------------------------------------------------------------------------

def test_host_inputs_are_kept_up_to_the_limit_exactly(monkeypatch):
    monkeypatch.setattr(loop, "HOST_CACHE_BYTES", 8000)
    inputs = HostInputs(7, "exact")
    cases = [sharded(1000), sharded(2000, dtype=DTYPES["float16"]),
             sharded(500, dtype=DTYPES["float64"])]          # 4000 bytes each
    first = [inputs.get(case) for case in cases]
    again = [inputs.get(case) for case in cases]
    assert again[0] is first[0] and again[1] is first[1]     # 8000 bytes: at the limit
    assert again[2] is not first[2] and again[2].reference == first[2].reference
    assert first[0].seed == derive_seed(7, 1000, F32)
    assert first[2].seed == derive_seed(7, 500, DTYPES["float64"])


# -- rounds pooled -----------------------------------------------------------------------------

def test_rounds_combine_the_first_rounds_results_and_every_later_read():
    first = MultiMeasurement([1.0, 2.0], [0.1], results=[10, 10], checks=[11], chain=3,
                             atomics=2, shard_sizes=(5, 5), wrong=1, checked_elements=4)
    second = MultiMeasurement([3.0], [0.2, 0.3], results=[12, 13], checks=[14], chain=9,
                              atomics=9, shard_sizes=(9,), wrong=2, checked_elements=4)
    pooled = combine([first, second])
    assert pooled.times_us == [1.0, 2.0, 3.0] and pooled.spreads_us == [0.1, 0.2, 0.3]
    assert pooled.results == [10, 10] and pooled.checks == [11, 14, 12, 13]
    assert (pooled.chain, pooled.atomics, pooled.shard_sizes) == (3, 2, (5, 5))
    assert (pooled.wrong, pooled.checked_elements) == (3, 8)


def test_two_rounds_are_recorded_one_is_not():
    record = MultiGpuRecord(case=SHARDED, rung="r", dtype="float32", n=1, gpus=1)
    loop._record_rounds(record, [10.0, 12.0])
    assert (record.rounds, record.round_medians_us) == (2, "10.0000;12.0000")
    assert record.round_spread_pct == pytest.approx(100 * 2 / 11)
    single = MultiGpuRecord(case=SHARDED, rung="r", dtype="float32", n=1, gpus=1)
    loop._record_rounds(single, [10.0])
    assert (single.rounds, single.round_medians_us) == (1, "")
    assert math.isnan(single.round_spread_pct)


# -- speed-ups -----------------------------------------------------------------------------

def test_no_speedup_for_a_failed_row_or_against_a_failed_one_gpu_row():
    class OffAt(HostSession):
        """Rank 0's total one off for the size `off`."""

        def __init__(self, k, times, off):
            super().__init__(k, times)
            self.off = off

        def sharded_sum(self, case, host, stop, cold):
            m = super().sharded_sum(case, host, stop, cold)
            if case.n == self.off:
                m.results = [m.results[0] + 1, *m.results[1:]]
            return m

    backend = HostBackend()
    backend.sessions[1] = OffAt(1, {1: 100.0}, off=4099)
    backend.sessions[2] = OffAt(2, {2: 60.0}, off=1000)
    rows = [r for r in measure(backend, nccl_bytes=[]) if r.case == SHARDED]
    assert [(r.n, r.gpus, r.status) for r in rows] == [
        (1000, 1, "ok"), (1000, 2, "FAIL"), (4099, 1, "FAIL"), (4099, 2, "ok")]
    assert rows[0].speedup == 1.0
    assert math.isnan(rows[1].speedup) and math.isnan(rows[3].speedup)
