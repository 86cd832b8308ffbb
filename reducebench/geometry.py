"""Launch geometry: how many blocks a rung launches, and the passes that turn n elements
into one value. Pure arithmetic, so every rule is tested without a GPU."""

from __future__ import annotations

from dataclasses import dataclass, field

from reducebench.errors import UsageError

MAX_GRID_X = 2**31 - 1
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)


@dataclass(frozen=True)
class GridRule:
    """One block per `block * per_thread` elements, one block per `per_block` elements
    whatever the block size, or a grid-stride grid of `blocks_per_sm` blocks per
    multiprocessor (never more blocks than there is work for). A value given as a string
    names a rung parameter (e.g. "unroll")."""

    per_thread: int | str | None = None
    blocks_per_sm: int | str | None = None
    per_block: int | None = None
    # Grid-stride rungs: never more blocks than have `work` elements per thread to do
    # (a parameter name or a number, times work_scale), so small inputs get small grids.
    work: int | str = 1
    work_scale: int = 1

    def __post_init__(self) -> None:
        chosen = [v for v in (self.per_thread, self.blocks_per_sm, self.per_block)
                  if v is not None]
        if len(chosen) != 1:
            raise ValueError("a GridRule sets exactly one of per_thread, per_block and "
                             "blocks_per_sm")

    def describe(self, params: dict[str, int]) -> str:
        if self.per_thread is not None:
            k = resolve(self.per_thread, params)
            return "one block per block elements" if k == 1 else f"one block per {k} x block elements"
        if self.per_block is not None:
            return f"one block per {self.per_block} elements"
        return f"grid-stride, {resolve(self.blocks_per_sm, params)} blocks per SM"

    def blocks(self, n: int, block: int, sm_count: int, params: dict[str, int]) -> int:
        if self.per_thread is not None:
            per_block = block * resolve(self.per_thread, params)
            return ceil_div(n, per_block)
        if self.per_block is not None:
            return ceil_div(n, self.per_block)
        per_thread = resolve(self.work, params) * self.work_scale
        busy = ceil_div(n, block * per_thread)
        return max(1, min(sm_count * resolve(self.blocks_per_sm, params), busy))


def resolve(value: int | str | None, params: dict[str, int]) -> int:
    if isinstance(value, str):
        return int(params[value])
    assert value is not None
    return int(value)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Launch:
    """One kernel launch: which instantiation, how big, and which buffers it reads and
    writes. Buffer names: input, scratch, partials0, partials1, result, next, workspace,
    ticket."""

    pass_index: int
    element_type: str      # "input" for the first pass, "acc" for passes over partials
    grid: int
    block: int
    n: int
    src: str
    dst: str
    args: tuple[str, ...] = ("src", "dst", "n")


@dataclass(frozen=True)
class Plan:
    """Everything a rung does from the input to the final scalar in device memory."""

    launches: tuple[Launch, ...]
    zero_result: bool                   # atomics need a zeroed accumulator first
    acc_buffers: dict[str, int] = field(default_factory=dict)  # name -> elements of Acc
    scratch_copy: bool = False          # in-place rungs reduce a copy, never the input
    chain: int = 1                      # elements one thread adds in sequence (pass 1)
    atomics: int = 0                    # totals added one by one into the accumulator
    # Two accumulators, "result" and "next", swapped after every launch: each launch
    # zeroes the one the next launch adds into, so no launch needs a memset first.
    ping_pong: bool = False

    @property
    def grid(self) -> int:
        return self.launches[0].grid if self.launches else 0


def plan_relaunch(n: int, block: int, sm_count: int, rule: GridRule, params: dict[str, int],
                  first_src: str) -> Plan:
    """Reduce to one partial per block, then reduce the partials the same way until one
    value remains; the last pass writes `result`."""
    launches: list[Launch] = []
    remaining, src, index = n, first_src, 0
    sizes: dict[str, int] = {}
    while True:
        grid = check_grid(rule.blocks(remaining, block, sm_count, params))
        dst = "result" if grid == 1 else f"partials{index % 2}"
        launches.append(Launch(index, "input" if index == 0 else "acc", grid, block,
                               remaining, src, dst))
        if dst == "result":
            break
        sizes[dst] = max(sizes.get(dst, 0), grid)
        remaining, src, index = grid, dst, index + 1
    sizes["result"] = 1
    return Plan(tuple(launches), zero_result=False, acc_buffers=sizes,
                chain=chain_length(n, launches[0]))


def plan_atomic(n: int, block: int, sm_count: int, rule: GridRule, params: dict[str, int],
                first_src: str) -> Plan:
    """One launch whose blocks (or warps) atomically add into a zeroed accumulator."""
    grid = check_grid(rule.blocks(n, block, sm_count, params))
    launch = Launch(0, "input", grid, block, n, first_src, "result")
    return Plan((launch,), zero_result=True, acc_buffers={"result": 1},
                chain=chain_length(n, launch), atomics=grid)


def plan_single(n: int, block: int, sm_count: int, rule: GridRule, params: dict[str, int],
                first_src: str) -> Plan:
    """One launch: blocks write partials to a workspace, the last block to finish sums
    them and resets the ticket, so nothing needs zeroing between runs."""
    grid = check_grid(rule.blocks(n, block, sm_count, params))
    launch = Launch(0, "input", grid, block, n, first_src, "result",
                    args=("src", "dst", "n", "workspace", "ticket"))
    return Plan((launch,), zero_result=False,
                acc_buffers={"result": 1, "workspace": grid}, chain=chain_length(n, launch))


def plan_ping_pong(n: int, block: int, sm_count: int, rule: GridRule, params: dict[str, int],
                   first_src: str) -> Plan:
    """One launch that adds into `result` (zeroed by the previous launch) and zeroes
    `next`; the executor swaps the two after every launch."""
    grid = check_grid(rule.blocks(n, block, sm_count, params))
    launch = Launch(0, "input", grid, block, n, first_src, "result",
                    args=("src", "dst", "n", "next"))
    return Plan((launch,), zero_result=False, acc_buffers={"result": 1, "next": 1},
                chain=chain_length(n, launch), atomics=grid, ping_pong=True)


def chain_length(n: int, first: Launch) -> int:
    return ceil_div(n, first.grid * first.block)


PLANNERS = {"relaunch": plan_relaunch, "atomic": plan_atomic, "single": plan_single,
            "pingpong": plan_ping_pong}


def check_grid(grid: int) -> int:
    if grid > MAX_GRID_X:
        raise UsageError(
            f"this needs {grid} blocks, more than the {MAX_GRID_X} a CUDA grid allows; "
            "use a larger --block or a grid-stride rung")
    return grid


def check_block(block: int) -> int:
    if block not in BLOCK_SIZES:
        raise UsageError(f"invalid block size {block}; accepted: "
                         f"{', '.join(map(str, BLOCK_SIZES))} (a power of two from 32 to 1024)")
    return block
