"""Running cases: the device-free half of a measurement. It expands settings into cases,
plans each case once, makes inputs and references, asks a backend (the device layer, or
the host executor in tests) to execute the plan, verifies the values, and turns each
case into a record the moment it completes. `run` and `check` (and so `sanitize`, which
runs `check` under compute-sanitizer) all go through `run` here."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from reducebench.measuring.ceiling import pct_of_ceiling
from reducebench.measuring.settings import RunSettings
from reducebench.measuring.energy import Energy, EnergyNote
from reducebench.core.interrupt import Interrupted
from reducebench.core.errors import OutOfDeviceMemory, UsageError
from reducebench.verify.inputs import (INPUT_THREADS, HostInput, case_inputs, derive_seed,
                                      exact_inputs, new_seed)
from reducebench.ladder.sources import rung_source, source_hash
from reducebench.core.errors import CaseFailed, CaseSkipped, ContextLost
from reducebench.ladder.case import Case
from reducebench.ladder.plan import Plan
from reducebench.measuring.backend import Backend, Measurement, Sampled, Sampling
from reducebench.ladder.registry import Rung
from reducebench.measuring.plausible import impossible_reason
from reducebench.results.schema import OK, SUSPECT, Record, bandwidth_gbps
from reducebench.results.metadata import run_metadata
from reducebench.core.stats import StopRule, summarize
from reducebench.ladder.auto import resolve_auto_cases
from reducebench.verify.verdict import verify

PROFILE_STOP = StopRule(min_samples=3, max_noise=1.0, max_time=0.0, max_samples=3)
THROTTLE_FLOOR = 0.9  # a case measured below this share of the run's first SM clock


def expand_cases(settings: RunSettings) -> list[Case]:
    """Sizes outermost (one input per size and dtype), then dtypes, rungs in ladder
    order, blocks and parameter values."""
    cases: list[Case] = []
    for n in settings.sizes:
        for dtype in settings.dtypes:
            for rung in settings.rungs:
                blocks = [0] if rung.is_library or rung.dispatch else settings.blocks
                for block in blocks:
                    for params in settings.param_sets(rung):
                        cases.append(Case(rung, dtype, n, block, params))
    return cases


def missing_cases(cases: list[Case], done: set[tuple]) -> list[Case]:
    """The cases of a sweep that an interrupted results file does not hold yet."""
    return [c for c in cases if c.key not in done]


def skip_reason(case: Case) -> str | None:
    if case.dtype.name not in case.rung.dtypes:
        return f"{case.rung.name} does not take {case.dtype.name}"
    if case.block and case.block not in case.rung.blocks:
        return f"{case.rung.name} does not take block {case.block}"
    return None


def plan_case(case: Case, sm_count: int) -> Plan:
    """The case's one plan (a grid too large for CUDA is a UsageError)."""
    return case.rung.plan(case.n, case.dtype, case.block, sm_count, case.params)


@dataclass(frozen=True)
class Planned:
    """A case with its one plan, or why it cannot run here (then plan is None)."""

    case: Case
    plan: Plan | None
    skipped: str = ""


def plan_all(cases: list[Case], sm_count: int) -> list[Planned]:
    """Every case planned once, before anything is allocated: the memory check and the
    measurement both use these plans."""
    planned = []
    for case in cases:
        reason = skip_reason(case)
        if reason:
            planned.append(Planned(case, None, reason))
            continue
        try:
            planned.append(Planned(case, plan_case(case, sm_count)))
        except UsageError as exc:
            planned.append(Planned(case, None, str(exc)))
    return planned


def memory_needed(case: Case, plan: Plan, inputs: int) -> int:
    """Every input on the device at once, and the plan's own buffers."""
    acc_itemsize = 8 if case.dtype.acc_name == "float64" else 4
    return inputs * case.n * case.dtype.itemsize + plan.device_bytes(case.n, acc_itemsize)


