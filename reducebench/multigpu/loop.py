"""Reductions across the GPUs of one host, without the GPU: how n elements are split into
k shards, what the cases are, the figures nccl-tests defines (algbw, busbw), speed-up and
parallel efficiency, the host input made in parallel chunks, and the loop that measures
every case through a backend (the device layer, or a fake in tests) and writes a row the
moment each case completes. docs/multi-gpu.md explains the method.

Shards: contiguous, in rank order, every element in exactly one. With `align` = 1 their
sizes differ by at most one element; the sharded sum uses `align` = the elements of one
16-byte vector, so every boundary falls on a 16-byte multiple and the sizes differ by at
most one vector (see shard_bounds)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Callable, Protocol


from reducebench.core.dtypes import DType
from reducebench.core.errors import UsageError
from reducebench.verify.inputs import DEFAULT_INPUTS, HostInput, derive_seed, make_input, new_seed
from reducebench.core.errors import CaseFailed, CaseSkipped
from reducebench.ladder.plan import Plan
from reducebench.ladder.registry import LADDER, Rung, get_rung
from reducebench.results.schema import MULTIGPU, MultiGpuRecord, bandwidth_gbps
from reducebench.results.metadata import run_metadata
from reducebench.core.stats import StopRule, summarize
from reducebench.verify.verdict import verify

VECTOR_BYTES = 16
# Threads making a host input: each chunk's sign shuffle waits on DRAM (about 1.6 s per
# 2^24 elements), so threads scale with cores; each holds about 0.5 GiB of temporaries.
# Threads that make a host input: a 2^33-element input is 512 chunks of 2^24.
INPUT_THREADS = min(32, os.cpu_count() or 1)
# The local rung when --rung is not given, whatever the size: pingpong is vector_load's
# kernel without the memset before it. vector_load is the fastest rung at every size from
# 2^16 to 2^28 in results/h100/sweep_a487ea9.csv (below 2^16 every rung costs the same launch
# latency, within a microsecond), and pingpong beat it at 2^24 in the README's run
# (24.93 against 25.70 us). One rule for every size keeps the scaling curves comparable.
DEFAULT_LOCAL_RUNG = "pingpong"

SHARDED = "sharded_sum"
ALLREDUCE = "nccl_allreduce"
REDUCE = "nccl_reduce"
FLOOR = "timing_floor"
COLLECTIVES = (ALLREDUCE, REDUCE)
NCCL_ROOT = 0  # the rank that receives nccl_reduce's result


# -- shards ------------------------------------------------------------------------------

def shard_bounds(n: int, k: int, align: int = 1) -> list[tuple[int, int]]:
    """[start, end) of each of k contiguous shards of n elements, in rank order.

    The n // align whole granules of `align` elements are dealt out as evenly as possible
    (the first shards get one more), and the n % align elements left over go to the last
    shard. So every boundary but the end is a multiple of `align`, and sizes differ by at
    most `align` elements (by at most one when align = 1). Shards may be empty when
    n < k * align."""
    if k < 1:
        raise ValueError(f"need at least one shard, not {k}")
    if n < 0 or align < 1:
        raise ValueError(f"invalid n={n} or align={align}")
    granules, leftover = divmod(n, align)
    per_shard, extra = divmod(granules, k)
    bounds, start = [], 0
    for rank in range(k):
        size = (per_shard + (1 if rank < extra else 0)) * align
        if rank == k - 1:
            size += leftover
        bounds.append((start, start + size))
        start += size
    return bounds


def shard_sizes(n: int, k: int, align: int = 1) -> list[int]:
    return [end - start for start, end in shard_bounds(n, k, align)]


def shard_alignment(dtype: DType) -> int:
    """Elements per 16-byte vector: the sharded sum's boundaries fall on these."""
    return max(1, VECTOR_BYTES // dtype.itemsize)


# -- nccl-tests' figures (NVIDIA/nccl-tests, doc/PERFORMANCE.md) ---------------------------

def algbw_gbps(nbytes: int, time_us: float) -> float:
    """Algorithm bandwidth: size / time, in GB/s (10^9 bytes per second)."""
    return bandwidth_gbps(nbytes, time_us) if time_us > 0 else math.nan


def bus_factor(collective: str, k: int) -> float:
    """busbw / algbw: 2(k-1)/k for an all-reduce, 1 for a reduce to one root."""
    if collective == ALLREDUCE:
        return 2 * (k - 1) / k
    if collective == REDUCE:
        return 1.0
    raise ValueError(f"no bus bandwidth factor for {collective!r}")


def busbw_gbps(collective: str, nbytes: int, time_us: float, k: int) -> float:
    return algbw_gbps(nbytes, time_us) * bus_factor(collective, k)


def speedup(time_one_gpu_us: float, time_us: float) -> float:
    return time_one_gpu_us / time_us if time_us > 0 else math.nan


def efficiency(speed_up: float, k: int) -> float:
    """Parallel efficiency: the speed-up per GPU (1.0 is perfect scaling)."""
    return speed_up / k


# -- cases ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class MultiGpuCase:
    kind: str                 # sharded_sum | nccl_allreduce | nccl_reduce | timing_floor
    dtype: DType
    n: int                    # sharded: the whole input; collectives: elements per rank
    gpus: int
    rung: Rung | None = None  # the local rung of a sharded sum
    block: int = 0
    in_place: bool = False    # collectives: sendbuff == recvbuff
    params: dict[str, int] = field(default_factory=dict, hash=False, compare=False)

    @property
    def nbytes(self) -> int:
        return self.n * self.dtype.itemsize

    @property
    def name(self) -> str:
        """The CSV's rung column."""
        if self.kind == SHARDED:
            return f"{SHARDED}:{self.rung.name if self.rung else '?'}"
        return self.kind

    @property
    def label(self) -> str:
        """The NVTX range name and how progress and errors name the case."""
        if self.kind == FLOOR:
            return f"{FLOOR} gpus={self.gpus}"
        place = ""
        if self.kind in COLLECTIVES:
            place = " in-place" if self.in_place else " out-of-place"
        block = f" block={self.block}" if self.block else ""
        return f"{self.name} {self.dtype.name} n={self.n} gpus={self.gpus}{block}{place}"

    def params_text(self) -> str:
        """Part of the row's key, so two rows of one file never share (rung, dtype, n,
        block, params)."""
        text = f"gpus={self.gpus}"
        if self.kind in COLLECTIVES:
            text += f";in_place={int(self.in_place)}"
        return text


def local_rung(name: str | None) -> Rung:
    """The rung each GPU reduces its shard with: a ladder kernel, never a library."""
    rung = get_rung(name or DEFAULT_LOCAL_RUNG)
    if rung.is_library:
        kernels = ", ".join(r.name for r in LADDER.values() if not r.is_library)
        raise UsageError(f"--rung {rung.name} is a library reference; the local rung of a "
                         f"sharded sum must be a ladder kernel: {kernels}")
    return rung


def combined_shape(chains: list[int], atomics: list[int], k: int) -> tuple[int, int]:
    """The accumulation shape that sets a sharded sum's tolerance: the longest per-thread
    chain of any shard, and its largest count of atomics plus the k-1 additions in which
    NCCL combines the partial sums (tolerance.py: each adds to the random walk)."""
    return max(chains, default=1), max(atomics, default=0) + k - 1


@dataclass
class MultiGpuSettings:
    sizes: list[int]
    dtypes: list[DType]
    gpus: list[int]
    rung: Rung
    block: int = 256
    sharded: bool = True
    nccl_bytes: list[int] = field(default_factory=list)  # empty: no NCCL reference cases
    cold: bool = True
    inputs: str = DEFAULT_INPUTS   # exact | random (inputs.py)
    seed: int | None = None
    stop: StopRule = field(default_factory=StopRule)
    floor: bool = True

    @property
    def mode(self) -> str:
        return "cold" if self.cold else "warm"

    def options(self) -> dict:
        """The sweep, for the rows' options column."""
        return {"size": self.sizes, "dtype": [d.name for d in self.dtypes], "gpus": self.gpus,
                "rung": self.rung.name, "block": self.block, "sharded": self.sharded,
                "nccl_bytes": self.nccl_bytes, "mode": self.mode, "timing": "single",
                "inputs": self.inputs}


def parse_gpus(text: str, present: int) -> list[int]:
    """`all` (1 to every GPU present), or a comma list of counts. Counts past the GPUs
    present are kept: their cases are skipped with the reason."""
    if text.strip().lower() == "all":
        return list(range(1, max(present, 1) + 1))
    counts: list[int] = []
    for item in text.split(","):
        token = item.strip()
        if not token.isdigit() or int(token) < 1:
            raise UsageError(f"--gpus {text!r}: expected counts of GPUs from 1 up "
                             "(e.g. 1,2) or all")
        if int(token) not in counts:
            counts.append(int(token))
    return counts


def settings_from_options(options: dict, present: int) -> MultiGpuSettings:
    """The `multigpu` command's options, each checked (UsageError names the bad one).
    `present` resolves --gpus all; before a GPU is opened, pass 1 to check the rest."""
    from reducebench.measuring.settings import parse_blocks, stop_rule
    from reducebench.core.dtypes import parse_dtypes
    from reducebench.core.sizes import parse_sizes

    sharded, nccl = bool(options.get("sharded", True)), bool(options.get("nccl", False))
    if not sharded and not nccl:
        raise UsageError("--no-sharded without --nccl leaves nothing to measure")
    blocks = parse_blocks(options.get("block", 256))
    if len(blocks) != 1:
        raise UsageError(f"--block {options.get('block')}: one block size for the local rung")
    dtypes = parse_dtypes(options.get("dtype", "float32"))
    try:  # checked even without --nccl: a bad value is refused, never ignored
        nccl_bytes = parse_sizes(options.get("bytes", "2^10..2^30"))
    except UsageError as exc:
        raise UsageError(f"--bytes: {exc}") from None
    if not nccl:
        nccl_bytes = []
    for dtype in dtypes:
        collective_counts(nccl_bytes, dtype)
    limits = {"min_samples": "min_samples", "max_noise_pct": "max_noise",
              "max_time": "max_time"}
    stop = stop_rule({key: options[option] for key, option in limits.items()
                      if options.get(option) is not None})
    return MultiGpuSettings(
        sizes=parse_sizes(options.get("size", "2^24")), dtypes=dtypes,
        gpus=parse_gpus(str(options.get("gpus", "all")), present),
        rung=local_rung(options.get("rung")), block=blocks[0], sharded=sharded,
        nccl_bytes=nccl_bytes, cold=bool(options.get("cold", True)),
        inputs=options.get("inputs", DEFAULT_INPUTS), seed=options.get("seed"), stop=stop)


def collective_counts(nbytes: list[int], dtype: DType) -> list[int]:
    for size in nbytes:
        if size % dtype.itemsize:
            raise UsageError(f"--bytes {size} is not a whole number of {dtype.name} elements "
                             f"({dtype.itemsize} bytes each)")
    return [size // dtype.itemsize for size in nbytes]


def plan_cases(settings: MultiGpuSettings) -> list[MultiGpuCase]:
    """The timing floor for each k first, then the sharded sums (size, dtype, k: k = 1
    first, so later rows get their speed-up), then the NCCL reference cases for every
    k from 2 (over one GPU a collective moves nothing: nccl-tests' busbw is 0)."""
    cases: list[MultiGpuCase] = []
    if settings.floor:
        cases += [MultiGpuCase(FLOOR, settings.dtypes[0], 1, k) for k in settings.gpus]
    if settings.sharded:
        for n in settings.sizes:
            for dtype in settings.dtypes:
                for k in sorted(settings.gpus):
                    cases.append(MultiGpuCase(SHARDED, dtype, n, k, settings.rung,
                                              settings.block, params=dict(settings.rung.params)))
    for dtype in settings.dtypes if settings.nccl_bytes else []:
        for count in collective_counts(settings.nccl_bytes, dtype):
            for k in sorted(k for k in settings.gpus if k >= 2):
                for kind in COLLECTIVES:
                    for in_place in (False, True):
                        cases.append(MultiGpuCase(kind, dtype, count, k, in_place=in_place))
    return cases


def skip_reason(case: MultiGpuCase, present: int) -> str | None:
    if case.gpus > present:
        return f"needs {case.gpus} GPUs; this machine has {present}"
    if case.kind == SHARDED and case.rung is not None:
        if case.dtype.name not in case.rung.dtypes:
            return f"{case.rung.name} does not take {case.dtype.name}"
        if case.block not in case.rung.blocks:
            return f"{case.rung.name} does not take block {case.block}"
    return None


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
    meta = run_metadata(backend.device_info(), settings.options(), seed, kind=MULTIGPU)
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
