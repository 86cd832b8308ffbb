"""A rich console that stays readable when piped or logged (no 80-column squeeze), and
takes the width COLUMNS asks for (COLUMNS=80 reducebench run ... | tee log)."""

from __future__ import annotations

import os
import sys

from rich.console import Console

PIPED_WIDTH = 160


def make_console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else piped_width())


def piped_width() -> int:
    """COLUMNS where set to a usable width, else PIPED_WIDTH."""
    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) >= 20 else PIPED_WIDTH
