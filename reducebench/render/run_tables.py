"""Rendering records: one table per (size, dtype), in ladder order. Only formats; every
figure comes from the records (or is a ratio of two of them).

Columns are data (COLUMNS, COUNTER_COLUMNS): a header, a short header for narrow
terminals, how to format a row's value, a priority, and whether the rows want the column
at all. A FittedTable fits the width it is printed at without ever cutting a number: when
it is too wide, text gives way first (the status loses its reason, which is listed under
the table, rung parameters move to a legend under the table, the block size moves to the
title, group columns become one table per group, headers take two lines, the borders
go, long names wrap), and only then are whole columns left out, lowest priority first,
with a line saying which. Narrower than every layout, the rows are printed as lines.
`compare` renders its tables with the same machinery."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Sequence

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from reducebench.ladder.registry import REFERENCE, ROWS, display_rank
from reducebench.results.schema import OK, SKIPPED, SUSPECT, Record
from reducebench.core.sizes import format_shape, format_size
from reducebench.core.numbers import MISSING, as_float, number


@dataclass
class Row:
    record: Record
    vs_previous: float = math.nan   # previous verified row's median / this median
    vs_first: float = math.nan      # first verified row's median / this median
    vs_reference: float = math.nan  # this median / cub's median (< 1: faster than cub)
    best: bool = False
    reference: bool = False         # the `vs cub` divisor standing in for cub (past 2^31-1)


def group(records: list[Record]) -> dict[tuple[int, str, int], list[Record]]:
    """Records by (n, dtype, rows): a table per size, or per shape, and dtype."""
    groups: dict[tuple[int, str, int], list[Record]] = {}
    for r in records:
        groups.setdefault((r.n, r.dtype, r.rows), []).append(r)
    for rows in groups.values():
        rows.sort(key=lambda r: (display_rank(r.rung), r.block, r.params))
    return groups


# CuPy's CUB binding takes at most 2^31-1 elements (cub::DeviceReduce with 32-bit offsets);
# past that, torch.sum (64-bit indexing) is the library the `vs cub` column compares with.
CUB_MAX_N = 2**31 - 1
LARGE_REFERENCE = "torch"
# A table of the row ladder divides by CUB's segmented sum of the same rows.
ROW_REFERENCE = "cub_rows"


def reference_rung(records: list[Record]) -> str | None:
    """The library the `vs cub` column divides by: cub where it ran (cub_rows in a table
    of the row ladder), else torch.sum for sizes past CUB_MAX_N (marked in the table),
    else none."""
    rungs = {r.rung for r in records}
    for name in (REFERENCE, ROW_REFERENCE):
        if name in rungs:
            return name
    if LARGE_REFERENCE in rungs and any(r.n > CUB_MAX_N for r in records):
        return LARGE_REFERENCE
    return None


def ratios(records: list[Record]) -> list[Row]:
    """Speedups within one (size, dtype) group; failed rows are never ranked."""
    rows = [Row(r) for r in records]
    timed = [row for row in rows if row.record.verified and row.record.samples]
    ref_rung = reference_rung([row.record for row in timed])
    for row in rows:
        row.reference = ref_rung == LARGE_REFERENCE and row.record.rung == ref_rung
    reference = next((row.record.median_us for row in timed if row.record.rung == ref_rung),
                     math.nan)
    previous = None
    for row in timed:
        median = row.record.median_us
        if previous is not None:
            row.vs_previous = previous / median
        row.vs_first = timed[0].record.median_us / median
        row.vs_reference = median / reference
        previous = median
    if timed:
        min(timed, key=lambda row: row.record.median_us).best = True
    return rows


# ---- columns as data ---------------------------------------------------------------

def _always(rows: Sequence[Any]) -> bool:
    return True


@dataclass(frozen=True)
class Column:
    """One column of figures. Its cells never wrap and are never cut. `priority`: when
    even the most compact layout is too wide, the columns of lowest priority are left out
    first (whole). `wanted`: whether these rows have the column at all (optional columns:
    accuracy, counters)."""

    header: str
    short: str                       # the header on narrow terminals (may hold a line break)
    cell: Callable[[Any], str]
    priority: int
    wanted: Callable[[Sequence[Any]], bool] = _always


def _field(name: str, fmt: str) -> Callable[[Row], str]:
    return lambda row: number(getattr(row.record, name), fmt)


def _random_inputs(rows: Sequence[Row]) -> bool:
    return any(row.record.meta.get("inputs") == "random" for row in rows)


def _measured_ceiling(rows: Sequence[Row]) -> bool:
    return any(not math.isnan(row.record.pct_ceiling) for row in rows)


def _measured_read(rows: Sequence[Row]) -> bool:
    return any(not math.isnan(row.record.pct_read) for row in rows)


COLUMNS: tuple[Column, ...] = (
    Column("median us", "median\nus", _field("median_us", ".2f"), priority=100),
    Column("min us", "min\nus", _field("min_us", ".2f"), priority=30),
    Column("noise %", "noise\n%", _field("noise_pct", ".2f"), priority=40),
    Column("GB/s", "GB/s", _field("gbps", ".0f"), priority=90),
    Column("% peak", "%\npeak", _field("pct_peak", ".1f"), priority=80),
    Column("% ceiling", "%\nceil", _field("pct_ceiling", ".1f"), priority=85,
           wanted=_measured_ceiling),
    # the same-size read's time over this row's: 100 is as fast as reading the input
    Column("% read", "%\nread", _field("pct_read", ".1f"), priority=95,
           wanted=_measured_read),
    # with --inputs random: how far each rung's rounding took it from the exact sum
    Column("error ulps", "error\nulps", _field("error_ulps", ".1f"), priority=60,
           wanted=_random_inputs),
    Column("vs prev", "vs\nprev", lambda row: number(row.vs_previous, ".2f"), priority=10),
    Column("vs first", "vs\nfirst", lambda row: number(row.vs_first, ".2f"), priority=20),
    Column("vs cub", "vs\ncub", lambda row: number(row.vs_reference, ".3f"), priority=70),
)


def _metric(name: str, fmt: str) -> Callable[[Row], str]:
    return lambda row: number(row.record.metrics.get(name, math.nan), fmt)


def _smem_conflicts(row: Row) -> str:
    found = [row.record.metrics.get(k, math.nan)
             for k in ("ncu_smem_ld_conflicts", "ncu_smem_st_conflicts")]
    values = [v for v in map(as_float, found) if not math.isnan(v)]
    return number(sum(values), ".0f") if values else MISSING


# The main counters of --metrics (reducebench/metrics.py METRIC_COLUMNS; docs/metrics.md).
COUNTER_COLUMNS: tuple[Column, ...] = (
    Column("DRAM %", "DRAM\n%", _metric("ncu_dram_pct", ".1f"), priority=100),
    Column("DRAM read / input", "read/\ninput", _metric("ncu_dram_read_per_input", ".3f"),
           priority=90),
    Column("L2 hit %", "L2\nhit %", _metric("ncu_l2_hit_pct", ".1f"), priority=60),
    Column("occupancy %", "occup.\n%", _metric("ncu_occupancy_pct", ".1f"), priority=70),
    Column("threads / inst", "thr/\ninst", _metric("ncu_threads_per_inst", ".2f"),
           priority=50),
    Column("inst / elem", "inst/\nelem", _metric("ncu_inst_per_elem", ".2f"), priority=80),
    Column("smem conflicts", "smem\nconfl.", _smem_conflicts, priority=40),
)


# ---- layouts, widest first -----------------------------------------------------------

RUNG_WIDTH_NARROW = 17   # the longest ladder name (gridstride_atomic); longer names wrap


@dataclass(frozen=True)
class Layout:
    params_inline: bool = True       # rung parameters next to the name, else in a legend
    full_status: bool = True         # the status with its reason, else the word (reason below)
    block_column: bool = True        # else, when all kernels share one, the block in the title
    group_columns: bool = True       # e.g. dtype and n as columns, else one table per group
    full_headers: bool = True        # "median us", else "median" over "us"
    borders: bool = True             # the box, else one space between columns
    rung_width: int | None = None    # a longer name (with its legend tag) wraps
    dropped: tuple[str, ...] = ()    # headers of the columns left out


TEXT_STEPS: tuple[dict, ...] = (dict(full_status=False), dict(params_inline=False),
                                dict(block_column=False), dict(group_columns=False),
                                dict(full_headers=False), dict(borders=False),
                                dict(rung_width=RUNG_WIDTH_NARROW))


def layouts(columns: Sequence[Column]) -> Iterator[Layout]:
    """Every layout to try, in order: each text step gives up one more piece of text;
    then columns are left out one at a time, lowest priority first (the highest stays)."""
    layout = Layout()
    yield layout
    for change in TEXT_STEPS:
        layout = replace(layout, **change)
        yield layout
    by_priority = sorted(columns, key=lambda c: c.priority)
    for count in range(1, len(by_priority)):
        yield replace(layout, dropped=tuple(c.header for c in by_priority[:count]))


def natural_width(console: Console, options: ConsoleOptions, table: Table) -> int:
    """The table's width with every cell on one line (a capped name column wrapped)."""
    return Measurement.get(console, options.update_width(10**6), table).maximum


