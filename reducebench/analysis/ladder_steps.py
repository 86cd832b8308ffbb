"""Why each rung is faster: the steps of the ladder, what changed in the source (from each
kernel file's header comment), what changed in the hardware counters (the `ncu_` columns
of a results file), and what the textbook says should have changed, with a plain verdict
when the counters disagree. No GPU here; rendering is in reducebench/render/explain_table.py.

The textbook expectations are data (STEPS): per step, which counter should move which
way, and who says so (Harris's "Optimizing Parallel Reduction in CUDA", a published RTX
3080 tutorial's timings, scripts/bench_tables.py PUBLISHED, or the rung's own header). docs/metrics.md explains the verdict rule.

The row ladder's steps (`run --shape --metrics`) come from its kernels' headers: each row
rung against the row rung its header says it changed from. They make no claim (which rung
is faster depends on the shape); their counters and source changes are shown the same
way, for one shape at a time."""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from typing import Sequence

from reducebench.core.choices import did_you_mean
from reducebench.core.errors import ResultsFileError, UsageError
from reducebench.ladder.sources import source_path
from reducebench.ladder.registry import DEFAULT_BLOCK, LADDER, ROW_LADDER, ROW_RUNGS
from reducebench.core.sizes import format_shape, format_size, parse_shape
from reducebench.results.schema import OK
from reducebench.core.numbers import MISSING, number

UP, DOWN, SAME = "up", "down", "same"


@dataclass(frozen=True)
class Counter:
    """A figure explain compares: summed from `columns` of a row."""

    key: str
    label: str
    columns: tuple[str, ...]
    unit: str = ""
    # A relative change within this counts as unchanged (for time, the rows' noise too).
    tolerance: float = 0.05
    style: str = "decimal"  # decimal | count | percent


COUNTERS: dict[str, Counter] = {c.key: c for c in (
    Counter("time", "time", ("median_us",), " us", 0.03),
    Counter("kernel_time", "kernel time (ncu)", ("ncu_time_us",), " us", 0.03),
    # the same-size read's time over the rung's: how close it is to just reading the input
    Counter("pct_read", "% of the same-size read", ("pct_read",), "%", 0.01, "percent"),
    Counter("dram_pct", "DRAM % of peak", ("ncu_dram_pct",), "%", 0.05, "percent"),
    Counter("conflicts", "bank conflicts", ("ncu_smem_ld_conflicts", "ncu_smem_st_conflicts"),
            "", 0.05, "count"),
    Counter("smem_wavefronts", "shared wavefronts", ("ncu_smem_wavefronts",), "", 0.05,
            "count"),
    Counter("threads_per_inst", "threads / instruction", ("ncu_threads_per_inst",), "",
            0.02),
    Counter("inst_per_elem", "instructions / element", ("ncu_inst_per_elem",), "", 0.03),
    Counter("occupancy", "achieved occupancy", ("ncu_occupancy_pct",), "%", 0.05, "percent"),
)}
SHOWN = ("time", "pct_read", "kernel_time", "dram_pct", "conflicts", "smem_wavefronts",
         "threads_per_inst", "inst_per_elem", "occupancy")


@dataclass(frozen=True)
class Expect:
    counter: str     # a key of COUNTERS
    direction: str   # up | down | same
    why: str


@dataclass(frozen=True)
class Step:
    before: str
    after: str
    source: str                      # who makes the claim
    expects: tuple[Expect, ...] = ()


HARRIS = "Harris (G80, 2^22 ints)"
SEED = "an RTX 3080 tutorial (2^24 ints)"

