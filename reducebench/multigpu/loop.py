"""The loop of `multigpu`: every case measured through a backend (the device layer's one
process driving every GPU, its launcher-started ranks, or a fake in tests), in
interleaved rounds as a single-GPU run's cases are (measuring/rounds.py), each row
written the moment its last round is in. docs/multi-gpu.md explains the method."""

from __future__ import annotations

import math
import os
import statistics
from dataclasses import dataclass, field
from typing import Callable, Protocol

from reducebench.core.errors import CaseFailed, CaseSkipped
from reducebench.core.interrupt import Interrupted
from reducebench.core.stats import RoundSummary, StopRule, summarize
from reducebench.ladder.plan import Plan
from reducebench.multigpu.cases import (FLOOR, SHARDED, MultiGpuCase,
                                        MultiGpuSettings, plan_cases, skip_reason)
from reducebench.multigpu.shards import algbw_gbps, busbw_gbps, efficiency, speedup
from reducebench.results.metadata import run_metadata
from reducebench.results.schema import ERROR, FAIL, MULTIGPU, OK, SKIPPED, MultiGpuRecord, medians_text
from reducebench.verify.inputs import (INPUT_THREADS, HostInput, derive_seed, make_input,
                                      new_seed)
from reducebench.verify.verdict import verify


# Host copies of inputs kept for later rounds; larger runs draw them again.
HOST_CACHE_BYTES = 8 << 30


# -- measurements and records ---------------------------------------------------------------

@dataclass
class MultiMeasurement:
    """What the device layer reports for one case."""

    times_us: list[float]                 # per sample: the slowest rank's interval
    spreads_us: list[float] = field(default_factory=list)  # per sample: slowest - fastest
    results: list[float | int] = field(default_factory=list)  # sharded: the total on each rank
    checks: list[float | int] = field(default_factory=list)   # the totals after sampling
    chain: int = 1
    atomics: int = 0
    shard_sizes: tuple[int, ...] = ()
    wrong: int = 0                        # collectives: elements != the elementwise sum
    checked_elements: int = 0


def new_record(case: MultiGpuCase, meta: dict, extra: dict) -> MultiGpuRecord:
    return MultiGpuRecord(case=case.kind, rung=case.name, dtype=case.dtype.name, n=case.n,
                          gpus=case.gpus, block=case.block, params=case.params_text(),
                          local_rung=case.rung.name if case.rung else "",
                          in_place=case.in_place, bytes=case.nbytes, meta=meta, **extra)


def fill_times(record: MultiGpuRecord, m: MultiMeasurement) -> None:
    if not m.times_us:
        return
    s = summarize(m.times_us)
    record.samples, record.median_us, record.min_us = s.samples, s.median, s.min
    record.max_us, record.noise_pct = s.max, 100 * s.noise
    if m.spreads_us:
        record.spread_us = summarize(m.spreads_us).median
    record.gbps = algbw_gbps(record.bytes, s.median)


def fill_sharded(record: MultiGpuRecord, m: MultiMeasurement, host: HostInput,
                 case: MultiGpuCase) -> None:
    """Every rank's total, after the first verified run and after sampling, is judged
    like any single-GPU result (verify.py: exact inputs must match exactly); the row
    shows rank 0's first total."""
    record.shards = ";".join(map(str, m.shard_sizes))
    record.reference = host.reference
    values = [*m.results, *m.checks]
    if not values:
        record.status, record.error = ERROR, "no result was read back"
        return
    verdict = verify(values, host, case.dtype, Plan(chain=m.chain, atomics=m.atomics))
    record.result, record.tolerance = m.results[0], verdict.tolerance
    record.abs_error, record.rel_error, record.error_ulps = \
        verdict.abs_error, verdict.rel_error, verdict.ulps
    if not verdict.ok:
        record.status = FAIL
        record.error = (f"per rank {m.results!r}, after sampling {m.checks!r}: "
                        f"{verdict.message}")
    fill_times(record, m)


def fill_collective(record: MultiGpuRecord, m: MultiMeasurement, case: MultiGpuCase) -> None:
    record.wrong = m.wrong
    if m.wrong or not m.checked_elements:
        record.status = FAIL
        record.error = (f"{m.wrong} of {m.checked_elements} checked elements differ from the "
                        "elementwise sum over ranks")
    fill_times(record, m)
    if record.samples:
        record.algbw_gbps = algbw_gbps(case.nbytes, record.median_us)
        record.busbw_gbps = busbw_gbps(case.kind, case.nbytes, record.median_us, case.gpus)


