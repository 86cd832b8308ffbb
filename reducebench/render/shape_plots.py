"""A shape sweep's figures (`plot` on a file of row cases), drawn with matplotlib's Agg
canvas from analysis/shape_grids.py's data, one file each, named by what it shows:

    <stem>_best_rung_pct_read.png   the fastest row rung of ours per shape: its pct_read
                                    (GB/s in a file without the same-shape read), and which
                                    rung it is, on log2(ROWS) by log2(COLS)
    <stem>_row_auto_vs_library.png  row_auto's median over the fastest library's per shape
    <stem>_by_cols_at_16M.png       a line per rung across COLS at one total (16M = 2^24),
                                    one file per total

with `_<dtype>` before the suffix where the file holds several dtypes. Shapes whose sides
are not both powers of two (odd COLS) are on the lines, not on the grids."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from reducebench.analysis.shape_grids import (AUTO, LIBRARY, READ_BAR_PCT, READ_BAR_TOTAL,
                                              TIMER_TICK_US, AutoStanding, Grid, Line,
                                              auto_grid, auto_standing, best_rung_grid,
                                              is_shape_file, lines_by_total, row_cases)
from reducebench.core.errors import ReducebenchError, ResultsFileError
from reducebench.core.numbers import number
from reducebench.core.sizes import format_size
from reducebench.render.figure_files import DPI, output_format
from reducebench.render.plots import figure_line, plot_results, series_styles

HEATMAP_SIZE = (14.0, 7.0)      # inches: two panels side by side
SINGLE_SIZE = (9.0, 7.0)
LINES_SIZE = (12.0, 5.0)
MAX_NOTED_CELLS = 400           # above this, the cells carry no numbers (unreadable)
MEASURE_TITLES = {"pct_read": "% of the same-shape read", "gbps": "GB/s",
                  "ratio": "row_auto time / fastest library's time"}


@dataclass(frozen=True)
class ShapeFigure:
    path: Path
    shows: str            # what it shows, in words
    width_px: int
    height_px: int
    cells: int = 0        # grid cells with a value (heatmaps)
    lines: int = 0        # lines (by COLS)
    existed: bool = False  # a file of that name was replaced


def total_name(total: int) -> str:
    """A total as --size writes it in K, M, G (powers of 1024): 16M for 2^24."""
    for suffix, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if total >= scale and total % scale == 0:
            return f"{total // scale}{suffix}"
    return str(total)


def figure_path(base: Path, what: str, dtype: str = "") -> Path:
    """Where a figure goes, from the base name `plot` was given: `run.png` and
    `best_rung_pct_read` give `run_best_rung_pct_read.png` (`_float16` after it for one
    dtype of several)."""
    tail = f"_{dtype}" if dtype else ""
    return base.with_name(f"{base.stem}_{what}{tail}{base.suffix}")


def plot_shape_sweep(frame: pd.DataFrame, base: str | Path,
                     source: str | None = None) -> list[ShapeFigure]:
    """Every figure of a shape sweep's results, written beside `base` (its stem and
    suffix: PNG or SVG); the figures it wrote."""
    fmt = output_format(base)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ReducebenchError("plot needs matplotlib, which is not installed: "
                               "pip install 'reducebench[plot]' (or pip install "
                               "matplotlib)") from None
    df = row_cases(frame)
    name = source or "the results"
    if not len(df):
        raise ResultsFileError(f"{name}: no verified row case with a time to plot")
    base, written = Path(base), []
    dtypes = sorted(set(df["dtype"]))
    for dtype in dtypes:
        part = df[df["dtype"] == dtype]
        tail = dtype if len(dtypes) > 1 else ""
        title = f"{_context(frame, dtype)}{' · ' + Path(source).name if source else ''}"
        best = best_rung_grid(part)
        if best.cells:
            path = figure_path(base, f"best_rung_{best.measure}", tail)
            written.append(_best_figure(best, path, fmt, title))
        auto = auto_grid(part)
        if auto.cells:
            written.append(_auto_figure(auto, figure_path(base, "row_auto_vs_library", tail),
                                        fmt, title))
        for total, lines in lines_by_total(part).items():
            path = figure_path(base, f"by_cols_at_{total_name(total)}", tail)
            written.append(_lines_figure(lines, total, path, fmt, title, best.measure))
    if not written:
        raise ResultsFileError(f"{name}: no shape to draw (no row rung of ours, row_auto "
                               "beside a library, or two COLS at one total)")
    return written


def _context(frame: pd.DataFrame, dtype: str) -> str:
    gpus = sorted({str(g) for g in frame.get("gpu", pd.Series(dtype=object)).dropna()
                   if str(g).strip()})
    return " · ".join([*gpus[:2], dtype])


def _figure(size):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: Path, fmt: str, size, shows: str, **counts) -> ShapeFigure:
    existed = path.exists()
    fig.savefig(path, dpi=DPI, format=fmt)
    return ShapeFigure(path, shows, int(size[0] * DPI), int(size[1] * DPI), **counts,
                       existed=existed)


def _axes_of(ax, grid: Grid) -> None:
    """log2(COLS) across, log2(ROWS) up, ticks labelled 2^k."""
    step = max(1, len(grid.cols_log2) // 14)
    ax.set_xticks(range(0, len(grid.cols_log2), step),
                  [f"2^{k}" for k in grid.cols_log2[::step]], fontsize="small", rotation=90)
    step = max(1, len(grid.rows_log2) // 14)
    ax.set_yticks(range(0, len(grid.rows_log2), step),
                  [f"2^{k}" for k in grid.rows_log2[::step]], fontsize="small")
    ax.set_xlabel("COLS (log2)")
    ax.set_ylabel("ROWS (log2)")


def _note_cells(ax, grid: Grid, text) -> None:
    if grid.cells > MAX_NOTED_CELLS:
        return
    for i in range(len(grid.rows_log2)):
        for j in range(len(grid.cols_log2)):
            value = grid.values[i, j]
            if np.isfinite(value):
                ax.text(j, i, text(value), ha="center", va="center", fontsize=6)


def _best_figure(grid: Grid, path: Path, fmt: str, title: str) -> ShapeFigure:
    """Left: the fastest rung's measure per shape; right: which rung it is."""
    import matplotlib
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    fig = _figure(HEATMAP_SIZE)
    left, right = fig.subplots(1, 2)
    image = left.imshow(np.ma.masked_invalid(grid.values), origin="lower", aspect="auto",
                        cmap="viridis")
    fig.colorbar(image, ax=left, label=MEASURE_TITLES[grid.measure])
    _note_cells(left, grid, lambda v: number(v, ".0f"))
    left.set_title(f"fastest row rung per shape: {MEASURE_TITLES[grid.measure]}")
    rungs = sorted({label for row in grid.labels for label in row if label})
    index = np.array([[rungs.index(label) if label else np.nan for label in row]
                      for row in grid.labels], dtype=float)
    colours = [matplotlib.colormaps["tab10"](i % 10) for i in range(len(rungs))]
    right.imshow(np.ma.masked_invalid(index), origin="lower", aspect="auto",
                 cmap=ListedColormap(colours), vmin=-0.5, vmax=len(rungs) - 0.5,
                 interpolation="nearest")
    right.legend(handles=[Patch(color=c, label=r) for r, c in zip(rungs, colours)],
                 loc="upper right", fontsize="small")
    right.set_title("which rung it is")
    for ax in (left, right):
        _axes_of(ax, grid)
    fig.suptitle(title)
    return _save(fig, path, fmt, HEATMAP_SIZE, f"the fastest row rung per shape "
                 f"({grid.measure})", cells=grid.cells)