STEPS: tuple[Step, ...] = (
    Step("gmem", "smem_interleaved", f"{SEED}: reduceGmem 0.256 ms -> reduceSmem 0.195 ms", (
        Expect("time", DOWN, "the log2(BLOCK) tree steps hit shared memory, not L1/L2"),
    )),
    Step("smem_interleaved", "smem_strided", f"{HARRIS}: kernel 1 -> 2, 8.05 -> 3.46 ms", (
        Expect("threads_per_inst", UP, "no divergent branch: whole warps work or skip"),
        Expect("conflicts", UP, "threads touch words 2*stride apart: bank conflicts appear"),
        Expect("inst_per_elem", DOWN, "the modulo and the divergent branch are gone"),
        Expect("time", DOWN, "less work per step, no divergence"),
    )),
    Step("smem_strided", "smem_sequential", f"{HARRIS}: kernel 2 -> 3, 3.46 -> 1.72 ms", (
        Expect("conflicts", DOWN, "consecutive threads touch consecutive words"),
        Expect("time", DOWN, "no access waits on a bank"),
    )),
    Step("smem_sequential", "first_add", f"{HARRIS}: kernel 3 -> 4, 1.72 -> 0.97 ms", (
        Expect("inst_per_elem", DOWN, "half the blocks; no thread idles after one step"),
        Expect("dram_pct", UP, "two loads per thread before the tree"),
        Expect("time", DOWN, "half the per-block work"),
    )),
    Step("first_add", "unroll_last_warp", f"{HARRIS}: kernel 4 -> 5, 0.97 -> 0.54 ms", (
        Expect("inst_per_elem", DOWN, "no loop or block barrier for the last six steps"),
        Expect("time", DOWN, "instruction overhead was the bottleneck"),
    )),
    Step("unroll_last_warp", "complete_unroll", f"{HARRIS}: kernel 5 -> 6, 0.54 -> 0.38 ms", (
        Expect("inst_per_elem", DOWN, "no loop counter, compare or branch left"),
        Expect("time", DOWN, "fewer instructions (the header: little once memory bound)"),
    )),
    Step("gmem", "gmem_unroll4", f"{SEED}: reduceGmem 0.256 -> reduceGmemUnroll 0.126 ms", (
        Expect("dram_pct", UP, "four independent loads per thread in flight"),
        Expect("inst_per_elem", DOWN, "the tree runs once per 4*BLOCK elements"),
        Expect("time", DOWN, "more bytes in flight, a quarter of the trees"),
    )),
    Step("complete_unroll", "smem_unroll4", "rung header: four loads in flight per thread", (
        Expect("dram_pct", UP, "four independent loads hide memory latency"),
        Expect("inst_per_elem", DOWN, "a quarter of the blocks, trees and partial writes"),
        Expect("time", DOWN, "more bytes in flight"),
    )),
    Step("gmem_unroll4", "smem_unroll4",
         f"{SEED}: reduceGmemUnroll 0.126 -> reduceSmemUnroll 0.104 ms", (
             Expect("time", DOWN, "the tree in shared memory instead of global"),
         )),
    Step("smem_unroll4", "multi_elem", f"{HARRIS}: kernel 6 -> 7, 0.38 -> 0.27 ms", (
        Expect("inst_per_elem", DOWN, "the tree and barriers once per block, not per 1k"),
        Expect("dram_pct", UP, "threads keep issuing loads (Brent's theorem)"),
        Expect("time", DOWN, "latency hidden by many loads per thread"),
    )),
    Step("smem_sequential", "shfl", f"{SEED}: reduceSmem 0.195 -> reduceShfl 0.151 ms", (
        Expect("smem_wavefronts", DOWN, "shared memory only for the warp totals"),
        Expect("inst_per_elem", DOWN, "5 shuffles replace the tree's loads, stores, barriers"),
        Expect("time", DOWN, "no shared-memory round trips inside a warp"),
    )),
    Step("shfl", "shfl_unroll", f"{SEED}: reduceShfl 0.151 -> reduceShflUnroll 0.102 ms", (
        Expect("dram_pct", UP, "`unroll` independent loads per thread in flight"),
        Expect("inst_per_elem", DOWN, "the block sum once per unroll*BLOCK elements"),
        Expect("time", DOWN, "memory latencies overlap"),
    )),
    Step("shfl", "shfl_xor", "rung header: the same 5 shuffles and adds per warp", (
        Expect("inst_per_elem", SAME, "a butterfly costs what a shift-down costs"),
        Expect("time", SAME, "same work; the gain is an all-reduce"),
    )),
    Step("shfl", "warp_atomic", "rung header: n/32 atomics on one address set the pace", (
        Expect("time", UP, "the L2 serialises atomics to one address"),
    )),
    Step("shfl", "gridstride_atomic", "rung header: a bounded grid, many loads per thread", (
        Expect("inst_per_elem", DOWN, "no per-block tree every 256 elements, no re-launch"),
        Expect("dram_pct", UP, "many independent loads per thread"),
        Expect("time", DOWN, "far fewer blocks"),
    )),
    Step("gridstride_atomic", "vector_load", "rung header: 16-byte loads, LOADS in flight", (
        Expect("inst_per_elem", DOWN, "a quarter of the load and index instructions"),
        Expect("dram_pct", UP, "LOADS*16 bytes requested per thread before it waits"),
        Expect("time", DOWN, "enough bytes in flight to cover DRAM latency"),
    )),
    Step("vector_load", "single_pass", "rung header: vector_load's speed, same bits each run", (
        Expect("time", SAME, "one pass; the last block sums a few thousand partials"),
    )),
    Step("vector_load", "pingpong", "rung header: no memset before each launch", (
        Expect("kernel_time", SAME, "the same kernel body; a memset is not a kernel"),
        Expect("time", DOWN, "about 0.75 us less per reduction on the H100"),
    )),
    Step("pingpong", "one_shot", "rung header: the fastest read's shape, one tile per block", (
        Expect("time", SAME, "at 2^24 within the noise; from 2^26 on 1 to 2% faster"),
        Expect("pct_read", SAME, "the same finish over the same bytes; the order differs"),
    )),
)
STEP_BY_PAIR: dict[tuple[str, str], Step] = {(s.before, s.after): s for s in STEPS}


