"""The page's interactive charts, drawn with Plotly (its JavaScript is inlined once by the
page, so every chart works offline). Each chart is a Plotly figure turned into a <div>;
a series is a trace with a name, toggled from the legend, and hover shows its values.

One colour per rung across the whole page (rung_colours): the same rung has the same
colour in the table's swatch, the sweep, the samples and the comparison."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from reducebench.analysis.compare import TIMED_VERDICTS
from reducebench.core.sizes import format_size
from reducebench.ladder.registry import display_rank
from reducebench.render.html.cells import (as_float, extent, extent_key, extent_label,
                                           row_count, text)
from reducebench.render.html.run_files import RunFile
from reducebench.render.html.report_tables import case_label, sorted_rows
from reducebench.results.schema import OK
from reducebench.core.numbers import MISSING, number

PALETTE = tuple(qualitative.Dark24) + tuple(qualitative.Light24)
DASHES = ("solid", "dot", "dash", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross", "pentagon")
PEAK_COLOUR, CEILING_COLOUR = "#555555", "#2a7ab0"
TEMPLATE = "plotly_white"
CONFIG = {"displaylogo": False, "responsive": True,
          "toImageButtonOptions": {"format": "png", "scale": 2}}


def rung_colours(runs: list[RunFile]) -> dict[str, str]:
    """A colour per rung over every file of the page, in ladder order: the key that
    keeps a rung's colour the same in every chart and table."""
    rungs = {str(r) for run in runs for r in run.frame["rung"].dropna()}
    ordered = sorted(rungs, key=lambda r: (display_rank(r), r))
    return {rung: PALETTE[i % len(PALETTE)] for i, rung in enumerate(ordered)}


def figure_html(fig: go.Figure, div_id: str, height: int) -> str:
    """The figure as a <div> and its script, without Plotly's JavaScript (the page holds
    it once)."""
    fig.update_layout(template=TEMPLATE, height=height, margin=dict(l=60, r=20, t=50, b=50),
                      hoverlabel=dict(namelength=-1))
    return pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=div_id,
                       config=CONFIG, default_height=f"{height}px", default_width="100%")


def _log2_ticks(values) -> dict:
    """Tick marks at the powers of two the data spans, labelled 2^k."""
    values = [v for v in values if v > 0]
    if not values:
        return {}
    low, high = math.floor(math.log2(min(values))), math.ceil(math.log2(max(values)))
    step = max(1, math.ceil((high - low + 1) / 12))
    exponents = range(low, high + 1, step)
    return dict(tickvals=[2.0 ** e for e in exponents], ticktext=[f"2^{e}" for e in exponents])


# ---- the ladder: series, bars for one size, lines for a sweep ---------------------------

def verified_rows(run: RunFile) -> list[dict]:
    """Rows a chart can draw: verified, with a positive median."""
    return [r for r in sorted_rows(run.frame)
            if r["status"] == OK and as_float(r["median_us"]) > 0 and int(r["n"]) > 0]


def series(rows: list[dict]) -> list[tuple[str, str, list[dict]]]:
    """(rung, label, rows by n, then rows) per line: one per rung, dtype, block, params
    and timing. A rung that dispatches (auto) is one line whatever variant ran at each
    size."""
    def timing(r: dict) -> str:
        return text(r.get("timing")) or "single"

    def variant(r: dict) -> tuple:
        return ((0, "") if text(r.get("variant")) else (int(r["block"]), str(r["params"])))

    dtypes = {r["dtype"] for r in rows}
    timings = {timing(r) for r in rows}
    variants: dict[str, set] = {}
    for r in rows:
        variants.setdefault(r["rung"], set()).add(variant(r))
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["rung"], r["dtype"], variant(r), timing(r)), []).append(r)
    out = []
    for (rung, dtype, (block, params), mode), members in groups.items():
        parts = [rung]
        if len(dtypes) > 1:
            parts.append(dtype)
        if len(variants[rung]) > 1:
            parts += ([f"block {block}"] if block else []) + ([params] if params else [])
        if len(timings) > 1:
            parts.append(f"({mode})")
        out.append((rung, " ".join(parts), sorted(members, key=extent_key)))
    out.sort(key=lambda s: (display_rank(s[0]), s[0], s[1]))
    return out


