"""A rich console that stays readable when piped or logged (no 80-column squeeze)."""

from __future__ import annotations

import sys

from rich.console import Console

PIPED_WIDTH = 160


def make_console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else PIPED_WIDTH)