@functools.lru_cache(maxsize=None)
def all_steps() -> tuple[Step, ...]:
    """The textbook steps, then the row ladder's: each row rung after the row rung its
    kernel's header says it changed from (`Changed from row_group: ...`)."""
    rows = [Step(note.changed_from, rung.name, f"rung header of {rung.name}")
            for rung in ROW_RUNGS
            for note in [source_note(rung.name)] if note.changed_from in ROW_LADDER]
    return STEPS + tuple(rows)


# ---- what changed in the source: the kernel file's header comment ----
@dataclass(frozen=True)
class SourceNote:
    changed_from: str = ""  # what the header says the rung changed from
    changed: str = ""  # the "Changed from ...:" paragraph, first sentence
    why: str = ""      # the first "Why ...:" paragraph, first sentence
    cost: str = ""     # "New cost:" or "Still slow:", first sentence


_SECTION = re.compile(r"^(Changed from|Why|New cost|Still slow|Preconditions)\b")
_SENTENCE_END = re.compile(r"(?<=[.;])\s+(?=[A-Z(])")


def header_sections(text: str) -> list[tuple[str, str]]:
    """(label, body) of each labelled paragraph in the file's opening // comment."""
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        content = line[2:].strip()
        if _SECTION.match(content) and ":" in content:
            label, body = content.split(":", 1)
            sections.append((label.strip(), [body.strip()]))
        elif sections and content:
            sections[-1][1].append(content)
    return [(label, " ".join(part for part in body if part)) for label, body in sections]