def fits(console: Console, options: ConsoleOptions, table: Table) -> bool:
    """At its natural width rich shrinks no column, so no number can be cut."""
    return natural_width(console, options, table) <= options.max_width


@dataclass
class FittedTable:
    """Rows of one kind as a table that fits the width it is printed at (see the module
    docstring). The callables read one row: its name (markup), its parameters, its block
    (0: a library's own), its status (markup; full or short) and the reason a short status
    leaves out."""

    title: str
    rows: Sequence[Any]
    columns: Sequence[Column]
    name: Callable[[Any], str]
    params: Callable[[Any], str]
    block: Callable[[Any], int]
    status: Callable[[Any, bool], str]
    reason: Callable[[Any], str] = lambda row: ""
    status_header: tuple[str, str] = ("verified", "ok")
    # columns naming a row's group (e.g. dtype, n): (header, cell); a section per group,
    # or on narrow terminals one table per group, titled by group_title(row)
    group_columns: Sequence[tuple[str, Callable[[Any], str]]] = ()
    group_title: Callable[[Any], str] = lambda row: ""
    # where the columns left out at a narrow width can be seen
    elsewhere: str = "a wider terminal, --format json or the CSV has them"

    def __post_init__(self) -> None:
        self.columns = [c for c in self.columns if c.wanted(self.rows)]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.rows:  # a header over nothing (a run stopped before its first row)
            return
        for layout in layouts(self.columns):
            tables = self.tables(layout)
            if all(fits(console, options, t) for t in tables):
                notes = self.notes(layout)
                yield Group(*tables, *([Text.from_markup("\n".join(notes))] if notes else []))
                return
        yield self.as_lines()

    # -- pieces --
    def single_block(self) -> int | None:
        blocks = {self.block(row) for row in self.rows if self.block(row)}
        return blocks.pop() if len(blocks) == 1 else None

    def legend(self) -> dict[str, str]:
        """params text -> its tag, [1], [2], ... in order of appearance."""
        tags: dict[str, str] = {}
        for row in self.rows:
            params = self.params(row)
            if params and params not in tags:
                tags[params] = f"[{len(tags) + 1}]"
        return tags

    def _grouped(self) -> list[list[Any]]:
        if not self.group_columns:
            return [list(self.rows)]
        groups: list[list[Any]] = []
        previous = None
        for row in self.rows:
            key = tuple(cell(row) for _, cell in self.group_columns)
            if key != previous:
                groups.append([])
                previous = key
            groups[-1].append(row)
        return groups

    def tables(self, layout: Layout) -> list[Table]:
        show_block = layout.block_column or self.single_block() is None
        title = self.title
        if not show_block:
            title += f" · block {self.single_block()}"
        groups = self._grouped()
        if layout.group_columns or not self.group_columns:
            return [self._table(title, layout, groups, show_block, True)]
        return [self._table((f"{title}\n" if i == 0 else "") + self.group_title(rows[0]),
                            layout, [rows], show_block, False)
                for i, rows in enumerate(groups)]

    def _table(self, title: str | None, layout: Layout, groups: list[list[Any]],
               show_block: bool, with_group_columns: bool) -> Table:
        style = dict(box=box.HEAVY_HEAD) if layout.borders else dict(
            box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 0))
        t = Table(title=escape(title) if title else None, title_justify="left",
                  header_style="bold", **style)
        group_columns = self.group_columns if with_group_columns else ()
        for header, _ in group_columns:
            t.add_column(header, no_wrap=True)
        t.add_column("rung", max_width=layout.rung_width, overflow="fold")
        if show_block:
            t.add_column("block", justify="right", no_wrap=True)
        columns = [c for c in self.columns if c.header not in layout.dropped]
        for column in columns:
            t.add_column(column.header if layout.full_headers else column.short,
                         justify="right", no_wrap=True)
        t.add_column(self.status_header[0] if layout.full_headers else self.status_header[1],
                     overflow="fold")
        tags = self.legend()
        for index, rows in enumerate(groups):
            if index and group_columns:
                t.add_section()
            for row in rows:
                name, params = self.name(row), self.params(row)
                if params:
                    name += f" [dim]{params if layout.params_inline else tags[params]}[/]"
                cells = [cell(row) for _, cell in group_columns] + [name]
                if show_block:
                    cells.append(str(self.block(row)) if self.block(row) else "-")
                cells += [c.cell(row) for c in columns]
                cells.append(self.status(row, layout.full_status))
                t.add_row(*cells)
        return t

    def notes(self, layout: Layout) -> list[str]:
        lines = []
        if not layout.params_inline:
            lines += [f"[dim]{tag} {params}[/]" for params, tag in self.legend().items()]
        if not layout.full_status:
            for row in self.rows:
                reason = self.reason(row)
                if reason:
                    lines.append(f"[dim]{escape(reason)}[/]")
        if layout.dropped:
            lines.append(f"[dim]left out at this width: {', '.join(layout.dropped)} "
                         f"({escape(self.elsewhere)})[/]")
        return lines

    def as_lines(self) -> Text:
        """Every figure of every row as wrapped lines: for widths no table fits in."""
        lines = [self.title]
        for row in self.rows:
            figures = [f"{c.header} {c.cell(row)}" for c in self.columns if c.cell(row)]
            where = [cell(row) for _, cell in self.group_columns]
            if self.params(row):
                where.append(self.params(row))
            if self.block(row):
                where.append(f"block {self.block(row)}")
            status = Text.from_markup(self.status(row, True)).plain
            lines.append(f"{Text.from_markup(self.name(row)).plain} {' '.join(where)}: "
                         + ", ".join(figures) + f"; {status}")
        return Text("\n".join(lines))


