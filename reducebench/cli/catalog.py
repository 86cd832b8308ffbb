"""`list` and `show`: the ladder as the registry describes it. No GPU needed."""

from __future__ import annotations

import click

from reducebench.cli._options import option, options
from reducebench.core.errors import UsageError
from reducebench.ladder.registry import get_rung
from reducebench.render import printers
from reducebench.render.console import make_console
from reducebench.render.rungs import rung_page, rung_table


@click.command("list")
@options(option("format", type=click.Choice(["table", "text", "markdown"]),
                help="table: fits the terminal (narrow ones get one block per rung); text: "
                     "one block per rung; markdown: a table for a document."))
def list_rungs(output_format: str) -> None:
    """The rungs, one line each, in ladder order."""
    printers.show(printers.flex_view(rung_table()), output_format)


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
    for item in rung_page(rung):
        console.print(item)


COMMANDS = [list_rungs, show]
