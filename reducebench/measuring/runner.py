"""Running cases: the device-free half of a measurement. It expands settings into cases,
plans each case once, makes inputs and references, asks a backend (the device layer, or
the host executor in tests) to execute the plan, verifies the values, and turns each
case into a record the moment it completes. `run` and `check` (and so `sanitize`, which
runs `check` under compute-sanitizer) all go through `run` here."""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from reducebench.measuring.read_ceiling import pct_of_ceiling
from reducebench.measuring.settings import RunSettings
from reducebench.measuring.energy import Energy, EnergyNote
from reducebench.core.interrupt import Interrupted
from reducebench.core.errors import OutOfDeviceMemory, UsageError
from reducebench.verify.inputs import (INPUT_THREADS, HostInput, case_inputs, derive_seed,
                                      exact_inputs, new_seed)
from reducebench.ladder.sources import rung_source, source_hash
from reducebench.core.errors import CaseFailed, CaseSkipped, ContextLost
from reducebench.ladder.case import Case
from reducebench.ladder.geometry import SPLIT_ATOMIC, SPLIT_TWO_PASS
from reducebench.ladder.plan import Plan
from reducebench.measuring.backend_protocol import Backend, Measurement, Sampled, Sampling
from reducebench.ladder.registry import ROWS, Rung
from reducebench.verify.row_inputs import row_inputs
from reducebench.measuring.plausible import impossible_reason
from reducebench.measuring.rounds import RoundsTaken, round_sampling, rounds_for
from reducebench.results.schema import ERROR, FAIL, OK, SKIPPED, SUSPECT, Record, bandwidth_gbps, medians_text
from reducebench.results.metadata import run_metadata
from reducebench.core.stats import StopRule, summarize
from reducebench.ladder.auto import ROW_AUTO, resolve_auto_cases
from reducebench.ladder.geometry import with_fitted_lanes
from reducebench.verify.verdict import verify, verify_rows
from reducebench.core.numbers import number
from reducebench.core.sizes import format_size

PROFILE_STOP = StopRule(min_samples=3, max_noise=1.0, max_time=0.0, max_samples=3)
THROTTLE_FLOOR = 0.9  # a case measured below this share of the run's first SM clock


def expand_cases(settings: RunSettings) -> list[Case]:
    """Sizes outermost (one input per size and dtype), then dtypes, rungs in ladder
    order, blocks and parameter values."""
    if settings.shapes:
        return shape_cases(settings)
    cases: list[Case] = []
    for n in settings.sizes:
        for dtype in settings.dtypes:
            for rung in settings.rungs:
                blocks = [0] if rung.is_library or rung.dispatch else settings.blocks
                for block in blocks:
                    for params in settings.param_sets(rung):
                        cases.append(Case(rung, dtype, n, block, params))
    return cases


def shape_cases(settings: RunSettings) -> list[Case]:
    """The row rungs' cases: shapes outermost (one input per shape and dtype), then
    dtypes, rungs, blocks and parameter values. A case that lanes=0 fits to the lanes
    also given (lanes=0,8 at rows of 8 vectors) runs once."""
    cases = (Case(rung, dtype, rows * cols, block,
                  with_fitted_lanes(params, cols, dtype.itemsize), rows=rows)
             for rows, cols in settings.shapes
             for dtype in settings.dtypes
             for rung in settings.rungs
             for block in ([0] if rung.is_library or rung.dispatch else settings.blocks)
             for params in settings.param_sets(rung))
    return list({case.key: case for case in cases}.values())


def missing_cases(cases: list[Case], done: set[tuple]) -> list[Case]:
    """The cases of a sweep that an interrupted results file does not hold yet."""
    return [c for c in cases if c.key not in done]


def skip_reason(case: Case, compute_capability: str = "") -> str | None:
    if case.dtype.name not in case.rung.dtypes:
        return f"{case.rung.name} does not take {case.dtype.name}"
    if case.block and case.block not in case.rung.blocks:
        return f"{case.rung.name} does not take block {case.block}"
    return gpu_refusal(case.rung, compute_capability)


def gpu_refusal(rung: Rung, compute_capability: str) -> str | None:
    """Why this GPU cannot run the rung (its compute capability, "9.0", is below the
    rung's least), or None; None too where the capability is unknown (""): the host
    executor models every rung."""
    if rung.min_cc is None or not compute_capability:
        return None
    try:
        have = tuple(int(part) for part in compute_capability.split("."))
    except ValueError:
        return None
    if have >= rung.min_cc:
        return None
    need = ".".join(map(str, rung.min_cc))
    return (f"{rung.name} needs {rung.min_cc_for}, compute capability {need} or later; "
            f"this GPU's is {compute_capability}")


