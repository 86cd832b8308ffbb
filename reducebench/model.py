"""The vocabulary every layer shares: a case, the plan that reduces it, what a backend
returns, the backend protocol, and the ways a case ends early.

A case travels one way: the CLI builds settings (config.py), the runner expands them into
cases, plans each one (geometry.py via the registry), makes its input (inputs.py), hands
the plan to a backend to execute (device/ on a GPU, hostexec.py on the CPU), verifies the
values it returns (verify.py) and turns the result into a record (results.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from reducebench.dtypes import DType
    from reducebench.inputs import HostInput
    from reducebench.registry import Rung
    from reducebench.stats import StopRule

# The columns that identify a case in a results file: the one key of a case everywhere
# (resume, compare, samples).
KEY_COLUMNS = ("rung", "dtype", "n", "block", "params")


def case_key(rung: str, dtype: str, n: int, block: int, params: str) -> tuple:
    return (str(rung), str(dtype), int(n), int(block), str(params or ""))


@dataclass(frozen=True)
class Case:
    rung: "Rung"
    dtype: "DType"
    n: int
    block: int               # 0 for library references, which choose their own
    params: dict[str, int] = field(default_factory=dict, hash=False, compare=False)

    @property
    def label(self) -> str:
        """The NVTX range name, and how progress and errors name the case."""
        extra = "".join(f" {k}={v}" for k, v in sorted(self.params.items()))
        block = f" block={self.block}" if self.block else ""
        return f"{self.rung.name} {self.dtype.name} n={self.n}{block}{extra}"

    def params_text(self) -> str:
        return ";".join(f"{k}={v}" for k, v in sorted(self.params.items()))

    @property
    def key(self) -> tuple:
        return case_key(self.rung.name, self.dtype.name, self.n, self.block, self.params_text())


# How a kernel launch leaves its result: what both executors (device and host) rely on.
PARTIALS = "partials"    # dst[block] = the block's sum
ATOMIC = "atomic"        # dst[0] += the block's (or each warp's) sum; dst zeroed before
TICKET = "ticket"        # partials to `workspace`; the last block sums them into dst[0]
PINGPONG = "pingpong"    # dst[0] += the block's sum, and block 0 zeroes `next`


@dataclass(frozen=True)
class Launch:
    """One kernel launch: which instantiation (element type of `src`), how big, which
    buffers it reads and writes, and how much of `src` each block covers."""

    pass_index: int
    element_type: str      # "input" for the first pass, "acc" for passes over partials
    grid: int
    block: int
    n: int
    src: str
    dst: str
    writes: str = PARTIALS
    args: tuple[str, ...] = ("src", "dst", "n")
    # Elements each block owns (one block per `per_block` elements); None for a
    # grid-stride loop, whose grid covers all n whatever its size.
    per_block: int | None = None


# Buffers of the accumulator type a plan may name, besides "input" and "scratch".
RESULT, NEXT, WORKSPACE, TICKET_COUNTER = "result", "next", "workspace", "ticket"


def bound_arguments(launch: Launch) -> tuple[str | int, ...]:
    """The kernel's arguments in order: buffer names, and n as an int. Both executors
    bind a launch through this, so they read and write the same buffers."""
    named: dict[str, str | int] = {"src": launch.src, "dst": launch.dst, "n": launch.n}
    return tuple(named.get(a, a) for a in launch.args)


@dataclass(frozen=True)
class Plan:
    """Everything a case does from its input to one value in device memory, and the shape
    of its summation (which the tolerance for random inputs depends on)."""

    launches: tuple[Launch, ...] = ()
    buffers: dict[str, int] = field(default_factory=dict)  # accumulator buffers: elements
    zero_before: tuple[str, ...] = ()   # zeroed (cudaMemsetAsync) before every run
    scratch_copy: bool = False          # in-place rungs reduce a copy, never the input
    # Two accumulators, "result" and "next", zeroed once and swapped after every run:
    # each run zeroes the one the next run adds into (see PingPong).
    ping_pong: bool = False
    chain: int = 1                      # elements one thread adds in sequence (pass 1)
    atomics: int = 0                    # totals added one by one into one accumulator
    library: str | None = None          # a library call instead of launches
    bytes_read: int = 0                 # what any correct reduction reads: every element once

    @property
    def grid(self) -> int:
        return self.launches[0].grid if self.launches else 0

    def device_bytes(self, n: int, acc_itemsize: int) -> int:
        """Device memory the plan needs besides the input."""
        if self.library:
            return LIBRARY_WORKSPACE_BYTES
        scratch = n * acc_itemsize if self.scratch_copy else 0
        return scratch + acc_itemsize * sum(self.buffers.values()) + SMALL_BUFFERS_BYTES


LIBRARY_WORKSPACE_BYTES = 64 << 20  # CUB asks for a few kilobytes; generous on purpose
SMALL_BUFFERS_BYTES = 1 << 20       # the ticket, and what the allocator rounds up to


class PingPong:
    """Which of a ping-pong plan's two accumulators each run adds into. The device and
    the host executor both keep their buffers through this, so a swap that goes wrong
    shows up in a CPU test."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.names = {RESULT: RESULT, NEXT: NEXT}

    def buffer(self, name: str) -> str:
        """The allocation a plan's buffer name refers to in the current run."""
        return self.names.get(name, name) if self.enabled else name

    def finished_run(self) -> str:
        """Call after each run: returns the allocation that holds its result, and swaps."""
        written = self.buffer(RESULT)
        if self.enabled:
            self.names = {RESULT: self.names[NEXT], NEXT: self.names[RESULT]}
        return written


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
    the timed samples (or a second poisoned run when only checking), so a kernel that
    leaves bad state behind fails too."""

    values: list[float | int]
    times_us: list[float] = field(default_factory=list)
    timing: Sampled | None = None


class CaseSkipped(Exception):
    """The case cannot run here (e.g. PyTorch not installed); not a failure."""


class CaseFailed(Exception):
    """Compile error, CUDA error or refusal in one case; the run goes on."""


class ContextLost(Exception):
    """A CUDA error that poisons the context (illegal address): nothing more can run."""


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
    # Optional: def warm_up(self) -> None, called once before a timed run's first case.
