"""Two runs on one page: the comparison, and the explain steps of a file with counters.

Every call into reducebench.analysis is in this module, so a change of its API touches
only here: `judge` is the one call of compare_runs, `steps` the one of explain."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from reducebench.analysis.compare import Comparison, compare_runs
from reducebench.analysis.ladder_steps import COUNTERS, EXPECTED, FINDING, explain
from reducebench.analysis.significance import format_p
from reducebench.core.errors import ReducebenchError
from reducebench.render.html.cells import (Cell, Header, Table, as_float, extent_cell,
                                           extent_key, extent_label, num_cell, text)
from reducebench.render.html.run_files import RunFile
from reducebench.render.html.report_tables import case_label, rung_rank
from reducebench.core.numbers import MISSING, number

THRESHOLD_PCT = 2.0   # compare's default --threshold
VERDICT_CLASS = {"FASTER": "faster", "SLOWER": "slower", "SAME": "same", "NOISY": "skip",
                 "FAILED": "fail",
                 "SKIPPED": "skip", "ONLY_BASE": "skip", "ONLY_NEW": "skip"}


def judge(base: RunFile, new: RunFile, threshold_pct: float = THRESHOLD_PCT) -> Comparison:
    """NEW against BASE, as `reducebench compare BASE NEW` judges it: from both runs'
    samples where both have them, else by the ratio rule."""
    return compare_runs(base.frame, new.frame, threshold_pct,
                        base.case_times if base.samples is not None else None,
                        new.case_times if new.samples is not None else None)


@dataclass
class ComparisonView:
    base: RunFile
    new: RunFile
    table: Table | None
    rows: pd.DataFrame                    # matched and one-sided rows
    counts: dict[str, int]
    geomean: float
    threshold_pct: float
    warnings: list[str] = field(default_factory=list)
    rules: dict[str, int] = field(default_factory=dict)
    chart: str | None = None

    @property
    def id(self) -> str:
        return f"compare-{self.base.index}-{self.new.index}"


def comparison(base: RunFile, new: RunFile, colours: dict[str, str]) -> ComparisonView:
    result = judge(base, new)
    rows = result.all_rows()
    view = ComparisonView(base, new, None, rows, result.counts(), result.overall_geomean,
                          result.threshold_pct, list(result.warnings), result.rules())
    if len(rows):
        view.table = _table(view, colours)
    return view


def _table(view: ComparisonView, colours: dict[str, str]) -> Table:
    headers = [Header("rung"), Header("dtype"), Header("n", numeric=True),
               Header("block", numeric=True), Header("params"),
               Header("base us", "BASE median", True), Header("new us", "NEW median", True),
               Header("change %", "new / base - 1", True),
               Header("band %", "the threshold, or both rows' noise where larger", True),
               Header("verdict"), Header("rule", "samples: a rank test and a bootstrap "
                                                 "interval; ratio: the medians' ratio"),
               Header("p", "two-sided Mann-Whitney p-value", True),
               Header("interval", "99% bootstrap interval of the change of the median"),
               Header("note")]
    table = Table(id=f"table-{view.id}", headers=headers)
    for row in view.rows.to_dict("records"):
        row = {k: ("" if k in ("params", "note", "rule") and not text(v) else v)
               for k, v in row.items()}
        verdict = text(row["verdict"])
        p = as_float(row["p_value"])
        low, high = as_float(row["ci_low"]), as_float(row["ci_high"])
        interval = MISSING if math.isnan(low) else \
            f"[{number(100 * (low - 1), '+.1f')}, {number(100 * (high - 1), '+.1f')}]"
        table.rows.append([
            Cell(row["rung"], rung_rank(row["rung"]), colour=colours.get(row["rung"], "")),
            Cell(row["dtype"], row["dtype"]), extent_cell(row),
            Cell(str(row["block"]) if int(row["block"]) else "-", int(row["block"])),
            Cell(text(row["params"])),
            num_cell(row["base_us"], ".2f"), num_cell(row["new_us"], ".2f"),
            _signed(row["change_pct"]), num_cell(row["band_pct"], ".1f"),
            Cell(verdict, verdict, cls=VERDICT_CLASS.get(verdict, "")), Cell(text(row["rule"])),
            Cell(format_p(p), p if not math.isnan(p) else ""),
            Cell(interval, low if not math.isnan(low) else ""),
            Cell(text(row["note"]), cls="wrap")])
        table.row_keys.append(case_label(row))
    return table


def _signed(value) -> Cell:
    figure = as_float(value)
    return Cell(number(figure, "+.1f"),
                figure if not math.isnan(figure) else "")


# ---- explain ---------------------------------------------------------------------------

@dataclass
class StepView:
    before: str
    after: str
    changed: list[str]
    counters: list[str]
    expects: list[str]
    verdict: str
    outcome: str   # expected | finding | unknown | no claim


@dataclass
class ExplainView:
    title: str
    steps: list[StepView]
    skipped: list[str]
    note: str = ""


def steps(run: RunFile) -> list[ExplainView]:
    """`reducebench explain`'s steps for every size (or shape) and dtype of the file that
    has counters; a group explain refuses becomes a note, never an error."""
    records = run.frame.to_dict("records")
    groups = sorted({(*extent_key(r), str(r["dtype"])) for r in records})
    out = []
    for n, rows, dtype in groups:
        try:
            result = explain(run.frame, (), None, dtype, run.name, (rows, n // rows))
        except ReducebenchError as exc:
            if len(groups) == 1:
                title = extent_label({"n": n, "rows": rows})
                out.append(ExplainView(f"{title} {dtype}", [], [], str(exc)))
            continue
        out.append(ExplainView(result.title, [_step(r) for r in result.reports],
                               [f"{s.before} -> {s.after}" for s in result.skipped]))
    return out


def _step(report) -> StepView:
    note = report.note
    changed = [line for line in (
        f"from {note.changed_from}: {note.changed}" if note.changed_from else "",
        f"why: {note.why}" if note.why else "", f"cost: {note.cost}" if note.cost else "")
        if line]
    before_stall, after_stall = report.stall
    counters = [line.text for line in report.lines] + [
        f"top stall: {before_stall} -> {after_stall}"]
    expects = [f"{COUNTERS[e.counter].label} {e.direction}: {e.why}" for e in report.step.expects]
    if report.step.source:
        expects.append(f"({report.step.source})")
    return StepView(report.step.before, report.step.after, changed, counters, expects,
                    report.verdict(), report.outcome)


OUTCOME_CLASS = {EXPECTED: "ok", FINDING: "suspect"}