# -- the loop ------------------------------------------------------------------------------

class Session(Protocol):
    """k GPUs with their streams and NCCL communicators (the device layer's)."""

    def floor_us(self, stop: StopRule, cold: bool) -> float: ...
    def sharded_sum(self, case: MultiGpuCase, host: HostInput, stop: StopRule,
                    cold: bool) -> MultiMeasurement: ...
    def collective(self, case: MultiGpuCase, stop: StopRule, cold: bool) -> MultiMeasurement: ...


class MultiGpuBackend(Protocol):
    def present(self) -> int: ...
    def unavailable_reason(self) -> str | None: ...   # e.g. no NCCL: every case skipped
    def device_info(self) -> dict: ...                # results.DEVICE_FIELDS of GPU 0
    def devices(self, k: int) -> str: ...
    def nccl_version(self) -> str: ...
    def session(self, k: int) -> Session: ...
    # Under a launcher (device/cluster.py) also: layout(k) -> (nodes, GPUs per node,
    # cross_node) and rank_fields() -> results.schema.RANK_FIELDS of the writing rank.


def nccl_environment() -> str:
    """The NCCL_* variables this process was started with, read only: reported so a row
    says e.g. NCCL_NVLS_ENABLE=0, never set or changed here."""
    return ";".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("NCCL_"))


def run_multigpu(settings: MultiGpuSettings, backend: MultiGpuBackend,
                 write: Callable[[MultiGpuRecord], None],
                 on_case: Callable[[MultiGpuCase, int, int], None] | None = None,
                 cases: list[MultiGpuCase] | None = None) -> list[MultiGpuRecord]:
    """Every case in settings.rounds interleaved rounds (measuring/rounds.py), each row
    written once its last round is in (a case that fails, at once); the rows come back
    in the cases' order."""
    cases = plan_cases(settings) if cases is None else cases
    seed = settings.seed if settings.seed is not None else new_seed()
    rank = backend.rank_fields() if hasattr(backend, "rank_fields") else None
    meta = run_metadata(backend.device_info(), settings.options(), seed, kind=MULTIGPU,
                        rank=rank)
    present = backend.present()
    everything_off = backend.unavailable_reason()
    common = {"nccl": backend.nccl_version(), "nccl_env": nccl_environment()}
    floors: dict[int, float] = {}
    one_gpu: dict[tuple, float] = {}
    inputs = HostInputs(seed, settings.inputs)
    rounds = max(1, settings.rounds)
    stop = settings.stop.for_round(rounds)
    states = [CaseRounds(case, new_record(case, meta, common)) for case in cases]
    finished: dict[int, MultiGpuRecord] = {}
    sessions: set[int] = set()
    try:
        for round_index in range(rounds):
            if round_index:
                for k in sorted(sessions):   # a fresh flush buffer on every GPU
                    session = backend.session(k)
                    if hasattr(session, "new_round"):
                        session.new_round()
            for index, state in enumerate(states):
                if state.done:
                    continue
                case, record = state.case, state.record
                if on_case:
                    on_case(case, round_index * len(states) + index, rounds * len(states))
                if round_index == 0:
                    start_case(state, backend, everything_off, present)
                if record.status == OK:
                    host = inputs.get(case) if case.kind == SHARDED else None
                    _measure_round(state, backend, host, stop, settings.cold)
                    if record.status == OK:   # its session opened
                        sessions.add(case.gpus)
                if record.status != OK or round_index == rounds - 1:
                    finish(state, floors, one_gpu)
                    write(record)
                    state.done = True
                    finished[index] = record
    except Interrupted as exc:
        exc.unfinished = sum(1 for s in states if s.measurements and not s.done)
        raise
    return [finished[index] for index in sorted(finished)]


@dataclass
class CaseRounds:
    """One case of a multi-GPU run, as its rounds come in."""

    case: MultiGpuCase
    record: MultiGpuRecord
    measurements: list = field(default_factory=list)   # a MultiMeasurement (or a floor) a round
    host: HostInput | None = None
    done: bool = False


