"""Figures of raw samples. Up to MAX_CASES cases: per case, the samples in time order
(drift, throttled stretches, warm-up) and their histogram (bimodality, tails). More
cases (a whole ladder): an overview, one small panel per case of its samples in time
order, PER_OVERVIEW cases to a figure.

matplotlib is optional, imported inside the plotting functions; only the Agg canvas is
used, as in render/plots.py. PNG or SVG by the output's suffix."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reducebench.core.errors import ReducebenchError
from reducebench.render.figure_files import DPI, FORMATS

MAX_CASES = 8            # one row of two panels per case; more would not be readable
ROW_INCHES = 3.0
WIDTH_INCHES = 12.0
# The overview: small panels, OVERVIEW_COLUMNS to a row, at most PER_OVERVIEW (a default
# run's 25 cases, and a few more) to a figure.
OVERVIEW_COLUMNS = 5
PER_OVERVIEW = 30
PANEL_INCHES = (WIDTH_INCHES / OVERVIEW_COLUMNS, 2.3)
LABEL_CHARS = 28         # a panel title's line: labels wrap at spaces, never cut
LINE_INCHES = 0.13       # a line of x-small text


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
    out, fmt = _figure_file(out)
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


def _figure_file(out: str | Path) -> tuple[Path, str]:
    """The output and the format its suffix asks for (png or svg)."""
    out = Path(out)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise ValueError(f"{out}: the figure is PNG or SVG")
    return out, fmt


PHASE_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]


def _draw_time_order(rows, ax, small: bool, labelled: bool) -> list[tuple[str, str, object]]:
    """A case's samples in time order on `ax`: the kept ones by phase, each phase's
    median dashed, the discarded ones as grey crosses; `small` for an overview panel,
    `labelled` for a legend. Returns each phase's (name, colour, kept rows)."""
    kept = rows[rows["kept"]]
    dropped = rows[~rows["kept"]]
    phases = sorted(set(rows["phase"]))
    drawn = []
    for i, phase in enumerate(phases):
        part = kept[kept["phase"] == phase]
        name = f"phase {phase}" if len(phases) > 1 else "kept"
        colour = PHASE_COLOURS[i % len(PHASE_COLOURS)]
        ax.plot(part["index"], part["time_us"], ".", markersize=2 if small else 3,
                color=colour, **({"label": name} if labelled else {}))
        if len(part):
            ax.axhline(float(np.median(part["time_us"])), color=colour,
                       linewidth=0.8 if small else 1, linestyle="--")
        drawn.append((name, colour, part))
    if len(dropped):
        ax.plot(dropped["index"], dropped["time_us"], "x", markersize=3 if small else 4,
                color="0.5", **({"label": f"discarded ({len(dropped)})"} if labelled else {}))
    return drawn


def _draw_case(label: str, rows, time_ax, hist_ax) -> None:
    for name, colour, part in _draw_time_order(rows, time_ax, small=False, labelled=True):
        if len(part):
            hist_ax.hist(part["time_us"], bins=min(60, max(5, len(part) // 5)),
                         color=colour, alpha=0.6, label=name)
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


def pages(count: int) -> int:
    """How many figures `count` cases take: one up to PER_OVERVIEW, then more."""
    return 1 if count <= MAX_CASES else math.ceil(count / PER_OVERVIEW)


def plot_overview(cases: list[tuple[str, object]], out: str | Path, title: str = ""
                  ) -> SamplesPlot:
    """One figure of up to PER_OVERVIEW cases: (label, rows of one case from
    read_samples) per case, each a small panel of its samples in time order (kept ones
    by phase, discarded ones as grey crosses, the median dashed); labels wrap, whole."""
    Figure, FigureCanvasAgg = require_matplotlib()
    out, fmt = _figure_file(out)
    if not 0 < len(cases) <= PER_OVERVIEW:
        raise ValueError(f"{len(cases)} cases; 1 to {PER_OVERVIEW} fit an overview")
    rows = math.ceil(len(cases) / OVERVIEW_COLUMNS)
    height = PANEL_INCHES[1] * rows + 1.2
    fig = Figure(figsize=(WIDTH_INCHES, height), dpi=DPI)
    FigureCanvasAgg(fig)
    labels = [wrap_label(label) for label, _ in cases]
    lines = max(label.count("\n") + 1 for label in labels)
    # Fixed margins (tight_layout measures every tick label: seconds for 30 panels);
    # the gap between rows holds the tallest title, LINE_INCHES a line.
    fig.subplots_adjust(left=0.06, right=0.99, bottom=0.7 / height,
                        top=1 - (0.75 + LINE_INCHES * lines) / height,
                        wspace=0.3,
                        hspace=(0.3 + LINE_INCHES * lines) / (PANEL_INCHES[1] - 0.6))
    axes = fig.subplots(rows, OVERVIEW_COLUMNS, squeeze=False).ravel()
    total = 0
    for (label, (_, case_rows)), ax in zip(zip(labels, cases), axes):
        case_rows = case_rows.sort_values("index", kind="stable")
        total += len(case_rows)
        _draw_overview_case(label, case_rows, ax)
    for ax in axes[len(cases):]:
        ax.set_axis_off()
    fig.suptitle((f"{title}\n" if title else "") + "each case's samples in time order "
                 "(median dashed, discarded as grey crosses)", fontsize="medium")
    fig.supxlabel("sample index", fontsize="small")
    fig.supylabel("time (us)", fontsize="small")
    fig.savefig(out, dpi=DPI, format=fmt)
    return SamplesPlot(path=out, cases=len(cases), samples=total)


def wrap_label(label: str, width: int = LABEL_CHARS) -> str:
    """A case label on lines of about `width` characters, broken at spaces only: every
    word whole (a word longer than `width` gets a line of its own)."""
    return "\n".join(textwrap.wrap(label, width=width, break_long_words=False,
                                   break_on_hyphens=False))


def _draw_overview_case(label: str, rows, ax) -> None:
    _draw_time_order(rows, ax, small=True, labelled=False)
    ax.set_title(label, fontsize="x-small")
    ax.tick_params(labelsize="x-small")
    ax.grid(True, alpha=0.3)


def draw_pages(path: Path, cases, out: Path | None) -> list[str]:
    """Up to MAX_CASES cases: one figure with each case's samples and histogram; more
    (a whole ladder): overview figures, PER_OVERVIEW cases each. Returns the lines that
    say what was written."""
    from reducebench.analysis.samples_summary import case_label
    from reducebench.render.figure_files import default_figure, figure_names

    said = []
    count = pages(len(cases))
    targets = figure_names(out, count) if out is not None else default_figure(path, count)
    labelled = [(case_label(k), rows) for k, rows in cases]
    for page, target in enumerate(targets):
        existed = target.exists()
        if len(cases) <= MAX_CASES:
            info = plot_samples(labelled, target, title=path.name)
        else:
            part = labelled[page * PER_OVERVIEW:
                            (page + 1) * PER_OVERVIEW]
            info = plot_overview(part, target, title=path.name)
        said.append(f"{'replaced' if existed else 'wrote'} {info.path} ({info.cases} "
                    f"case(s), {info.samples} sample(s))")
    if len(cases) > MAX_CASES:
        said.append(f"{len(cases)} cases: the samples in time order, one panel each; up "
                    f"to {MAX_CASES} cases (--case) also get their histograms")
    return said
