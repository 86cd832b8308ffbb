"""The measured ceiling, device-free: which streaming-read kernels measure what a GPU can
actually read, their grids, the buffer they read, and how the best of their timings
becomes the ceiling that `pct_ceiling` is a percentage of.

The kernels are in cuda_src/ceiling.cu; reducebench/device/ceiling_timing.py times each one
exactly like a rung (cold L2, held stream, median of many samples) and hands the
timings to `ceiling_from` here. docs/tuning.md explains the method."""

from __future__ import annotations

import math
from dataclasses import dataclass

from reducebench.results.schema import bandwidth_gbps
from reducebench.core.numbers import number

CEILING_SOURCE = "ceiling.cu"
# The same-shape read of a row case: each kernel below with ROWS accumulators written
# (cuda_src/row_read.cu, which includes ceiling.cu).
ROW_READ_SOURCE = "row_read.cu"
WORD_BYTES = 16                # every kernel reads 16-byte words (int4)
DEFAULT_BYTES = 1 << 30        # the buffer read: at least 1 GiB where it fits
MIN_BYTES = 64 << 20           # below this the launch, not DRAM, would be measured
# The buffer may take at most this share of the free device memory (the L2 flush
# buffer and the caller's own allocations need the rest).
FREE_SHARE = 0.5


# The load a kernel issues (cuda_src/ceiling.cu's HINT): the read-only path, the
# evict-first hint, or the L2 prefetch hint that rungs load with at l2_prefetch=1.
LOAD_HINTS = {"ldg": 0, "evict-first": 1, "l2-prefetch": 2}

# The value a kernel's thread stores into `sink` when what it read folds to it
# (cuda_src/ceiling.cu's kKeepAliveSentinel): practically never on real data, and how a
# GPU test sees that every word is read (one marked word in a buffer of zeros).
KEEP_ALIVE_SENTINEL = 0x3FFFFFFE


