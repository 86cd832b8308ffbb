"""`multigpu`'s output: the timing floor's line, the sharded sum's table and the NCCL
reference collectives' table."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from reducebench.core.sizes import format_size
from reducebench.multigpu.cases import COLLECTIVES, FLOOR, SHARDED
from reducebench.render.flex import FlexColumn, FlexTable
from reducebench.core.numbers import number
from reducebench.results.schema import OK, SKIPPED, MultiGpuRecord


def multigpu_tables(records: list[MultiGpuRecord]) -> list:
    """What `multigpu` prints for its records, in order (nothing for a kind not run)."""
    out: list = []
    floors = [r for r in records if r.case == FLOOR]
    if floors:
        out.append("timing floor (k empty kernels and a one-float NCCL all-reduce, "
                   "median): " + ", ".join(f"k={r.gpus} {_floor(r)}" for r in floors))
    sharded = [r for r in records if r.case == SHARDED]
    if sharded:
        out.append(sharded_table(sharded))
    collectives = [r for r in records if r.case in COLLECTIVES]
    if collectives:
        out.append(collective_table(collectives))
    return out


def multigpu_view(records: list[MultiGpuRecord]):
    from reducebench.render.printers import TABLE, View

    return View({TABLE: lambda: multigpu_tables(records)})


def render(console: Console, records: list[MultiGpuRecord]) -> None:
    for item in multigpu_tables(records):
        console.print(item)


def sharded_table(records: list[MultiGpuRecord]) -> FlexTable:
    first = records[0]
    columns = [FlexColumn(header, justify="left" if header in ("n", "dtype") else "right",
                          short=short)
               for header, short in (("n", ""), ("dtype", ""), ("GPUs", ""),
                                     ("median us", "median\nus"),
                                     ("spread us", "spread\nus"),
                                     ("GB/s (all GPUs)", "GB/s\n(all)"),
                                     ("speed-up", "speed-\nup"),
                                     ("efficiency", "effic-\niency"),
                                     ("floor us", "floor\nus"))]
    columns.append(FlexColumn("verified", prose=True))
    rows = [(format_size(r.n), r.dtype, str(r.gpus), number(r.median_us, ".2f"),
             number(r.spread_us, ".2f"), number(r.gbps, ".0f"), number(r.speedup, ".2f"),
             number(r.efficiency, ".2f"), number(r.floor_us, ".2f"), _status(r))
            for r in records]
    return FlexTable(f"sharded sum · local rung {first.local_rung} · "
                     f"{first.meta.get('gpu', '')} · {first.meta.get('mode', '')} L2",
                     columns, rows)


def collective_table(records: list[MultiGpuRecord]) -> FlexTable:
    columns = [FlexColumn(header, justify="left" if header in ("op", "dtype", "place")
                          else "right", short=short)
               for header, short in (("op", ""), ("bytes", ""), ("dtype", ""),
                                     ("GPUs", ""), ("place", ""),
                                     ("median us", "median\nus"),
                                     ("algbw GB/s", "algbw\nGB/s"),
                                     ("busbw GB/s", "busbw\nGB/s"))]
    columns.append(FlexColumn("verified", prose=True))
    rows = [(r.rung.removeprefix("nccl_"), format_size(r.bytes), r.dtype, str(r.gpus),
             "in" if r.in_place else "out", number(r.median_us, ".2f"),
             number(r.algbw_gbps, ".2f"), number(r.busbw_gbps, ".2f"), _status(r))
            for r in records]
    return FlexTable("NCCL reference collectives (nccl-tests' algbw and busbw)", columns,
                     rows)


def _floor(r: MultiGpuRecord) -> str:
    return number(r.median_us, ".2f", " us") if r.verified else f"({r.status}: {r.error})"


def _status(r: MultiGpuRecord) -> str:
    if r.status == OK:
        return "[green]yes[/]"
    if r.status == SKIPPED:
        return f"[dim]skipped: {escape(r.error)}[/]"
    return f"[bold red]{r.status}[/] {escape(r.error)}"
