"""Tuning tables: which concrete variant (rung, block size, parameters) the `auto` rung
runs for each size band on one GPU model, and `row_auto` for each shape band (COLS and
total size), where those tables live, reading and writing them, and the built-in
defaults used where there is none. Device-free: `reducebench tune` (reducebench/tune/)
measures; this module only stores and chooses.

A table is a human-readable TOML file per GPU model (docs/tuning.md has the format):
the user's copy, $XDG_CONFIG_HOME/reducebench/tuning/<gpu-slug>.toml (~/.config when
XDG_CONFIG_HOME is unset), wins over the copy shipped under configs/tuning/. Bands count
n in elements of `element_bytes` bytes (4: float32); a case of another dtype is looked up
by its bytes, since every candidate reads 16-byte vectors and only the bytes matter; a
row band counts COLS and the total the same way."""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from reducebench.core.paths import CHECKOUT_DIR, data_dir
from reducebench.core.dtypes import DType, get_dtype
from reducebench.core.errors import UsageError
from reducebench.ladder.geometry import BLOCK_SIZES, VECTOR_BYTES
from reducebench.core.sizes import format_shape, parse_shape
from reducebench.ladder.case import AUTO, ROW_AUTO, Case
from reducebench.ladder.registry import LADDER, PARAM_RANGES, ROW_LADDER, ROW_RUNGS, Rung

FORMAT = 1          # [[band]] tables only
ROW_FORMAT = 2      # [[row_band]] tables too, and [[band]] may be left out
FORMATS = (FORMAT, ROW_FORMAT)
ELEMENT_BYTES = 4
BUILTIN = "built-in defaults"
# The rungs `auto` may run, and the parameters each takes (the registry's own).
AUTO_RUNGS: dict[str, tuple[str, ...]] = {
    "one_block": ("loads",),
    "vector_load": ("blocks_per_sm", "l2_prefetch", "loads"),
    "single_pass": ("blocks_per_sm", "l2_prefetch", "loads"),
    "pingpong": ("blocks_per_sm", "l2_prefetch", "loads"),
    "one_shot": ("l2_prefetch", "loads"),
}


@dataclass(frozen=True)
class Variant:
    """One concrete way to reduce: a rung, its block size and parameter values, and
    (not part of its identity) where the choice came from."""

    rung: str
    block: int
    params: tuple[tuple[str, int], ...] = ()
    origin: str = field(default=BUILTIN, compare=False)

    @classmethod
    def of(cls, rung: str, block: int, **params: int) -> "Variant":
        return cls(rung, block, tuple(sorted(params.items())))

    @property
    def param_dict(self) -> dict[str, int]:
        return dict(self.params)

    def describe(self) -> str:
        """e.g. `pingpong block=256 blocks_per_sm=8 l2_prefetch=0 loads=4`."""
        block = f" block={self.block}" if self.block else ""
        return f"{self.rung}{block}" + "".join(f" {k}={v}" for k, v in self.params)

    def label(self) -> str:
        """What a record's `variant` column says: the variant and where it came from."""
        return f"{self.describe()} ({self.origin})"


@dataclass(frozen=True)
class Band:
    """Sizes n_min..n_max (None: no upper end), in elements of the table's element_bytes,
    the variant chosen for them, and what tune measured at its sample sizes."""

    n_min: int
    n_max: int | None
    variant: Variant
    sizes: tuple[int, ...] = ()            # sample sizes tune measured at
    median_us: tuple[float, ...] = ()      # the chosen variant at each size
    runner_up: str = ""                    # the best other variant, described
    runner_up_us: tuple[float, ...] = ()
    cub_us: tuple[float, ...] = ()
    read_us: tuple[float, ...] = ()        # the same-size read at each size (pct_read's base)
    # The chosen variant confirmed with another dtype at the same bytes (tune's float16):
    same_bytes_dtype: str = ""
    same_bytes_us: tuple[float, ...] = ()
    same_bytes_read_us: tuple[float, ...] = ()

    def holds(self, n: int) -> bool:
        return self.n_min <= n and (self.n_max is None or n <= self.n_max)


def row_auto_rungs() -> dict[str, tuple[str, ...]]:
    """The rungs `row_auto` may run and the parameters each takes, from the registry:
    every row rung of ours (no library reference, no dispatcher)."""
    return {r.name: tuple(r.params) for r in ROW_RUNGS if not r.is_library and not r.dispatch}


def octave(value: int) -> int:
    """k with value in (2^(k-1), 2^k]: 0 for 1, 10 for 513..1024."""
    return (max(1, value) - 1).bit_length()


def octave_range(k: int) -> tuple[int, int]:
    """The values of octave k: (2^(k-1), 2^k] as (first, last); (1, 1) for k = 0."""
    return (2**(k - 1) + 1 if k else 1), 2**k


