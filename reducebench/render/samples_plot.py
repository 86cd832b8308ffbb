"""One figure of raw samples: per case, the samples in time order (drift, throttled
stretches, warm-up) and their histogram (bimodality, tails).

matplotlib is optional, imported inside `plot_samples`; only the Agg canvas is used, as
in reducebench/plot.py. PNG or SVG by the output's suffix."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reducebench.core.errors import ReducebenchError
from reducebench.render.figure_files import DPI, FORMATS

MAX_CASES = 8            # one row of two panels per case; more would not be readable
ROW_INCHES = 3.0
WIDTH_INCHES = 12.0


@dataclass(frozen=True)
class SamplesPlot:
    path: Path
    cases: int
    samples: int


def require_matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ReducebenchError("show-samples draws with matplotlib, which is not installed: "
                               "pip install 'reducebench[plot]' (or pip install "
                               "matplotlib), or use --no-plot for the summary only") from None
    return Figure, FigureCanvasAgg


def plot_samples(cases: list[tuple[str, object]], out: str | Path, title: str = "") -> SamplesPlot:
    """Write the figure for `cases`: (label, rows of one case from read_samples, all its
    phases) per case, at most MAX_CASES. Discarded samples are drawn as grey crosses in
    the time panel and left out of the histogram; phases get their own colours."""
    Figure, FigureCanvasAgg = require_matplotlib()
    out = Path(out)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise ValueError(f"{out}: the figure is PNG or SVG")
    if not 0 < len(cases) <= MAX_CASES:
        raise ValueError(f"{len(cases)} cases to plot; 1 to {MAX_CASES} fit a figure")
    fig = Figure(figsize=(WIDTH_INCHES, ROW_INCHES * len(cases) + 0.6), dpi=DPI)
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(cases), 2, squeeze=False,
                        gridspec_kw={"width_ratios": [2.2, 1]})
    total = 0
    for (label, rows), (time_ax, hist_ax) in zip(cases, axes):
        rows = rows.sort_values("index", kind="stable")
        total += len(rows)
        _draw_case(label, rows, time_ax, hist_ax)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI, format=fmt)
    return SamplesPlot(path=out, cases=len(cases), samples=total)


def _draw_case(label: str, rows, time_ax, hist_ax) -> None:
    kept = rows[rows["kept"]]
    dropped = rows[~rows["kept"]]
    phases = sorted(set(rows["phase"]))
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]
    for i, phase in enumerate(phases):
        part = kept[kept["phase"] == phase]
        name = f"phase {phase}" if len(phases) > 1 else "kept"
        colour = colours[i % len(colours)]
        time_ax.plot(part["index"], part["time_us"], ".", markersize=3, color=colour,
                     label=name)
        if len(part):
            time_ax.axhline(float(np.median(part["time_us"])), color=colour, linewidth=1,
                            linestyle="--")
            hist_ax.hist(part["time_us"], bins=min(60, max(5, len(part) // 5)),
                         color=colour, alpha=0.6, label=name)
    if len(dropped):
        time_ax.plot(dropped["index"], dropped["time_us"], "x", markersize=4, color="0.5",
                     label=f"discarded ({len(dropped)})")
    clocks = rows["sm_clock_mhz"].to_numpy(dtype=float)
    if np.isfinite(clocks).any():
        clock_ax = time_ax.twinx()
        clock_ax.plot(rows["index"], clocks, color="tab:red", linewidth=0.8, alpha=0.5)
        clock_ax.set_ylabel("SM clock (MHz)", color="tab:red", fontsize="small")
    time_ax.set_title(f"{label}: samples in time order", fontsize="medium")
    time_ax.set_xlabel("sample index")
    time_ax.set_ylabel("time (us)")
    time_ax.grid(True, alpha=0.3)
    time_ax.legend(fontsize="small", loc="upper left")
    hist_ax.set_title("histogram (kept samples)", fontsize="medium")
    hist_ax.set_xlabel("time (us)")
    hist_ax.set_ylabel("samples")
    hist_ax.grid(True, alpha=0.3)
