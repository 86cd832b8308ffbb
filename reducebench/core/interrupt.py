"""Stopping a sweep cleanly on SIGINT or SIGTERM, at any moment.

While `stop_on_signals()` is active, either signal raises `Interrupted`. It derives from
BaseException, like KeyboardInterrupt, so the `except Exception` that turns a case's own
errors into an error row can never swallow it: the case in progress is abandoned, not
written. Inside `deferred()` (writing a row) a signal is held and raised when the block
ends, so a row is either written whole or not at all.

This module is the one place that installs signal handlers (`handling`): the entry
point's while starting, a measuring command's, and the ignoring while a child saves."""

from __future__ import annotations

import contextlib
import signal
from typing import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_CODE = 130  # what shells report for a process ended by Ctrl-C
# how long a child process is given to end on its own once it was signalled (or its
# parent was) before it is signalled again, then killed
GRACE_S = 5.0


class Interrupted(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        # cases measured in some of their rounds, not written (the runner sets it)
        self.unfinished = 0


_state = {"deferring": 0, "pending": None}


def _handler(signum, frame) -> None:
    if _state["deferring"]:
        _state["pending"] = signum
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def handling(handler) -> Iterator[None]:
    """`handler` (a function, or signal.SIG_IGN) for SIGINT and SIGTERM inside the block;
    the previous handlers restored after it."""
    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise Interrupted inside the block; the previous handlers are
    restored after it."""
    with handling(_handler):
        _state["pending"] = None
        yield


def ignoring_signals():
    """SIGINT and SIGTERM ignored inside the block: while a child is stopped, a second
    Ctrl-C must not cut this process short."""
    return handling(signal.SIG_IGN)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold a signal that arrives inside the block; raise it when the block is done."""
    _state["deferring"] += 1
    try:
        yield
    finally:
        _state["deferring"] -= 1
        if not _state["deferring"] and _state["pending"] is not None:
            pending, _state["pending"] = _state["pending"], None
            raise Interrupted(pending)