# ---- the run's tables --------------------------------------------------------------

def _name(row: Row) -> str:
    name = f"[bold]{row.record.rung}[/]" if row.best else row.record.rung
    if row.reference:
        name += " [dim](reference past 2^31-1)[/]"
    return name


def _status(row: Row, full: bool) -> str:
    r = row.record
    if r.status == OK:
        return "[green]yes[/]" + (" [yellow](throttled)[/]" if r.throttled else "")
    if r.status == SKIPPED:
        return f"[dim]skipped: {escape(r.error)}[/]" if full else "[dim]skipped[/]"
    if r.status == SUSPECT:
        return f"[bold yellow]suspect[/] {escape(r.note[:80])}" if full else \
            "[bold yellow]suspect[/]"
    if full:
        return f"[bold red]{r.status}[/] {escape(r.error[:80])}"
    return f"[bold red]{r.status}[/]"


def _reason(row: Row) -> str:
    r = row.record
    why = r.note if r.status == SUSPECT else r.error
    return f"{r.rung}: {r.status}: {why}" if r.status != OK and why else ""


def _stall(row: Row, full: bool) -> str:
    metrics, r = row.record.metrics, row.record
    if not metrics:
        if not r.ncu_error:
            return ""
        return f"[dim]no counters: {escape(r.ncu_error)}[/]" if full else "[dim]none[/]"
    stall = str(metrics.get("ncu_stall_top", "") or "")
    pct = as_float(metrics.get("ncu_stall_top_pct"))
    return f"{stall} {number(pct, '.1f', '%')}" if stall and not math.isnan(pct) else stall


