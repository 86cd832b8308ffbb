"""The loop of `multigpu`: every case measured through a backend (the device layer's one
process driving every GPU, its launcher-started ranks, or a fake in tests), each row
written the moment its case completes. docs/multi-gpu.md explains the method."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Callable, Protocol

from reducebench.core.errors import CaseFailed, CaseSkipped
from reducebench.core.stats import StopRule, summarize
from reducebench.ladder.plan import Plan
from reducebench.multigpu.cases import (FLOOR, SHARDED, MultiGpuCase,
                                        MultiGpuSettings, plan_cases, skip_reason)
from reducebench.multigpu.shards import algbw_gbps, busbw_gbps, efficiency, speedup
from reducebench.results.metadata import run_metadata
from reducebench.results.schema import MULTIGPU, MultiGpuRecord
from reducebench.verify.inputs import (INPUT_THREADS, HostInput, derive_seed, make_input,
                                      new_seed)
from reducebench.verify.verdict import verify


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
        record.status, record.error = "error", "no result was read back"
        return
    verdict = verify(values, host, case.dtype, Plan(chain=m.chain, atomics=m.atomics))
    record.result, record.tolerance = m.results[0], verdict.tolerance
    record.abs_error, record.rel_error, record.error_ulps = \
        verdict.abs_error, verdict.rel_error, verdict.ulps
    if not verdict.ok:
        record.status = "FAIL"
        record.error = (f"per rank {m.results!r}, after sampling {m.checks!r}: "
                        f"{verdict.message}")
    fill_times(record, m)


def fill_collective(record: MultiGpuRecord, m: MultiMeasurement, case: MultiGpuCase) -> None:
    record.wrong = m.wrong
    if m.wrong or not m.checked_elements:
        record.status = "FAIL"
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
    host: HostInput | None = None
    host_key: tuple | None = None
    records: list[MultiGpuRecord] = []
    for index, case in enumerate(cases):
        if on_case:
            on_case(case, index, len(cases))
        record = new_record(case, meta, common)
        if hasattr(backend, "layout"):  # a launcher's ranks, one GPU each
            record.nodes, record.gpus_per_node, record.cross_node = backend.layout(case.gpus)
        reason = everything_off or skip_reason(case, present)
        if reason:
            record.status, record.error = "skipped", reason
        else:
            record.devices = backend.devices(case.gpus)
            record.floor_us = floors.get(case.gpus, math.nan)
            if case.kind == SHARDED and host_key != (case.n, case.dtype.name):
                host = None  # the previous input goes before the next is made
                host = make_input(case.n, case.dtype, derive_seed(seed, case.n, case.dtype),
                                  settings.inputs, workers=INPUT_THREADS)
                host_key = (case.n, case.dtype.name)
            _measure(record, case, backend, host, settings)
            if case.kind == FLOOR and record.verified:
                floors[case.gpus] = record.floor_us = record.median_us
            _scaling(record, case, one_gpu)
        write(record)
        records.append(record)
    return records


def _measure(record: MultiGpuRecord, case: MultiGpuCase, backend: MultiGpuBackend,
             host: HostInput | None, settings: MultiGpuSettings) -> None:
    try:
        session = backend.session(case.gpus)  # NCCL's set-up can fail: inside the try
        if case.kind == FLOOR:
            record.median_us = session.floor_us(settings.stop, settings.cold)
            record.samples = 1
        elif case.kind == SHARDED:
            assert host is not None
            fill_sharded(record, session.sharded_sum(case, host, settings.stop,
                                                     settings.cold), host, case)
        else:
            fill_collective(record, session.collective(case, settings.stop, settings.cold),
                            case)
    except CaseSkipped as exc:
        record.status, record.error = "skipped", str(exc)
    except CaseFailed as exc:
        record.status, record.error = "error", str(exc)


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