@dataclass(frozen=True)
class RowBand:
    """Shapes whose COLS lie in cols_min..cols_max and whose total (ROWS x COLS) lies in
    total_min..total_max (None: no upper end), both in elements of the table's
    element_bytes, and whose rows start on 16-byte boundaries (rows_aligned True: COLS x
    element size a multiple of 16), or not (False), or either (None); the variant
    `row_auto` runs there, and what tune measured."""

    cols_min: int
    cols_max: int | None
    total_min: int
    total_max: int | None
    variant: Variant
    rows_aligned: bool | None = None
    shapes: tuple[tuple[int, int], ...] = ()   # (rows, cols) tune measured at
    median_us: tuple[float, ...] = ()          # the chosen variant at each shape
    runner_up: str = ""
    runner_up_us: tuple[float, ...] = ()
    library: str = ""                          # the fastest library reference there
    library_us: tuple[float, ...] = ()
    read_us: tuple[float, ...] = ()            # the same-size read at each shape

    def holds(self, cols: int, total: int, aligned: bool | None = None) -> bool:
        return (self.cols_min <= cols and (self.cols_max is None or cols <= self.cols_max)
                and self.total_min <= total
                and (self.total_max is None or total <= self.total_max)
                and not self.misaligned(aligned))

    def misaligned(self, aligned: bool | None) -> bool:
        """Whether the band is for the other kind of row than a shape's (aligned: whether
        the shape's rows start on 16-byte boundaries; None: unknown, never misaligned)."""
        return None not in (self.rows_aligned, aligned) and self.rows_aligned != aligned

    def distance(self, cols: int, total: int) -> tuple[float, float]:
        """Octaves from the band to a shape along COLS, then along the total (0 inside)."""
        return (_octaves_off(cols, self.cols_min, self.cols_max),
                _octaves_off(total, self.total_min, self.total_max))

    def overlaps(self, other: "RowBand") -> bool:
        return (_spans_meet(self.cols_min, self.cols_max, other.cols_min, other.cols_max)
                and _spans_meet(self.total_min, self.total_max, other.total_min,
                                other.total_max)
                and not self.misaligned(other.rows_aligned))

    def describe(self) -> str:
        """e.g. `COLS 17..32, total 524289..1048576` (`, rows on 16-byte boundaries`)."""
        rows = {None: "", True: ", rows on 16-byte boundaries",
                False: ", rows off 16-byte boundaries"}[self.rows_aligned]
        return (f"COLS {_span(self.cols_min, self.cols_max)}, "
                f"total {_span(self.total_min, self.total_max)}{rows}")


def rows_aligned(cols: int, itemsize: int = ELEMENT_BYTES) -> bool:
    """Whether rows of `cols` elements of `itemsize` bytes start on 16-byte boundaries
    (in a 16-byte aligned array): the kernels that read a row in whole 16-byte vectors
    are at their best on those and read the others' heads and tails an element at a
    time, so the two kinds of row have bands of their own."""
    return cols * itemsize % VECTOR_BYTES == 0


def shape_band(cols: int, total: int) -> tuple[int, int, int, int]:
    """The band of a shape as tune writes it: the octave of its COLS and the octave of
    its total, (cols_min, cols_max, total_min, total_max); 1000 x 33 is COLS 33..64,
    total 32769..65536."""
    return (*octave_range(octave(cols)), *octave_range(octave(total)))


def _octaves_off(value: int, low: int, high: int | None) -> float:
    if value < low:
        return math.log2(low / value)
    if high is not None and value > high:
        return math.log2(value / high)
    return 0.0


def _spans_meet(low: int, high: int | None, other_low: int, other_high: int | None) -> bool:
    return (high is None or other_low <= high) and (other_high is None or low <= other_high)


def _span(low: int, high: int | None) -> str:
    return f"{low}.." + ("" if high is None else str(high))


@dataclass(frozen=True)
class TuningTable:
    gpu: str
    sm_count: int
    bands: tuple[Band, ...]
    compute_capability: str = ""
    date: str = ""
    dtype: str = "float32"                  # what tune measured with
    element_bytes: int = ELEMENT_BYTES
    versions: tuple[tuple[str, str], ...] = ()
    builtin: bool = False
    path: str = ""                          # where it was read from
    row_bands: tuple["RowBand", ...] = ()   # row_auto's choices (format 2)
    row_date: str = ""                      # when tune --shapes wrote them

    @property
    def origin(self) -> str:
        return BUILTIN if self.builtin else f"tuned for {self.gpu} on {self.date}"

    @property
    def row_origin(self) -> str:
        return BUILTIN if self.builtin else f"tuned for {self.gpu} on {self.row_date or self.date}"


# -- the built-in defaults ---------------------------------------------------------------

# The variants whose worst time over the sample sizes of both GPUs' tunes was closest to
# the fastest candidate at each size, per range (scripts/default_variants.py): up to 2^16
# float32, one_shot in blocks of one warp, 32 threads x 4 loads, the fastest candidate
# at every sample size of both GPUs' tunes (results/h100/tune_candidates_9db2346.csv,
# results/h200/tune_candidates_9db2346.csv); with 512 threads and 4 loads up to 2^24
# (5.6% at worst on those candidates; no variant did better over the range), and with
# 1024 threads and 4 loads above (0.8% at worst). The
# grid is one block per tile, so small inputs get small grids (eight blocks at 2^12).
# Used by a GPU without a table (docs/tuning.md).
DEFAULT_TABLE = TuningTable(
    gpu="", sm_count=0, builtin=True,
    bands=(Band(1, 2**16, Variant.of("one_shot", 32, loads=4, l2_prefetch=0)),
           Band(2**16 + 1, 2**24, Variant.of("one_shot", 512, loads=4, l2_prefetch=0)),
           Band(2**24 + 1, None, Variant.of("one_shot", 1024, loads=4, l2_prefetch=0))))