def first_sentence(text: str) -> str:
    """The paragraph's first sentence, whole (the table wraps it; nothing is cut)."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def source_note(rung_name: str) -> SourceNote:
    rung = LADDER.get(rung_name) or ROW_LADDER.get(rung_name)
    if rung is None or not rung.source:
        return SourceNote()
    try:
        sections = header_sections(source_path(str(rung.source)).read_text())
    except OSError:
        return SourceNote()

    def first(*prefixes: str) -> str:
        return next((first_sentence(body) for label, body in sections
                     if label.startswith(prefixes)), "")

    base = next((label[len("Changed from"):].strip() for label, _ in sections
                 if label.startswith("Changed from")), "")
    return SourceNote(base, first("Changed from"), first("Why"),
                      first("New cost", "Still slow"))


# ---- comparing two rows ----
def counter_value(row: dict, counter: Counter) -> float:
    values = [_float(row.get(column)) for column in counter.columns]
    return math.nan if any(math.isnan(v) for v in values) else sum(values)


def _float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def tolerance(counter: Counter, before: dict, after: dict) -> float:
    """The counter's own tolerance; for time, at least the two rows' noise added."""
    if counter.key != "time":
        return counter.tolerance
    noise = [_float(row.get("noise_pct")) for row in (before, after)]
    return max(counter.tolerance, sum(v for v in noise if not math.isnan(v)) / 100)


def direction(before: float, after: float, tol: float) -> str | None:
    """up, down or same (within tol, relative); None when either value is missing."""
    if math.isnan(before) or math.isnan(after):
        return None
    if before == 0:
        return SAME if after == 0 else (UP if after > 0 else DOWN)
    change = after / before - 1
    if abs(change) <= tol:
        return SAME
    return UP if change > 0 else DOWN


def format_value(value: float, counter: Counter) -> str:
    if math.isnan(value):
        return MISSING
    if counter.style == "count":
        for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(value) >= limit:
                return number(value / limit, ".2f", suffix)
        return number(value, ".0f")
    if counter.style == "percent":
        return number(value, ".1f", counter.unit)
    return number(value, ".2f" if abs(value) < 10 else ".1f", counter.unit)


def format_change(before: float, after: float) -> str:
    if math.isnan(before) or math.isnan(after):
        return ""
    if before == 0:
        return "" if after == 0 else "new"
    return number(100 * (after / before - 1), "+.0f", "%")


@dataclass
class CounterLine:
    counter: Counter
    before: float
    after: float

    @property
    def text(self) -> str:
        change = format_change(self.before, self.after)
        return (f"{self.counter.label}: {format_value(self.before, self.counter)} -> "
                f"{format_value(self.after, self.counter)}" + (f" ({change})" if change else ""))


@dataclass
class Check:
    expect: Expect
    before: float
    after: float
    seen: str | None    # the direction the counter moved; None: not measured

    @property
    def held(self) -> bool | None:
        return None if self.seen is None else self.seen == self.expect.direction


EXPECTED, FINDING, UNKNOWN, NO_CLAIM = "expected", "finding", "unknown", "no claim"


@dataclass
class StepReport:
    step: Step
    before: dict
    after: dict
    note: SourceNote
    lines: list[CounterLine] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        if not self.checks:
            return NO_CLAIM
        if any(c.held is False for c in self.checks):
            return FINDING
        return UNKNOWN if any(c.held is None for c in self.checks) else EXPECTED

    def verdict(self) -> str:
        """One plain sentence per step; a disagreement is a finding, not a failure."""
        if self.outcome == NO_CLAIM:
            return "no textbook claim for this pair"
        if self.outcome == EXPECTED:
            return "as the textbook says"
        missed = [c for c in self.checks if c.held is False]
        if missed:
            return "finding: " + "; ".join(
                f"{COUNTERS[c.expect.counter].label} {_moved(c.seen)} "
                f"({format_change(c.before, c.after)}), the textbook says {c.expect.direction}"
                for c in missed)
        return "counters missing for: " + ", ".join(
            COUNTERS[c.expect.counter].label for c in self.checks if c.held is None)

    @property
    def stall(self) -> tuple[str, str]:
        return _stall_text(self.before), _stall_text(self.after)


def _moved(seen: str | None) -> str:
    return "did not change" if seen == SAME else f"went {seen}"


def _stall_text(row: dict) -> str:
    reason = row.get("ncu_stall_top")
    share = _float(row.get("ncu_stall_top_pct"))
    if not isinstance(reason, str) or not reason:
        return MISSING
    return f"{reason} {number(share, '.0f', '%')}" if not math.isnan(share) else reason


def compare_step(step: Step, before: dict, after: dict) -> StepReport:
    report = StepReport(step, before, after, source_note(step.after))
    for key in SHOWN:
        counter = COUNTERS[key]
        report.lines.append(CounterLine(counter, counter_value(before, counter),
                                        counter_value(after, counter)))
    for expect in step.expects:
        counter = COUNTERS[expect.counter]
        old, new = counter_value(before, counter), counter_value(after, counter)
        report.checks.append(Check(expect, old, new,
                                   direction(old, new, tolerance(counter, before, after))))
    return report


# ---- from a results file to steps ----
@dataclass
class Explanation:
    n: int
    dtype: str
    reports: list[StepReport]
    skipped: list[Step] = field(default_factory=list)  # a rung of the step has no row
    read_us: float = math.nan  # the same-size read of these rows (the floor any rung has)
    rows: int = 1              # a shape's rows (n / rows a row): each row summed

    @property
    def title(self) -> str:
        floor = (f" · same-size read {number(self.read_us, '.2f', ' us')}"
                 if not math.isnan(self.read_us) else "")
        if self.rows > 1:
            return (f"shape = {format_shape(self.rows, self.n // self.rows)} "
                    f"({number(self.n, ',')} elements) {self.dtype}{floor}")
        return f"n = {format_size(self.n)} ({number(self.n, ',')}) {self.dtype}{floor}"


def no_counters(where: str) -> str:
    return (f"{where} has no hardware counters (no ncu_ values); measure them with "
            "`reducebench run --metrics`")


def _has_counters(row: dict) -> bool:
    return any(not math.isnan(_float(v)) for k, v in row.items()
               if k.startswith("ncu_") and k not in ("ncu_version", "ncu_clock_control"))


def pick_rows(frame, size: int | None, dtype: str | None, where: str,
              shape: tuple[int, int] | None = None) -> tuple[int, str, dict]:
    """The one (n, dtype, rows) group to explain and its row per rung (the block-256 row
    if a rung has several, else its first), only rows that verified; each row's `rows`
    is 1 in a --size file, the shape's rows in a --shape one."""
    if "status" in frame:
        frame = frame[frame["status"].astype(str) == OK]
    rows_of = frame["rows"].map(lambda v: _int(v) or 1) if "rows" in frame else 1
    frame = frame.assign(rows=rows_of)  # 1 where a file of schema 5 or older has none
    if size is not None:
        frame = frame[frame["n"] == size]
    if shape is not None:
        frame = frame[(frame["n"] == shape[0] * shape[1]) & (frame["rows"] == shape[0])]
    if dtype is not None:
        frame = frame[frame["dtype"].astype(str) == dtype]
    groups = sorted({(str(d), int(n), int(r))
                     for d, n, r in zip(frame["dtype"], frame["n"], frame["rows"])},
                    key=lambda g: (g[1], g[2], g[0]))
    if not groups:
        raise UsageError(f"{where}: no verified rows" + _selection(size, dtype, shape))
    if not any(_has_counters(record) for record in frame.to_dict("records")):
        raise ResultsFileError(no_counters(where))  # before asking for a choice it can't use
    if len(groups) > 1:
        listed = ", ".join(f"{d} {_extent(n, r)}" for d, n, r in groups)
        by_shape = any(r > 1 for _, _, r in groups)
        choices = [option for option, kinds in (
            ("--shape" if by_shape else "--size", {(n, r) for _, n, r in groups}),
            ("--dtype", {d for d, _, _ in groups})) if len(kinds) > 1]
        raise UsageError(f"{where} holds several {'shapes' if by_shape else 'sizes'} or "
                         f"dtypes ({listed}); pick one with " + " and ".join(choices))
    dtype_name, n, _ = groups[0]
    rows: dict[str, dict] = {}
    for record in frame.to_dict("records"):
        name = str(record["rung"])
        if name not in rows or (_int(record.get("block")) == DEFAULT_BLOCK
                                and _int(rows[name].get("block")) != DEFAULT_BLOCK):
            rows[name] = record
    if not any(_has_counters(row) for row in rows.values()):
        raise ResultsFileError(no_counters(where))
    return n, dtype_name, rows


