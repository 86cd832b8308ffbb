"""A results CSV as a PNG: bandwidth and latency against n, one line per rung.

matplotlib is optional (pip install 'reducebench[plot]'); it is imported inside
`plot_results`, and only the Agg canvas is used (no pyplot, no window, no global backend
change). The figure size is fixed, so the PNG is always WIDTH_PX x HEIGHT_PX."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from reducebench.compare import normalise
from reducebench.errors import ReducebenchError, ResultsFileError
from reducebench.registry import LADDER

FIGSIZE = (12.0, 5.0)  # inches
DPI = 100
WIDTH_PX, HEIGHT_PX = int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI)

_ORDER = {name: i for i, name in enumerate(LADDER)}
_MARKERS = ("o", "s", "^", "D", "v", "P")
_DTYPE_STYLES = ("-", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 1)))


@dataclass(frozen=True)
class PlotInfo:
    path: Path
    lines: int       # one per rung (and dtype, block, params where the file has several)
    points: int      # verified rows plotted
    skipped: int     # rows left out: not verified, or without a positive time
    width_px: int = WIDTH_PX
    height_px: int = HEIGHT_PX


def default_output(csv_path: Path) -> Path:
    return Path(csv_path).with_suffix(".png")


def _series(frame: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(rung, label, rows sorted by n) per line, in ladder order then dtype."""
    dtypes = sorted(set(frame["dtype"]))
    variants = frame.groupby("rung")[["block", "params"]].apply(
        lambda g: len(g.drop_duplicates()))
    out = []
    for (rung, dtype, block, params), rows in frame.groupby(
            ["rung", "dtype", "block", "params"], sort=False):
        parts = [rung]
        if len(dtypes) > 1:
            parts.append(dtype)
        if variants[rung] > 1:
            if block:
                parts.append(f"block {block}")
            if params:
                parts.append(params)
        out.append((rung, " ".join(parts), rows.sort_values("n")))
    out.sort(key=lambda s: (_ORDER.get(s[0], len(_ORDER)), s[0], s[1]))
    return out


def _title(frame: pd.DataFrame, source: str | None) -> str:
    parts = []
    for column in ("gpu", "mode"):
        if column in frame:
            values = sorted({str(v) for v in frame[column].dropna() if str(v).strip()})
            if values:
                parts.append(" / ".join(values) + (" L2" if column == "mode" else ""))
    if source:
        parts.append(Path(source).name)
    return " · ".join(parts) or "reducebench"


def plot_results(frame: pd.DataFrame, out: str | Path, source: str | Path | None = None
                 ) -> PlotInfo:
    """Write a two-panel PNG of a results DataFrame to `out`: GB/s against n (log2 x axis)
    with the theoretical peak as a dashed line, and median microseconds against n
    (log-log). Only verified rows (status ok) with a positive median are drawn."""
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ReducebenchError("plot needs matplotlib, which is not installed: "
                               "pip install 'reducebench[plot]' (or pip install "
                               "matplotlib)") from None

    name = str(source) if source is not None else "the results"
    df = normalise(frame)
    if "gbps" in df:
        df["gbps"] = pd.to_numeric(df["gbps"], errors="coerce")
    else:
        df["gbps"] = math.nan
    usable = (df["status"] == "ok") & (df["median_us"] > 0) & (df["n"] > 0)
    rows = df[usable].copy()
    if not len(rows):
        raise ResultsFileError(f"{name}: no verified row with a time to plot "
                               f"({len(df)} row(s), none with status ok)")
    # GB/s from the record where present, else from bytes_read (or n x item size) / time.
    missing = ~(rows["gbps"] > 0)
    if missing.any() and "bytes_read" in rows:
        nbytes = pd.to_numeric(rows["bytes_read"], errors="coerce")
        rows.loc[missing, "gbps"] = nbytes[missing] / (rows.loc[missing, "median_us"] * 1e3)

    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    FigureCanvasAgg(fig)
    bw_ax, lat_ax = fig.subplots(1, 2)
    series = _series(rows)
    rungs = list(dict.fromkeys(s[0] for s in series))
    dtypes = sorted(set(rows["dtype"]))
    cmap = matplotlib.colormaps["tab10" if len(rungs) <= 10 else "tab20"]
    handles, labels = [], []
    for rung, label, s in series:
        colour = cmap(rungs.index(rung) % cmap.N)
        d = dtypes.index(s["dtype"].iloc[0])
        style = dict(color=colour, linestyle=_DTYPE_STYLES[d % len(_DTYPE_STYLES)],
                     marker=_MARKERS[d % len(_MARKERS)], markersize=4, linewidth=1.5)
        (line,) = bw_ax.plot(s["n"], s["gbps"], **style)
        lat_ax.plot(s["n"], s["median_us"], **style)
        handles.append(line)
        labels.append(label)

    peaks = []
    if "peak_gbps" in df:
        peaks = sorted({float(p) for p in pd.to_numeric(df["peak_gbps"], errors="coerce")
                        if p == p and p > 0})
    for peak in peaks:
        line = bw_ax.axhline(peak, color="0.35", linestyle="--", linewidth=1.2)
        handles.append(line)
        labels.append(f"theoretical peak {peak:,.0f} GB/s")
    top = max([float(rows["gbps"].max()), *peaks])
    bw_ax.set_ylim(0, top * 1.08 if top > 0 else 1)

    for ax in (bw_ax, lat_ax):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n (elements)")
        ax.grid(True, which="major", alpha=0.3)
    lat_ax.set_yscale("log")
    bw_ax.set_ylabel("GB/s (input bytes / median time)")
    bw_ax.set_title("bandwidth (verified rows)")
    lat_ax.set_ylabel("median time (us)")
    lat_ax.set_title("latency")
    fig.suptitle(_title(df, str(source) if source is not None else None))
    columns = 1 if len(labels) <= 20 else 2
    right = 0.80 if columns == 1 else 0.66
    fig.subplots_adjust(left=0.06, right=right, bottom=0.11, top=0.86, wspace=0.22)
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(right + 0.01, 0.5),
               fontsize="small", ncol=columns, frameon=False)

    out = Path(out)
    fig.savefig(out, dpi=DPI, format="png")
    return PlotInfo(path=out, lines=len(series), points=len(rows), skipped=len(df) - len(rows))