# row_auto without row bands in its tuning file: per band of shapes (the octave of COLS x
# the octave of the total), the row rung and parameters of ours fastest over the band's
# shapes on an H100, each timed against the same-shape read of its own run (so that files
# of other runs compare fairly): every rung at its defaults over the shape sweep
# (`reducebench run --shape sweep:rows@2^20..2^28:2 --rung all`,
# results/h100/rows_sweep_7cb42f7.csv), with row_multi's lanes x loads over rows of 4 to
# 128 at the same totals (results/h100/rows_multi_narrow_7cb42f7.csv), row_tile's and
# row_multi's L2 hint at rows of 33 and 1000 (results/h100/rows_hint_probe_7cb42f7.csv),
# row_multi a warp a row over rows of 256 to 1024 (results/h100/rows_multi_wide_ae91a09.csv)
# and row_tile's and row_multi's variants over rows of 33
# (results/h100/rows_odd_ae91a09.csv); a band for
# rows on 16-byte boundaries and one for rows off them where the sweeps hold both, and
# neighbouring COLS octaves with one choice joined: what scripts/row_defaults.py prints
# for those files (tests/test_row_defaults.py). A shape outside every band gets the
# nearest band's choice (choose_row): a band for its kind of row first, then fewest octaves
# away along COLS, then along the total.
DEFAULT_ROW_TABLE = TuningTable(
    gpu="", sm_count=0, builtin=True, bands=(),
    row_bands=(
        RowBand(3, 4, 524289, 1048576, rows_aligned=True,
                variant=Variant.of("row_thread", 256)),
        RowBand(5, 8, 524289, 1048576, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=1,
                                   loads=2)),
        RowBand(9, 16, 524289, 1048576, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=4,
                                   loads=1)),
        RowBand(17, 32, 524289, 1048576, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=4,
                                   loads=2)),
        RowBand(33, 64, 524289, 1048576, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=8,
                                   loads=2)),
        RowBand(65, 128, 524289, 1048576, rows_aligned=True,
                variant=Variant.of("row_warp", 256)),
        RowBand(129, 256, 524289, 1048576, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=0, lanes=32,
                                   loads=2)),
        RowBand(257, 512, 524289, 1048576, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=0, lanes=32,
                                   loads=8)),
        RowBand(513, 4096, 524289, 1048576, rows_aligned=True,
                variant=Variant.of("row_block", 256)),
        RowBand(4097, 1048576, 524289, 1048576, rows_aligned=True,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(33, 64, 524289, 1048576, rows_aligned=False,
                variant=Variant.of("row_group", 256, width=8)),
        RowBand(524289, 1048576, 524289, 1048576, rows_aligned=False,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(513, 1024, 1048577, 2097152, rows_aligned=True,
                variant=Variant.of("row_vec_block", 256, loads=4)),
        RowBand(3, 4, 2097153, 4194304, rows_aligned=True,
                variant=Variant.of("row_thread", 256)),
        RowBand(5, 8, 2097153, 4194304, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=1,
                                   loads=2)),
        RowBand(9, 16, 2097153, 4194304, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=2,
                                   loads=2)),
        RowBand(17, 32, 2097153, 4194304, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=8,
                                   loads=1)),
        RowBand(33, 64, 2097153, 4194304, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=8,
                                   loads=2)),
        RowBand(65, 128, 2097153, 4194304, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=16,
                                   loads=2)),
        RowBand(129, 256, 2097153, 4194304, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=0, lanes=32,
                                   loads=2)),
        RowBand(257, 1024, 2097153, 4194304, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=0, lanes=32,
                                   loads=8)),
        RowBand(1025, 8192, 2097153, 4194304, rows_aligned=True,
                variant=Variant.of("row_block", 256)),
        RowBand(8193, 4194304, 2097153, 4194304, rows_aligned=True,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(33, 64, 2097153, 4194304, rows_aligned=False,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=0, lanes=4,
                                   loads=4)),
        RowBand(524289, 1048576, 2097153, 4194304, rows_aligned=False,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(3, 4, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=1,
                                   loads=1)),
        RowBand(5, 8, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=1,
                                   loads=2)),
        RowBand(9, 16, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=4,
                                   loads=1)),
        RowBand(17, 32, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=4,
                                   loads=2)),
        RowBand(33, 64, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=8,
                                   loads=2)),
        RowBand(65, 128, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=16,
                                   loads=2)),
        RowBand(129, 256, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=32,
                                   loads=2)),
        RowBand(257, 512, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=32,
                                   loads=8)),
        RowBand(513, 1024, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=0, lanes=32,
                                   loads=8)),
        RowBand(1025, 2048, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_block", 256)),
        RowBand(2049, 4096, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_vec_block", 256, loads=4)),
        RowBand(4097, 16777216, 8388609, 16777216, rows_aligned=True,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(33, 64, 8388609, 16777216, rows_aligned=False,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=4,
                                   loads=4)),
        RowBand(524289, 1048576, 16777217, 33554432, rows_aligned=False,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(3, 4, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=1,
                                   loads=1)),
        RowBand(5, 8, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=2,
                                   loads=1)),
        RowBand(9, 16, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=4,
                                   loads=1)),
        RowBand(17, 32, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=4,
                                   loads=2)),
        RowBand(33, 64, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=8,
                                   loads=2)),
        RowBand(65, 128, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=16,
                                   loads=2)),
        RowBand(129, 256, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=32,
                                   loads=2)),
        RowBand(257, 512, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=32,
                                   loads=4)),
        RowBand(513, 1024, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=32,
                                   loads=8)),
        RowBand(1025, 4096, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_block", 256)),
        RowBand(4097, 16384, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_vec_block", 256, loads=4)),
        RowBand(16385, 131072, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(131073, 262144, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_vec_block", 256, loads=4)),
        RowBand(262145, 67108864, 33554433, 67108864, rows_aligned=True,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(524289, 1048576, 33554433, 67108864, rows_aligned=False,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(513, 1024, 67108865, 134217728, rows_aligned=True,
                variant=Variant.of("row_tile", 256, l2_prefetch=0, loads=4)),
        RowBand(33, 64, 67108865, 134217728, rows_aligned=False,
                variant=Variant.of("row_tile", 256, l2_prefetch=1, loads=4)),
        RowBand(3, 4, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_tile", 256, l2_prefetch=0, loads=4)),
        RowBand(5, 8, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=2,
                                   loads=1)),
        RowBand(9, 16, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=4,
                                   loads=1)),
        RowBand(17, 32, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=8,
                                   loads=1)),
        RowBand(33, 64, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=16,
                                   loads=1)),
        RowBand(65, 128, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=8,
                                   loads=2)),
        RowBand(129, 256, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=32,
                                   loads=8)),
        RowBand(257, 512, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_multi", 256, group_rows=1, l2_prefetch=1, lanes=32,
                                   loads=2)),
        RowBand(513, 1024, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_tile", 256, l2_prefetch=0, loads=4)),
        RowBand(1025, 2048, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_block", 256)),
        RowBand(2049, 16384, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_vec_block", 256, loads=4)),
        RowBand(16385, 131072, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_cluster", 256, cluster=8, loads=4)),
        RowBand(131073, 262144, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(262145, 1048576, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_vec_block", 256, loads=4)),
        RowBand(1048577, 268435456, 134217729, 268435456, rows_aligned=True,
                variant=Variant.of("row_split", 256, blocks_per_sm=16, l2_prefetch=1,
                                   loads=4)),
        RowBand(524289, 1048576, 134217729, 268435456, rows_aligned=False,
                variant=Variant.of("row_cluster", 256, cluster=8, loads=4)),
        RowBand(33, 64, 268435457, 536870912, rows_aligned=False,
                variant=Variant.of("row_tile", 256, l2_prefetch=1, loads=4))))


# -- choosing ----------------------------------------------------------------------------

def lookup_size(n: int, dtype: DType | str, element_bytes: int = ELEMENT_BYTES) -> int:
    """n in the table's elements: the same bytes (rounded up)."""
    dtype = get_dtype(dtype) if isinstance(dtype, str) else dtype
    return max(1, -(-n * dtype.itemsize // element_bytes))


def choose(table: TuningTable, n: int, dtype: DType | str) -> Variant:
    """The variant of the band that holds n elements of dtype, marked with the table's
    origin ("tuned for <GPU> on <date>" or "built-in defaults")."""
    size = lookup_size(n, dtype, table.element_bytes)
    for band in table.bands:
        if band.holds(size):
            return replace(band.variant, origin=table.origin)
    raise UsageError(f"tuning table for {table.gpu or 'defaults'}: no band holds "
                     f"n = {size}")  # load_table refuses tables with gaps: never here


def choose_row(table: TuningTable, rows: int, cols: int, dtype: DType | str) -> Variant:
    """The variant of the row band that holds a ROWS x COLS shape of dtype (COLS and the
    total looked up by bytes, as n is); where none holds it, of the nearest band: fewest
    octaves away along COLS, then along the total, then the first in the file. Marked
    with the table's origin."""
    band, _ = nearest_row_band(table, rows, cols, dtype)
    return replace(band.variant, origin=table.row_origin)


def nearest_row_band(table: TuningTable, rows: int, cols: int, dtype: DType | str
                     ) -> tuple[RowBand, tuple[float, float]]:
    """The row band choose_row takes for the shape, and how many octaves away it is
    along COLS and along the total ((0, 0): it holds the shape). A band for the other
    kind of row (rows on or off 16-byte boundaries) is taken only where no band for the
    shape's kind is left."""
    dtype = get_dtype(dtype) if isinstance(dtype, str) else dtype
    cols_key = lookup_size(cols, dtype, table.element_bytes)
    total_key = lookup_size(rows * cols, dtype, table.element_bytes)
    aligned = rows_aligned(cols, dtype.itemsize)
    if not table.row_bands:
        raise UsageError(f"tuning table for {table.gpu or 'defaults'}: no row bands")
    index = min(range(len(table.row_bands)),
                key=lambda i: (table.row_bands[i].misaligned(aligned),
                               *table.row_bands[i].distance(cols_key, total_key), i))
    band = table.row_bands[index]
    return band, band.distance(cols_key, total_key)


# A tuned row band serves shapes up to this many octaves outside it, along COLS and along
# the total; a shape further from every tuned band takes the built-in table's choice (a
# tune of a few bands says nothing about shapes far from them: one of COLS 4 would send a
# single row of 2^24 to a thread).
NEAR_OCTAVES = 1.0


def table_in_use(gpu_name: str, sm_count: int, rows: bool = False
                 ) -> tuple[TuningTable | None, str]:
    """The tuning table `auto` (rows: `row_auto`) reads on this GPU: the user's file, else
    the shipped one, whichever first holds bands of that kind; (None, why) where that
    file is for another GPU or SM count (another product under the same name), (None,
    "") where no file holds such bands."""
    for folder in (user_dir(), shipped_dir()):
        path = folder / f"{gpu_slug(gpu_name)}.toml"
        if not path.is_file():
            continue
        table = load_table(path)
        if not (table.row_bands if rows else table.bands):
            continue
        if table.gpu != gpu_name or table.sm_count != sm_count:
            return None, f"{path} is for {table.gpu} with {table.sm_count} SMs"
        return table, ""
    return None, ""


def resolve_auto(n: int, dtype: DType | str, gpu_name: str, sm_count: int) -> Variant:
    """What `auto` runs for n elements of dtype on this GPU: from the user's tuning
    file, else the shipped one, else the built-in defaults (a file for another SM count,
    e.g. another product under the same name, is not used; the origin says so)."""
    table, why = table_in_use(gpu_name, sm_count)
    if table is None:
        chosen = choose(DEFAULT_TABLE, n, dtype)
        return replace(chosen, origin=f"{BUILTIN}; {why}") if why else chosen
    return choose(table, n, dtype)


def resolve_row_auto(rows: int, cols: int, dtype: DType | str, gpu_name: str,
                     sm_count: int) -> Variant:
    """What `row_auto` runs for a ROWS x COLS shape of dtype on this GPU: the row bands of
    the user's tuning file, else the shipped one's, where one of them holds the shape or
    lies within NEAR_OCTAVES of it; else the built-in row defaults (the origin says why)."""
    table, why = table_in_use(gpu_name, sm_count, rows=True)
    if table is not None:
        band, off = nearest_row_band(table, rows, cols, dtype)
        if max(off) <= NEAR_OCTAVES:
            return replace(band.variant, origin=table.row_origin)
        why = (f"no tuned row band within an octave of {rows}x{cols} "
               f"(nearest: {band.describe()})")
    chosen = choose_row(DEFAULT_ROW_TABLE, rows, cols, dtype)
    return replace(chosen, origin=f"{BUILTIN}; {why}") if why else chosen


def resolve_auto_cases(cases: list[Case], gpu_name: str, sm_count: int,
                       ladder: Mapping[str, Rung] | None = None,
                       row_ladder: Mapping[str, Rung] | None = None
                       ) -> tuple[list[Case], list[str]]:
    """Each case of rung `auto` (or `row_auto`) replaced by the concrete case it runs,
    and for every case the variant label its record shows ("" where the case is not a
    dispatcher's).

    The concrete case's rung is the chosen ladder rung renamed `auto` (a Rung is data:
    its kernel, template, grid and finish come along), with the variant's block and
    parameters, so planning, compiling, timing, verifying and the record all follow the
    chosen rung while the record still says `auto` (`row_auto`: the same, per shape)."""
    ladder = LADDER if ladder is None else ladder
    row_ladder = ROW_LADDER if row_ladder is None else row_ladder
    resolved: list[Case] = []
    labels: list[str] = []
    for case in cases:
        if case.rung.name == ROW_AUTO:
            variant = resolve_row_auto(case.rows, case.cols, case.dtype, gpu_name, sm_count)
            concrete = replace(variant_case(variant, case.dtype, case.n, row_ladder,
                                            name=ROW_AUTO), rows=case.rows)
        elif case.rung.name == AUTO:
            variant = resolve_auto(case.n, case.dtype, gpu_name, sm_count)
            concrete = variant_case(variant, case.dtype, case.n, ladder, name=AUTO)
        else:
            resolved.append(case)
            labels.append("")
            continue
        resolved.append(concrete)
        # every parameter it ran with, the rung's defaults for those the table leaves out
        ran = replace(Variant.of(variant.rung, variant.block, **concrete.params),
                      origin=variant.origin)
        labels.append(ran.label())
    return resolved, labels


def variant_case(variant: Variant, dtype: DType, n: int,
                 ladder: Mapping[str, Rung] | None = None, name: str | None = None) -> Case:
    """The case that runs a variant: its rung (renamed `name` if given) with the
    variant's block and parameters over the rung's defaults."""
    ladder = LADDER if ladder is None else ladder
    if variant.rung not in ladder:
        raise UsageError(f"the tuning table names rung {variant.rung!r}, which this "
                         "reducebench does not have")
    rung = ladder[variant.rung]
    if name is not None:
        rung = replace(rung, name=name, title=f"{name}: {variant.describe()}")
    return Case(rung, dtype, n, variant.block, {**rung.params, **variant.param_dict})


# -- where tables live -------------------------------------------------------------------

def gpu_slug(gpu_name: str) -> str:
    """A file name for a GPU model: `NVIDIA H100 80GB HBM3` -> `nvidia-h100-80gb-hbm3`."""
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-") or "gpu"


def user_dir() -> Path:
    """$XDG_CONFIG_HOME/reducebench/tuning, or ~/.config/reducebench/tuning."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "reducebench" / "tuning"


def shipped_dir() -> Path:
    """configs/tuning of an installed wheel (reducebench/_data), else of the checkout."""
    return data_dir("configs", "tuning") or CHECKOUT_DIR / "configs" / "tuning"


def user_path(gpu_name: str) -> Path:
    return user_dir() / f"{gpu_slug(gpu_name)}.toml"


def find_table(gpu_name: str) -> Path | None:
    """The user's tuning file for this GPU, else the shipped one, else None."""
    for folder in (user_dir(), shipped_dir()):
        path = folder / f"{gpu_slug(gpu_name)}.toml"
        if path.is_file():
            return path
    return None


# -- reading -----------------------------------------------------------------------------

def load_table(path: str | Path) -> TuningTable:
    """A tuning file, checked; a broken one is one UsageError naming the file."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError as exc:
        raise UsageError(f"tuning file {path}: cannot read it: {exc.strerror or exc}") from None
    return _load_cached(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _load_cached(path: str, mtime_ns: int, size: int) -> TuningTable:
    try:
        raw = tomllib.loads(Path(path).read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"tuning file {path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"tuning file {path}: invalid TOML: not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"tuning file {path}: cannot read it: {exc.strerror or exc}") from None
    try:
        return replace(table_from_dict(raw), path=path)
    except ValueError as exc:
        raise UsageError(f"tuning file {path}: {exc}") from None


def table_from_dict(raw: dict) -> TuningTable:
    """A table from parsed TOML; ValueError says what is wrong, in one line."""
    fmt = raw.get("format")
    if fmt not in FORMATS or isinstance(fmt, bool):
        raise ValueError(f"format = {fmt!r}; this reducebench reads format "
                         f"{' and '.join(map(str, FORMATS))}")
    gpu = _get(raw, "gpu", str)
    sm_count = _get(raw, "sm_count", int)
    element_bytes = _get(raw, "element_bytes", int, ELEMENT_BYTES)
    if element_bytes not in (2, 4, 8):
        raise ValueError(f"element_bytes = {element_bytes}; expected 2, 4 or 8")
    versions = raw.get("versions", {})
    if not isinstance(versions, dict) or not all(isinstance(v, str) for v in versions.values()):
        raise ValueError("[versions] should be a table of strings")
    bands_raw, rows_raw = raw.get("band"), raw.get("row_band")
    if rows_raw is not None and fmt == FORMAT:
        raise ValueError(f"[[row_band]] tables need format = {ROW_FORMAT}")
    if not (fmt == ROW_FORMAT and bands_raw is None and rows_raw):
        if not isinstance(bands_raw, list) or not bands_raw:
            raise ValueError("no [[band]] tables" + (" or [[row_band]] tables"
                                                     if fmt == ROW_FORMAT else ""))
    bands = tuple(_band(b, i + 1) for i, b in enumerate(bands_raw or []))
    if bands:
        _check_bands_cover_every_size(bands)
    if rows_raw is not None and (not isinstance(rows_raw, list) or not rows_raw):
        raise ValueError("row_band should be [[row_band]] tables")
    row_bands = tuple(_row_band(b, i + 1) for i, b in enumerate(rows_raw or []))
    _check_row_bands_apart(row_bands)
    return TuningTable(gpu=gpu, sm_count=sm_count, bands=bands,
                       compute_capability=_get(raw, "compute_capability", str, ""),
                       date=_get(raw, "date", str, ""), dtype=_get(raw, "dtype", str, "float32"),
                       element_bytes=element_bytes, versions=tuple(sorted(versions.items())),
                       row_bands=row_bands, row_date=_get(raw, "row_date", str, ""))


def _get(raw: dict, key: str, kind: type, default=None):
    if key not in raw:
        if default is None:
            raise ValueError(f"missing key {key!r}")
        return default
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        expected = "a string" if kind is str else "a whole number"
        raise ValueError(f"{key} = {value!r} should be {expected}")
    return value


def _band(raw: dict, number: int) -> Band:
    where = f"band {number}"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} is not a table")
    n_min = _get(raw, "n_min", int)
    n_max = raw.get("n_max")
    if n_max is not None and (isinstance(n_max, bool) or not isinstance(n_max, int)):
        raise ValueError(f"{where}: n_max = {n_max!r} should be a whole number")
    if n_min < 1 or (n_max is not None and n_max < n_min):
        raise ValueError(f"{where}: n_min = {n_min}, n_max = {n_max} is not a size range")
    return Band(n_min, n_max, _variant(raw, where, AUTO_RUNGS, "auto"),
                sizes=_numbers(raw, "sizes", int, where),
                median_us=_numbers(raw, "median_us", float, where),
                runner_up=_get(raw, "runner_up", str, ""),
                runner_up_us=_numbers(raw, "runner_up_us", float, where),
                cub_us=_numbers(raw, "cub_us", float, where),
                read_us=_numbers(raw, "read_us", float, where),
                same_bytes_dtype=_get(raw, "same_bytes_dtype", str, ""),
                same_bytes_us=_numbers(raw, "same_bytes_us", float, where),
                same_bytes_read_us=_numbers(raw, "same_bytes_read_us", float, where))


def _variant(raw: dict, where: str, rungs: Mapping[str, tuple[str, ...]], runner: str,
             blocks: Mapping[str, tuple[int, ...]] | None = None) -> Variant:
    """A band's rung, block and params, each checked: a rung `runner` runs, a block it
    takes, only the parameters it takes, within the ranges --param accepts."""
    rung = _get(raw, "rung", str)
    if rung not in rungs:
        raise ValueError(f"{where}: rung {rung!r}; {runner} runs {', '.join(rungs)}")
    block = _get(raw, "block", int)
    accepted = blocks[rung] if blocks else BLOCK_SIZES
    if block not in accepted:
        raise ValueError(f"{where}: block {block}; accepted: "
                         f"{', '.join(map(str, accepted))}")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"{where}: params should be a table such as {{loads = 4}}")
    for name, value in params.items():
        if name not in rungs[rung]:
            takes = f"it takes {', '.join(rungs[rung])}" if rungs[rung] else "it takes none"
            raise ValueError(f"{where}: {rung} takes no parameter {name!r} ({takes})")
        low, high = PARAM_RANGES[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{where}: {name} = {value!r} should be from {low} to {high}")
    return Variant.of(rung, block, **params)


def _row_band(raw: dict, number: int) -> RowBand:
    where = f"row band {number}"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} is not a table")
    spans = []
    for side in ("cols", "total"):
        low = _get(raw, f"{side}_min", int)
        high = raw.get(f"{side}_max")
        if high is not None and (isinstance(high, bool) or not isinstance(high, int)):
            raise ValueError(f"{where}: {side}_max = {high!r} should be a whole number")
        if low < 1 or (high is not None and high < low):
            raise ValueError(f"{where}: {side}_min = {low}, {side}_max = {high} is not a "
                             "range of sizes")
        spans += [low, high]
    rungs = row_auto_rungs()
    variant = _variant(raw, where, rungs, "row_auto",
                       {name: ROW_LADDER[name].blocks for name in rungs})
    try:  # what the rung's geometry refuses (a group of lanes wider than the block, ...)
        rung = ROW_LADDER[variant.rung]
        rung.plan(64, get_dtype("float32"), variant.block, 1,
                  {**rung.params, **variant.param_dict}, rows=2)
    except UsageError as exc:
        raise ValueError(f"{where}: {exc}") from None
    shapes = raw.get("shapes", [])
    if not isinstance(shapes, list) or not all(isinstance(t, str) for t in shapes):
        raise ValueError(f"{where}: shapes should be a list of strings such as \"1000x33\"")
    try:
        measured = tuple(pair for text in shapes for pair in parse_shape(text))
    except UsageError as exc:
        raise ValueError(f"{where}: shapes: {exc}") from None
    aligned = raw.get("rows_aligned")
    if aligned is not None and not isinstance(aligned, bool):
        raise ValueError(f"{where}: rows_aligned = {aligned!r} should be true or false")
    return RowBand(*spans, variant, rows_aligned=aligned, shapes=measured,
                   median_us=_numbers(raw, "median_us", float, where),
                   runner_up=_get(raw, "runner_up", str, ""),
                   runner_up_us=_numbers(raw, "runner_up_us", float, where),
                   library=_get(raw, "library", str, ""),
                   library_us=_numbers(raw, "library_us", float, where),
                   read_us=_numbers(raw, "read_us", float, where))


def _check_row_bands_apart(bands: tuple[RowBand, ...]) -> None:
    """No shape in two row bands (a shape in none gets the nearest band)."""
    for number, band in enumerate(bands, start=1):
        for earlier, other in enumerate(bands[:number - 1], start=1):
            if band.overlaps(other):
                raise ValueError(f"row band {number} ({band.describe()}) overlaps row band "
                                 f"{earlier} ({other.describe()}); a shape has one band")


def _numbers(raw: dict, key: str, kind: type, where: str) -> tuple:
    values = raw.get(key, [])
    if not isinstance(values, list) or any(isinstance(v, bool) or
                                           not isinstance(v, (int, float)) for v in values):
        raise ValueError(f"{where}: {key} should be a list of numbers")
    return tuple(kind(v) for v in values)


def _check_bands_cover_every_size(bands: tuple[Band, ...]) -> None:
    """Bands in order from 1 up, each starting right after the previous one, the last
    with no n_max: every size has exactly one band."""
    if bands[0].n_min != 1:
        raise ValueError(f"band 1 starts at n_min = {bands[0].n_min}; the first band "
                         "starts at 1")
    for number, (before, after) in enumerate(zip(bands, bands[1:]), start=2):
        if before.n_max is None or after.n_min != before.n_max + 1:
            raise ValueError(f"band {number} starts at n_min = {after.n_min}; it must start "
                             f"right after band {number - 1} (n_max + 1)")
    if bands[-1].n_max is not None:
        raise ValueError(f"the last band ends at n_max = {bands[-1].n_max}; leave n_max out "
                         "of the last band so that it covers every larger size")


# -- writing -----------------------------------------------------------------------------

def format_table(table: TuningTable) -> str:
    """The TOML text of a table (tomllib reads it back to the same table)."""
    lines = [
        "# reducebench tuning file: the variant `auto` runs for each size band on this GPU.",
        "# Written by `reducebench tune`; hand edits are read (and checked) too.",
        "# n counts elements of element_bytes bytes; other dtypes are looked up by bytes.",
        "# same_bytes_*: the chosen variant with that dtype over the band's sizes' bytes.",
        *(["# [[row_band]]: the row rung `row_auto` runs for shapes of those COLS and "
           "totals",
           "# (rows_aligned: only rows on 16-byte boundaries, true, or only rows off them);",
           "# a shape no row band holds gets the nearest one (COLS first) within an octave,",
           "# else the built-in row defaults."]
          if table.row_bands else []),
        f"format = {ROW_FORMAT if table.row_bands else FORMAT}",
        f"gpu = {_string(table.gpu)}",
        f"sm_count = {table.sm_count}",
        f"compute_capability = {_string(table.compute_capability)}",
        f"date = {_string(table.date)}",
        *([f"row_date = {_string(table.row_date)}"] if table.row_date else []),
        f"dtype = {_string(table.dtype)}",
        f"element_bytes = {table.element_bytes}",
        "",
        "[versions]",
        *(f"{_key(k)} = {_string(v)}" for k, v in table.versions),
    ]
    for band in table.bands:
        lines += ["", "[[band]]", f"n_min = {band.n_min}"]
        if band.n_max is not None:
            lines.append(f"n_max = {band.n_max}")
        lines += _variant_lines(band.variant)
        if band.sizes:
            lines.append(f"sizes = [{', '.join(str(s) for s in band.sizes)}]")
        lines += _number_lines(band, ("median_us", "runner_up_us", "cub_us", "read_us"))
        if band.runner_up:
            lines.append(f"runner_up = {_string(band.runner_up)}")
        if band.same_bytes_dtype:
            lines.append(f"same_bytes_dtype = {_string(band.same_bytes_dtype)}")
        lines += _number_lines(band, ("same_bytes_us", "same_bytes_read_us"))
    for row in table.row_bands:
        lines += ["", "[[row_band]]"]
        for key in ("cols_min", "cols_max", "total_min", "total_max"):
            if getattr(row, key) is not None:
                lines.append(f"{key} = {getattr(row, key)}")
        if row.rows_aligned is not None:
            lines.append(f"rows_aligned = {str(row.rows_aligned).lower()}")
        lines += _variant_lines(row.variant)
        if row.shapes:
            lines.append("shapes = [" + ", ".join(_string(f"{r}x{c}") for r, c in row.shapes)
                         + "]")
        lines += _number_lines(row, ("median_us", "runner_up_us"))
        if row.runner_up:
            lines.append(f"runner_up = {_string(row.runner_up)}")
        if row.library:
            lines.append(f"library = {_string(row.library)}")
        lines += _number_lines(row, ("library_us", "read_us"))
    return "\n".join(lines) + "\n"


def _variant_lines(variant: Variant) -> list[str]:
    return [f"rung = {_string(variant.rung)}", f"block = {variant.block}",
            "params = {" + ", ".join(f"{k} = {v}" for k, v in variant.params) + "}"]


def _number_lines(band: Band | RowBand, keys: tuple[str, ...]) -> list[str]:
    """`key = [...]` for each of the band's measured lists that is not empty."""
    return [f"{key} = [{', '.join(_float(v) for v in getattr(band, key))}]"
            for key in keys if getattr(band, key)]


def with_row_bands(table: TuningTable, new: tuple[RowBand, ...], date: str) -> TuningTable:
    """The table with `new` row bands: each replaces the bands it overlaps, the others
    stay; in order of COLS, then total, then kind of row (on 16-byte boundaries, either,
    off)."""
    kept = [b for b in table.row_bands if not any(b.overlaps(n) for n in new)]
    kind = {True: 0, None: 1, False: 2}
    bands = tuple(sorted([*kept, *new],
                         key=lambda b: (b.cols_min, b.total_min, kind[b.rows_aligned])))
    return replace(table, row_bands=bands, row_date=date)


def kept_from(path: Path, gpu: str, sm_count: int) -> TuningTable | None:
    """The tuning file at `path`, where it is one for this GPU that reads: what a tune
    of the other ladder keeps of it (None: nothing there to keep)."""
    if not path.is_file():
        return None
    try:
        table = load_table(path)
    except UsageError:
        return None
    return table if (table.gpu, table.sm_count) == (gpu, sm_count) else None


def write_table(table: TuningTable, path: str | Path) -> Path:
    """Write the table (creating the folder), replacing any file there in one step.
    A table that would not read back (a gap between bands) is a ValueError."""
    path = Path(path)
    text = format_table(table)
    table_from_dict(tomllib.loads(text))  # never write what could not be read back
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text)
        partial.replace(path)
    except OSError as exc:
        raise UsageError(f"cannot write the tuning file {path}: {exc.strerror or exc}") from None
    return path


def today() -> str:
    return _dt.date.today().isoformat()


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string: the same escapes


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _string(name)


def _float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.3f}"