def check_memory(planned: list[Planned], backend: Backend, kind: str) -> None:
    """Refuse, before allocating anything, a size whose buffers would not fit (a case
    that will be skipped needs nothing)."""
    free = backend.free_memory()
    for case, plan, _ in ((p.case, p.plan, p.skipped) for p in planned if p.plan):
        count = len(exact_inputs(case.n, case.dtype)) if kind == "exact" else 1
        need = memory_needed(case, plan, count)
        if need > free:
            raise OutOfDeviceMemory(
                f"{case.label} needs {need / 2**30:.2f} GiB of device memory; "
                f"{free / 2**30:.2f} GiB is free")


class InputCache:
    """The inputs of one size and dtype on the device at a time (cases are ordered so
    that all cases of one size and dtype share them): (host input, device handle) pairs,
    the first of which is timed."""

    def __init__(self, backend: Backend, seed: int, kind: str) -> None:
        self.backend, self.seed, self.kind = backend, seed, kind
        self.key: tuple | None = None
        self.inputs: list[tuple[HostInput, object]] = []

    def get(self, case: Case) -> list[tuple[HostInput, object]]:
        key = (case.n, case.dtype.name)
        if key != self.key:
            self.release()
            seed = derive_seed(self.seed, case.n, case.dtype)
            for host in case_inputs(case.n, case.dtype, seed, self.kind, INPUT_THREADS):
                self.inputs.append((host, self.backend.upload(host)))
            self.key = key
        return self.inputs

    def release(self) -> None:
        for _, handle in self.inputs:
            self.backend.release(handle)
        self.key, self.inputs = None, []

    def abandon(self) -> None:
        """After a lost context freeing device memory fails too: just forget it."""
        self.key, self.inputs = None, []


def run(settings: RunSettings, backend: Backend, write: Callable[[Record], None],
        on_case: Callable[[Case, int, int], None] | None = None,
        cases: list[Case] | None = None,
        after_case: Callable[[Case, Record], None] | None = None) -> list[Record]:
    """Run (and time, unless settings.timed is off) every case; write each record as
    soon as it exists (after `after_case` has added to it, e.g. hardware counters).
    Raises ContextLost, after writing the failing case, if the GPU context is gone. An
    Interrupted signal leaves the case in progress unwritten."""
    cases = expand_cases(settings) if cases is None else cases
    seed = settings.seed if settings.seed is not None else new_seed()
    meta = run_metadata(backend.device_info(), settings.options(), seed)
    sampling = sampling_for(settings)
    # `auto` becomes the rung its tuning table chooses for each size on this GPU
    cases, variants = resolve_auto_cases(cases, str(meta["gpu"]), int(meta["sm_count"] or 0))
    planned = plan_all(cases, backend.sm_count())
    check_memory(planned, backend, settings.inputs)
    if sampling is not None and hasattr(backend, "warm_up"):
        backend.warm_up()
    if sampling is not None and sampling.hold and hasattr(backend, "timing_floor_us"):
        # an empty kernel timed like every case: no whole reduction can take less
        meta["timing_floor_us"] = round(backend.timing_floor_us(sampling), 3)
    inputs = InputCache(backend, seed, settings.inputs)
    reads = ReadReference(backend, sampling)
    records: list[Record] = []
    first_clock: float | None = None
    try:
        for index, case in enumerate(cases):
            if on_case:
                on_case(case, index, len(cases))
            record = measure_case(planned[index], backend, inputs, sampling, meta)
            record.variant = variants[index]
            if first_clock is None and record.sm_clock_start_mhz > 0:
                first_clock = record.sm_clock_start_mhz
            record.throttled = record.throttled or throttled(record, first_clock)
            reads.add_to(record, case, inputs)
            try:
                if after_case and record.status == "ok":
                    after_case(case, record)
            except Interrupted:  # the case was timed: keep it, without what was cut
                record.note = join_notes(record.note, "interrupted while its counters "
                                         "were read: counter columns empty")
                write(record)
                records.append(record)
                raise
            write(record)
            records.append(record)
            if record.status == "error" and record.error.startswith("context lost"):
                inputs.abandon()
                raise ContextLost(f"{case.label}: {record.error}")
    finally:
        inputs.release()
    return records


