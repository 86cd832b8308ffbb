"""A plan bound to its buffers, the one binding both executors use: the device's
(device/cupy_backend.PlanExecution, CuPy buffers and compiled kernels) and the host's
(measuring/hostexec.PlanRun, numpy buffers and a model of each kernel).

The binding decides everything but the arithmetic: which buffers a plan gets, each
between guards (verify/guard_regions.py) and poisoned until a run writes it, the ticket
counter zeroed, the scratch copy of in-place rungs, the two accumulators of a ping-pong
plan and which of them each run adds into, what is zeroed before a run, and the order
of its launches. An executor says how to allocate, how to zero a buffer inside a run,
what one launch does, and how to read the result back; so a plan bound wrongly fails
the host executor's CPU tests as it would fail on a GPU."""

from __future__ import annotations

from typing import Callable

import numpy as np

from reducebench.ladder.plan import (NEXT, RESULT, TICKET_COUNTER, Launch, PingPong, Plan,
                                     bound_arguments, poison_value)
from reducebench.verify.guard_regions import GuardedArray

# (name, elements, dtype) -> the buffer between its guards
Allocate = Callable[[str, int, np.dtype], GuardedArray]


class BoundPlan:
    """A plan bound to an executor's buffers; enqueue() runs one whole reduction."""

    def __init__(self, plan: Plan, x, acc: np.dtype, allocate: Allocate,
                 input_guard: GuardedArray | None = None) -> None:
        self.plan, self.acc = plan, np.dtype(acc)
        self.guarded = [allocate(name, size, self.acc) for name, size in plan.buffers.items()]
        self.guarded.append(allocate(TICKET_COUNTER, 1, np.dtype(np.uint32)))
        if plan.scratch_copy:
            self.guarded.append(allocate("scratch", x.size, self.acc))
        self.buffers = {g.name: g.view for g in self.guarded}
        for name in plan.buffers:  # as if uninitialised: never 0, never a stale guard
            self.buffers[name].fill(poison_value(self.acc.kind == "f"))
        self.buffers[TICKET_COUNTER].fill(0)
        self.buffers["input"] = x
        if input_guard is not None:
            self.guarded.append(input_guard)
        self.pingpong = PingPong(plan.ping_pong)
        if plan.ping_pong:  # zeroed once; from then on each run zeroes the other
            self.buffers[RESULT].fill(0)
            self.buffers[NEXT].fill(0)
        self.written = RESULT

    # -- what an executor says ----------------------------------------------------------
    def zero(self, buffer) -> None:
        """Zero a buffer as part of the run (the device: a memset on its stream)."""
        raise NotImplementedError

    def launch(self, launch: Launch) -> None:
        """One kernel launch, its arguments from arguments(launch)."""
        raise NotImplementedError

    def read(self) -> float | int:
        """The last run's value (waiting for it)."""
        raise NotImplementedError

    # -- the binding ----------------------------------------------------------------------
    def buffer(self, name: str):
        """The buffer a plan's name refers to in the current run."""
        return self.buffers[self.pingpong.buffer(name)]

    def arguments(self, launch: Launch) -> tuple:
        """The launch's arguments in order: its buffers, and n as an int."""
        return tuple(a if isinstance(a, int) else self.buffer(a)
                     for a in bound_arguments(launch))

    def prepare(self) -> None:
        """Outside any timing: a fresh scratch copy for rungs that work in place."""
        if self.plan.scratch_copy:
            self.buffers["scratch"][...] = self.buffers["input"]

    def poison(self) -> None:
        """A value no correct run leaves behind, so an unwritten result cannot pass. Not
        for ping-pong plans, whose accumulator must stay zero to be added into: there, as
        with any atomic finish (whose zeroing wipes the poison too), a run that adds
        nothing leaves 0, which exact inputs never sum to."""
        if not self.plan.ping_pong:
            self.buffer(RESULT).fill(poison_value(self.acc.kind == "f"))

    def enqueue(self) -> None:
        for name in self.plan.zero_before:
            self.zero(self.buffer(name))
        for launch in self.plan.launches:
            self.launch(launch)
        self.written = self.pingpong.finished_run()

    def check_guards(self) -> list[str]:
        return [found for guarded in self.guarded for found in guarded.check()]