def plan_case(case: Case, sm_count: int) -> Plan:
    """The case's one plan (a grid too large for CUDA is a UsageError)."""
    return case.rung.plan(case.n, case.dtype, case.block, sm_count, case.params, case.rows)


def is_row_case(case: Case) -> bool:
    """A case of the row ladder: its input is ROWS x COLS, its values one per row."""
    return case.rung.finish == ROWS


@dataclass(frozen=True)
class Planned:
    """A case with its one plan, or why it cannot run here (then plan is None)."""

    case: Case
    plan: Plan | None
    skipped: str = ""


def plan_all(cases: list[Case], sm_count: int, compute_capability: str = "",
             max_chain: int | None = None) -> list[Planned]:
    """Every case planned once, before anything is allocated: the memory check and the
    measurement both use these plans. If every case asks for what this GPU lacks (a
    rung for a later compute capability), the run is refused in one line: nothing of
    what was asked can run here. With a sweep's max_chain, a row case of ours whose
    lanes would each add more elements in sequence, or whose row has fewer elements than
    lanes, is skipped (sweep_skip)."""
    planned = []
    refusals = [gpu_refusal(case.rung, compute_capability) for case in cases]
    if cases and all(refusals):
        raise UsageError(refusals[0])
    for case in cases:
        reason = skip_reason(case, compute_capability)
        if reason:
            planned.append(Planned(case, None, reason))
            continue
        try:
            plan = plan_case(case, sm_count)
        except UsageError as exc:
            planned.append(Planned(case, None, str(exc)))
            continue
        reason = sweep_skip(case, plan, max_chain)
        planned.append(Planned(case, None, reason) if reason else Planned(case, plan))
    return planned


# Row rungs that give a row several blocks only where the rows are too few to fill the GPU
# (geometry.row_splits); with many rows each row has one block.
SHARED_ONLY_WHEN_FEW = (SPLIT_ATOMIC, SPLIT_TWO_PASS)


def sweep_skip(case: Case, plan: Plan, max_chain: int | None) -> str | None:
    """Why a row kernel's case is not run in a sweep (or a tune): its chain is over the
    limit, or its row has fewer elements than lanes (some lanes of every row would add
    nothing: a narrower rung does the same work with fewer threads), or it shares rows
    between blocks only where rows are few and here gives each row one block (row_split
    and row_two_pass: row_vec_block's work, plus a zeroing and atomics or a second
    launch's check). row_auto's case runs
    whatever its table chose: it is what a user runs, and what a sweep is there to show."""
    if max_chain is None or not is_row_case(case) or case.rung.is_library \
            or case.rung.name == ROW_AUTO:
        return None
    if plan.chain > max_chain:
        return (f"each lane would add {format_size(plan.chain)} elements in sequence; a "
                f"shape sweep skips chains over {format_size(max_chain)} (milliseconds a run)")
    if plan.row_lanes > case.cols:
        return (f"{plan.row_lanes} lanes a row for {case.cols} elements: a shape sweep "
                "skips cases with lanes that have nothing to add")
    if case.rung.row_split in SHARED_ONLY_WHEN_FEW and plan.launches[0].splits == 1:
        return ("one block a row (the rows alone fill the GPU): the work of a block-a-row "
                "rung with a finish it does not need; a shape sweep skips it")
    return None


def memory_needed(case: Case, plan: Plan, inputs: int) -> int:
    """Every input on the device at once, and the plan's own buffers."""
    return inputs * case.n * case.dtype.itemsize + plan.device_bytes(case.n,
                                                                      acc_itemsize(case.dtype))


def check_memory(planned: list[Planned], backend: Backend, kind: str,
                 rounds: int = 1) -> None:
    """Refuse, before allocating anything, a size whose buffers would not fit (a case
    that will be skipped needs nothing). A run in rounds holds a round's new input
    beside the last round's for a moment."""
    free = backend.free_memory()
    for case, plan, _ in ((p.case, p.plan, p.skipped) for p in planned if p.plan):
        count = len(exact_inputs(case.cols if is_row_case(case) else case.n, case.dtype)) \
            if kind == "exact" else 1
        count += 1 if rounds > 1 else 0
        need = memory_needed(case, plan, count)
        if need > free:
            raise OutOfDeviceMemory(
                f"{case.label} needs {number(need / 2**30, '.2f', ' GiB')} of device memory; "
                f"{number(free / 2**30, '.2f', ' GiB')} is free")


