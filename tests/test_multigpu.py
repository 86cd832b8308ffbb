"""Across GPUs, without a GPU: the shard arithmetic, nccl-tests' bandwidth formulas, the
case plan, the parallel host input, and the measuring loop and CLI driven by a fake
backend that sums each shard on the host."""

import csv

import numpy as np
import pytest
from click.testing import CliRunner

from reducebench.verify import inputs
from reducebench.cli import ReducebenchGroup
from reducebench.cli.multigpu import multigpu_command
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.core.errors import CaseFailed
from reducebench.multigpu.cases import (FLOOR, SHARDED, MultiGpuCase, MultiGpuSettings,
                                        local_rung, parse_gpus, plan_cases, skip_reason)
from reducebench.multigpu.loop import MultiMeasurement, run_multigpu
from reducebench.multigpu.shards import (ALLREDUCE, REDUCE, algbw_gbps, bus_factor, busbw_gbps,
                                         efficiency, shard_alignment, shard_bounds,
                                         shard_sizes, speedup)
from reducebench.ladder.registry import get_rung
from reducebench.results.schema import MULTIGPU, MULTIGPU_COLUMNS
from reducebench.results.store import ResultsStore
from reducebench.core.stats import StopRule

F32 = DTYPES["float32"]

# 1..100, and every boundary where 32-bit sizes or offsets would wrap or truncate
SIZES = list(range(1, 101)) + [2**31 - 1, 2**31, 2**31 + 1, 2**32 - 1, 2**32, 2**32 + 1,
                               2**32 + 7, 2**33 + 3, 3 * 2**32 + 5, 2**40 + 13]


# -- shards ------------------------------------------------------------------------------

def owners(index, bounds):
    return sum(1 for start, end in bounds if start <= index < end)


@pytest.mark.parametrize("align", [1, 2, 4, 8])
@pytest.mark.parametrize("k", range(1, 9))
def test_every_element_lies_in_exactly_one_shard(k, align):
    for n in SIZES:
        bounds = shard_bounds(n, k, align)
        assert len(bounds) == k
        assert bounds[0][0] == 0 and bounds[-1][1] == n, (n, k, bounds)
        for (_, end), (start, _) in zip(bounds, bounds[1:]):
            assert end == start, f"gap or overlap at n={n} k={k}: {bounds}"
        assert all(end >= start for start, end in bounds)
        assert sum(end - start for start, end in bounds) == n
        for start, end in bounds:  # the elements on each side of every boundary
            for index in {start - 1, start, end - 1, end, n - 1}:
                if 0 <= index < n:
                    assert owners(index, bounds) == 1, (n, k, index, bounds)


@pytest.mark.parametrize("k", range(1, 9))
def test_unaligned_shard_sizes_differ_by_at_most_one(k):
    for n in SIZES:
        sizes = shard_sizes(n, k)
        assert max(sizes) - min(sizes) <= 1, (n, k, sizes)


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("k", range(1, 9))
def test_aligned_boundaries_fall_on_16_bytes_and_sizes_differ_by_one_vector(k, dtype_name):
    dtype = DTYPES[dtype_name]
    align = shard_alignment(dtype)
    for n in SIZES:
        bounds = shard_bounds(n, k, align)
        for start, _ in bounds:
            assert (start * dtype.itemsize) % 16 == 0, (n, k, bounds)
        sizes = [end - start for start, end in bounds]
        assert max(sizes) - min(sizes) <= align, (n, k, sizes)


def test_shard_sizes_worked_by_hand():
    assert shard_sizes(10, 3) == [4, 3, 3]
    assert shard_sizes(1, 8) == [1, 0, 0, 0, 0, 0, 0, 0]
    assert shard_sizes(2**32 + 1, 2) == [2**31 + 1, 2**31]
    # 10 floats in 16-byte vectors of 4: two whole vectors, 2 left over for the last shard
    assert shard_sizes(10, 2, align=4) == [4, 6]
    assert shard_sizes(3, 2, align=4) == [0, 3]
    # 2^33 + 3 floats: 2^31 vectors, 2^30 each, the 3 left over on the last shard
    assert shard_sizes(2**33 + 3, 2, align=4) == [2**32, 2**32 + 3]
    assert shard_sizes(13, 3, align=4) == [4, 4, 5]