def _extent(n: int, rows: int) -> str:
    return f"shape={format_shape(rows, n // rows)}" if rows > 1 else f"n={format_size(n)}"


def _int(value: object) -> int | None:
    number = _float(value)
    return None if math.isnan(number) else int(number)


def _selection(size: int | None, dtype: str | None,
               shape: tuple[int, int] | None = None) -> str:
    parts = [f"n={format_size(size)}"] if size is not None else []
    parts += [_extent(shape[0] * shape[1], shape[0])] if shape is not None else []
    parts += [dtype] if dtype else []
    return f" for {' '.join(parts)}" if parts else ""


def choose_steps(rungs: Sequence[str], rows: dict, where: str) -> tuple[list[Step], list[Step]]:
    """(steps to show, textbook steps left out because a rung has no row)."""
    steps = all_steps()
    if not rungs:
        shown = [s for s in steps if s.before in rows and s.after in rows]
        if not shown:
            raise UsageError(f"{where}: no ladder step has rows for both its rungs; name the "
                             "rungs to compare")
        # a textbook step is left out where a rung has no row; a row file leaves out
        # every textbook step, and a --size file every row step
        ladder = LADDER if any(s.after in LADDER for s in shown) else ROW_LADDER
        return shown, [s for s in steps if s not in shown and s.after in ladder]
    for name in rungs:
        if name not in rows:
            known = "" if name in LADDER or name in ROW_LADDER else \
                f" (not a rung of the ladder){did_you_mean(name, [*LADDER, *ROW_LADDER])}"
            raise UsageError(f"{where}: no verified row for rung {name!r}{known}")
    if len(rungs) == 1:
        step = next((s for s in steps if s.after == rungs[0] and s.before in rows), None)
        if step is None:
            raise UsageError(f"rung {rungs[0]!r} has no textbook predecessor with a row in "
                             f"{where}; name two rungs to compare")
        return [step], []
    pairs = zip(rungs, rungs[1:])
    return [STEP_BY_PAIR.get(pair, Step(pair[0], pair[1], "")) for pair in pairs], []