def _auto_figure(grid: Grid, path: Path, fmt: str, title: str) -> ShapeFigure:
    """row_auto over the fastest library per shape, on a log scale centred on 1."""
    from matplotlib.colors import LogNorm

    fig = _figure(SINGLE_SIZE)
    ax = fig.subplots()
    finite = grid.values[np.isfinite(grid.values)]
    reach = max(2.0, float(np.max(np.maximum(finite, 1 / finite))))
    image = ax.imshow(np.ma.masked_invalid(grid.values), origin="lower", aspect="auto",
                      cmap="RdBu_r", norm=LogNorm(vmin=1 / reach, vmax=reach))
    bar = fig.colorbar(image, ax=ax, label="below 1: row_auto faster")
    ticks = [1 / reach, reach ** -0.5, 1.0, reach ** 0.5, reach]
    bar.set_ticks(ticks, labels=[number(t, ".2f") for t in ticks])
    bar.minorticks_off()
    _note_cells(ax, grid, lambda v: number(v, ".2f"))
    libraries = sorted({label for row in grid.labels for label in row if label})
    ax.set_title(f"{MEASURE_TITLES['ratio']} ({', '.join(libraries)})")
    _axes_of(ax, grid)
    fig.suptitle(title)
    return _save(fig, path, fmt, SINGLE_SIZE, "row_auto against the fastest library per "
                 "shape", cells=grid.cells)