HOVER = ("<b>%{fullData.name}</b><br>%{customdata[0]}<br>"
         "median %{customdata[1]:.2f} us (min %{customdata[2]:.2f})<br>"
         "%{customdata[3]:.0f} GB/s · %{customdata[4]:.1f}% of peak · "
         "%{customdata[5]:.1f}% of ceiling<extra></extra>")


def _custom(rows: list[dict]) -> list[list]:
    return [[extent_label(r), as_float(r["median_us"]), as_float(r.get("min_us")),
             as_float(r.get("gbps")), as_float(r.get("pct_peak")),
             as_float(r.get("pct_ceiling"))] for r in rows]


def _styles(lines: list[tuple[str, str, list[dict]]]) -> list[dict]:
    """Colour from the rung; dash from the dtype and timing; marker from the variant."""
    groups = list(dict.fromkeys((rows[0]["dtype"], text(rows[0].get("timing")))
                                for _, _, rows in lines))
    seen: dict[str, int] = {}
    out = []
    for rung, _, rows in lines:
        index = seen.get(rung, 0)
        seen[rung] = index + 1
        group = groups.index((rows[0]["dtype"], text(rows[0].get("timing"))))
        out.append(dict(dash=DASHES[group % len(DASHES)], symbol=SYMBOLS[index % len(SYMBOLS)]))
    return out


def _peaks(run: RunFile, column: str) -> list[float]:
    if column not in run.frame:
        return []
    values = pd.to_numeric(run.frame[column], errors="coerce")
    return sorted({float(v) for v in values if np.isfinite(v) and v > 0})


def ladder_chart(run: RunFile, colours: dict[str, str]) -> str | None:
    """Bandwidth and median time per series: bars for a file of one size (or shape),
    lines against n (log axes) for a sweep, against each shape in order of n for a
    --shape sweep; the theoretical peak and the read ceiling as lines."""
    rows = verified_rows(run)
    if not rows:
        return None
    lines = series(rows)
    if len({extent_key(r) for r in rows}) == 1:
        fig = _bars(run, lines, colours)
        height = max(420, 24 * len(lines) + 140)
        return figure_html(fig, f"chart-ladder-{run.index}", height)
    return figure_html(_lines(run, lines, colours), f"chart-sweep-{run.index}", 520)


def _bars(run: RunFile, lines, colours) -> go.Figure:
    at = extent_label(lines[0][2][0])
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=(f"bandwidth at {at} (verified rows)",
                                        f"median time at {at}"))
    for (rung, label, rows), style in zip(lines, _styles(lines)):
        common = dict(name=label, legendgroup=label, orientation="h", y=[label],
                      marker_color=colours.get(rung), customdata=_custom(rows),
                      hovertemplate=HOVER)
        fig.add_trace(go.Bar(x=[as_float(rows[0]["gbps"])], **common), row=1, col=1)
        fig.add_trace(go.Bar(x=[as_float(rows[0]["median_us"])], showlegend=False, **common),
                      row=1, col=2)
    _reference_lines(fig, run, vertical=True)
    top = max([as_float(rows[0]["gbps"]) for _, _, rows in lines] + _peaks(run, "peak_gbps"))
    fig.update_xaxes(range=[0, top * 1.3], row=1, col=1)  # room for the peak's label
    order = [label for _, label, _ in lines][::-1]  # the ladder reads top to bottom
    fig.update_yaxes(categoryorder="array", categoryarray=order, automargin=True)
    fig.update_xaxes(title_text="GB/s (input bytes / median time)", row=1, col=1)
    fig.update_xaxes(title_text="median time (us, log)", type="log", row=1, col=2)
    fig.update_layout(barmode="relative", showlegend=False)
    return fig


