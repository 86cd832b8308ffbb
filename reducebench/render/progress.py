"""The one progress bar: what is running, how far, how long so far and how long left.
Transient: it leaves the terminal to the table that follows."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


def progress_bar(console: Console) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(),
                    TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                    TextColumn("left"), TimeRemainingColumn(), console=console,
                    transient=True)
