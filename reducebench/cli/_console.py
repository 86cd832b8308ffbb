"""A rich console that stays readable when piped or logged (no 80-column squeeze), and
takes the width COLUMNS asks for (COLUMNS=80 reducebench run ... | tee log)."""

from __future__ import annotations

import json
import math
import os
import sys

import click
from rich.console import Console

PIPED_WIDTH = 160


def make_console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else piped_width())


def piped_width() -> int:
    """COLUMNS where set to a usable width, else PIPED_WIDTH."""
    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) >= 20 else PIPED_WIDTH


def print_table(table, output_format: str = "table") -> None:
    """A FlexTable in the form a command's --format asks for: markdown, plain text, or
    a rich table that fits the terminal."""
    if output_format == "markdown":
        click.echo(table.as_markdown(), nl=False)
    elif output_format == "text":
        click.echo(table.as_text(), nl=False)
    else:
        make_console().print(table)


def echo_json_rows(records) -> None:
    """Every record's row as strict JSON on stdout: NaN and infinities become null,
    anything else that JSON has no type for, its text."""
    rows = [{k: _json_value(v) for k, v in r.as_row().items()} for r in records]
    click.echo(json.dumps(rows, indent=1, allow_nan=False))


def _json_value(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def unfinished_note(interrupted: BaseException, resumable: bool = True) -> str:
    """What an interruption cost beyond the saved rows: cases with some rounds done,
    which are written only after their last round."""
    count = getattr(interrupted, "unfinished", 0)
    if not count:
        return ""
    again = "--resume measures them again" if resumable else "a new run measures them"
    return (f"; {count} case(s) had only some of their rounds measured and were not saved "
            f"({again})")
