"""Running cases: the device-free half of a measurement. It expands settings into cases,
makes inputs and references, asks a backend (the device layer, or a fake in tests) to
measure, verifies, and turns each measurement into a record the moment it completes."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable, Protocol

from reducebench.config import RunSettings
from reducebench.dtypes import DType
from reducebench.errors import OutOfDeviceMemory
from reducebench.inputs import HostInput, make_input, new_seed
from reducebench.kernels import rung_source, source_hash
from reducebench.registry import Rung
from reducebench.results import Record
from reducebench.stats import StopRule, summarize
from reducebench.tolerance import check

PROFILE_STOP = StopRule(min_samples=3, max_noise=1.0, max_time=0.0, max_samples=3)


@dataclass(frozen=True)
class Case:
    rung: Rung
    dtype: DType
    n: int
    block: int               # 0 for library references, which choose their own
    params: dict[str, int] = field(default_factory=dict, hash=False, compare=False)

    @property
    def label(self) -> str:
        """The NVTX range name, and how progress and errors name the case."""
        extra = "".join(f" {k}={v}" for k, v in sorted(self.params.items()))
        block = f" block={self.block}" if self.block else ""
        return f"{self.rung.name} {self.dtype.name} n={self.n}{block}{extra}"

    def params_text(self) -> str:
        return ";".join(f"{k}={v}" for k, v in sorted(self.params.items()))


@dataclass
class Measurement:
    result: float | int
    times_us: list[float]
    grid: int = 0
    launches: int = 0
    checks: list[float | int] = field(default_factory=list)  # results of later runs
    chain: int = 1        # the plan's accumulation shape, for the tolerance
    atomics: int = 0


class CaseSkipped(Exception):
    """The case cannot run here (e.g. PyTorch not installed); not a failure."""


class CaseFailed(Exception):
    """Compile error, CUDA error or refusal in one case; the run goes on."""


class ContextLost(Exception):
    """A CUDA error that poisons the context (illegal address): nothing more can run."""


class Backend(Protocol):
    def metadata(self) -> dict: ...
    def sm_count(self) -> int: ...
    def free_memory(self) -> int: ...
    def case_bytes(self, case: Case) -> int: ...
    def upload(self, host: HostInput, dtype: DType) -> object: ...
    def release(self, handle: object) -> None: ...
    def measure(self, case: Case, handle: object, stop: StopRule, cold: bool) -> Measurement: ...
    def sm_clock_mhz(self) -> float | None: ...


def expand_cases(settings: RunSettings) -> list[Case]:
    """Sizes outermost (one input per size and dtype), then dtypes, rungs in ladder
    order, blocks and parameter values."""
    cases: list[Case] = []
    for n in settings.sizes:
        for dtype in settings.dtypes:
            for rung in settings.rungs:
                blocks = [0] if rung.is_library else settings.blocks
                for block in blocks:
                    for params in settings.param_sets(rung):
                        cases.append(Case(rung, dtype, n, block, params))
    return cases


def case_key(rung: str, dtype: str, n: int, block: int, params: str) -> tuple:
    return (rung, dtype, int(n), int(block), params or "")


def missing_cases(cases: list[Case], done: set[tuple]) -> list[Case]:
    """The cases of a sweep that an interrupted results file does not hold yet."""
    return [c for c in cases
            if case_key(c.rung.name, c.dtype.name, c.n, c.block, c.params_text()) not in done]


def skip_reason(case: Case) -> str | None:
    if case.dtype.name not in case.rung.dtypes:
        return f"{case.rung.name} does not take {case.dtype.name}"
    if case.block and case.block not in case.rung.blocks:
        return f"{case.rung.name} does not take block {case.block}"
    return None


def derive_seed(seed: int, n: int, dtype: DType) -> int:
    """A different, reproducible input for every size and dtype of one run."""
    return zlib.crc32(f"{seed}:{n}:{dtype.name}".encode())


def input_bytes(n: int, dtype: DType) -> int:
    return n * dtype.itemsize


def check_memory(cases: list[Case], backend: Backend) -> None:
    """Refuse, before allocating anything, a size whose buffers would not fit."""
    free = backend.free_memory()
    for case in cases:
        if skip_reason(case):
            continue
        need = input_bytes(case.n, case.dtype) + backend.case_bytes(case)
        if need > free:
            raise OutOfDeviceMemory(
                f"{case.label} needs {need / 2**30:.2f} GiB of device memory; "
                f"{free / 2**30:.2f} GiB is free")


def run(settings: RunSettings, backend: Backend, write: Callable[[Record], None],
        on_case: Callable[[Case, int, int], None] | None = None,
        cases: list[Case] | None = None) -> list[Record]:
    """Measure every case; write each record as soon as it exists. Returns all records.
    Raises ContextLost (after writing the failing case) if the GPU context is gone."""
    cases = expand_cases(settings) if cases is None else cases
    seed = settings.seed if settings.seed is not None else new_seed()
    meta = {**backend.metadata(), "mode": settings.mode, "seed": seed}
    stop = PROFILE_STOP if settings.profile else settings.stop
    check_memory(cases, backend)
    records: list[Record] = []
    current: tuple[int, str] | None = None
    host: HostInput | None = None
    handle = None
    first_clock: float | None = None
    try:
        for index, case in enumerate(cases):
            if on_case:
                on_case(case, index, len(cases))
            if skip_reason(case) is None and current != (case.n, case.dtype.name):
                if handle is not None:
                    backend.release(handle)
                    handle = None
                host = make_input(case.n, case.dtype, derive_seed(seed, case.n, case.dtype))
                handle = backend.upload(host, case.dtype)
                current = (case.n, case.dtype.name)
            record = measure_case(case, backend, handle, host, stop, settings.cold, meta)
            if first_clock is None and record.sm_clock_start_mhz > 0:
                first_clock = record.sm_clock_start_mhz
            flag_throttling(record, first_clock)
            write(record)
            records.append(record)
            if record.status == "error" and record.error.startswith("context lost"):
                handle = None  # freeing memory in a lost context fails too: leave it
                raise ContextLost(f"{case.label}: {record.error}")
    finally:
        if handle is not None:
            backend.release(handle)
    return records


def source_identity(rung: Rung) -> tuple[str, str]:
    """The kernel file a rung ran (a user's path as given) and a hash of the text that
    was compiled, so `compare` can tell two versions of a kernel apart."""
    if not rung.source:
        return "", ""
    try:
        return rung.source, source_hash(rung_source(rung))
    except OSError:  # a user's file removed mid-run: the row still says which file
        return rung.source, ""


def measure_case(case: Case, backend: Backend, handle: object, host: HostInput | None,
                 stop: StopRule, cold: bool, meta: dict) -> Record:
    record = Record(rung=case.rung.name, dtype=case.dtype.name, n=case.n, block=case.block,
                    params=case.params_text(), finish=case.rung.finish,
                    deterministic=case.rung.deterministic, meta=meta,
                    bytes_read=case.rung.bytes_read(case.n, case.dtype))
    record.source, record.source_hash = source_identity(case.rung)
    reason = skip_reason(case)
    if reason:
        record.status, record.error = "skipped", reason
        return record
    assert host is not None
    clock_start = backend.sm_clock_mhz()
    try:
        m = backend.measure(case, handle, stop, cold)
    except CaseSkipped as exc:
        record.status, record.error = "skipped", str(exc)
        return record
    except CaseFailed as exc:
        record.status, record.error = "error", str(exc)
        return record
    except ContextLost as exc:
        record.status, record.error = "error", f"context lost: {exc}"
        return record
    clock_end = backend.sm_clock_mhz()
    fill_measurement(record, m, host, case, meta)
    if clock_start is not None and clock_end is not None:
        record.sm_clock_start_mhz, record.sm_clock_end_mhz = clock_start, clock_end
    return record


def fill_measurement(record: Record, m: Measurement, host: HostInput, case: Case,
                     meta: dict) -> None:
    record.grid, record.launches = m.grid, m.launches
    record.reference = host.reference
    outcomes = [check(v, host.reference, case.n, case.dtype, host.abs_sum, m.chain, m.atomics)
                for v in (m.result, *m.checks)]
    record.result, record.tolerance = m.result, outcomes[0][2]
    record.abs_error = max(error for _, error, _ in outcomes)
    if not all(passed for passed, _, _ in outcomes):
        record.status = "FAIL"
        later = f" (later runs: {', '.join(map(repr, m.checks))})" if m.checks else ""
        record.error = (f"result {m.result!r}{later} vs reference {host.reference!r}: error "
                        f"{record.abs_error:.4g} > tolerance {record.tolerance:.4g}")
    if m.times_us:
        s = summarize(m.times_us)
        record.samples, record.median_us, record.min_us = s.samples, s.median, s.min
        record.max_us, record.mean_us, record.noise_pct = s.max, s.mean, 100 * s.noise
        record.gbps = record.bytes_read / (s.median * 1e3)
        peak = float(meta.get("peak_gbps") or 0)
        record.pct_peak = 100 * record.gbps / peak if peak else float("nan")


def flag_throttling(record: Record, first_clock: float | None, floor: float = 0.9) -> None:
    """Mark a case measured below `floor` of the SM clock seen at the start of the run."""
    low = min(record.sm_clock_start_mhz, record.sm_clock_end_mhz)
    record.throttled = bool(first_clock and low == low and low < floor * first_clock)
