"""A plan: every launch that takes a case from its input to one value in device memory,
the buffers it names, and how a launch leaves its result. Both executors (the device
and the host) follow plans, and only plans."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reducebench.ladder.plan import Plan


# How a kernel launch leaves its result: what both executors (device and host) rely on.
PARTIALS = "partials"    # dst[block] = the block's sum


ATOMIC = "atomic"        # dst[0] += the block's (or each warp's) sum; dst zeroed before


TICKET = "ticket"        # partials to `workspace`; the last block sums them into dst[0]


PINGPONG = "pingpong"    # dst[0] += the block's sum, and block 0 zeroes `next`


ROW_SUMS = "rows"        # dst[r] = the sum of row r, for the rows_per_block rows a block owns


# A row shared by `splits` blocks (block b: row b // splits, part b % splits), each part
# of the row `tile` elements at a time, tile i going to part i % splits:
ROW_PINGPONG = "row_pingpong"  # dst[row] += the part's sum; part 0 zeroes next[row]
ROW_PARTIALS = "row_parts"     # dst[row * splits + part] = the part's sum
ROW_CLUSTER = "row_cluster"    # the row's blocks are one cluster: dst[row] = their total


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
    # A row launch (ROW_SUMS): n elements as `rows` rows of n / rows, each block owning
    # `rows_per_block` consecutive rows.
    rows: int = 1
    rows_per_block: int = 0
    # A row shared by several blocks (ROW_PINGPONG, ROW_PARTIALS, ROW_CLUSTER): `splits`
    # blocks a row, each reading its part of the row `tile` elements at a time.
    splits: int = 1
    tile: int = 0


# What an integer result buffer holds before a verified run (a float one holds NaN): no
# correct reduction leaves either behind. Both executors poison with these.
POISON_INT = -(2**31) + 7


def poison_value(is_float: bool) -> float | int:
    return float("nan") if is_float else POISON_INT


# Buffers of the accumulator type a plan may name, besides "input" and "scratch".
RESULT, NEXT, WORKSPACE, TICKET_COUNTER = "result", "next", "workspace", "ticket"
ROW_PARTIAL_SUMS = "row_partials"  # a two-pass row plan's partials: `splits` a row


def bound_arguments(launch: Launch) -> tuple[str | int, ...]:
    """The kernel's arguments in order: buffer names, and n as an int. Both executors
    bind a launch through this, so they read and write the same buffers."""
    named: dict[str, str | int] = {"src": launch.src, "dst": launch.dst, "n": launch.n,
                                   "rows": launch.rows, "cols": launch.n // launch.rows,
                                   "splits": launch.splits}
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
    # A row plan's values: one per row, `result` holding them (0: one value in all).
    row_outputs: int = 0
    # A row plan's threads that read one row (0: not a row plan, a library's own, or
    # row_tile's, whose block reads its rows together).
    row_lanes: int = 0

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