class InputCache:
    """The inputs of one size and dtype on the device at a time (cases are ordered so
    that all cases of one size and dtype share them): (host input, device handle) pairs,
    the first of which is timed. In a run of several rounds each round uploads its
    group's timed input afresh (a new allocation, as a second run's would be); the other
    inputs only verify, in the first round. Host inputs are kept between rounds up to
    HOST_CACHE_BYTES, and drawn again from their seed beyond it."""

    def __init__(self, backend: Backend, seed: int, kind: str,
                 made: "MadeInputs | None" = None) -> None:
        self.backend, self.seed, self.kind = backend, seed, kind
        self.key: tuple | None = None
        self.inputs: list[tuple[HostInput, object]] = []
        self.kept_hosts: dict[tuple, HostInput] = {}
        self.kept_bytes = 0
        self.made = made

    def get(self, case: Case, round_index: int = 0) -> list[tuple[HostInput, object]]:
        key = (case.n, case.dtype.name, round_index, case.rows, is_row_case(case))
        if key != self.key:
            # the new ones uploaded before the old ones are freed: a round's input lies
            # elsewhere than the last round's
            fresh = [(host, self.backend.upload(host)) for host in self.hosts(case, round_index)]
            self.release()
            self.inputs, self.key = fresh, key
        return self.inputs

    def hosts(self, case: Case, round_index: int) -> list[HostInput]:
        group = (case.n, case.dtype.name, case.rows, is_row_case(case))
        if round_index and group in self.kept_hosts:
            return [self.kept_hosts[group]]
        seed = derive_seed(self.seed, case.n, case.dtype)
        made = (group, self.seed, self.kind)
        if self.made is not None and made in self.made:
            hosts = self.made[made]
        elif is_row_case(case):  # inputs with a reference per row
            hosts = row_inputs(case.rows, case.cols, case.dtype,
                               derive_seed(seed, case.rows, case.dtype), self.kind,
                               INPUT_THREADS)
        else:
            hosts = case_inputs(case.n, case.dtype, seed, self.kind, INPUT_THREADS)
        if self.made is not None:
            self.made.keep(made, hosts)
        if round_index:  # drawn again: only the timed one is needed
            return hosts[:1]
        if self.kept_bytes + hosts[0].data.nbytes <= HOST_CACHE_BYTES:
            self.kept_hosts[group] = hosts[0]
            self.kept_bytes += hosts[0].data.nbytes
        return hosts

    def release(self) -> None:
        for _, handle in self.inputs:
            self.backend.release(handle)
        self.key, self.inputs = None, []

    def abandon(self) -> None:
        """After a lost context freeing device memory fails too: just forget it."""
        self.key, self.inputs = None, []


# Host copies of timed inputs kept for later rounds; larger runs draw them again.
HOST_CACHE_BYTES = 8 << 30


class MadeInputs(dict):
    """Host inputs kept from one run to the next (`tune` measures a band in several
    runs over the same sizes): the last `groups` sizes' inputs, up to HOST_CACHE_BYTES
    in all, the oldest dropped first. Keyed (size group, seed, kind): a run of another
    seed makes its own."""

    def __init__(self, groups: int = 2) -> None:
        super().__init__()
        self.groups = groups

    def keep(self, key: tuple, hosts: list[HostInput]) -> None:
        self.pop(key, None)
        self[key] = hosts
        while len(self) > self.groups or (len(self) > 1 and self.nbytes() > HOST_CACHE_BYTES):
            del self[next(iter(self))]
        if self.nbytes() > HOST_CACHE_BYTES:
            self.clear()

    def nbytes(self) -> int:
        return sum(host.data.nbytes for hosts in self.values() for host in hosts)


# A run that starts within this long of the last one's end (one process, Carried) finds
# the GPU's clocks still up: it skips the clock warm-up.
STILL_WARM_S = 1.0


@dataclass
class Carried:
    """What a caller that makes many short runs in one process (`tune`: a band searched
    in several runs) keeps from one run to the next, so that each does not pay again for
    what has not changed: the host inputs (MadeInputs; None: none kept, as a lone run),
    every read reference timed (by read key, then round), the timing floor (by cold or
    warm), and when the last run ended (a run starting within STILL_WARM_S of it skips
    the clock warm-up)."""

    inputs: MadeInputs | None = None
    reads: dict[tuple, dict[int, float]] = field(default_factory=dict)
    floors: dict[bool, float] = field(default_factory=dict)
    ended: float = -math.inf

    def still_warm(self, now: float) -> bool:
        return now - self.ended < STILL_WARM_S


