"""`explain`: why each rung is faster, from a results file with hardware counters.
Parsing and rendering only; the steps, counters and verdicts come from reducebench.analysis.explain."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from reducebench.core.dtypes import get_dtype
from reducebench.core.errors import UsageError
from reducebench.analysis.explain import COUNTERS, EXPECTED, FINDING, Explanation, StepReport, explain
from reducebench.render.flex import FlexColumn, FlexTable
from reducebench.render import printers
from reducebench.results.files import read_results
from reducebench.core.sizes import parse_size

_VERDICT_STYLE = {EXPECTED: "green", FINDING: "bold yellow"}


def measure_for_explain(rungs: tuple[str, ...], size: int | None, dtype: str | None):
    """The hook for explaining without --from: measure the rungs with counters and return
    their results as a DataFrame (what read_results returns). Not wired yet."""
    raise UsageError("explain needs a results file with hardware counters: run "
                     "`reducebench run --size 2^24 --metrics --out FILE.csv`, then "
                     "`reducebench explain --from FILE.csv`")


@click.command("explain")
@click.argument("rungs", nargs=-1, metavar="[RUNG...]")
@click.option("--from", "from_file", type=click.Path(path_type=Path),
              default=None, metavar="FILE.csv",
              help="A results file written by `reducebench run --metrics`.")
@click.option("--size", default=None, metavar="N",
              help="Which size to explain, if the file holds several (e.g. 2^24).")
@click.option("--dtype", "dtype_name", default=None, metavar="DTYPE",
              help="Which dtype to explain, if the file holds several.")
@click.option("--format", "output_format", type=click.Choice(["table", "text", "markdown"]),
              default="table", show_default=True,
              help="table: fits the terminal (narrow ones get one block per step); text: "
                   "one block per step; markdown: a table for a document. Every word in "
                   "each.")
def explain_command(rungs: tuple[str, ...], from_file: Path | None, size: str | None,
                    dtype_name: str | None, output_format: str) -> None:
    """Why each rung is faster: the source change next to the counter change.

    \b
    reducebench explain --from FILE.csv                  every textbook step in FILE
    reducebench explain smem_strided --from FILE.csv     the step into smem_strided
    reducebench explain shfl vector_load --from FILE.csv any rungs, in the order given
    """
    n = parse_size(size) if size is not None else None
    dtype = get_dtype(dtype_name).name if dtype_name is not None else None
    if from_file is None:
        frame, where = measure_for_explain(rungs, n, dtype), "the measured rows"
    else:
        frame, where = read_results(from_file), str(from_file)
    render(explain(frame, rungs, n, dtype, where), output_format)


# equal shares of a narrow terminal: every column is prose of about the same worth
COLUMNS = tuple(FlexColumn(header, prose=True, weight=1) for header in (
    "step", "what changed in the source", "counters: before -> after",
    "the textbook expects", "verdict"))


def render(result: Explanation, output_format: str = "table") -> None:
    notes = []
    if result.skipped:
        names = ", ".join(f"{s.before} -> {s.after}" for s in result.skipped)
        notes.append(f"[dim]not shown (a rung has no verified row): {escape(names)}[/]")
    table = FlexTable(result.title, COLUMNS, [_cells(r) for r in result.reports], notes,
                      show_lines=True)
    printers.show(printers.flex_view(table), output_format)


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


COMMANDS = [explain_command]