def _lines(run: RunFile, lines, colours) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08,
                        subplot_titles=("bandwidth (verified rows)", "median time"))
    every = [r for _, _, rows in lines for r in rows]
    shaped = any(row_count(r) > 1 for r in every)  # x: each shape, in order of n
    for (rung, label, rows), style in zip(lines, _styles(lines)):
        x = [extent(r) for r in rows] if shaped else [int(r["n"]) for r in rows]
        common = dict(name=label, legendgroup=label, mode="lines+markers",
                      x=x, customdata=_custom(rows),
                      hovertemplate=HOVER,
                      line=dict(color=colours.get(rung), dash=style["dash"], width=1.8),
                      marker=dict(symbol=style["symbol"], size=6))
        fig.add_trace(go.Scatter(y=[as_float(r["gbps"]) for r in rows], **common), row=1, col=1)
        fig.add_trace(go.Scatter(y=[as_float(r["median_us"]) for r in rows], showlegend=False,
                                 **common), row=1, col=2)
    _reference_lines(fig, run, vertical=False)
    top = max([as_float(r["gbps"]) for _, _, rows in lines for r in rows]
              + _peaks(run, "peak_gbps"))
    fig.update_yaxes(range=[0, top * 1.12], row=1, col=1)
    if shaped:
        order = [extent(r) for r in sorted(every, key=extent_key)]
        fig.update_xaxes(type="category", categoryorder="array",
                         categoryarray=list(dict.fromkeys(order)),
                         title_text="shape (rows x cols), by elements")
    else:
        ticks = _log2_ticks([int(r["n"]) for r in every])
        fig.update_xaxes(type="log", title_text="n (elements, log)", **ticks)
    fig.update_yaxes(title_text="GB/s (input bytes / median time)", row=1, col=1)
    fig.update_yaxes(title_text="median time (us, log)", type="log", row=1, col=2)
    fig.update_layout(legend=dict(title_text="click to hide or show", groupclick="togglegroup"))
    return fig


def _reference_lines(fig: go.Figure, run: RunFile, vertical: bool) -> None:
    """The theoretical peak (dashed) and the measured read ceiling (dotted) on the
    bandwidth panel."""
    for column, what, colour, dash in (("peak_gbps", "theoretical peak", PEAK_COLOUR, "dash"),
                                       ("ceiling_gbps", "read ceiling", CEILING_COLOUR, "dot")):
        for value in _peaks(run, column):
            # the peak's label right of (above) its line, the ceiling's left of (below) it:
            # the two lines are close, their labels must not overlap
            side = "top right" if column == "peak_gbps" else "bottom left"
            line = dict(line_dash=dash, line_color=colour, line_width=1.3,
                        annotation_text=f"{what} {number(value, ',.0f', ' GB/s')}",
                        annotation_position=side,
                        annotation_font_size=11, annotation_font_color=colour, row=1, col=1)
            if vertical:
                fig.add_vline(x=value, **line)
            else:
                fig.add_hline(y=value, **line)


# ---- samples ---------------------------------------------------------------------------

def samples_chart(run: RunFile, colours: dict[str, str]) -> tuple[str | None, int]:
    """One box per case: its kept samples of the fastest phase (the ones its median
    summarises), each as its distance from the case's median in percent, so that cases
    three decades apart share one axis; the box's name gives the median in us. A menu
    picks the size and dtype when the file has several. Returns (the chart, cases drawn)."""
    if run.samples is None:
        return None, 0
    boxes: dict[tuple, list] = {}
    for row in sorted_rows(run.frame):
        times = run.times_of(row)
        if len(times):
            boxes.setdefault((*extent_key(row), row["dtype"]), []).append((row, times))
    if not boxes:
        return None, 0
    groups = sorted(boxes, key=lambda g: (g[2], g[0], g[1]))
    shown = max(groups, key=lambda g: (g[0], g[2] == "float32", g[1]))  # the largest first
    fig = go.Figure()
    owners = []
    for group in groups:
        rungs = [row["rung"] for row, _ in boxes[group]]
        for row, times in boxes[group]:
            median = float(np.median(times))
            fig.add_trace(go.Box(
                y=100.0 * (times / median - 1.0), boxpoints="outliers",
                name=(f"{_box_name(row, rungs.count(row['rung']) > 1)} · "
                      f"{number(median, '.2f', ' us')}"),
                marker=dict(color=colours.get(row["rung"]), size=3), line=dict(width=1.2),
                visible=group == shown, meta=[case_label(row), median, len(times)]))
            owners.append(group)
    if len(groups) > 1:
        buttons = [dict(label=f"{extent_label({'n': n, 'rows': rows})} {dtype}",
                        method="update",
                        args=[{"visible": [owner == (n, rows, dtype) for owner in owners]}])
                   for n, rows, dtype in groups]
        fig.update_layout(updatemenus=[dict(buttons=buttons, active=groups.index(shown),
                                            x=0, xanchor="left", y=1.2, yanchor="top")])
    fig.update_yaxes(title_text="sample / the case's median - 1 (%)", zeroline=True,
                     zerolinecolor="#888", ticksuffix="%")
    fig.update_xaxes(tickangle=-35, automargin=True)
    fig.update_layout(showlegend=False, hovermode="closest",
                      title=dict(text="every case's samples around its median "
                                      "(kept samples, fastest phase)", x=0.5))
    return figure_html(fig, f"chart-samples-{run.index}", 560), len(owners)