@dataclass
class CaseInRounds:
    """One case of the run as its rounds come in: its plan, the record being filled,
    and the rounds measured so far. `done` once the record is written."""

    planned: Planned
    record: Record
    taken: RoundsTaken = field(default_factory=RoundsTaken)
    host: HostInput | None = None        # the timed input, for the record's accuracy
    clock_start: float | None = None
    clock_end: float | None = None
    done: bool = False

    @property
    def case(self) -> Case:
        return self.planned.case

    @property
    def failed(self) -> bool:
        return self.record.status != OK


def run(settings: RunSettings, backend: Backend, write: Callable[[Record], None],
        on_case: Callable[[Case, int, int], None] | None = None,
        cases: list[Case] | None = None,
        after_case: Callable[[Case, Record], None] | None = None,
        carried: Carried | None = None) -> list[Record]:
    """Run (and time, unless settings.timed is off) every case, in settings.rounds
    interleaved rounds (rounds.py); write each record as soon as its last round is in
    (after `after_case` has added to it, e.g. hardware counters), a case that fails at
    once. Raises ContextLost, after writing the failing case, if the GPU context is
    gone. An Interrupted signal leaves every case not yet written unwritten, and says on
    the exception how many had rounds measured (`unfinished`). `carried`: what runs of
    one process share (tune's inputs, reads, floor, warm clocks), used and added to."""
    cases = expand_cases(settings) if cases is None else cases
    seed = settings.seed if settings.seed is not None else new_seed()
    meta = run_metadata(backend.device_info(), settings.options(), seed)
    sampling = sampling_for(settings)
    rounds = rounds_for(settings.rounds, settings.timed, settings.profile)
    # `auto` becomes the rung its tuning table chooses for each size on this GPU
    cases, variants = resolve_auto_cases(cases, str(meta["gpu"]), int(meta["sm_count"] or 0))
    planned = plan_all(cases, backend.sm_count(), str(meta.get("compute_capability") or ""),
                       settings.max_chain)
    check_memory(planned, backend, settings.inputs, rounds)
    carried = carried if carried is not None else Carried()
    if sampling is not None and hasattr(backend, "warm_up") \
            and not carried.still_warm(time.monotonic()):
        backend.warm_up()
    if sampling is not None and sampling.hold and hasattr(backend, "timing_floor_us"):
        # an empty kernel timed like every case: no whole reduction can take less
        if sampling.cold not in carried.floors:
            carried.floors[sampling.cold] = backend.timing_floor_us(sampling)
        meta["timing_floor_us"] = round(carried.floors[sampling.cold], 3)
    inputs = InputCache(backend, seed, settings.inputs, carried.inputs)
    reads = ReadReference(backend, sampling, carried.reads)
    states = [CaseInRounds(p, new_record(p.case, meta)) for p in planned]
    for state, variant in zip(states, variants):
        state.record.variant = variant
    records: dict[int, Record] = {}   # by case index: returned in the cases' order
    first_clock: list[float] = []
    try:
        for round_index in range(rounds):
            if round_index and hasattr(backend, "new_round"):
                backend.new_round()  # a fresh L2-flush buffer
            this_round = round_sampling(sampling, rounds, round_index)
            for index, state in enumerate(states):
                if state.done:
                    continue
                if on_case:
                    on_case(state.case, round_index * len(states) + index,
                            rounds * len(states))
                measure_round(state, backend, inputs, this_round, round_index)
                reads.add_round(state, inputs, this_round, round_index)
                if state.failed or round_index == rounds - 1:
                    record = finish_case(state, meta, reads, first_clock)
                    lost = record.status == ERROR and record.error.startswith("context lost")
                    if lost:  # nothing more can run: what was measured is kept as it is
                        for other, partial in enumerate(states):
                            if partial is not state and partial.taken.count and not partial.done:
                                records[other] = cut_short(partial, meta, reads, first_clock,
                                                           rounds, write)
                    records[index] = record
                    commit_case(state, record, write, after_case)
                    if lost:
                        inputs.abandon()
                        raise ContextLost(f"{state.case.label}: {record.error}")
    except Interrupted as exc:
        exc.unfinished = sum(1 for s in states if s.taken.count and not s.done)
        raise
    finally:
        inputs.release()
        carried.ended = time.monotonic()
    return [records[index] for index in sorted(records)]