def test_shard_alignment_is_one_16_byte_vector():
    assert {name: shard_alignment(d) for name, d in DTYPES.items()} == {
        "float32": 4, "float64": 2, "int32": 4, "float16": 8, "bfloat16": 8}


def test_no_shards_is_refused():
    with pytest.raises(ValueError):
        shard_bounds(10, 0)


# -- nccl-tests' figures, worked by hand from doc/PERFORMANCE.md -------------------------

def test_algbw_is_bytes_over_time_in_gb_per_s():
    assert algbw_gbps(10**9, 10_000) == pytest.approx(100.0)    # 1 GB in 10 ms
    assert algbw_gbps(2**30, 5_000) == pytest.approx(214.7483648)


def test_allreduce_busbw_is_algbw_times_2_k_minus_1_over_k():
    assert busbw_gbps(ALLREDUCE, 10**9, 10_000, 2) == pytest.approx(100.0)   # x 2/2
    assert busbw_gbps(ALLREDUCE, 10**9, 10_000, 4) == pytest.approx(150.0)   # x 6/4
    assert busbw_gbps(ALLREDUCE, 10**9, 10_000, 8) == pytest.approx(175.0)   # x 14/8
    assert busbw_gbps(ALLREDUCE, 2**30, 5_000, 8) == pytest.approx(375.8096384)
    assert bus_factor(ALLREDUCE, 1) == 0.0


def test_reduce_busbw_equals_algbw():
    for k in (2, 4, 8):
        assert busbw_gbps(REDUCE, 10**9, 10_000, k) == pytest.approx(100.0)


def test_speedup_and_efficiency():
    assert speedup(100.0, 60.0) == pytest.approx(5 / 3)
    assert efficiency(5 / 3, 2) == pytest.approx(5 / 6)
    assert efficiency(speedup(100.0, 25.0), 4) == pytest.approx(1.0)


# -- options and cases ---------------------------------------------------------------------

def test_parse_gpus():
    assert parse_gpus("all", 2) == [1, 2]
    assert parse_gpus("1,2,2", 2) == [1, 2]
    assert parse_gpus("4", 2) == [4]  # kept: its cases are skipped with the reason
    for bad in ("0", "x", "1,-2", ""):
        with pytest.raises(UsageError):
            parse_gpus(bad, 2)


def test_local_rung_is_a_ladder_kernel():
    assert local_rung(None).name == "pingpong"
    assert local_rung("shfl").name == "shfl"
    with pytest.raises(UsageError, match="library"):
        local_rung("cub")


def settings(**overrides):
    values = dict(sizes=[1000, 4099], dtypes=[F32], gpus=[1, 2], rung=get_rung("pingpong"),
                  nccl_bytes=[4096], stop=StopRule(min_samples=3, max_time=0.0), seed=7)
    values.update(overrides)
    return MultiGpuSettings(**values)


def test_plan_puts_floors_first_then_one_gpu_before_two():
    cases = plan_cases(settings())
    kinds = [c.kind for c in cases]
    assert kinds[:2] == [FLOOR, FLOOR]
    sharded = [(c.n, c.gpus) for c in cases if c.kind == SHARDED]
    assert sharded == [(1000, 1), (1000, 2), (4099, 1), (4099, 2)]
    collectives = [(c.kind, c.gpus, c.in_place) for c in cases if c.kind in (ALLREDUCE,
                                                                              REDUCE)]
    assert collectives == [(kind, 2, in_place) for kind in (ALLREDUCE, REDUCE)
                           for in_place in (False, True)]  # none over one GPU
    assert all(c.n == 1024 for c in cases if c.kind == ALLREDUCE)  # 4096 bytes of float32
    keys = [(c.name, c.dtype.name, c.n, c.block, c.params_text()) for c in cases]
    assert len(keys) == len(set(keys)), "two rows of one file would share a key"