class ReadReference:
    """The same-size read: a pure read of a case's input bytes by the fastest ceiling
    kernel, timed as the run's cases are, measured once per (n, itemsize) in a run and
    recorded on every timed record as read_us and pct_read. A backend without
    `read_reference_us` (the host executor, test fakes) leaves both columns empty."""

    def __init__(self, backend: Backend, sampling: Sampling | None) -> None:
        self.backend, self.sampling = backend, sampling
        self.measured: dict[tuple[int, int], float] = {}

    def add_to(self, record: Record, case: Case, inputs: InputCache) -> None:
        measure = getattr(self.backend, "read_reference_us", None)
        if (measure is None or self.sampling is None or record.status != "ok"
                or not record.samples):
            return
        key = (case.n, case.dtype.itemsize)
        if key not in self.measured:
            (_, handle), *_ = inputs.get(case)
            try:
                self.measured[key] = float(measure(handle, case.n, case.dtype.itemsize,
                                                   self.sampling))
            except (CaseFailed, CaseSkipped) as exc:
                self.measured[key] = float("nan")
                record.note = join_notes(record.note, f"read reference: {exc}")
            except ContextLost as exc:  # the run stops after writing this record
                record.status, record.error = "error", f"context lost: read reference: {exc}"
                return
        record.read_us = self.measured[key]
        record.pct_read = pct_read(record.read_us, record.median_us)


def pct_read(read_us: float, median_us: float) -> float:
    """A case's time as a percentage of the same-size read's: 100 * read / median (100:
    as fast as reading the input; NaN where either is missing)."""
    if not (read_us > 0 and median_us > 0):  # NaN compares False
        return float("nan")
    return 100 * read_us / median_us


def sampling_for(settings: RunSettings) -> Sampling | None:
    if not settings.timed:
        return None
    stop = PROFILE_STOP if settings.profile else settings.stop
    return Sampling(stop, cold=settings.cold, hold=not settings.profile,
                    graph=settings.timing == "graph", energy=settings.energy)


def new_record(case: Case, meta: dict) -> Record:
    record = Record(rung=case.rung.name, dtype=case.dtype.name, n=case.n, block=case.block,
                    params=case.params_text(), finish=case.rung.finish,
                    deterministic=case.rung.deterministic, meta=meta)
    record.source, record.source_hash = source_identity(case.rung)
    return record


def measure_case(planned: Planned, backend: Backend, inputs: InputCache,
                 sampling: Sampling | None, meta: dict) -> Record:
    case, plan = planned.case, planned.plan
    record = new_record(case, meta)
    if plan is None:
        record.status, record.error = "skipped", planned.skipped
        return record
    record.bytes_read = plan.bytes_read
    record.grid, record.launches = plan.grid, len(plan.launches)
    (host, handle), *others = inputs.get(case)
    clock_start = backend.sm_clock_mhz()
    try:
        measurement = backend.execute(case, plan, handle, sampling)
        clock_end = backend.sm_clock_mhz()
        checks = [(other, backend.execute(case, plan, other_handle, None))
                  for other, other_handle in others]
    except CaseSkipped as exc:
        record.status, record.error = "skipped", str(exc)
        return record
    except CaseFailed as exc:
        record.status, record.error = "error", str(exc)
        return record
    except ContextLost as exc:
        record.status, record.error = "error", f"context lost: {exc}"
        return record
    judge(record, measurement, host, case, plan)
    for other, checked in checks:
        if record.status == "ok":
            judge(record, checked, other, case, plan, timed_input=False)
    summarize_times(record, measurement, meta)
    if clock_start is not None and clock_end is not None:
        record.sm_clock_start_mhz, record.sm_clock_end_mhz = clock_start, clock_end
    return record


