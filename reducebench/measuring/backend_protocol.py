"""What the runner asks of a device, and what a device gives back: how to sample a case,
its timing, its values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from reducebench.core.stats import StopRule
    from reducebench.ladder.plan import Plan
    from reducebench.ladder.case import Case
    from reducebench.verify.inputs import HostInput


@dataclass
class Sampling:
    """How to time a case; None (in Backend.execute) means check only, no timing."""

    stop: "StopRule"
    cold: bool = True      # flush L2 by reading before every sample
    hold: bool = True      # hold the stream while a sample is enqueued (off under Nsight)
    graph: bool = False    # time K back-to-back runs replayed from a CUDA graph, per run
    energy: bool = False   # also measure energy per run over a burst of runs (NVML)


@dataclass
class Sampled:
    """A case's timing. `times_us` is what the summary is computed from (the kept samples
    of the fastest phase, per run); `samples` every sample taken (samples.CaseSamples:
    phase, clocks, kept), for the raw-samples file."""

    times_us: list[float]
    samples: object = None
    throttled: bool = False   # too few samples at full clock, even after retries
    discarded: int = 0        # samples the throttle rule discarded
    graph_k: int = 0          # runs per graph replay, in graph timing
    energy: object = None     # energy.Energy, when asked for


@dataclass
class Measurement:
    """What a backend returns for one case. `values` are the results of the verified runs
    in order: the first after warm-up with the result poisoned beforehand, the last after
    the timed samples (or more poisoned runs when only checking), so a kernel that
    leaves bad state behind fails too. `guard_breaches`: what the guards around its
    buffers showed written outside them after those runs (verify/guard_regions.py)."""

    values: list[float | int]
    times_us: list[float] = field(default_factory=list)
    timing: Sampled | None = None
    guard_breaches: list[str] = field(default_factory=list)


class Backend(Protocol):
    """What the runner needs from a device: facts about it, memory, and executing a plan."""

    def device_info(self) -> dict: ...
    def sm_count(self) -> int: ...
    def free_memory(self) -> int: ...
    def upload(self, host: "HostInput") -> object: ...
    def release(self, handle: object) -> None: ...
    def execute(self, case: Case, plan: Plan, handle: object,
                sampling: Sampling | None) -> Measurement: ...
    def sm_clock_mhz(self) -> float | None: ...
