"""A shape sweep's results as the data its figures draw (render/shape_plots.py, and the
report's charts): pure functions over a results DataFrame, nothing drawn or read here.

- best_rung_grid: per shape whose sides are both powers of two, the row rung of ours
  (no library, not row_auto) with the lowest median, its pct_read (GB/s in a file
  without the same-size read), on a grid of log2(ROWS) by log2(COLS);
- auto_grid: per such shape, row_auto's median over the fastest library reference's
  (below 1: row_auto is faster), and which library that is;
- lines_by_total: per total (ROWS x COLS to the nearest power of two, so an odd COLS's
  rounded rows fall in with their total), a line per rung across COLS, each rung's point
  its best block and parameters at that shape;
- auto_standing: over every shape (odd ones too) where row_auto and a library were both
  verified, how often row_auto is within one timer tick of the fastest library or faster,
  its worst shape, and how often it reaches READ_BAR_PCT of the same-shape read where the
  total is READ_BAR_TOTAL or more.

Only verified rows (status ok) with a positive median count; a rung is of ours, a
library or a dispatcher by the registry, and a rung the registry does not know by its
row (a `variant`: a dispatcher; block 0: a library)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from reducebench.analysis.compare import normalise
from reducebench.ladder.registry import ROW_LADDER, ROWS, display_rank
from reducebench.results.schema import OK

OURS, AUTO, LIBRARY = "ours", "auto", "library"
KINDS = (OURS, AUTO, LIBRARY)   # the order of a figure's lines


def is_shape_file(frame: pd.DataFrame) -> bool:
    """Whether a results frame holds row cases (a `--shape` run, a sweep)."""
    return "finish" in frame and bool((frame["finish"].astype(str) == ROWS).any())


def row_cases(frame: pd.DataFrame) -> pd.DataFrame:
    """The verified row cases of a frame with what the figures need: rows, cols, the
    nominal total, median_us, the measure drawn (pct_read, else gbps) and each rung's kind."""
    df = normalise(frame)
    if "finish" in df:
        df = df[df["finish"].astype(str) == ROWS]
    df = df[(df["status"] == OK) & (df["median_us"] > 0)].copy()
    df["cols"] = (pd.to_numeric(df["cols"], errors="coerce") if "cols" in df
                  else df["n"] // df["rows"]).fillna(0).astype(int)
    df = df[df["cols"] > 0]
    for column in ("pct_read", "gbps"):
        df[column] = pd.to_numeric(df[column], errors="coerce") if column in df else math.nan
    df["total"] = [nominal_total(int(n)) for n in df["n"]]
    variants = df["variant"] if "variant" in df else pd.Series("", index=df.index)
    df["kind"] = [kind_of(r, "" if pd.isna(v) else str(v), b)
                  for r, v, b in zip(df["rung"], variants, df["block"])]
    return df.reset_index(drop=True)


def kind_of(rung: str, variant: str = "", block: int = 0) -> str:
    """OURS, AUTO (a dispatcher) or LIBRARY, from the registry where it knows the rung."""
    known = ROW_LADDER.get(str(rung))
    if known is not None:
        return AUTO if known.dispatch else LIBRARY if known.is_library else OURS
    if str(variant).strip():
        return AUTO
    return LIBRARY if not int(block) else OURS


def nominal_total(n: int) -> int:
    """ROWS x COLS to the nearest power of two (in log2): the total a sweep asked for."""
    return 2 ** round(math.log2(max(1, n)))


def measure_of(df: pd.DataFrame) -> str:
    """pct_read where the file has it, else gbps (a file without the same-size read)."""
    return "pct_read" if (df["pct_read"] > 0).any() else "gbps"


def power_of_two(value: int) -> bool:
    return value >= 1 and value & (value - 1) == 0


@dataclass
class Grid:
    """Values on log2(ROWS) (rows of the array) by log2(COLS) (its columns), NaN where no
    shape was measured; `labels` the rung (or library) behind each value, "" where none."""

    rows_log2: list[int]
    cols_log2: list[int]
    values: np.ndarray
    labels: list[list[str]]
    measure: str                    # what the values are: pct_read, gbps or ratio
    left_out: list[tuple[int, int]] = field(default_factory=list)  # shapes not on the grid

    @property
    def cells(self) -> int:
        return int(np.isfinite(self.values).sum())

    def at(self, rows: int, cols: int) -> float:
        return float(self.values[self.rows_log2.index(int(math.log2(rows))),
                                 self.cols_log2.index(int(math.log2(cols)))])

    def label_at(self, rows: int, cols: int) -> str:
        return self.labels[self.rows_log2.index(int(math.log2(rows)))][
            self.cols_log2.index(int(math.log2(cols)))]


def _grid(cells: dict[tuple[int, int], tuple[float, str]], measure: str,
          left_out: list[tuple[int, int]]) -> Grid:
    """A grid spanning every log2 ROWS and COLS of the cells (powers of two only)."""
    if not cells:
        return Grid([], [], np.empty((0, 0)), [], measure, left_out)
    rows = sorted({int(math.log2(r)) for r, _ in cells})
    cols = sorted({int(math.log2(c)) for _, c in cells})
    rows_log2, cols_log2 = list(range(rows[0], rows[-1] + 1)), list(range(cols[0], cols[-1] + 1))
    values = np.full((len(rows_log2), len(cols_log2)), np.nan)
    labels = [[""] * len(cols_log2) for _ in rows_log2]
    for (r, c), (value, label) in cells.items():
        i, j = rows_log2.index(int(math.log2(r))), cols_log2.index(int(math.log2(c)))
        values[i, j], labels[i][j] = value, label
    return Grid(rows_log2, cols_log2, values, labels, measure, sorted(left_out))


def best_rung_grid(df: pd.DataFrame) -> Grid:
    """Per shape, the fastest row case of ours (lowest median over every rung, block and
    parameter set): its pct_read (or GB/s) and its rung, on the powers-of-two grid."""
    ours = df[df["kind"] == OURS]
    measure = measure_of(df)
    cells, left_out = {}, []
    for (rows, cols), group in ours.groupby(["rows", "cols"]):
        if not (power_of_two(rows) and power_of_two(cols)):
            left_out.append((int(rows), int(cols)))
            continue
        best = group.loc[group["median_us"].idxmin()]
        cells[(int(rows), int(cols))] = (float(best[measure]), str(best["rung"]))
    return _grid(cells, measure, left_out)


def auto_grid(df: pd.DataFrame) -> Grid:
    """Per shape where row_auto (any dispatcher) and a library were both verified: the
    dispatcher's median over the fastest library's, and that library's name."""
    cells, left_out = {}, []
    for (rows, cols), group in df.groupby(["rows", "cols"]):
        auto, library = group[group["kind"] == AUTO], group[group["kind"] == LIBRARY]
        if not len(auto) or not len(library):
            continue
        if not (power_of_two(rows) and power_of_two(cols)):
            left_out.append((int(rows), int(cols)))
            continue
        fastest = library.loc[library["median_us"].idxmin()]
        ratio = float(auto["median_us"].min()) / float(fastest["median_us"])
        cells[(int(rows), int(cols))] = (ratio, str(fastest["rung"]))
    return _grid(cells, "ratio", left_out)


# A difference below one tick of the GPU's 32 ns timer is not a measured one.
TIMER_TICK_US = 0.032
# The same-shape read row_auto should reach, from this total (to the nearest power of two) on.
READ_BAR_PCT, READ_BAR_TOTAL = 95.0, 2**24


@dataclass(frozen=True)
class AutoStanding:
    """row_auto against the libraries over a sweep's shapes (auto_standing)."""

    shapes: int          # shapes where row_auto and a library were both verified
    level: int           # ... row_auto within TIMER_TICK_US of the fastest library, or faster
    worst: tuple[int, int, float, str] | None  # (rows, cols, % slower, library); None: never
    large: int           # shapes of READ_BAR_TOTAL or more where row_auto has a read
    at_read_bar: int     # ... where it reaches READ_BAR_PCT of it


def auto_standing(df: pd.DataFrame) -> AutoStanding | None:
    """How row_auto (any dispatcher) stands against the fastest library at every shape
    (odd ones too) where both were verified; None where there is no such shape."""
    shapes = level = large = at_bar = 0
    worst: tuple[int, int, float, str] | None = None
    for (rows, cols), group in df.groupby(["rows", "cols"]):
        auto, library = group[group["kind"] == AUTO], group[group["kind"] == LIBRARY]
        if not len(auto) or not len(library):
            continue
        fastest = library.loc[library["median_us"].idxmin()]
        mine = auto.loc[auto["median_us"].idxmin()]
        shapes += 1
        over_us = float(mine["median_us"]) - float(fastest["median_us"])
        # in whole nanoseconds: 10.016 - 9.984 is one tick, not 0.03200000000000003 us
        if round(1000 * over_us) <= round(1000 * TIMER_TICK_US):
            level += 1
        elif worst is None or over_us / float(fastest["median_us"]) > worst[2] / 100:
            worst = (int(rows), int(cols), 100 * over_us / float(fastest["median_us"]),
                     str(fastest["rung"]))
        if int(mine["total"]) >= READ_BAR_TOTAL and float(mine["pct_read"]) > 0:
            large += 1
            at_bar += float(mine["pct_read"]) >= READ_BAR_PCT
    return AutoStanding(shapes, level, worst, large, at_bar) if shapes else None


@dataclass
class Line:
    rung: str
    kind: str
    cols: list[int]
    values: list[float]      # the measure at each COLS
    medians: list[float]     # the median (us) at each COLS


def lines_by_total(df: pd.DataFrame) -> dict[int, list[Line]]:
    """Per nominal total with at least two COLS, one line per rung across COLS (each
    point the rung's fastest block and parameters there): ours in ladder order, then
    row_auto, then the libraries."""
    measure = measure_of(df)
    found: dict[int, list[Line]] = {}
    for total, at_total in df.groupby("total"):
        if at_total["cols"].nunique() < 2:
            continue
        lines = []
        for rung, group in at_total.groupby("rung"):
            best = group.loc[group.groupby("cols")["median_us"].idxmin()].sort_values("cols")
            lines.append(Line(str(rung), str(best["kind"].iloc[0]),
                              [int(c) for c in best["cols"]],
                              [float(v) for v in best[measure]],
                              [float(v) for v in best["median_us"]]))
        found[int(total)] = sorted(lines, key=lambda line: (
            KINDS.index(line.kind), line.rung not in ROW_LADDER, display_rank(line.rung),
            line.rung))
    return found