def judge(record: Record, m: Measurement, host: HostInput, case: Case, plan: Plan,
          timed_input: bool = True) -> None:
    """The verdict on one input's values. The record keeps the timed input's result and
    accuracy; another input only adds a failure, named after the input."""
    verdict = verify(m.values, host, case.dtype, plan, m.guard_breaches)
    if timed_input:
        record.result, record.reference = m.values[0], host.reference
        record.abs_error, record.tolerance = verdict.abs_error, verdict.tolerance
        record.rel_error, record.error_ulps = verdict.rel_error, verdict.ulps
    if not verdict.ok:
        record.status, record.error = "FAIL", f"{host.name} input: {verdict.message}"


def summarize_times(record: Record, m: Measurement, meta: dict) -> None:
    if m.timing is not None:
        record_timing(record, m.timing)
    if not m.times_us:
        return
    s = summarize(m.times_us)
    record.samples, record.median_us, record.min_us = s.samples, s.median, s.min
    record.max_us, record.mean_us, record.noise_pct = s.max, s.mean, 100 * s.noise
    record.gbps = bandwidth_gbps(record.bytes_read, s.median)
    peak = float(meta.get("peak_gbps") or 0)
    record.pct_peak = 100 * record.gbps / peak if peak else float("nan")
    record.pct_ceiling = pct_of_ceiling(record.gbps, float(meta.get("ceiling_gbps") or 0))
    mark_if_impossible(record, meta)


def mark_if_impossible(record: Record, meta: dict) -> None:
    """A verified case whose time no GPU could achieve becomes `suspect` (plausible.py)."""
    if record.status != OK:
        return
    reason = impossible_reason(
        record.median_us, record.bytes_read, _number(meta.get("peak_gbps")),
        _number(meta.get("timing_floor_us")), int(_number(meta.get("l2_bytes")) or 0),
        cold=meta.get("mode", "cold") == "cold", graph=meta.get("timing") == "graph")
    if reason:
        record.status, record.note = SUSPECT, join_notes(record.note, reason)


def _number(value) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def record_timing(record: Record, sampled: Sampled) -> None:
    """What sampling saw besides the times: the samples themselves (for the samples
    file), the throttle rule's discards and clock range, graph size and energy."""
    record.raw_samples = sampled.samples
    record.discarded, record.graph_k = sampled.discarded, sampled.graph_k
    record.throttled = record.throttled or sampled.throttled
    clocks = [c for c in getattr(sampled.samples, "sm_clock_mhz", None) or [] if c]
    if clocks:
        record.sm_clock_min_mhz, record.sm_clock_max_mhz = min(clocks), max(clocks)
    energy = sampled.energy
    if isinstance(energy, Energy):
        record.energy_uj, record.gb_per_joule = energy.uj_per_reduction, energy.gb_per_joule
        record.energy_err_pct, record.energy_method = energy.error_pct, energy.method
    elif isinstance(energy, EnergyNote):
        record.energy_note = energy.reason


def source_identity(rung: Rung) -> tuple[str, str]:
    """The kernel file a rung ran (a user's path as given) and a hash of the text that
    was compiled (for a Python callable: imported), so `compare` can tell two versions
    of a kernel apart."""
    if rung.origin == "callable":  # hashed when it was imported: the text that ran
        return rung.source or "", rung.callable_ref.source_hash
    if not rung.source:
        return "", ""
    try:
        return rung.source, source_hash(rung_source(rung))
    except OSError:  # a user's file removed mid-run: the row still says which file
        return rung.source, ""


def throttled(record: Record, first_clock: float | None) -> bool:
    """Whether the case ran below THROTTLE_FLOOR of the SM clock seen at the run's start
    (clocks are NaN where NVML is missing: never throttled then)."""
    low = min(record.sm_clock_start_mhz, record.sm_clock_end_mhz)
    return bool(first_clock) and low < THROTTLE_FLOOR * first_clock


def join_notes(*notes: str) -> str:
    """Several notes in one cell, in order, the empty ones left out."""
    return "; ".join(n for n in notes if n)