def test_skip_reasons():
    assert "needs 2 GPUs" in skip_reason(MultiGpuCase(SHARDED, F32, 10, 2, get_rung("shfl"),
                                                      256), present=1)
    half = MultiGpuCase(SHARDED, DTYPES["float16"], 10, 1, get_rung("gmem"), 256)
    assert "does not take float16" in skip_reason(half, present=1)
    assert skip_reason(MultiGpuCase(SHARDED, F32, 10, 2, get_rung("shfl"), 256), 2) is None


def stored_as_int(data, dtype):
    if dtype.name == "bfloat16":
        return inputs.bfloat16_bits_to_float32(data).astype(np.int64)
    return data.astype(np.int64)


# -- the loop, with a backend that sums on the host ------------------------------------------

class HostSession:
    """Sums each rank's shard exactly on the host, as a correct device would; `drop`
    leaves out the last element of every shard, as a buggy local rung would."""

    def __init__(self, k, times, drop=False):
        self.k, self.times, self.drop = k, times, drop

    def floor_us(self, stop, cold):
        return 4.5 * self.k

    def sharded_sum(self, case, host, stop, cold):
        bounds = shard_bounds(case.n, self.k, shard_alignment(case.dtype))
        values = stored_as_int(host.data, case.dtype)
        partials = [int(values[a:b - 1 if self.drop and b > a else b].sum())
                    for a, b in bounds]
        total = sum(partials)
        return MultiMeasurement([self.times[self.k]] * 5, [0.5] * 5, [total] * self.k,
                                [total] * self.k, shard_sizes=tuple(b - a for a, b in bounds))

    def collective(self, case, stop, cold):
        return MultiMeasurement([80.0] * 5, [1.0] * 5, wrong=0, checked_elements=case.n)


class HostBackend:
    def __init__(self, present=2, reason=None, drop=False, broken_k=None):
        self.count, self.reason, self.drop, self.broken_k = present, reason, drop, broken_k
        self.sessions = {}
        self.closed = False

    def present(self):
        return self.count

    def unavailable_reason(self):
        return self.reason

    def device_info(self):
        return {"gpu": "Fake GPU", "sm_count": 4}

    def devices(self, k):
        return ";".join(f"{i}:Fake GPU" for i in range(k))

    def nccl_version(self):
        return "2.99.0"

    def session(self, k):
        if k == self.broken_k:
            raise CaseFailed("setting up 2 GPU(s) with NCCL failed: no peers")
        return self.sessions.setdefault(k, HostSession(k, {1: 100.0, 2: 60.0}, self.drop))

    def close(self):
        self.closed = True


def measure(backend, **overrides):
    rows = []
    run_multigpu(settings(**overrides), backend, rows.append)
    return rows


def test_sharded_sums_verify_and_scale_against_one_gpu():
    rows = measure(HostBackend(), nccl_bytes=[])
    sharded = [r for r in rows if r.case == SHARDED]
    assert [(r.n, r.gpus, r.status) for r in sharded] == [
        (1000, 1, "ok"), (1000, 2, "ok"), (4099, 1, "ok"), (4099, 2, "ok")]
    two = sharded[1]
    assert two.speedup == pytest.approx(100 / 60) and two.efficiency == pytest.approx(100 / 120)
    assert two.gbps == pytest.approx(1000 * 4 / 60e3)
    assert two.floor_us == 9.0 and two.shards == "500;500"
    assert sharded[3].shards == "2048;2051"
    assert sharded[0].speedup == pytest.approx(1.0)