class HostInputs:
    """Each size and dtype's host input, drawn once and kept for the later rounds (up to
    HOST_CACHE_BYTES; drawn again from its seed beyond that)."""

    def __init__(self, seed: int, kind: str) -> None:
        self.seed, self.kind = seed, kind
        self.kept: dict[tuple, HostInput] = {}
        self.kept_bytes = 0

    def get(self, case: MultiGpuCase) -> HostInput:
        key = (case.n, case.dtype.name)
        if key in self.kept:
            return self.kept[key]
        host = make_input(case.n, case.dtype, derive_seed(self.seed, case.n, case.dtype),
                          self.kind, workers=INPUT_THREADS)
        if self.kept_bytes + host.data.nbytes <= HOST_CACHE_BYTES:
            self.kept[key], self.kept_bytes = host, self.kept_bytes + host.data.nbytes
        return host


def start_case(state: CaseRounds, backend: MultiGpuBackend, everything_off: str | None,
               present: int) -> None:
    """What a case's row says before it is measured: where it runs, or why it cannot."""
    case, record = state.case, state.record
    if hasattr(backend, "layout"):  # a launcher's ranks, one GPU each
        record.nodes, record.gpus_per_node, record.cross_node = backend.layout(case.gpus)
    reason = everything_off or skip_reason(case, present)
    if reason:
        record.status, record.error = SKIPPED, reason
    else:
        record.devices = backend.devices(case.gpus)


def _measure_round(state: CaseRounds, backend: MultiGpuBackend, host: HostInput | None,
                   stop: StopRule, cold: bool) -> None:
    case, record = state.case, state.record
    try:
        session = backend.session(case.gpus)  # NCCL's set-up can fail: inside the try
        if case.kind == FLOOR:
            state.measurements.append(session.floor_us(stop, cold))
        elif case.kind == SHARDED:
            assert host is not None
            state.host = host
            state.measurements.append(session.sharded_sum(case, host, stop, cold))
        else:
            state.measurements.append(session.collective(case, stop, cold))
    except CaseSkipped as exc:
        record.status, record.error = SKIPPED, str(exc)
    except CaseFailed as exc:
        record.status, record.error = ERROR, str(exc)


def finish(state: CaseRounds, floors: dict[int, float], one_gpu: dict[tuple, float]) -> None:
    """The case's row from its rounds: verified on every round's values, the samples
    pooled, each round's median and their spread."""
    case, record = state.case, state.record
    if not state.measurements:
        return
    record.floor_us = floors.get(case.gpus, math.nan)
    if case.kind == FLOOR:
        medians = [float(m) for m in state.measurements]
        record.median_us, record.samples = statistics.median(medians), 1
        _record_rounds(record, medians)
        if record.verified:
            floors[case.gpus] = record.floor_us = record.median_us
        return
    combined = combine(state.measurements)
    if case.kind == SHARDED:
        fill_sharded(record, combined, state.host, case)
    else:
        fill_collective(record, combined, case)
    if record.samples:
        _record_rounds(record, [statistics.median(m.times_us) for m in state.measurements
                                if m.times_us])
    _scaling(record, case, one_gpu)


def combine(measurements: list[MultiMeasurement]) -> MultiMeasurement:
    """Every round's samples pooled; every round's totals kept for the verdict; the
    collectives' wrong elements added up."""
    first = measurements[0]
    return MultiMeasurement(
        times_us=[t for m in measurements for t in m.times_us],
        spreads_us=[t for m in measurements for t in m.spreads_us],
        results=list(first.results),
        checks=[v for m in measurements for v in m.checks]
        + [v for m in measurements[1:] for v in m.results],
        chain=first.chain, atomics=first.atomics, shard_sizes=first.shard_sizes,
        wrong=sum(m.wrong for m in measurements),
        checked_elements=sum(m.checked_elements for m in measurements))


def _record_rounds(record: MultiGpuRecord, medians: list[float]) -> None:
    summary = RoundSummary(tuple(medians))
    record.rounds = len(medians)
    if len(medians) > 1:
        record.round_medians_us = medians_text(medians)
        record.round_spread_pct = summary.spread_pct


def _scaling(record: MultiGpuRecord, case: MultiGpuCase, one_gpu: dict[tuple, float]) -> None:
    """Speed-up and efficiency of a sharded sum against the same case on one GPU."""
    if case.kind != SHARDED or not record.verified or not record.samples:
        return
    key = (case.name, case.dtype.name, case.n, case.block)
    if case.gpus == 1:
        one_gpu[key] = record.median_us
    if key in one_gpu:
        record.speedup = speedup(one_gpu[key], record.median_us)
        record.efficiency = efficiency(record.speedup, case.gpus)
