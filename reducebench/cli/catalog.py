"""`list` and `show`: the ladder as the registry describes it. No GPU needed."""

from __future__ import annotations

import click

from rich.markup import escape
from rich.syntax import Syntax

from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.ladder.sources import local_includes, source_path
from reducebench.ladder.registry import RUNGS, Rung, get_rung
from reducebench.render.console import make_console
from reducebench.render.flex import FlexColumn, FlexTable
from reducebench.render import printers


def _blocks(rung: Rung) -> str:
    if rung.is_library:
        return "own"
    return f"{rung.blocks[0]}-{rung.blocks[-1]}"


@click.command("list")
@click.option("--format", "output_format", type=click.Choice(["table", "text", "markdown"]),
              default="table", show_default=True,
              help="table: fits the terminal (narrow ones get one block per rung); text: "
                   "one block per rung; markdown: a table for a document.")
def list_rungs(output_format: str) -> None:
    """The rungs, one line each, in ladder order."""
    printers.show(printers.flex_view(rung_table()), output_format)


def rung_table() -> FlexTable:
    """Every rung: names, dtypes and parameters stay whole; the description wraps."""
    columns = (FlexColumn("rung"), FlexColumn("finish"), FlexColumn("deterministic", short="determ-\ninistic"),
               FlexColumn("dtypes", prose=True), FlexColumn("blocks"),
               FlexColumn("params", prose=True), FlexColumn("what", prose=True))
    rows = []
    for rung in RUNGS:
        params = " ".join(f"{k}={v}" for k, v in rung.params.items())
        dtypes = ", ".join(DTYPES[d].short for d in rung.dtypes)  # names --dtype accepts
        rows.append((rung.name, rung.finish, "yes" if rung.deterministic else "no",
                     dtypes, _blocks(rung), escape(params), escape(rung.title)))
    return FlexTable("", columns, rows)


@click.command("show")
@click.argument("rung_name", metavar="RUNG")
def show(rung_name: str) -> None:
    """A rung's description and its kernel source, syntax highlighted (one rung; `list`
    shows them all)."""
    if rung_name.strip().lower() == "all":
        raise UsageError("show takes one rung name, e.g. reducebench show shfl; "
                         "`reducebench list` shows every rung")
    rung = get_rung(rung_name)  # an unknown name: one line from the group, exit 2
    console = make_console()
    console.print(f"[bold]{rung.name}[/]: {rung.title}")
    facts = [("finish", rung.finish), ("dtypes", ", ".join(rung.dtypes)),
             ("blocks", _blocks(rung)),
             ("deterministic", "yes" if rung.deterministic else "no (float atomics)")]
    if rung.grid is not None:
        facts.append(("grid", rung.grid.describe(rung.params)))
    if rung.params:
        facts.append(("params", ", ".join(f"{k}={v}" for k, v in rung.params.items())))
    if rung.in_place:
        facts.append(("in place", "reduces a scratch copy made outside the timed region"))
    facts.append(("reads", "every input element once: n x element size bytes"))
    for key, value in facts:
        console.print(f"  [dim]{key}:[/] {value}")
    if rung.notes:
        console.print()
        console.print(rung.notes)
    if rung.source:
        path = source_path(rung.source)
        text = path.read_text()
        console.print()
        console.print(f"[dim]cuda_src/{rung.source}[/]")
        console.print(Syntax(text, "cuda", line_numbers=True, word_wrap=False))
        headers = local_includes(text)
        if headers:
            console.print(f"[dim]includes {', '.join(headers)} "
                          f"(rb::warp_sum, rb::block_sum, rb::to_acc live there)[/]")


COMMANDS = [list_rungs, show]