def test_a_shard_missing_an_element_fails():
    rows = measure(HostBackend(drop=True), nccl_bytes=[])
    assert {r.status for r in rows if r.case == SHARDED} == {"FAIL"}


def test_every_rank_and_both_reads_are_verified():
    class OneRankOff(HostSession):
        """Rank 1's first total is one off; every later read is right."""

        def sharded_sum(self, case, host, stop, cold):
            m = super().sharded_sum(case, host, stop, cold)
            m.results = [m.results[0], m.results[0] + 1]
            return m

    backend = HostBackend()
    backend.sessions[2] = OneRankOff(2, {2: 60.0})
    rows = measure(backend, nccl_bytes=[], gpus=[2])
    assert {r.status for r in rows if r.case == SHARDED} == {"FAIL"}


def test_more_gpus_than_present_are_skipped_and_one_gpu_still_runs():
    rows = measure(HostBackend(present=1))
    by_k = {(r.case, r.gpus): r for r in rows if r.case == SHARDED}
    assert by_k[(SHARDED, 1)].status == "ok"
    assert by_k[(SHARDED, 2)].status == "skipped"
    assert "needs 2 GPUs; this machine has 1" in by_k[(SHARDED, 2)].error


def test_without_nccl_every_case_is_skipped_with_the_reason():
    backend = HostBackend(reason="NCCL is not available to CuPy; install it")
    rows = measure(backend)
    assert rows and all(r.status == "skipped" for r in rows)
    assert all("NCCL is not available" in r.error for r in rows)
    assert backend.sessions == {}


def test_a_session_that_fails_to_start_is_an_error_row_and_the_run_goes_on():
    rows = measure(HostBackend(broken_k=2), nccl_bytes=[])
    assert {r.status for r in rows if r.gpus == 2} == {"error"}
    assert {r.status for r in rows if r.gpus == 1} == {"ok"}


def test_collectives_get_nccl_tests_bandwidths_and_wrong_elements_fail():
    rows = measure(HostBackend(), sizes=[], gpus=[2])
    allreduce = next(r for r in rows if r.case == ALLREDUCE)
    assert allreduce.algbw_gbps == pytest.approx(4096 / 80e3)
    assert allreduce.busbw_gbps == pytest.approx(4096 / 80e3)  # x 2(2-1)/2
    reduce = next(r for r in rows if r.case == REDUCE)
    assert reduce.busbw_gbps == pytest.approx(reduce.algbw_gbps)

    class WrongSession(HostSession):
        def collective(self, case, stop, cold):
            return MultiMeasurement([80.0], [0.0], wrong=3, checked_elements=case.n)

    backend = HostBackend()
    backend.sessions[2] = WrongSession(2, {})
    rows = measure(backend, sizes=[], gpus=[2])
    assert {r.status for r in rows if r.case in (ALLREDUCE, REDUCE)} == {"FAIL"}


def test_rows_are_written_as_csv_with_every_column(tmp_path):
    path = tmp_path / "multi.csv"
    store = ResultsStore(path, kind=MULTIGPU)
    records = []

    def write(record):
        store.commit(record)
        records.append(record)

    run_multigpu(settings(), HostBackend(), write)
    with open(path) as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0].keys()) == MULTIGPU_COLUMNS
    assert {row["kind"] for row in rows} == {"multigpu"}
    assert len(rows) == len(records)
    assert rows[0]["gpu"] == "Fake GPU" and rows[0]["nccl"] == "2.99.0"
    assert {row["verified"] for row in rows} == {"True"}


# -- the command -------------------------------------------------------------------------------

def invoke(monkeypatch, backend, *args):
    import reducebench.device.one_process as device_multigpu

    monkeypatch.setattr(device_multigpu, "open_multigpu", lambda: backend)
    group = ReducebenchGroup(commands={"multigpu": multigpu_command})
    return CliRunner().invoke(group, ["multigpu", *args])


