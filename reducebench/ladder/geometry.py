"""Launch geometry: how many blocks a rung launches, and the passes that turn n elements
into one value (or a ROWS x COLS array into one value per row). Pure arithmetic, so every
rule is tested without a GPU."""

from __future__ import annotations

from dataclasses import dataclass

from reducebench.core.errors import UsageError
from reducebench.ladder.plan import (ATOMIC, NEXT, PARTIALS, PINGPONG, RESULT, ROW_PINGPONG,
                                     ROW_CLUSTER, ROW_PARTIAL_SUMS, ROW_PARTIALS, ROW_SUMS,
                                     TICKET, TICKET_COUNTER, WORKSPACE, Launch, Plan)

MAX_GRID_X = 2**31 - 1
VECTOR_BYTES = 16  # what one load of the vector rungs reads (float4, int4, 8 halves)
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)


@dataclass(frozen=True)
class GridRule:
    """One block per `block * per_thread` elements, one block per `block *
    per_thread_vectors` 16-byte vectors (16 / itemsize elements each), one block per
    `per_block` elements whatever the block size, a grid-stride grid of `blocks_per_sm`
    blocks per multiprocessor (never more blocks than there is work for), or exactly
    `fixed` blocks whatever n (one_block: a single block walks all n). A value given as
    a string names a rung parameter (e.g. "unroll")."""

    per_thread: int | str | None = None
    per_thread_vectors: int | str | None = None
    blocks_per_sm: int | str | None = None
    per_block: int | None = None
    fixed: int | None = None
    # Grid-stride rungs: never more blocks than have `work` elements per thread to do
    # (a parameter name or a number, times work_scale), so small inputs get small grids.
    work: int | str = 1
    work_scale: int = 1

    def __post_init__(self) -> None:
        chosen = [v for v in (self.per_thread, self.per_thread_vectors, self.blocks_per_sm,
                              self.per_block, self.fixed) if v is not None]
        if len(chosen) != 1:
            raise ValueError("a GridRule sets exactly one of per_thread, per_thread_vectors, "
                             "per_block, blocks_per_sm and fixed")

    def describe(self, params: dict[str, int]) -> str:
        if self.per_thread is not None:
            k = resolve(self.per_thread, params)
            return "one block per block elements" if k == 1 else f"one block per {k} x block elements"
        if self.per_thread_vectors is not None:
            k = resolve(self.per_thread_vectors, params)
            return f"one block per {k} x block 16-byte vectors, no loop"
        if self.per_block is not None:
            return f"one block per {self.per_block} elements"
        if self.fixed is not None:
            return "one block" if self.fixed == 1 else f"{self.fixed} blocks, grid-stride"
        return f"grid-stride, {resolve(self.blocks_per_sm, params)} blocks per SM"

    def elements_per_block(self, block: int, params: dict[str, int],
                           itemsize: int | None = None) -> int | None:
        """The elements (of itemsize bytes) one block owns, or None for a grid-stride
        rule (the grid covers all n whatever its size). A vector rule needs itemsize."""
        if self.per_thread is not None:
            return block * resolve(self.per_thread, params)
        if self.per_thread_vectors is not None:
            if itemsize is None:
                raise ValueError("a per_thread_vectors rule needs the element size")
            vectors = block * resolve(self.per_thread_vectors, params)
            return vectors * max(1, VECTOR_BYTES // itemsize)
        return self.per_block

    def blocks(self, n: int, block: int, sm_count: int, params: dict[str, int],
               itemsize: int | None = None) -> int:
        if self.fixed is not None:
            return self.fixed
        owned = self.elements_per_block(block, params, itemsize)
        if owned is not None:
            return ceil_div(n, owned)
        per_thread = resolve(self.work, params) * self.work_scale
        busy = ceil_div(n, block * per_thread)
        return max(1, min(sm_count * resolve(self.blocks_per_sm, params), busy))


def resolve(value: int | str, params: dict[str, int]) -> int:
    """A rule's number, or the value of the rung parameter it names."""
    return int(params[value]) if isinstance(value, str) else int(value)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def plan_relaunch(n: int, block: int, sm_count: int, rule: GridRule, params: dict[str, int],
                  first_src: str, *, itemsize: int) -> Plan:
    """Reduce to one partial per block, then reduce the partials the same way until one
    value remains; the last pass writes `result`."""
    if rule.per_thread_vectors is not None:  # later passes read the accumulator type
        raise ValueError("a per_thread_vectors rule counts input elements: not for relaunch")
    launches: list[Launch] = []
    remaining, src, index = n, first_src, 0
    sizes: dict[str, int] = {}
    while True:
        grid = check_grid(rule.blocks(remaining, block, sm_count, params, itemsize))
        dst = RESULT if grid == 1 else f"partials{index % 2}"
        launches.append(Launch(index, "input" if index == 0 else "acc", grid, block,
                               remaining, src, dst, PARTIALS,
                               per_block=rule.elements_per_block(block, params, itemsize)))
        if dst == RESULT:
            break
        sizes[dst] = max(sizes.get(dst, 0), grid)
        remaining, src, index = grid, dst, index + 1
    sizes[RESULT] = 1
    return Plan(tuple(launches), buffers=sizes, chain=chain_length(n, launches[0]))


def plan_atomic(n: int, block: int, sm_count: int, rule: GridRule, params: dict[str, int],
                first_src: str, *, itemsize: int) -> Plan:
    """One launch whose blocks (or warps) atomically add into a zeroed accumulator."""
    grid = check_grid(rule.blocks(n, block, sm_count, params, itemsize))
    launch = Launch(0, "input", grid, block, n, first_src, RESULT, ATOMIC,
                    per_block=rule.elements_per_block(block, params, itemsize))
    return Plan((launch,), buffers={RESULT: 1}, zero_before=(RESULT,),
                chain=chain_length(n, launch), atomics=grid)


def plan_single(n: int, block: int, sm_count: int, rule: GridRule, params: dict[str, int],
                first_src: str, *, itemsize: int) -> Plan:
    """One launch: blocks write partials to a workspace, the last block to finish sums
    them and resets the ticket, so nothing needs zeroing between runs."""
    grid = check_grid(rule.blocks(n, block, sm_count, params, itemsize))
    launch = Launch(0, "input", grid, block, n, first_src, RESULT, TICKET,
                    args=("src", "dst", "n", WORKSPACE, TICKET_COUNTER),
                    per_block=rule.elements_per_block(block, params, itemsize))
    return Plan((launch,), buffers={RESULT: 1, WORKSPACE: grid},
                chain=chain_length(n, launch))


def plan_ping_pong(n: int, block: int, sm_count: int, rule: GridRule, params: dict[str, int],
                   first_src: str, *, itemsize: int) -> Plan:
    """One launch that adds into `result` (zeroed by the previous run) and zeroes `next`;
    the executors swap the two after every run (model.PingPong)."""
    grid = check_grid(rule.blocks(n, block, sm_count, params, itemsize))
    launch = Launch(0, "input", grid, block, n, first_src, RESULT, PINGPONG,
                    args=("src", "dst", "n", NEXT),
                    per_block=rule.elements_per_block(block, params, itemsize))
    return Plan((launch,), buffers={RESULT: 1, NEXT: 1}, chain=chain_length(n, launch),
                atomics=grid, ping_pong=True)


def chain_length(n: int, first: Launch) -> int:
    return ceil_div(n, first.grid * first.block)


# A row rung's lanes per row: a number, a rung parameter's name ("width"), or the whole
# block (WHOLE_BLOCK).
WHOLE_BLOCK = "block"


def lanes_per_row(lanes: int | str, block: int, params: dict[str, int]) -> int:
    """The threads that share one row: 1 (a thread per row), a parameter (a group of
    `width` lanes), 32 (a warp) or the whole block."""
    return block if lanes == WHOLE_BLOCK else resolve(lanes, params)


def rows_per_block(lanes: int | str, block: int, params: dict[str, int]) -> int:
    """How many consecutive rows one block owns: block / lanes per row. Lanes that are
    not a power of two, or more than a block, are one UsageError (a row's lanes must lie
    in one warp or be whole warps, and a block must hold whole rows)."""
    count = lanes_per_row(lanes, block, params)
    if count < 1 or count & (count - 1) or count > block:
        name = lanes if isinstance(lanes, str) else "lanes per row"
        raise UsageError(f"{name} {count}: a row's lanes must be a power of two no larger "
                         f"than the block ({block})")
    return block // count


# `--param lanes=0` (row_vec_group, row_multi): as many lanes as make each row exactly one
# round of the group's `loads` 16-byte loads, found per shape (fitted_lanes). One sweep
# then tries each `loads` at every narrow width, where lanes x loads must equal the
# row's vectors for row_multi's fast path (cuda_src/rows/11_multi.cu).
FIT_LANES = 0
MAX_LANES = 32  # a row's lanes lie in one warp


def fitted_lanes(cols: int, itemsize: int, loads: int) -> int:
    """The lanes that read a row of `cols` elements of `itemsize` bytes in exactly one
    round of `loads` 16-byte loads each: the row's 16-byte vectors / loads, where that is
    a whole power of two from 1 to 32; FIT_LANES (0) where no lane count does (a row that
    is not whole vectors, or fewer vectors than loads, or more than 32 x loads)."""
    row_bytes = cols * itemsize
    if row_bytes % VECTOR_BYTES:
        return FIT_LANES
    vectors = row_bytes // VECTOR_BYTES
    if vectors % loads:
        return FIT_LANES
    lanes = vectors // loads
    return lanes if lanes <= MAX_LANES and not lanes & (lanes - 1) else FIT_LANES


def with_fitted_lanes(params: dict[str, int], cols: int, itemsize: int) -> dict[str, int]:
    """`params` with lanes=0 replaced by the fitted lane count for rows of `cols`
    elements (unchanged where lanes is not 0, or where no count fits: its plan then
    refuses the case, and a sweep records it as skipped)."""
    if params.get("lanes") != FIT_LANES or "loads" not in params:
        return params
    lanes = fitted_lanes(cols, itemsize, params["loads"])
    return {**params, "lanes": lanes} if lanes else params


def plan_rows(rows: int, cols: int, block: int, lanes: int | str,
              params: dict[str, int], group_rows: str | None = None) -> Plan:
    """One launch that leaves the sum of each of `rows` rows of `cols` elements in
    result[row]: each block owns rows_per_block consecutive rows (times the parameter
    `group_rows` names, where a group of lanes owns several rows: row_multi), so the grid
    is ceil(rows / that). A row's lanes each add ceil(cols / lanes) elements in sequence
    (the chain)."""
    if rows < 1 or cols < 1:
        raise ValueError("a row plan needs at least one row of at least one element")
    if lanes == "lanes" and params.get("lanes") == FIT_LANES:
        raise UsageError(f"lanes=0 fits no lane count to rows of {cols} elements: their "
                         f"16-byte vectors / loads ({params.get('loads')}) is not a power of "
                         "two from 1 to 32")
    owned = rows_per_block(lanes, block, params) * (resolve(group_rows, params)
                                                    if group_rows else 1)
    grid = check_grid(ceil_div(rows, owned))
    launch = Launch(0, "input", grid, block, rows * cols, "input", RESULT, ROW_SUMS,
                    args=("src", "dst", "rows", "cols"), rows=rows, rows_per_block=owned)
    lanes_a_row = lanes_per_row(lanes, block, params)
    return Plan((launch,), buffers={RESULT: rows}, chain=ceil_div(cols, lanes_a_row),
                row_outputs=rows, row_lanes=lanes_a_row)


# row_tile's tile: block x `loads` 16-byte vectors, capped at this many vectors (32 KB of
# shared memory; cuda_src/rows/10_tile.cu rb::tile_vectors computes the same).
TILE_MAX_VECTORS = 2048


def tile_elements(block: int, loads: int, itemsize: int) -> int:
    """The elements of one row_tile tile: block x min(loads, 2048 / block) vectors of
    16 / itemsize elements."""
    vectors = block * min(loads, TILE_MAX_VECTORS // block)
    return vectors * max(1, VECTOR_BYTES // itemsize)


def tile_lanes(block: int, rows_owned: int) -> int:
    """The lanes that sum one of a row_tile block's rows from shared memory: the most, a
    power of two up to 32, that give each of its rows_owned rows a group at once (1 where
    the rows outnumber the threads), as cuda_src/rows/10_tile.cu chooses them."""
    lanes = 1
    while lanes < 32 and 2 * lanes * rows_owned <= block:
        lanes *= 2
    return lanes


def plan_tiled_rows(rows: int, cols: int, block: int, params: dict[str, int], *,
                    itemsize: int) -> Plan:
    """One launch, each block owning as many whole consecutive rows as fit its tile
    (tile_elements // cols) and reading them as one span: the grid is ceil(rows / that).
    A row wider than the tile is one UsageError (a sweep skips the case, saying so). A
    lane's chain is the row's elements over its lanes (tile_lanes), as the kernel sums
    from shared memory."""
    if rows < 1 or cols < 1:
        raise ValueError("a row plan needs at least one row of at least one element")
    tile = tile_elements(block, resolve("loads", params), itemsize)
    if cols > tile:
        raise UsageError(f"a row of {cols} elements does not fit row_tile's tile of {tile} "
                         f"(block {block} x loads {resolve('loads', params)}); wider rows "
                         "take row_vec_block or row_split")
    owned = tile // cols
    grid = check_grid(ceil_div(rows, owned))
    lanes = tile_lanes(block, min(owned, rows))
    launch = Launch(0, "input", grid, block, rows * cols, "input", RESULT, ROW_SUMS,
                    args=("src", "dst", "rows", "cols"), rows=rows, rows_per_block=owned)
    # row_lanes 0: the block reads its rows together, so no lane is without elements
    return Plan((launch,), buffers={RESULT: rows}, chain=ceil_div(cols, lanes),
                row_outputs=rows)


# How the blocks that share a row finish it (Rung.row_split): atomicAdd into sums the
# previous launch zeroed (a ping-pong pair, as the 1-D pingpong rung), partials and a second launch, or one cluster a row through distributed shared
# memory.
SPLIT_ATOMIC, SPLIT_TWO_PASS, SPLIT_CLUSTER = "atomic", "two_pass", "cluster"
SPLIT_WRITES = {SPLIT_ATOMIC: ROW_PINGPONG, SPLIT_TWO_PASS: ROW_PARTIALS,
                SPLIT_CLUSTER: ROW_CLUSTER}
SPLIT_ARGS = ("src", "dst", "rows", "cols", "splits")


def row_tile(block: int, loads: int, itemsize: int) -> int:
    """The elements of a row one block reads in one step of its loop: block x `loads`
    16-byte vectors."""
    return block * loads * max(1, VECTOR_BYTES // itemsize)


def row_splits(rows: int, cols: int, tile: int, blocks_wanted: int) -> int:
    """How many blocks share each row: enough that the grid has `blocks_wanted` blocks
    (blocks_per_sm x the SM count) however few the rows, never more than the row has
    tiles (a block with no tile of its own would only add a zero), at least one."""
    return max(1, min(ceil_div(blocks_wanted, rows), ceil_div(cols, tile)))


def plan_split_rows(rows: int, cols: int, block: int, sm_count: int, finish: str,
                    params: dict[str, int], *, itemsize: int, acc_itemsize: int) -> Plan:
    """Several blocks a row: block b sums part b % splits of row b // splits (the row's
    tiles of row_tile elements dealt round-robin to its parts), so the grid is rows x
    splits. `finish` says how the parts become the row's sum:
    - atomic: each block atomically adds its part into result[row], which the previous
      run zeroed, and each row's part 0 zeroes next[row] for the next run (the executors
      swap result and next after every run, Plan.ping_pong): no memset before a run;
    - two_pass: each block writes partials[row][part], then a second launch of the same
      kernel over the partials (a row of `splits` accumulators each, one block a row)
      writes result[row]; with one block a row the first launch writes result itself;
    - cluster: the row's blocks are one thread-block cluster of `cluster` blocks (a
      compile-time size), which adds its parts in distributed shared memory and writes
      result[row]."""
    if rows < 1 or cols < 1:
        raise ValueError("a row plan needs at least one row of at least one element")
    if finish not in SPLIT_WRITES:
        raise ValueError(f"unknown row finish {finish!r}")
    tile = row_tile(block, resolve("loads", params), itemsize)
    if finish == SPLIT_CLUSTER:
        splits = resolve("cluster", params)
    else:
        splits = row_splits(rows, cols, tile, sm_count * resolve("blocks_per_sm", params))
    grid = check_grid(rows * splits)
    chain = ceil_div(cols, splits * block)
    two_passes = finish == SPLIT_TWO_PASS and splits > 1
    first_dst = ROW_PARTIAL_SUMS if two_passes else RESULT
    atomic = finish == SPLIT_ATOMIC
    first = Launch(0, "input", grid, block, rows * cols, "input", first_dst,
                   SPLIT_WRITES[finish], args=SPLIT_ARGS + ((NEXT,) if atomic else ()),
                   rows=rows, splits=splits, tile=tile)
    if not two_passes:
        return Plan((first,), buffers={RESULT: rows, NEXT: rows} if atomic else {RESULT: rows},
                    ping_pong=atomic, chain=chain, atomics=splits if atomic else 0,
                    row_outputs=rows, row_lanes=block * splits)
    second = Launch(1, "acc", check_grid(rows), block, rows * splits, ROW_PARTIAL_SUMS,
                    RESULT, ROW_PARTIALS, args=SPLIT_ARGS, rows=rows, splits=1,
                    tile=row_tile(block, resolve("loads", params), acc_itemsize))
    return Plan((first, second), buffers={ROW_PARTIAL_SUMS: rows * splits, RESULT: rows},
                chain=chain, row_outputs=rows, row_lanes=block * splits)


def next_power_of_two(value: int) -> int:
    """The smallest power of two >= value (1 for value <= 1)."""
    return 1 << max(0, value - 1).bit_length()


def triton_row_tile(rows: int, cols: int, elements: int) -> tuple[int, int]:
    """A tiled row reduction's tile (triton_rows: one program a tile of rows), as
    (rows, columns), both powers of two (Triton's blocks must be): the columns rounded up
    to a power of two, at most `elements` (a power of two); as many rows as fill a tile
    of `elements`, never more than the rows rounded up."""
    cols_tile = min(next_power_of_two(cols), elements)
    return min(next_power_of_two(rows), elements // cols_tile), cols_tile


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
