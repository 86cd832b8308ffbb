"""show-samples' summary: every case (and phase) of a samples file, its count, kept,
median, min, max, noise and drift, in a table that fits the terminal."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from reducebench.analysis.samples_summary import summarize_samples
from reducebench.core.sizes import format_size
from reducebench.core.numbers import number
from reducebench.render.run_tables import Column, FittedTable


def _number(value: float, digits: int = 3) -> str:
    return number(value, f".{digits}f")


def _signed(value: float) -> str:
    return number(value, "+.2f")


def _summary_rows(cases) -> list[SimpleNamespace]:
    """One row per case and phase: the case key and its SampleSummary."""
    out = []
    for key, rows in cases:
        rows = rows.sort_values("index", kind="stable")
        phases = sorted(set(rows["phase"]))
        for phase in phases:
            part = rows[rows["phase"] == phase]
            rung, dtype, n, block, params = key
            out.append(SimpleNamespace(rung=rung, dtype=dtype, n=n, block=block,
                                       params=params.replace(";", " "),
                                       phase=str(phase) if len(phases) > 1 else "-",
                                       s=summarize_samples(part["time_us"], part["kept"])))
    return out


_SUMMARY_COLUMNS = (
    Column("count", "count", lambda r: str(r.s.count), priority=60),
    Column("kept", "kept", lambda r: str(r.s.kept), priority=70),
    Column("median us", "median\nus", lambda r: _number(r.s.median), priority=100),
    Column("min us", "min\nus", lambda r: _number(r.s.min), priority=50),
    Column("max us", "max\nus", lambda r: _number(r.s.max), priority=55),
    Column("noise %", "noise\n%", lambda r: _number(r.s.noise_pct, 2), priority=90),
    Column("drift %", "drift\n%", lambda r: _signed(r.s.drift_pct), priority=80),
)


def summary_table(path: Path, cases) -> FittedTable:
    """Every case (and phase): count, kept, median, min, max, noise, drift; a table that
    fits the terminal without cutting a number or a name (render.run_tables.FittedTable)."""
    return FittedTable(
        title=str(path), rows=_summary_rows(cases), columns=_SUMMARY_COLUMNS,
        name=lambda r: r.rung, params=lambda r: r.params, block=lambda r: int(r.block),
        status=lambda r, full: r.phase, status_header=("phase", "ph."),
        group_columns=(("dtype", lambda r: r.dtype), ("n", lambda r: format_size(int(r.n)))),
        group_title=lambda r: f"{r.dtype} · n = {format_size(int(r.n))}",
        elsewhere="a wider terminal has them")
