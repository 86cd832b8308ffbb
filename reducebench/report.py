"""Rendering records: one rich table per (size, dtype), in ladder order. Only formats;
every figure comes from the records (or is a ratio of two of them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.table import Table

from reducebench.registry import REFERENCE, display_rank
from reducebench.results import Record
from reducebench.sizes import format_size

@dataclass
class Row:
    record: Record
    vs_previous: float = math.nan   # previous verified row's median / this median
    vs_first: float = math.nan      # first verified row's median / this median
    vs_reference: float = math.nan  # this median / cub's median (< 1: faster than cub)
    best: bool = False


def group(records: list[Record]) -> dict[tuple[int, str], list[Record]]:
    groups: dict[tuple[int, str], list[Record]] = {}
    for r in records:
        groups.setdefault((r.n, r.dtype), []).append(r)
    for rows in groups.values():
        rows.sort(key=lambda r: (display_rank(r.rung), r.block, r.params))
    return groups


def ratios(records: list[Record]) -> list[Row]:
    """Speedups within one (size, dtype) group; failed rows are never ranked."""
    rows = [Row(r) for r in records]
    timed = [row for row in rows if row.record.verified and row.record.samples]
    reference = next((row.record.median_us for row in timed if row.record.rung == REFERENCE),
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


def _num(value: float, fmt: str) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else format(value, fmt)


def _status(r: Record) -> str:
    if r.status == "ok":
        return "[green]yes[/]" + (" [yellow](throttled)[/]" if r.throttled else "")
    if r.status == "skipped":
        return f"[dim]skipped: {r.error}[/]"
    return f"[bold red]{r.status}[/] {r.error[:80]}"


def table(n: int, dtype: str, records: list[Record]) -> Table:
    meta = records[0].meta if records else {}
    title = f"n = {format_size(n)} ({n:,}) {dtype}"
    if meta:
        title += f" · {meta.get('gpu', '')} · {meta.get('mode', '')} L2"
    t = Table(title=title, title_justify="left", header_style="bold")
    for column, justify in (("rung", "left"), ("block", "right"), ("median us", "right"),
                            ("min us", "right"), ("noise %", "right"), ("GB/s", "right"),
                            ("% peak", "right"), ("vs prev", "right"), ("vs first", "right"),
                            ("vs cub", "right"), ("verified", "left")):
        t.add_column(column, justify=justify)
    for row in ratios(records):
        r = row.record
        name = f"[bold]{r.rung}[/]" if row.best else r.rung
        if r.params:
            name += f" [dim]{r.params}[/]"
        t.add_row(name, str(r.block) if r.block else "-", _num(r.median_us, ".2f"),
                  _num(r.min_us, ".2f"), _num(r.noise_pct, ".2f"), _num(r.gbps, ".0f"),
                  _num(r.pct_peak, ".1f"), _num(row.vs_previous, ".2f"),
                  _num(row.vs_first, ".2f"), _num(row.vs_reference, ".3f"), _status(r))
    return t


def tables(records: list[Record]) -> list[Table]:
    return [table(n, dtype, rows) for (n, dtype), rows in group(records).items()]