@dataclass(frozen=True)
class CeilingKernel:
    """One streaming-read kernel: `blocks_per_sm` None is the one-shot shape (one block
    per block x loads words, no loop), otherwise a persistent grid-stride grid."""

    name: str
    block: int
    loads: int                       # 16-byte loads in flight per thread
    blocks_per_sm: int | None = None
    hint: str = "ldg"                # a key of LOAD_HINTS
    block_fold: bool = False         # one-shot only: ends with one_shot's block sum

    def __post_init__(self) -> None:
        if self.hint not in LOAD_HINTS:
            raise ValueError(f"{self.name}: load hint {self.hint!r} is not one of "
                             f"{', '.join(LOAD_HINTS)}")
        if self.block_fold and self.blocks_per_sm is not None:
            raise ValueError(f"{self.name}: only a one-shot kernel has a block fold")

    @property
    def expression(self) -> str:
        """The template instantiation in cuda_src/ceiling.cu."""
        hint = LOAD_HINTS[self.hint]
        if self.blocks_per_sm is None:
            fold = ", true" if self.block_fold else ""
            return f"read_one_shot<{self.block}, {self.loads}, {hint}u{fold}>"
        return f"read_grid_stride<{self.block}, {self.loads}, {self.blocks_per_sm}, {hint}u>"

    @property
    def row_expression(self) -> str:
        """Its twin in cuda_src/row_read.cu: the same read, and a row sum's writes."""
        return self.expression.replace("read_", "read_rows_", 1)

    def grid(self, words: int, sm_count: int) -> int:
        """Blocks to launch over `words` 16-byte words: every word covered once."""
        tiles = -(-words // (self.block * self.loads))
        if self.blocks_per_sm is None:
            return tiles
        return max(1, min(sm_count * self.blocks_per_sm, tiles))


# The one-shot shapes stream fastest on the H100 and the H200 (results/logs/ceiling_h100_
# b05ade2.txt, ceiling_h200_efed830.txt); the others are there because another GPU may
# prefer them. Grid-stride blocks per SM are what the registers allow on sm_90
# (the kernel's __launch_bounds__ enforces it). The same-size read must be at least as
# fast as any way `auto` reads, or a reduction would be over 100% of its own yardstick
# (one_shot 512x2 was, by 0.3%, against the first three alone; with the L2 prefetch hint
# it was by 0.08 to 0.13% at 2^31 and 2^32 on the H100): so every one_shot tile and load
# hint that a shipped tuning table or the built-in defaults run is here too, one-warp
# blocks included (tests/test_ceiling.py checks it). A one_shot thread's LOADS 16-byte
# vectors are these kernels' words. The block fold (cuda_src/ceiling.cu's BLOCK_FOLD):
# one_shot's tile and load ending with its block sum, the fastest read from 2 GiB on the
# H100 (by 0.11% from 4 GiB), where `auto` was 0.06 to 0.14% faster than every plain read.
HINT_WORDS = {"ldg": "", "evict-first": " evict-first", "l2-prefetch": " L2 prefetch"}


def one_shot(block: int, loads: int, hint: str = "ldg",
             block_fold: bool = False) -> CeilingKernel:
    """A one-shot kernel, named for its settings: `one-shot 512x2 L2 prefetch`."""
    fold = ", block fold" if block_fold else ""
    name = f"one-shot {block}x{loads}{HINT_WORDS[hint]}{fold}"
    return CeilingKernel(name, block, loads, hint=hint, block_fold=block_fold)


def grid_stride(block: int, loads: int, blocks_per_sm: int) -> CeilingKernel:
    """A grid-stride kernel, named for its settings: `grid-stride 512x4, 3/SM`."""
    return CeilingKernel(f"grid-stride {block}x{loads}, {blocks_per_sm}/SM", block, loads,
                         blocks_per_sm=blocks_per_sm)


# In the order they are timed (the first of equal medians is the ceiling's kernel).
KERNELS: tuple[CeilingKernel, ...] = (
    *(one_shot(block, loads) for block, loads in
      ((1024, 4), (512, 8), (256, 16), (1024, 2), (512, 2), (512, 4), (256, 2), (256, 4))),
    one_shot(1024, 4, "evict-first"),
    grid_stride(512, 4, 3), grid_stride(256, 8, 4), grid_stride(256, 16, 2),
    *(one_shot(block, loads) for block, loads in
      ((1024, 8), (256, 8), (128, 4), (32, 2), (32, 4), (32, 8))),
    one_shot(512, 2, "l2-prefetch"),
    one_shot(1024, 4, "l2-prefetch"),
    one_shot(512, 2, "l2-prefetch", block_fold=True),
)


@dataclass(frozen=True)
class KernelTime:
    kernel: str
    median_us: float
    samples: int


@dataclass(frozen=True)
class Ceiling:
    """The best streaming read measured: its bandwidth, which kernel, its median."""

    gbps: float
    kernel: str
    median_us: float
    nbytes: int
    timings: tuple[KernelTime, ...]

    def describe(self) -> str:
        return (f"{number(self.gbps, '.0f', ' GB/s')} ({self.kernel}, "
                f"{number(self.median_us, '.1f', ' us')} over "
                f"{number(self.nbytes / 2**30, '.2f', ' GiB')})")


def buffer_bytes(requested: int, free_bytes: int) -> int:
    """What to read: the requested bytes, or less where they would not fit in the share
    of free memory; whole 16-byte words. Refuses a buffer too small to measure DRAM."""
    usable = min(requested, int(free_bytes * FREE_SHARE))
    usable -= usable % WORD_BYTES
    if usable < MIN_BYTES:
        raise ValueError(f"{number(free_bytes / 2**20, '.0f', ' MiB')} of free device memory "
                         f"is too little to measure the read ceiling (it reads at least "
                         f"{MIN_BYTES >> 20} MiB)")
    return usable


def ceiling_from(timings: list[KernelTime], nbytes: int) -> Ceiling:
    """The fastest kernel's median (the first listed among equal medians) as the
    ceiling: the same bytes in the least time."""
    valid = [t for t in timings if t.median_us > 0 and math.isfinite(t.median_us)]
    if not valid:
        raise ValueError("no kernel timing to take the ceiling from")
    best = min(valid, key=lambda t: t.median_us)  # min keeps the first of equal keys
    return Ceiling(bandwidth_gbps(nbytes, best.median_us), best.kernel, best.median_us,
                   nbytes, tuple(timings))


def row_write_words(rows: int, acc_itemsize: int) -> int:
    """The 32-bit words the same-shape read writes: one accumulator a row (a float or an
    int: one word; a double: two)."""
    return rows * acc_itemsize // 4


def pct_of_ceiling(gbps: float, ceiling_gbps: float) -> float:
    """A bandwidth as a percentage of the measured ceiling (NaN without a ceiling).
    It can exceed 100: the ceiling is read over DEFAULT_BYTES, and a larger input
    streams slightly faster (docs/tuning.md)."""
    if not ceiling_gbps or not math.isfinite(ceiling_gbps) or ceiling_gbps <= 0:
        return float("nan")
    return 100 * gbps / ceiling_gbps