def cut_short(state: CaseInRounds, meta: dict, reads: "ReadReference",
              first_clock: list[float], rounds: int, write: Callable[[Record], None]) -> Record:
    """A case the run ended before its last round (the GPU context was lost): its record
    from the rounds it had, saying so, written at once (no counters: the GPU is gone)."""
    record = finish_case(state, meta, reads, first_clock)
    record.note = join_notes(record.note, f"measured in {state.taken.count} of {rounds} "
                             "rounds: the run ended when the GPU context was lost")
    write(record)
    state.done = True
    return record


def commit_case(state: CaseInRounds, record: Record, write: Callable[[Record], None],
                after_case) -> None:
    """Add what after_case reads (counters) to a verified record, then write it."""
    try:
        if after_case and record.status == OK:
            after_case(state.case, record)
    except Interrupted:  # the case was timed: keep it, without what was cut
        record.note = join_notes(record.note, "interrupted while its counters "
                                 "were read: counter columns empty")
        write(record)
        state.done = True
        raise
    write(record)
    state.done = True


class ReadReference:
    """The same-size read: a pure read of a case's input bytes by the fastest ceiling
    kernel, timed as the run's cases are, measured once per (n, itemsize) in each round
    of a run, and recorded on every timed record: read_us (the median of its round
    medians), read_rounds_us and pct_read. A row case's is the same-shape read instead:
    its ROWS x COLS input read as fast, and one accumulator written a row (the row sums'
    traffic, cuda_src/row_read.cu), once per shape (rows, cols, itemsize, accumulator
    size) in each round, so that two shapes of one n never share a read. A backend
    without `read_reference_us` (or, for a row case, `row_read_reference_us`: the host
    executor, test fakes) leaves these columns empty."""

    def __init__(self, backend: Backend, sampling: Sampling | None,
                 measured: dict[tuple, dict[int, float]] | None = None) -> None:
        self.backend, self.sampling = backend, sampling
        # by read key, then round: given, the reads of earlier runs (Carried), not timed again
        self.measured: dict[tuple, dict[int, float]] = {} if measured is None else measured
        self.notes: dict[tuple, str] = {}

    def add_round(self, state: CaseInRounds, inputs: InputCache, sampling: Sampling | None,
                  round_index: int) -> None:
        record, case = state.record, state.case
        measure = self.measure_for(case)
        if measure is None or sampling is None or state.failed or not state.taken.count:
            return
        key = read_key(case)
        rounds = self.measured.setdefault(key, {})
        if round_index in rounds:
            return
        (_, handle), *_ = inputs.get(case, round_index)
        try:
            rounds[round_index] = float(measure(handle, sampling))
        except (CaseFailed, CaseSkipped) as exc:
            rounds[round_index] = float("nan")
            self.notes[key] = f"read reference: {exc}"
        except ContextLost as exc:  # the run stops after writing this record
            record.status, record.error = ERROR, f"context lost: read reference: {exc}"

    def measure_for(self, case: Case) -> Callable[[object, Sampling], float] | None:
        """How this backend times the case's read, given its input and sampling: the
        same-shape read for a row case, the same-size read otherwise; None without."""
        if is_row_case(case):
            rows = getattr(self.backend, "row_read_reference_us", None)
            if rows is None:
                return None
            return lambda handle, sampling: rows(handle, case.rows, case.cols,
                                                 case.dtype.itemsize,
                                                 acc_itemsize(case.dtype), sampling)
        flat = getattr(self.backend, "read_reference_us", None)
        if flat is None:
            return None
        return lambda handle, sampling: flat(handle, case.n, case.dtype.itemsize, sampling)

    def add_to(self, record: Record, case: Case) -> None:
        key = read_key(case)
        rounds = self.measured.get(key)
        if not rounds or record.status != OK or not record.samples:
            return
        medians = [rounds[r] for r in sorted(rounds)]
        usable = [m for m in medians if m > 0]
        record.read_us = statistics.median(usable) if usable else float("nan")
        record.read_rounds_us = medians_text(usable) if len(usable) > 1 else ""
        record.pct_read = pct_read(record.read_us, record.median_us)
        record.note = join_notes(record.note, self.notes.get(key, ""))


def read_key(case: Case) -> tuple:
    """The read a case is measured against: the same-size read of its n elements of its
    itemsize, or for a row case the same-shape read of its rows and columns, which also
    writes one accumulator a row."""
    if is_row_case(case):
        return ("rows", case.rows, case.cols, case.dtype.itemsize, acc_itemsize(case.dtype))
    return (case.n, case.dtype.itemsize)