def explain(frame, rungs: Sequence[str] = (), size: int | None = None,
            dtype: str | None = None, where: str = "the results",
            shape: str | tuple[int, int] | None = None) -> Explanation:
    """The step reports for a results DataFrame with the metric columns (a file without
    them, or with them all empty, is refused with one line). `shape` ("1000x33", as
    --shape takes one) picks a shape of a --shape file."""
    if isinstance(shape, str):
        pairs = parse_shape(shape)
        if len(pairs) != 1:
            raise UsageError(f"--shape {shape}: explain takes one shape, e.g. 4096x4096")
        shape = pairs[0]
    n, dtype_name, rows = pick_rows(frame, size, dtype, where, shape)
    steps, skipped = choose_steps(list(rungs), rows, where)
    reports = [compare_step(step, rows[step.before], rows[step.after]) for step in steps]
    row_count = int(next(iter(rows.values()))["rows"])
    return Explanation(n, dtype_name, reports, skipped, read_reference(rows), row_count)


def read_reference(rows: dict) -> float:
    """The same-size read's time of a group (one per n and itemsize in a run, so every
    row that has one carries the same figure); NaN in files measured without it."""
    return next((v for v in (_float(row.get("read_us")) for row in rows.values())
                 if not math.isnan(v)), math.nan)
