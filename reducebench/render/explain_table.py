"""`explain`'s table: each step's source change next to its counter change
(analysis/ladder_steps.py decides; this only lays it out)."""

from __future__ import annotations

from rich.markup import escape

from reducebench.analysis.ladder_steps import COUNTERS, EXPECTED, FINDING, Explanation, StepReport
from reducebench.render.flex import FlexColumn, FlexTable

_VERDICT_STYLE = {EXPECTED: "green", FINDING: "bold yellow"}


# equal shares of a narrow terminal: every column is prose of about the same worth
COLUMNS = tuple(FlexColumn(header, prose=True, weight=1) for header in (
    "step", "what changed in the source", "counters: before -> after",
    "the textbook expects", "verdict"))


def explain_table(result: Explanation) -> FlexTable:
    """Each step: the source change, the counters before and after, what the textbook
    expects, and the verdict; the steps left out named below."""
    notes = []
    if result.skipped:
        names = ", ".join(f"{s.before} -> {s.after}" for s in result.skipped)
        notes.append(f"[dim]not shown (a rung has no verified row): {escape(names)}[/]")
    return FlexTable(result.title, COLUMNS, [_cells(r) for r in result.reports], notes,
                     show_lines=True)


def _cells(report: StepReport) -> tuple[str, str, str, str, str]:
    step = f"[bold]{escape(report.step.before)}[/]\n-> [bold]{escape(report.step.after)}[/]"
    note = report.note
    changed = f"from {note.changed_from}: {note.changed}" if note.changed_from else ""
    source = "\n".join(escape(text) for text in (
        changed, f"why: {note.why}" if note.why else "",
        f"cost: {note.cost}" if note.cost else "") if text) or "[dim]-[/]"
    before_stall, after_stall = report.stall
    counters = "\n".join([escape(line.text) for line in report.lines]
                         + [escape(f"top stall: {before_stall} -> {after_stall}")])
    if report.step.expects:
        expects = "\n".join(escape(f"{COUNTERS[e.counter].label} {e.direction}: {e.why}")
                            for e in report.step.expects)
        expects += f"\n[dim]{escape(report.step.source)}[/]"
    else:
        expects = "[dim]-[/]"
    style = _VERDICT_STYLE.get(report.outcome, "dim")
    verdict = f"[{style}]{escape(report.verdict())}[/]"
    return step, source, counters, expects, verdict
