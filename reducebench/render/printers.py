"""The printers behind every command's --format, in one place (as nvbench's printer
interface): a View holds a command's output in each form it offers, and show() is the
one output-format switch. `table` goes to the console as rich renderables; every other
form (json, csv, markdown, text) is text for stdout, with any warnings on stderr."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Callable

import click
from rich.console import Console

from reducebench.render.console import make_console

TABLE = "table"


@dataclass
class View:
    """A command's output: form name -> what makes it (a list of renderables for the
    table, the exact text to write for the others)."""

    forms: dict[str, Callable[[], object]]
    warnings: list[str] = field(default_factory=list)  # said on stderr but on the table

    @property
    def formats(self) -> tuple[str, ...]:
        return tuple(self.forms)


def to_stdout(output_format: str) -> bool:
    """Whether this form is text for stdout (json, csv, ...): a command's other lines
    (progress, what it saved) then go to stderr, so the text can be piped."""
    return output_format != TABLE


def console_for(output_format: str) -> Console:
    """The console for a command's lines besides its output: stderr beside text on
    stdout."""
    return make_console(stderr=to_stdout(output_format))


def show(view: View, output_format: str = TABLE, console: Console | None = None) -> None:
    """Print `view` in the form --format asks for."""
    made = view.forms[output_format]()
    if output_format == TABLE:
        console = console or make_console()
        for item in made:
            console.print(item)
        return
    for warning in view.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(made, nl=False)


def lines(text: str) -> str:
    """Text as click.echo would end it: one newline."""
    return text + "\n"


def flex_view(table) -> View:
    """A FlexTable: fitted to the terminal, as plain text, or as a markdown table."""
    return View({TABLE: lambda: [table], "text": table.as_text,
                 "markdown": table.as_markdown})


def records_view(records: list, table: Callable[[], list] | None = None) -> View:
    """Records as their tables (render/run_tables.py, or `table`), or as strict JSON rows."""
    from reducebench.render.run_tables import tables

    return View({TABLE: table or (lambda: tables(records)),
                 "json": lambda: json_rows([r.as_row() for r in records])})


def json_rows(rows: list[dict]) -> str:
    """Rows as strict JSON: NaN and infinities become null, anything else that JSON has
    no type for, its text."""
    rows = [{k: _json_value(v) for k, v in row.items()} for row in rows]
    return lines(json.dumps(rows, indent=1, allow_nan=False))


def _json_value(value):
    if getattr(value, "shape", None) == () and hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)