def test_command_prints_both_tables_and_writes_the_csv(monkeypatch, tmp_path):
    out = tmp_path / "m.csv"
    backend = HostBackend()
    result = invoke(monkeypatch, backend, "--size", "1000", "--gpus", "1,2", "--nccl",
                    "--bytes", "4096", "--max-time", "0.01", "--seed", "3", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "speed-up" in result.output and "busbw GB/s" in result.output
    assert "timing floor" in result.output
    assert out.is_file() and backend.closed


def test_command_fails_with_exit_1_when_a_sum_is_wrong(monkeypatch, tmp_path):
    result = invoke(monkeypatch, HostBackend(drop=True), "--size", "1000", "--gpus", "2",
                    "--max-time", "0.01", "--out", str(tmp_path / "m.csv"))
    assert result.exit_code == 1, result.output
    assert "1 case(s) failed" in result.output


@pytest.mark.parametrize("args, fragment", [
    (["--gpus", "0"], "--gpus"),
    (["--rung", "cub"], "library"),
    (["--rung", "nope"], "unknown rung"),
    (["--size", "2^99"], "too large"),
    (["--nccl", "--bytes", "1001"], "whole number"),
    (["--no-sharded"], "nothing to measure"),
    (["--block", "100"], "block"),
    (["--max-time", "0"], "--max-time"),
])
def test_bad_options_are_one_line_before_any_gpu(monkeypatch, args, fragment):
    def unreachable():
        raise AssertionError("the device layer was reached")

    import reducebench.device.one_process as device_multigpu

    monkeypatch.setattr(device_multigpu, "open_multigpu", unreachable)
    group = ReducebenchGroup(commands={"multigpu": multigpu_command})
    result = CliRunner().invoke(group, ["multigpu", *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.output


# -- rounds -------------------------------------------------------------------------------

class RoundSession(HostSession):
    """Each later call of a case takes longer, so each round's median is known; counts
    the fresh flush buffers asked for."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls, self.renewed = {}, 0

    def new_round(self):
        self.renewed += 1

    def sharded_sum(self, case, host, stop, cold):
        measured = super().sharded_sum(case, host, stop, cold)
        count = self.calls[case.label] = self.calls.get(case.label, 0) + 1
        measured.times_us = [t + count for t in measured.times_us]
        return measured


class RoundBackend(HostBackend):
    def session(self, k):
        return self.sessions.setdefault(k, RoundSession(k, {1: 100.0, 2: 60.0}))


def test_every_case_is_measured_in_interleaved_rounds_each_median_kept():
    backend = RoundBackend()
    rows = measure(backend, nccl_bytes=[], sizes=[1000], rounds=3)
    sharded = [r for r in rows if r.case == SHARDED]
    # one GPU: 100 us plus the call's count, 101, 102, 103 in rounds 1 to 3
    assert sharded[0].rounds == 3
    assert sharded[0].round_medians_us == "101.0000;102.0000;103.0000"
    assert sharded[0].round_spread_pct == pytest.approx(100 * 2 / 102)
    assert sharded[0].samples == 15
    # the floors and sums of both sessions were measured in round 1 before round 2
    assert [backend.sessions[k].renewed for k in (1, 2)] == [2, 2]
    floor = next(r for r in rows if r.case == "timing_floor" and r.gpus == 1)
    assert floor.rounds == 3 and floor.median_us == 4.5


def test_an_interrupted_round_says_what_was_not_saved(monkeypatch, tmp_path):
    import os
    import signal

    class Interrupting(RoundSession):
        def sharded_sum(self, case, host, stop, cold):
            if sum(self.calls.values()) == 1 and self.k == 1:   # the second sum's round
                os.kill(os.getpid(), signal.SIGINT)
            return super().sharded_sum(case, host, stop, cold)

    class Backend(HostBackend):
        def session(self, k):
            return self.sessions.setdefault(k, Interrupting(k, {1: 100.0, 2: 60.0}))

    out = tmp_path / "m.csv"
    result = invoke(monkeypatch, Backend(), "--size", "1000", "--gpus", "1", "--rounds", "3",
                    "--max-time", "0.01", "--seed", "3", "--out", str(out))
    text = " ".join(result.output.split())
    assert result.exit_code == 130, result.output
    assert "had only some of their rounds measured and were not saved (a new run" in text


def test_a_wrong_total_in_a_later_round_fails_the_case():
    class WrongLater(RoundSession):
        def sharded_sum(self, case, host, stop, cold):
            measured = super().sharded_sum(case, host, stop, cold)
            if self.calls[case.label] == 2:   # the second round's totals
                measured.results = [r + 1 for r in measured.results]
            return measured

    class Backend(HostBackend):
        def session(self, k):
            return self.sessions.setdefault(k, WrongLater(k, {1: 100.0, 2: 60.0}))

    rows = measure(Backend(), nccl_bytes=[], sizes=[1000], gpus=[1], rounds=3)
    sharded = next(r for r in rows if r.case == SHARDED)
    assert sharded.status == "FAIL"


def test_a_collectives_wrong_elements_add_up_over_its_rounds():
    class Wrong(HostSession):
        def collective(self, case, stop, cold):
            return MultiMeasurement([80.0] * 5, [1.0] * 5, wrong=1, checked_elements=case.n)

    class Backend(HostBackend):
        def session(self, k):
            return self.sessions.setdefault(k, Wrong(k, {1: 100.0, 2: 60.0}))

    rows = measure(Backend(), sizes=[1000], gpus=[2], rounds=3, sharded=False)
    collective = next(r for r in rows if r.rung.startswith("nccl_"))
    assert collective.status == "FAIL" and collective.wrong == 3
    assert "3 of 3072 checked elements" in collective.error   # 1024 a round, 3 rounds


def test_each_sizes_host_input_is_made_once_for_every_round(monkeypatch):
    import reducebench.multigpu.loop as loop

    made = []
    real = loop.make_input

    def counting(n, dtype, seed, kind, workers=1):
        made.append(n)
        return real(n, dtype, seed, kind, workers=workers)

    monkeypatch.setattr(loop, "make_input", counting)
    measure(HostBackend(), nccl_bytes=[], sizes=[1000, 4099], rounds=3)
    assert made == [1000, 4099]
    monkeypatch.setattr(loop, "HOST_CACHE_BYTES", 0)   # no room: drawn again each round
    made.clear()
    measure(HostBackend(), nccl_bytes=[], sizes=[1000], gpus=[1], rounds=3)
    assert made == [1000] * 3


def test_each_round_samples_with_its_share_of_the_stop_rule_and_the_l2_mode():
    calls = []

    class Recording(HostSession):
        def floor_us(self, stop, cold):
            calls.append(("floor", stop, cold))
            return super().floor_us(stop, cold)

        def sharded_sum(self, case, host, stop, cold):
            calls.append(("sharded", stop, cold))
            return super().sharded_sum(case, host, stop, cold)

        def collective(self, case, stop, cold):
            calls.append(("nccl", stop, cold))
            return super().collective(case, stop, cold)

    class Backend(HostBackend):
        def session(self, k):
            return self.sessions.setdefault(k, Recording(k, {1: 100.0, 2: 60.0}))

    rule = StopRule(min_samples=10, max_time=0.4)
    chosen = settings(sizes=[1000], gpus=[2], rounds=4, stop=rule, cold=False)
    run_multigpu(chosen, Backend(), lambda row: None)
    assert {kind for kind, _, _ in calls} == {"floor", "sharded", "nccl"}
    assert all(stop == rule.for_round(4) and cold is False for _, stop, cold in calls)
    assert len(calls) == 4 * len(plan_cases(chosen))   # every case, every round
