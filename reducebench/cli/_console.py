"""How every measuring command ends: its closing lines, then its exit code."""

from __future__ import annotations

import click
from rich.console import Console

from reducebench.measuring.lifecycle import Ending
from reducebench.measuring.session import abandon_lost_context
from reducebench.render.closing import closing_lines
from reducebench.render.console import make_console
from reducebench.render.printers import show


def end(ending: Ending, console: Console | None = None) -> None:
    """The Ending's closing lines, then its exit code (a lost GPU context abandoned
    first: a real device ends the process there)."""
    console = console or make_console()
    for line in closing_lines(ending):
        console.print(line)
    if ending.lost is not None:
        abandon_lost_context(ending.backend)
    if ending.exit_code:
        raise click.exceptions.Exit(ending.exit_code)


def show_ending(ending: Ending, view, output_format: str, console: Console) -> None:
    """What a measuring command made (its heading, then `view` in the form --format asks
    for), unless an error line already ended it; then end()."""
    if ending.show:
        if ending.heading:
            console.print(ending.heading)
        show(view, output_format, console)
    end(ending, console)
