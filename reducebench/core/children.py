"""Child processes that never outlive us: each starts in a process group of its own, and
whatever ends the wait for it (a signal raised as Interrupted, a time-out, any error)
first stops the whole group (SIGTERM, then SIGKILL after a grace period) and reaps it.
A tool that starts children of its own (Nsight Compute runs the profiled program) loses
them with it: no process of ours is left behind, re-parented to init."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Mapping, Sequence

from reducebench.core.interrupt import GRACE_S, ignoring_signals


def run_child(argv: Sequence[str], timeout: float | None = None,
              capture: bool = True,
              env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
    """subprocess.run(argv) with text output captured, in a process group of its own, in
    `env` (default: ours). subprocess.TimeoutExpired after `timeout` seconds, the group
    stopped."""
    child = subprocess.Popen(list(argv), stdout=subprocess.PIPE if capture else None,
                             stderr=subprocess.PIPE if capture else None, text=True,
                             errors="replace", start_new_session=True,
                             env=None if env is None else dict(env))
    try:
        out, err = child.communicate(timeout=timeout)
    except BaseException:
        stop_group(child)
        raise
    return subprocess.CompletedProcess(child.args, child.returncode, out or "", err or "")


def stop_group(child: subprocess.Popen, grace_s: float = GRACE_S) -> None:
    """SIGTERM to the child's process group, SIGKILL to what is left after grace_s, and
    the child reaped. Signals to this process are held meanwhile: a second Ctrl-C must
    not leave the group half-stopped."""
    with ignoring_signals():
        _signal_group(child.pid, signal.SIGTERM)
        try:
            child.communicate(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
        _signal_group(child.pid, signal.SIGKILL)  # grandchildren that ignored SIGTERM too
        child.wait()


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass
