"""A results CSV as a figure: bandwidth and latency against n, one line per rung, or one
bar per rung when the file holds a single size.

matplotlib is optional (pip install 'reducebench[plot]'); it is imported inside
`plot_results`, and only the Agg canvas is used (no pyplot, no window, no global backend
change). The figure size is fixed, so a PNG is always WIDTH_PX x HEIGHT_PX; the format
follows the output's suffix (render.figure_files)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from reducebench.analysis.compare import SUSPECT_STATUS, normalise
from reducebench.core.errors import ReducebenchError, ResultsFileError
from reducebench.ladder.registry import LADDER
from reducebench.multigpu.loop import FLOOR, SHARDED
from reducebench.render.figure_files import DPI, output_format
from reducebench.results.naming import unused_names
from reducebench.results.schema import OK, SKIPPED
from reducebench.core.numbers import number

FIGSIZE = (12.0, 5.0)  # inches
WIDTH_PX, HEIGHT_PX = int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI)

_ORDER = {name: i for i, name in enumerate(LADDER)}
# A series' look: colour from a 10-colour cycle, marker from a 7-marker cycle (so the
# pair repeats only after 70 rungs), and line style from the dtype, or, in a file of one
# dtype, from which group of ten the rung falls in: 21 rungs are 21 distinct lines even
# where two colours are hard to tell apart. Dashed ("--") is kept for the peak.
COLOURS = "tab10"
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINE_STYLES = ("-", ":", "-.", (0, (5, 1, 1, 1)), (0, (3, 1, 1, 1, 1, 1)))
PEAK_STYLE = "--"


@dataclass(frozen=True)
class PlotInfo:
    path: Path
    lines: int       # one per rung (and dtype, block, params where the file has several)
    points: int      # verified rows plotted
    skipped: int     # rows left out: not verified, or without a positive time
    floors: int = 0  # multi-GPU timing-floor rows left out (n = 1: not a reduction's time)
    kind: str = "lines"   # lines, or bars for a file of one size
    format: str = "png"
    width_px: int = WIDTH_PX
    height_px: int = HEIGHT_PX
    suspect: int = 0  # of the skipped: a right sum, faster than memory or floor allows
    not_run: int = 0  # of the skipped: cases the run skipped (status "skipped")


def default_output(csv_path: Path, suffix: str = ".png", folder: Path | None = None) -> Path:
    """The CSV's name with the plot's suffix, in `folder` (default: the current folder,
    never the CSV's own: a results folder holds only what runs wrote, and a clone's
    results/ is the repository's); never an existing file: run.png, then run_2.png, ..."""
    folder = Path(".") if folder is None else Path(folder)
    stem = Path(csv_path).stem
    return unused_names(lambda tail: [folder / f"{stem}{tail}{suffix}"], first=2)[0]


def _series(frame: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(rung, label, rows sorted by n) per line, in ladder order then dtype. Files of
    several timing methods (--timing single and graph) side by side: one line each."""
    dtypes = sorted(set(frame["dtype"]))
    frame = frame.assign(timing=_timings(frame))
    # A rung that dispatches (auto) runs another variant at each size: one line, not one
    # per variant; its variants are in the results' `variant` column.
    if "variant" in frame:
        chosen = frame["variant"].astype(object).fillna("").astype(str) != ""
        frame.loc[chosen, "block"] = 0
        frame.loc[chosen, "params"] = ""
    gpus = _gpu_counts(frame)
    if gpus is not None:  # one line per GPU count k; its params only say gpus=k
        frame = frame.assign(gpus=gpus.fillna(1).astype(int), params="", block=0)
        if "in_place" in frame and frame["in_place"].astype(str).nunique() > 1:
            # NCCL's collectives, in place and out of place: one line each
            place = frame["in_place"].astype(str).str.lower() == "true"
            frame["params"] = place.map({True: "in place", False: "out of place"})
    else:
        frame = frame.assign(gpus=0)
    timings = sorted(set(frame["timing"]))
    variants = frame.groupby("rung")[["block", "params"]].apply(
        lambda g: len(g.drop_duplicates()))
    out = []
    for (rung, dtype, block, params, timing, k), rows in frame.groupby(
            ["rung", "dtype", "block", "params", "timing", "gpus"], sort=False):
        parts = [rung]
        if k:
            parts.append(f"on {k} GPU" + ("s" if k > 1 else ""))
        if len(dtypes) > 1:
            parts.append(dtype)
        if variants[rung] > 1:
            if block:
                parts.append(f"block {block}")
            if params:
                parts.append(params)
        if len(timings) > 1:
            parts.append(f"({timing})")
        out.append((rung, " ".join(parts), rows.sort_values("n")))
    out.sort(key=lambda s: (_ORDER.get(s[0], len(_ORDER)), s[0],
                            int(s[2]["gpus"].iloc[0]), s[1]))
    return out


def series_styles(keys: list[tuple[str, str]]) -> list[dict]:
    """matplotlib styles for series keyed (variant, dtype), in order: no two alike in
    colour, marker and line style together. A variant is a rung (with its block and
    params where those vary); the same variant in two dtypes shares colour and marker
    and differs in line style."""
    import matplotlib

    colours = matplotlib.colormaps[COLOURS]
    variants = list(dict.fromkeys(variant for variant, _ in keys))
    dtypes = list(dict.fromkeys(dtype for _, dtype in keys))
    styles = []
    for variant, dtype in keys:
        i = variants.index(variant)
        line = dtypes.index(dtype) if len(dtypes) > 1 else i // colours.N
        styles.append(dict(color=colours(i % colours.N), marker=MARKERS[i % len(MARKERS)],
                           linestyle=LINE_STYLES[line % len(LINE_STYLES)]))
    return styles


def _title(frame: pd.DataFrame, source: str | None) -> str:
    parts = []
    for column, unit in (("gpu", ""), ("mode", " L2"), ("dtype", "")):
        if column in frame:
            values = sorted({str(v) for v in frame[column].dropna() if str(v).strip()})
            if values:
                parts.append(" / ".join(values) + unit)
    if source:
        parts.append(Path(source).name)
    return " · ".join(parts) or "reducebench"


def plot_results(frame: pd.DataFrame, out: str | Path, source: str | Path | None = None,
                 y: str = "gbps") -> PlotInfo:
    """Write a two-panel figure of a results DataFrame to `out` (PNG or SVG, by suffix):
    GB/s against n (log2 x axis) with the theoretical peak as a dashed line, and median
    microseconds against n (log-log); for a file of one size, the same two figures as
    bars, one per rung. Only verified rows (status ok) with a positive median are drawn:
    a suspect row (an impossible figure) never sets a line, a bar or the axes' range."""
    fmt = output_format(out)
    try:
        import matplotlib  # noqa: F401  (series_styles reads its colour maps)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ReducebenchError("plot needs matplotlib, which is not installed: "
                               "pip install 'reducebench[plot]' (or pip install "
                               "matplotlib)") from None

    name = str(source) if source is not None else "the results"
    df = normalise(frame)
    df["gbps"] = pd.to_numeric(df["gbps"], errors="coerce") if "gbps" in df else math.nan
    # status "ok" only: a "suspect" time is impossible (docs/verification.md), never drawn
    floor = (df["case"].astype(str) == FLOOR) if "case" in df else df["n"] < 0
    usable = (df["status"] == OK) & (df["median_us"] > 0) & (df["n"] > 0) & ~floor
    if y == "pct_read":  # only rows measured with the same-size read
        df["pct_read"] = pd.to_numeric(df.get("pct_read"), errors="coerce")
        usable &= df["pct_read"] > 0
    rows = df[usable].copy()
    if not len(rows) and y == "pct_read":
        raise ResultsFileError(f"{name}: no verified row with a pct_read to plot (files "
                               "written before the same-size read have none)")
    if not len(rows):
        raise ResultsFileError(f"{name}: no verified row with a time to plot "
                               f"({len(df)} row(s), none with status ok)")
    # GB/s from the record where present, else from bytes_read / time.
    missing = ~(rows["gbps"] > 0)
    if missing.any() and "bytes_read" in rows:
        nbytes = pd.to_numeric(rows["bytes_read"], errors="coerce")
        rows.loc[missing, "gbps"] = nbytes[missing] / (rows.loc[missing, "median_us"] * 1e3)

    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    FigureCanvasAgg(fig)
    bw_ax, lat_ax = fig.subplots(1, 2)
    series = _series(rows)
    peaks = []
    if "peak_gbps" in df:
        peaks = sorted({float(p) for p in pd.to_numeric(df["peak_gbps"], errors="coerce")
                        if p == p and p > 0})
    single_size = rows["n"].nunique() == 1
    if single_size:
        _bars(fig, bw_ax, lat_ax, series, peaks, int(rows["n"].iloc[0]))
    elif y == "pct_read":
        _lines(fig, bw_ax, lat_ax, series, [], rows, y="pct_read")
    else:
        _lines(fig, bw_ax, lat_ax, series, peaks, rows)
    fig.suptitle(_title(df, str(source) if source is not None else None))

    out = Path(out)
    fig.savefig(out, dpi=DPI, format=fmt)
    floors = int(floor.sum())
    return PlotInfo(path=out, lines=len(series), points=len(rows),
                    skipped=len(df) - len(rows) - floors, floors=floors,
                    kind="bars" if single_size else "lines", format=fmt,
                    suspect=int(((df["status"] == SUSPECT_STATUS) & ~floor).sum()),
                    not_run=int(((df["status"] == SKIPPED) & ~floor).sum()))


def _gpu_counts(frame: pd.DataFrame) -> pd.Series | None:
    """Each row's GPU count in a `multigpu` file (its sums span k GPUs), else None."""
    if "gpus" not in frame:
        return None
    counts = pd.to_numeric(frame["gpus"], errors="coerce")
    return counts if counts.notna().any() else None


def _timings(frame: pd.DataFrame) -> pd.Series:
    """Each row's timing method; rows of files that predate it were timed "single"."""
    if "timing" not in frame:
        return pd.Series("single", index=frame.index)
    return frame["timing"].astype(object).where(frame["timing"].notna(), "single").astype(str)


def _variant(rung: str, label: str, s: pd.DataFrame) -> str:
    """The series' label without its dtype and timing: what shares a colour."""
    drop = {str(s["dtype"].iloc[0]), f"({s['timing'].iloc[0]})"}
    return " ".join(part for part in label.split(" ") if part not in drop)


def _style_group(s: pd.DataFrame) -> str:
    """What a line style tells apart within one colour: the dtype and timing method."""
    return f"{s['dtype'].iloc[0]} {s['timing'].iloc[0]}"


def _lines(fig, bw_ax, lat_ax, series, peaks: list[float], rows: pd.DataFrame,
           y: str = "gbps") -> None:
    """Lines against n. The layout engine places the legend outside the axes (right, or
    below for a multi-GPU file) and keeps every label inside the fixed-size figure."""
    styles = series_styles([(_variant(*s), _style_group(s[2])) for s in series])
    handles, labels = [], []
    counts = sorted({int(s["gpus"].iloc[0]) for _, _, s in series})
    for index, ((rung, label, s), style) in enumerate(zip(series, styles)):
        if counts != [0]:  # a multi-GPU file: each GPU count its own marker
            style = {**style, "marker": MARKERS[counts.index(int(s["gpus"].iloc[0]))
                                                % len(MARKERS)]}
            styles[index] = style
        (line,) = bw_ax.plot(s["n"], s[y], markersize=4, linewidth=1.5, **style)
        lat_ax.plot(s["n"], s["median_us"], markersize=4, linewidth=1.5, **style)
        handles.append(line)
        labels.append(label)
    if y == "pct_read":
        line = bw_ax.axhline(100, color="0.35", linestyle=PEAK_STYLE, linewidth=1.2)
        handles.append(line)
        labels.append("the same-size read (100%)")
        bottom = float(rows["pct_read"].min())
        bw_ax.set_ylim(max(0.0, min(bottom, 99.0) - 3),
                       max(101.0, float(rows["pct_read"].max()) + 1))
    else:
        tops = _peak_lines(bw_ax, series, styles, peaks, counts, handles, labels)
        top = max([float(rows["gbps"].max()), *tops])
        bw_ax.set_ylim(0, top * 1.08 if top > 0 else 1)
    for ax in (bw_ax, lat_ax):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n (elements)")
        ax.grid(True, which="major", alpha=0.3)
    lat_ax.set_yscale("log")
    if y == "pct_read":
        bw_ax.set_ylabel("% of the same-size read (read time / median time)")
        bw_ax.set_title("pct_read (verified rows)")
    else:
        bw_ax.set_ylabel("GB/s (input bytes / median time)")
        bw_ax.set_title("bandwidth (verified rows)")
    lat_ax.set_ylabel("median time (us)")
    lat_ax.set_title("latency")
    fig.set_layout_engine("constrained")
    if counts != [0]:
        fig.legend(handles, labels, loc="outside lower center", fontsize="small",
                   ncols=min(len(labels), 3), frameon=False)
    else:
        fig.legend(handles, labels, loc="outside right upper", fontsize="small",
                   ncols=1 if len(labels) <= 20 else 2, frameon=False)


def _peak_lines(bw_ax, series, styles, peaks: list[float], counts: list[int], handles,
                labels) -> list[float]:
    """The theoretical peak as a dashed line: one GPU's for a one-GPU file; k times it,
    in k's colour, for each GPU count k of a multi-GPU file (an aggregate over k GPUs is
    never drawn against one GPU's peak). Returns the heights drawn."""
    drawn = []
    if counts == [0]:
        for peak in peaks:
            handles.append(bw_ax.axhline(peak, color="0.35", linestyle=PEAK_STYLE,
                                         linewidth=1.2))
            labels.append(f"theoretical peak {number(peak, ',.0f', ' GB/s')}")
            drawn.append(peak)
        return drawn
    if not any(str(rung).startswith(SHARDED) for rung, _, _ in series):
        return drawn  # collectives move data between GPUs: no DRAM peak applies
    colour = {int(s["gpus"].iloc[0]): style["color"]
              for (_, _, s), style in zip(series, styles)}
    for peak in peaks:
        for k in counts:
            handles.append(bw_ax.axhline(k * peak, color=colour[k], linestyle=PEAK_STYLE,
                                         linewidth=1.0, alpha=0.8))
            labels.append(f"{k} x theoretical peak {number(k * peak, ',.0f', ' GB/s')}" if k > 1
                          else f"theoretical peak {number(peak, ',.0f', ' GB/s')} (1 GPU)")
            drawn.append(k * peak)
    return drawn


def _bars(fig, bw_ax, lat_ax, series, peaks: list[float], n: int) -> None:
    """One size: a horizontal bar per series (a line through one point is a dot), the
    labels on the y axis, the fastest at a glance."""
    from reducebench.core.sizes import format_size

    styles = series_styles([(_variant(*s), _style_group(s[2])) for s in series])
    labels = [label for _, label, _ in series]
    positions = list(range(len(series)))[::-1]   # the ladder reads top to bottom
    gbps = [float(s["gbps"].iloc[0]) for _, _, s in series]
    times = [float(s["median_us"].iloc[0]) for _, _, s in series]
    colours = [style["color"] for style in styles]
    bw_ax.barh(positions, gbps, color=colours)
    lat_ax.barh(positions, times, color=colours)
    for peak in peaks:   # labelled along the line, where no bar is
        bw_ax.axvline(peak, color="0.35", linestyle=PEAK_STYLE, linewidth=1.2)
        bw_ax.text(peak, 0.5, f"theoretical peak {number(peak, ',.0f', ' GB/s')} ", rotation=90,
                   ha="right", va="center", fontsize="small", color="0.35",
                   transform=bw_ax.get_xaxis_transform())
    bw_ax.set_yticks(positions, labels, fontsize="small")
    lat_ax.set_yticks(positions, [""] * len(positions))
    bw_ax.set_xlabel("GB/s (input bytes / median time)")
    lat_ax.set_xlabel("median time (us)")
    lat_ax.set_xscale("log")
    bw_ax.set_title(f"bandwidth at n = {format_size(n)} (verified rows)")
    lat_ax.set_title(f"latency at n = {format_size(n)}")
    for ax in (bw_ax, lat_ax):
        ax.grid(True, axis="x", which="major", alpha=0.3)
    fig.subplots_adjust(left=0.22, right=0.98, bottom=0.11, top=0.86, wspace=0.08)


def figure_line(info, existed: bool) -> str:
    """What `plot` says it wrote: the file, its size and shape, and the rows left out."""
    verb = "replaced" if existed else "wrote"
    size = (f"{info.width_px}x{info.height_px} px" if info.format == "png"
            else f"{info.format.upper()}, {info.width_px}x{info.height_px} px at 100 dpi")
    shape = (f"{info.lines} bar(s) at one size" if info.kind == "bars"
             else f"{info.lines} line(s)")
    unverified = info.skipped - info.suspect - info.not_run
    note = f"; {unverified} unverified row(s) left out" if unverified else ""
    if info.not_run:
        note += f"; {info.not_run} skipped row(s) left out (cases the run did not time)"
    if info.suspect:
        note += (f"; {info.suspect} suspect row(s) left out (a right sum with an impossible "
                 "time: faster than the memory or the timing floor allows)")
    if info.floors:
        note += f"; {info.floors} timing-floor row(s) left out (n = 1, in the CSV)"
    return f"{verb} {info.path} ({size}, {shape}, {info.points} point(s){note})"
