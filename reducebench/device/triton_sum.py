"""Triton references: the sum as a Triton user would write it, in two designs, next to the
CUDA ladder, CUB and torch (rungs triton_atomic and triton_two_pass), and the sum of each
row of a ROWS x COLS array (rung triton_rows, next to the row ladder).

Imported only when Triton is installed, and only by the device layer
(device/python_reductions.py), which hands these launchers torch views of reducebench's buffers
and runs them on reducebench's stream (Triton launches on torch's current stream).

A Triton program is one CTA of NUM_WARPS warps working on BLOCK-element vectors; Triton
decides how the BLOCK lanes map onto threads (here 16 elements per thread per load,
which it issues as 16-byte vector loads) and how tl.sum reduces across the CTA (warp
shuffles, then shared memory). The accumulator type is the output's element type: float32
for float16 and bfloat16 input, the input's own type otherwise (int32 wraps, as the
CUDA rungs' int32 accumulators do)."""

from __future__ import annotations

import triton
import triton.language as tl

from reducebench.ladder.geometry import triton_row_tile

BLOCK = 4096          # elements one program adds per iteration: 16 per thread at 8 warps
NUM_WARPS = 8
PROGRAMS_PER_SM = 4   # a bounded grid, like the CUDA grid-stride rungs' blocks_per_sm


# Rung triton_atomic: a grid-stride loop, then one atomic add per program.
#
# What it does: a few programs per SM walk the whole input with a stride of
# programs x BLOCK, each keeping BLOCK running sums (one per lane, in registers); then
# tl.sum reduces the lanes and one tl.atomic_add adds the program's total to out[0].
# Why it should be fast: like the CUDA gridstride_atomic rung, a bounded grid with many
# independent loads per thread, and one launch with no pass over partials.
# Preconditions: out[0] zeroed before the launch (cudaMemsetAsync, inside the timed
# region, as for the CUDA atomic rungs); n >= 1; 64-bit offsets, so any n. Masked loads
# vectorise when n is a multiple of 16 (Triton specialises on it). Float atomics add
# program totals in whatever order programs end: not bit-for-bit deterministic.
@triton.jit
def grid_stride_atomic_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc_type = out_ptr.dtype.element_ty
    lanes = tl.arange(0, BLOCK)
    start = tl.program_id(0).to(tl.int64) * BLOCK
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    acc = tl.zeros([BLOCK], dtype=acc_type)
    for offset in range(start, n, step):
        index = offset + lanes
        acc += tl.load(x_ptr + index, mask=index < n, other=0).to(acc_type)
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


# Rung triton_two_pass, pass 1: the same grid-stride loop, each program's total stored.
#
# What it does: program p writes its total to partials[p]; no atomics, nothing zeroed.
# Why: a deterministic result (the same programs add the same elements in the same order
# every run) for the price of a second launch over a few hundred partials.
# Preconditions: partials holds one accumulator per program; n >= 1.
@triton.jit
def partial_sums(x_ptr, partials_ptr, n, BLOCK: tl.constexpr):
    acc_type = partials_ptr.dtype.element_ty
    lanes = tl.arange(0, BLOCK)
    start = tl.program_id(0).to(tl.int64) * BLOCK
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    acc = tl.zeros([BLOCK], dtype=acc_type)
    for offset in range(start, n, step):
        index = offset + lanes
        acc += tl.load(x_ptr + index, mask=index < n, other=0).to(acc_type)
    tl.store(partials_ptr + tl.program_id(0), tl.sum(acc, axis=0))


# Rung triton_two_pass, pass 2: one program sums the partials into out[0].
#
# Preconditions: launched with one program; COUNT (a power of two) >= count partials.
@triton.jit
def sum_partials(partials_ptr, out_ptr, count, COUNT: tl.constexpr):
    lanes = tl.arange(0, COUNT)
    partials = tl.load(partials_ptr + lanes, mask=lanes < count, other=0)
    tl.store(out_ptr, tl.sum(partials, axis=0))


def programs(n: int, sm_count: int) -> int:
    """The grid: PROGRAMS_PER_SM per SM, never more programs than BLOCK-sized tiles."""
    return max(1, min(triton.cdiv(n, BLOCK), sm_count * PROGRAMS_PER_SM))


def launch_atomic(x, out, grid: int) -> None:
    """x: the input (torch tensor); out: one accumulator, zeroed by the caller."""
    grid_stride_atomic_sum[(grid,)](x, out, x.numel(), BLOCK=BLOCK, num_warps=NUM_WARPS)


def launch_two_pass(x, partials, out, grid: int) -> None:
    """partials: at least `grid` accumulators; out: one accumulator."""
    partial_sums[(grid,)](x, partials, x.numel(), BLOCK=BLOCK, num_warps=NUM_WARPS)
    sum_partials[(1,)](partials, out, grid, COUNT=triton.next_power_of_2(grid))


# Rung triton_rows: one program per tile of rows, looping over the columns.
#
# What it does: program p owns rows p * ROWS_TILE .. + ROWS_TILE - 1 of the row-major
# ROWS x COLS input and walks their columns COLS_TILE at a time, each element of the
# [ROWS_TILE, COLS_TILE] tile keeping a running sum in the accumulator type (registers);
# then tl.sum over axis 1 reduces each row's lanes and the program stores its rows' sums.
# Why: the row reduction a Triton user writes (the shape of Triton's softmax tutorial,
# with a loop for rows wider than a tile): a row never crosses programs, so there is one
# launch, no atomic and nothing zeroed, and every row is added in the same order on
# every run. Narrow rows share a program, so that a tile is as large as for wide rows.
# Preconditions: ROWS_TILE and COLS_TILE powers of two; out holds `rows` accumulators;
# 64-bit offsets, so any rows x cols; launched with cdiv(rows, ROWS_TILE) programs.
@triton.jit
def row_sums(x_ptr, out_ptr, rows, cols, ROWS_TILE: tl.constexpr, COLS_TILE: tl.constexpr):
    acc_type = out_ptr.dtype.element_ty
    row = tl.program_id(0).to(tl.int64) * ROWS_TILE + tl.arange(0, ROWS_TILE)
    row_ok = row < rows
    starts = row * cols
    lanes = tl.arange(0, COLS_TILE)
    acc = tl.zeros([ROWS_TILE, COLS_TILE], dtype=acc_type)
    for offset in range(0, cols, COLS_TILE):
        # offset + lanes could pass 2^31 in a row that long: the mask compares the lanes
        # with what is left of the row, and the address adds them to a 64-bit start
        mask = row_ok[:, None] & (lanes < cols - offset)[None, :]
        values = tl.load(x_ptr + (starts + offset)[:, None] + lanes[None, :], mask=mask,
                         other=0)
        acc += values.to(acc_type)
    tl.store(out_ptr + row, tl.sum(acc, axis=1), mask=row_ok)


ROW_TILE_ELEMENTS = BLOCK   # a program's tile: rows x columns, 16 elements a thread


def launch_rows(x, out, rows: int, cols: int) -> None:
    """x: the input (a torch tensor of rows x cols elements); out: `rows` accumulators.
    A tile smaller than 8 warps' 16 elements a thread (a small shape) gets fewer warps,
    down to one, as Triton's own tutorials size them."""
    rows_tile, cols_tile = triton_row_tile(rows, cols, ROW_TILE_ELEMENTS)
    warps = max(1, min(NUM_WARPS, rows_tile * cols_tile // (16 * 32)))
    row_sums[(triton.cdiv(rows, rows_tile),)](x, out, rows, cols, ROWS_TILE=rows_tile,
                                              COLS_TILE=cols_tile, num_warps=warps)