def _box_name(row: dict, several: bool) -> str:
    """A box's name within its size and dtype: the rung, and where the rung has several
    cases there, its block size and parameters."""
    parts = [str(row["rung"])]
    if several:
        parts += [f"block={int(row['block'])}"] if int(row["block"]) else []
        parts += [p for p in str(row["params"]).split(";") if p]
    return " ".join(parts)


# ---- two runs --------------------------------------------------------------------------

def compare_chart(rows: pd.DataFrame, threshold_pct: float, colours: dict[str, str],
                  div_id: str) -> str | None:
    """Each timed case's change (new / base - 1, %) with its interval where the samples
    gave one, and the threshold band: left of it faster, right of it slower."""
    timed = rows[rows["verdict"].isin(TIMED_VERDICTS)]
    if not len(timed):
        return None
    fig = go.Figure()
    fig.add_vrect(x0=-threshold_pct, x1=threshold_pct, fillcolor="#999999", opacity=0.15,
                  line_width=0, annotation_text=f"±{number(threshold_pct, 'g', '%')} threshold",
                  annotation_position="top left")
    labels = []
    for rung, group in timed.groupby("rung", sort=False):
        records = group.to_dict("records")
        names = [case_label(r) for r in records]
        labels += names
        change = [as_float(r["change_pct"]) for r in records]
        low = [100 * (as_float(r["ci_low"]) - 1) for r in records]
        high = [100 * (as_float(r["ci_high"]) - 1) for r in records]
        fig.add_trace(go.Scatter(
            x=change, y=names, mode="markers", name=rung,
            marker=dict(color=colours.get(rung), size=10,
                        symbol=["triangle-left" if r["verdict"] == "FASTER" else
                                "triangle-right" if r["verdict"] == "SLOWER" else "circle"
                                for r in records]),
            error_x=dict(type="data", symmetric=False,
                         array=[h - c if not math.isnan(h) else None for h, c in zip(high, change)],
                         arrayminus=[c - l if not math.isnan(l) else None
                                     for l, c in zip(low, change)]),
            customdata=[[as_float(r["base_us"]), as_float(r["new_us"]), r["verdict"],
                         _p_text(r["p_value"]), _interval_text(r)] for r in records],
            hovertemplate=("<b>%{y}</b><br>base median %{customdata[0]:.2f} us → new "
                           "%{customdata[1]:.2f} us (%{x:+.1f}%)<br>%{customdata[2]}, "
                           "p = %{customdata[3]}, interval %{customdata[4]}<extra></extra>")))
    fig.update_yaxes(categoryorder="array", categoryarray=labels[::-1], automargin=True)
    fig.update_xaxes(title_text="change of the median, new / base - 1 (%): left faster, "
                                "right slower", zeroline=True, zerolinecolor="#444")
    return figure_html(fig, div_id, max(320, 26 * len(labels) + 140))


def _p_text(p) -> str:
    from reducebench.analysis.significance import format_p

    value = as_float(p)
    return format_p(value) if not math.isnan(value) else "n/a (ratio rule)"


def _interval_text(row: dict) -> str:
    low, high = as_float(row.get("ci_low")), as_float(row.get("ci_high"))
    if math.isnan(low) or math.isnan(high):
        return MISSING
    return f"[{number(100 * (low - 1), '+.1f', '%')}, {number(100 * (high - 1), '+.1f', '%')}]"


