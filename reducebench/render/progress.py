"""The one progress bar of the measuring commands (run, tune, multigpu): what is being
measured, how far, for how long, and, where the total is known, how long is left. It
goes away when done (transient), so the table that follows stands alone."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import (BarColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)


def progress_bar(console: Console) -> Progress:
    """A bar on `console`: description, bar, done/total, elapsed, estimated time left."""
    return Progress(TextColumn("{task.description}"), BarColumn(),
                    TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                    TextColumn("left"), TimeRemainingColumn(), console=console,
                    transient=True)


@contextlib.contextmanager
def case_progress(console: Console, total: int | None = None) -> Iterator[Callable]:
    """The bar over a command's cases: yields on_case(case, index, total), which moves it
    (measuring/lifecycle.Watch)."""
    with progress_bar(console) as progress:
        task = progress.add_task("starting", total=total)

        def on_case(case, index: int, count: int) -> None:
            progress.update(task, completed=index, total=count, description=case.label)

        yield on_case
        progress.update(task, completed=progress.tasks[0].total)


@contextlib.contextmanager
def stage_progress(console: Console) -> Iterator[tuple[Callable, Callable]]:
    """The bar over a search in stages (`tune`): yields on_stage(text), which starts a
    stage, and on_case(case, index, total), which moves it."""
    with progress_bar(console) as progress:
        task = progress.add_task("starting", total=None)

        def on_stage(text: str) -> None:
            progress.update(task, description=text, completed=0, total=None)

        def on_case(case, index: int, total: int) -> None:
            progress.update(task, completed=index, total=total)

        yield on_stage, on_case