def _lines_figure(lines: list[Line], total: int, path: Path, fmt: str, title: str,
                  measure: str) -> ShapeFigure:
    """Left: the measure per rung across COLS; right: the median time."""
    fig = _figure(LINES_SIZE)
    left, right = fig.subplots(1, 2)
    styles = series_styles([(line.rung, "") for line in lines])
    for line, style in zip(lines, styles):
        width = 2.5 if line.kind == AUTO else 1.5
        dash = {"linestyle": "--"} if line.kind == LIBRARY else {}
        label = line.rung + (" (library)" if line.kind == LIBRARY else "")
        left.plot(line.cols, line.values, markersize=4, linewidth=width,
                  label=label, **{**style, **dash})
        right.plot(line.cols, line.medians, markersize=4, linewidth=width, **{**style, **dash})
    if measure == "pct_read":
        left.axhline(100, color="0.35", linestyle=":", linewidth=1.0)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("COLS")
        ax.grid(True, alpha=0.3)
    right.set_yscale("log")
    left.set_ylabel(MEASURE_TITLES[measure])
    right.set_ylabel("median time (us)")
    left.set_title(f"each rung across COLS, ROWS x COLS = {format_size(total)}")
    right.set_title("latency")
    fig.suptitle(title)
    fig.legend(loc="outside right upper", fontsize="small", frameon=False)
    return _save(fig, path, fmt, LINES_SIZE, f"every rung across COLS at "
                 f"{format_size(total)} elements", lines=len(lines))


def plot_lines(frame: pd.DataFrame, out: Path, source: Path | None, y: str) -> list[str]:
    """`plot`: a file of row cases as a shape sweep's figures, any other as the one
    figure of plots.plot_results; the line said of each file written."""
    if is_shape_file(frame):
        lines = [shape_figure_line(figure)
                 for figure in plot_shape_sweep(frame, out, str(source) if source else None)]
        cases = row_cases(frame)
        dtypes = sorted(set(cases["dtype"]))
        for dtype in dtypes:
            standing = auto_standing(cases[cases["dtype"] == dtype])
            if standing is not None:
                lines.append(auto_standing_line(standing, dtype if len(dtypes) > 1 else ""))
        return lines
    existed = out.exists()
    return [figure_line(plot_results(frame, out, source=source, y=y), existed)]


def auto_standing_line(standing: AutoStanding, dtype: str = "") -> str:
    """What `plot` says of row_auto against the libraries over a sweep (auto_standing)."""
    of = f" ({dtype})" if dtype else ""
    said = (f"row_auto{of}: within one {number(1000 * TIMER_TICK_US, '.0f')} ns tick of "
            f"the fastest library, or faster, at {standing.level} of {standing.shapes} "
            "shape(s)")
    if standing.worst is not None:
        rows, cols, pct, library = standing.worst
        said += f"; at worst {number(pct, '.1f')}% slower ({rows}x{cols}, {library})"
    if standing.large:
        said += (f"; at {number(READ_BAR_PCT, '.0f')}% of the same-shape read or more at "
                 f"{standing.at_read_bar} of {standing.large} shape(s) of "
                 f"{format_size(READ_BAR_TOTAL)} elements or more")
    return said


def shape_figure_line(figure: ShapeFigure) -> str:
    """What `plot` says of each figure it wrote."""
    verb = "replaced" if figure.existed else "wrote"
    what = (f"{figure.cells} shape(s)" if figure.cells else f"{figure.lines} line(s)")
    return (f"{verb} {figure.path} ({figure.width_px}x{figure.height_px} px, {what}): "
            f"{figure.shows}")
