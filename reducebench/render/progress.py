"""The one progress bar of the measuring commands (run, tune, multigpu): what is being
measured, how far, for how long, and, where the total is known, how long is left. It
goes away when done (transient), so the table that follows stands alone."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (BarColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)


def progress_bar(console: Console) -> Progress:
    """A bar on `console`: description, bar, done/total, elapsed, estimated time left."""
    return Progress(TextColumn("{task.description}"), BarColumn(),
                    TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                    TextColumn("left"), TimeRemainingColumn(), console=console,
                    transient=True)
