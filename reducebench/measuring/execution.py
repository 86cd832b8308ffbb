"""The order in which any executor runs a case, device or host: warm up, one verified run
with the result poisoned first, the timed samples, and the result of the last of them
(or, when only checking, CHECK_RUNS poisoned verified runs), the guards around every buffer
checked after each verified value. Both executors follow this one function, so what is
verified is the same everywhere."""

from __future__ import annotations

from typing import Callable, Protocol

from reducebench.measuring.backend_protocol import Measurement, Sampled, Sampling

WARMUP_RUNS = 2
# The second run catches state a run leaves behind (a ticket not reset); the third adds
# into the ping-pong accumulator the first one used, so it catches a launch that does not
# zero the next run's (the second adds into the other one, zeroed at allocation).
CHECK_RUNS = 3


class Execution(Protocol):
    """A case bound to its buffers (or library call) on one executor."""

    def prepare(self) -> None: ...   # outside any timing: e.g. a fresh scratch copy
    def poison(self) -> None: ...    # a result no correct run leaves behind
    def enqueue(self) -> None: ...   # one whole reduction, input to one value
    def read(self) -> float | int: ...  # waits, then the last reduction's value
    # After a read: what was written outside the guarded buffers (verify/guard_regions.py), the
    # guards restored; [] for an execution whose buffers are not its own kernels'.
    def check_guards(self) -> list[str]: ...


Sampler = Callable[[Execution, Sampling], Sampled]


def run_case(execution: Execution, sampling: Sampling | None, sample: Sampler) -> Measurement:
    breaches: list[str] = []
    if sampling is None:
        values = [verified_run(execution, breaches) for _ in range(CHECK_RUNS)]
        return Measurement(values, guard_breaches=breaches)
    for _ in range(WARMUP_RUNS):
        execution.prepare()
        execution.enqueue()
    first = verified_run(execution, breaches)
    sampled = sample(execution, sampling)
    last = execution.read()
    breaches += execution.check_guards()  # after the samples, never inside one
    return Measurement([first, last], sampled.times_us, sampled, guard_breaches=breaches)


def verified_run(execution: Execution, breaches: list[str]) -> float | int:
    """One poisoned run and its value; what its guards show goes into `breaches`."""
    execution.prepare()
    execution.poison()
    execution.enqueue()
    value = execution.read()
    breaches += execution.check_guards()
    return value