def _params(row: Row) -> str:
    """A rung's parameters; for auto, the variant it ran and where that came from."""
    r = row.record
    return f"-> {r.variant}" if r.variant else r.params


def _no_counters(row: Row) -> str:
    r = row.record
    return f"{r.rung}: no counters: {r.ncu_error}" if not r.metrics and r.ncu_error else ""


def table(n: int, dtype: str, records: list[Record]) -> Group:
    """One (size, dtype) group: the timings, and the hardware counters when any row has
    them (a run with --metrics)."""
    rows = ratios(records)
    meta = records[0].meta if records else {}
    title = f"n = {format_size(n)} ({number(n, ',')}) {dtype}"
    if records and records[0].finish == ROWS:  # each row summed: the shape says it
        shape = format_shape(records[0].rows, n // records[0].rows)
        title = f"shape = {shape} (rows x cols, {number(n, ',')} elements) {dtype}"
    if meta:
        title += f" · {meta.get('gpu', '')} · {meta.get('mode', '')} L2"
    common = dict(rows=rows, name=_name, params=_params,
                  block=lambda row: row.record.block)
    parts: list[RenderableType] = [
        FittedTable(title=title, columns=COLUMNS, status=_status, reason=_reason, **common)]
    if any(r.metrics for r in records):
        parts.append(FittedTable(
            title=f"hardware counters (ncu) · n = {format_size(n)} {dtype}",
            columns=COUNTER_COLUMNS, status=_stall, reason=_no_counters,
            status_header=("top stall", "stall"), **common))
    return Group(*parts)


def tables(records: list[Record]) -> list[Group]:
    return [table(n, dtype, rows) for (n, dtype, _), rows in group(records).items()]


# ---- several GPUs: `run --device all` ------------------------------------------------------

def devices_table(rows: Sequence[Any], names: dict[int, str]) -> FittedTable:
    """Each case's median on every GPU, and each later GPU's median over the first's
    (rows: every_device.side_by_side; names: device index -> GPU name)."""
    devices = list(names)
    first = devices[0]
    columns = [Column(f"GPU {d} us", f"GPU {d}\nus",
                      lambda row, d=d: number(row.medians.get(d, math.nan), ".2f"),
                      priority=100 - i) for i, d in enumerate(devices)]
    columns += [Column(f"GPU {d} / GPU {first}", f"{d} /\n{first}",
                       lambda row, d=d: number(row.ratio(d, first), ".3f"), priority=90 - i)
                for i, d in enumerate(devices[1:])]
    gpus = ", ".join(f"GPU {d} {names[d]}" for d in devices)
    return FittedTable(
        title=f"the GPUs side by side: {gpus} (ratio > 1: slower than GPU {first})",
        rows=list(rows), columns=columns, name=lambda row: row.rung,
        params=lambda row: row.params, block=lambda row: row.block,
        status=_devices_status, status_header=("status", "status"),
        group_columns=(("dtype", lambda row: row.dtype), ("n", _extent)),
        group_title=lambda row: f"{row.dtype} · "
                                f"{'shape' if row.rows > 1 else 'n'} = {_extent(row)}")


def _extent(row: Any) -> str:
    """A case's size, or its shape where it summed several rows."""
    return format_shape(row.rows, row.n // row.rows) if row.rows > 1 else format_size(row.n)


def _devices_status(row: Any, full: bool) -> str:
    bad = {d: s for d, s in row.statuses.items() if s != OK}
    if not bad:
        return "[green]ok[/]"
    return ", ".join((f"[dim]{s}[/]" if s == SKIPPED else f"[bold red]{s}[/]") + f" on GPU {d}"
                     for d, s in bad.items())


# ---- a fleet: `run --device all` under a launcher ----------------------------------------------

def fleet_table(report: Any, names: dict[int, str], uuids: dict[int, str]) -> Table:
    """One row per GPU (rank): its worst case against the fleet median, and whether the
    fleet check (analysis.fleet) flags it (report: a FleetReport)."""
    t = Table(title=f"the fleet check: {len(report.gpus)} GPUs, {report.cases} case(s) judged, "
                    f"{len(report.flagged)} flagged",
              title_justify="left", header_style="bold")
    for column in ("rank", "GPU", "UUID", "cases", "slower", "worst case", "median / fleet",
                   "p", "verdict"):
        t.add_column(column, justify="right" if column in ("rank", "cases", "slower",
                                                           "median / fleet", "p") else "left")
    for rank, gpu in report.gpus.items():
        worst = gpu.worst
        verdict = "[bold red]SLOWER[/]" if gpu.flagged else "[green]ok[/]"
        if not gpu.cases:
            verdict = "[dim]not judged[/]"
        t.add_row(str(rank), escape(names.get(rank, "?")), uuids.get(rank, ""),
                  str(len(gpu.cases)), str(len(gpu.slower_cases)),
                  escape(worst.case) if worst else "",
                  number(worst.ratio if worst else None, ".3f"),
                  number(worst.p_value if worst else None, ".2g"), verdict)
    return t