# ---- multi-GPU -------------------------------------------------------------------------

GPU_COLOURS = ("#7f7f7f", "#2ca02c", "#9467bd", "#d62728", "#1f77b4", "#ff7f0e", "#8c564b",
               "#e377c2")


def scaling_chart(run: RunFile) -> str | None:
    """The sharded sum: GB/s over all GPUs, and the speed-up over one GPU, against n, one
    line per GPU count."""
    frame = run.frame
    rows = frame[(frame["case"].map(text) == "sharded_sum") & (frame["status"] == OK)]
    if not len(rows):
        return None
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08,
                        subplot_titles=("sharded sum: GB/s over all GPUs",
                                        "speed-up over one GPU"))
    counts = sorted({int(g) for g in rows["gpus"]})
    for i, gpus in enumerate(counts):
        part = rows[rows["gpus"] == gpus].sort_values("n")
        custom = [[format_size(int(r["n"])), as_float(r["median_us"]), as_float(r["speedup"]),
                   as_float(r["efficiency"])] for r in part.to_dict("records")]
        common = dict(x=part["n"].astype(float).tolist(), name=f"{gpus} GPU(s)",
                      legendgroup=str(gpus), mode="lines+markers", customdata=custom,
                      line=dict(color=GPU_COLOURS[i % len(GPU_COLOURS)]),
                      hovertemplate=("<b>%{fullData.name}</b><br>n = %{customdata[0]}<br>"
                                     "median %{customdata[1]:.2f} us<br>speed-up "
                                     "%{customdata[2]:.2f}, efficiency %{customdata[3]:.2f}"
                                     "<extra></extra>"))
        fig.add_trace(go.Scatter(y=part["gbps"].astype(float).tolist(), **common), row=1, col=1)
        fig.add_trace(go.Scatter(y=part["speedup"].astype(float).tolist(), showlegend=False,
                                 **common), row=1, col=2)
    fig.update_xaxes(type="log", title_text="n (elements, log)",
                     **_log2_ticks(rows["n"].astype(float).tolist()))
    fig.update_yaxes(title_text="GB/s", row=1, col=1)
    fig.update_yaxes(title_text="speed-up", row=1, col=2)
    return figure_html(fig, f"chart-scaling-{run.index}", 480)


def nccl_chart(run: RunFile) -> str | None:
    """NCCL's bus bandwidth against bytes per GPU: one line per collective, GPU count and
    placement."""
    frame = run.frame
    rows = frame[frame["case"].map(text).str.startswith("nccl_") & (frame["status"] == OK)]
    if not len(rows) or "busbw_gbps" not in rows or "bytes" not in rows:
        return None
    fig = go.Figure()
    counts = sorted({int(g) for g in rows["gpus"]})
    for (op, gpus, place), part in rows.groupby(
            [rows["rung"].map(text), rows["gpus"].astype(int),
             rows["in_place"].map(lambda v: "in" if text(v).lower() == "true" else "out")]):
        part = part.sort_values("bytes")
        name = f"{op.removeprefix('nccl_')} {gpus} GPUs {place}-place"
        fig.add_trace(go.Scatter(
            x=part["bytes"].astype(float).tolist(), y=part["busbw_gbps"].astype(float).tolist(),
            name=name, mode="lines+markers",
            line=dict(color=GPU_COLOURS[counts.index(gpus) % len(GPU_COLOURS)],
                      dash="solid" if op == "nccl_allreduce" else "dash"),
            marker=dict(symbol="circle" if place == "in" else "circle-open"),
            customdata=[[as_float(v)] for v in part["median_us"]],
            hovertemplate=("<b>%{fullData.name}</b><br>%{x:.3s} B per GPU<br>median "
                           "%{customdata[0]:.2f} us<br>busbw %{y:.2f} GB/s<extra></extra>")))
    fig.update_xaxes(type="log", title_text="bytes per GPU (log)",
                     **_log2_ticks(rows["bytes"].astype(float).tolist()))
    fig.update_yaxes(type="log", title_text="busbw GB/s (log)")
    fig.update_layout(title=dict(text="NCCL reference collectives (nccl-tests' busbw)", x=0.5))
    return figure_html(fig, f"chart-nccl-{run.index}", 480)