def acc_itemsize(dtype) -> int:
    """Bytes of the accumulator a reduction of `dtype` writes: 8 for double, else 4."""
    return 8 if dtype.acc_name == "float64" else 4


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
                    rows=case.rows, cols=case.cols, params=case.params_text(), finish=case.rung.finish,
                    deterministic=case.rung.deterministic, meta=meta)
    record.source, record.source_hash = source_identity(case.rung)
    return record


def measure_round(state: CaseInRounds, backend: Backend, inputs: InputCache,
                  sampling: Sampling | None, round_index: int) -> None:
    """One round of a case: executed (warm-up, a verified run, the samples, the last
    run's value) on this round's timed input, every value verified; in the first round
    also each other input, verified. A case that cannot run is marked so at once."""
    case, plan, record = state.case, state.planned.plan, state.record
    if plan is None:
        record.status, record.error = SKIPPED, state.planned.skipped
        return
    record.bytes_read = plan.bytes_read
    record.grid, record.launches = plan.grid, len(plan.launches)
    (host, handle), *others = inputs.get(case, round_index)
    clock_start = backend.sm_clock_mhz()
    try:
        measurement = backend.execute(case, plan, handle, sampling)
        clock_end = backend.sm_clock_mhz()
        checks = [(other, backend.execute(case, plan, other_handle, None))
                  for other, other_handle in (others if round_index == 0 else [])]
    except CaseSkipped as exc:
        record.status, record.error = SKIPPED, str(exc)
        return
    except CaseFailed as exc:
        record.status, record.error = ERROR, str(exc)
        return
    except ContextLost as exc:
        record.status, record.error = ERROR, f"context lost: {exc}"
        return
    if round_index == 0:
        state.host, state.clock_start = host, clock_start
    state.clock_end = clock_end
    state.taken.add(measurement)
    judge(record, measurement, host, case, plan, timed_input=round_index == 0)
    for other, checked in checks:
        if record.status == OK:
            judge(record, checked, other, case, plan, timed_input=False)


def finish_case(state: CaseInRounds, meta: dict, reads: ReadReference,
                first_clock: list[float]) -> Record:
    """The case's record from all its rounds: the pooled samples summarised, each
    round's median and their spread, the same-size read, the clock checks."""
    record = state.record
    if not state.taken.count:
        return record
    summarize_times(record, state.taken.combined(), meta)
    summary = state.taken.summary()
    record.rounds = state.taken.count
    if record.samples:
        record.noise_pct = 100 * state.taken.inner_noise()
        record.round_spread_pct = summary.spread_pct
        record.round_medians_us = medians_text(summary.medians)
    if state.clock_start is not None and state.clock_end is not None:
        record.sm_clock_start_mhz, record.sm_clock_end_mhz = state.clock_start, state.clock_end
    if not first_clock and record.sm_clock_start_mhz > 0:
        first_clock.append(record.sm_clock_start_mhz)
    record.throttled = record.throttled or throttled(record, first_clock[0] if first_clock
                                                     else None)
    reads.add_to(record, state.case)
    return record


def judge(record: Record, m: Measurement, host: HostInput, case: Case, plan: Plan,
          timed_input: bool = True) -> None:
    """The verdict on one input's values. The record keeps the timed input's result and
    accuracy; another input only adds a failure, named after the input."""
    if plan.row_outputs:
        verdict = verify_rows(m.values, host, case.dtype, m.guard_breaches, plan.chain)
    else:
        verdict = verify(m.values, host, case.dtype, plan, m.guard_breaches)
    if timed_input:
        record.result, record.reference = result_of(m.values[0]), host.reference
        record.abs_error, record.tolerance = verdict.abs_error, verdict.tolerance
        record.rel_error, record.error_ulps = verdict.rel_error, verdict.ulps
    if not verdict.ok:
        record.status, record.error = FAIL, f"{host.name} input: {verdict.message}"


def result_of(value):
    """A record's result: the value, or for a row case the total of its rows' values
    (each row is judged on its own; the record keeps their sum beside the reference's)."""
    if hasattr(value, "shape") and getattr(value, "ndim", 0) == 1:
        if value.dtype.kind in "iu":  # exact: int32 rows of 2^31 at most, 2^28 of them
            return int(value.astype(np.int64).sum())
        return float(value.astype(np.float64).sum())
    return value


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
