"""The report's charts of a shape sweep (a file of row cases), with Plotly, from the same
data as `plot`'s figures (analysis/shape_grids.py): the fastest row rung's pct_read per
shape on log2(ROWS) by log2(COLS), row_auto's time over the fastest library's per shape,
and a line per rung across COLS at each total. Hover a cell or a point for its figures."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from reducebench.analysis.shape_grids import (AUTO, LIBRARY, Grid, auto_grid, best_rung_grid,
                                              is_shape_file, lines_by_total, row_cases)
from reducebench.core.sizes import format_size
from reducebench.render.html.charts import figure_html
from reducebench.render.html.run_files import RunFile

MEASURES = {"pct_read": "% of the same-shape read", "gbps": "GB/s"}


def shape_charts(run: RunFile, colours: dict[str, str]) -> list[tuple[str, str]]:
    """(title, chart) for each figure of the file's shape sweep; [] for a file without
    row cases."""
    if not is_shape_file(run.frame):
        return []
    df = row_cases(run.frame)
    dtypes = sorted(set(df["dtype"]))
    charts = []
    for number, dtype in enumerate(dtypes):
        part = df[df["dtype"] == dtype]
        tail = f" ({dtype})" if len(dtypes) > 1 else ""
        ident = f"{run.index}-{number}"
        best = best_rung_grid(part)
        if best.cells:
            charts.append((f"The fastest row rung per shape{tail}",
                           _heatmap(best, f"chart-shape-best-{ident}")))
        versus = auto_grid(part)
        if versus.cells:
            charts.append((f"row_auto against the fastest library{tail}",
                           _heatmap(versus, f"chart-shape-auto-{ident}")))
        for total, lines in lines_by_total(part).items():
            fig = go.Figure()
            for line in lines:
                fig.add_trace(go.Scatter(
                    x=line.cols, y=line.values, name=line.rung, mode="lines+markers",
                    customdata=np.column_stack([line.cols, line.medians]),
                    hovertemplate=(f"<b>{line.rung}</b><br>COLS %{{customdata[0]}}<br>"
                                   "%{y:.1f}<br>median %{customdata[1]:.2f} us<extra></extra>"),
                    line=dict(color=colours.get(line.rung), width=3 if line.kind == AUTO else 1.8,
                              dash="dash" if line.kind == LIBRARY else "solid")))
            fig.update_xaxes(type="log", title_text="COLS (log)", **_ticks(lines))
            fig.update_yaxes(title_text=MEASURES[best.measure])
            charts.append((f"Each rung across COLS at {format_size(total)} elements{tail}",
                           figure_html(fig, f"chart-shape-total-{ident}-{total}", 420)))
    return charts


def _heatmap(grid: Grid, div_id: str) -> str:
    """A grid as a heatmap: a ratio on a log2 colour scale centred on 1 (blue: row_auto
    faster), any other measure on Viridis."""
    ratio = grid.measure == "ratio"
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.log2(grid.values) if ratio else grid.values
    what = "row_auto / fastest library" if ratio else MEASURES[grid.measure]
    fig = go.Figure(go.Heatmap(
        z=z, x=[f"2^{k}" for k in grid.cols_log2], y=[f"2^{k}" for k in grid.rows_log2],
        text=grid.labels, customdata=grid.values,
        colorscale="RdBu_r" if ratio else "Viridis", zmid=0 if ratio else None,
        colorbar=dict(title="log2 ratio" if ratio else what),
        hovertemplate=(f"ROWS %{{y}} x COLS %{{x}}<br>%{{text}}<br>{what}: "
                       f"%{{customdata:.{2 if ratio else 1}f}}<extra></extra>")))
    fig.update_xaxes(title_text="COLS (log2)", type="category")
    fig.update_yaxes(title_text="ROWS (log2)", type="category")
    return figure_html(fig, div_id, 560)


def _ticks(lines) -> dict:
    cols = sorted({c for line in lines for c in line.cols})
    low, high = math.floor(math.log2(cols[0])), math.ceil(math.log2(cols[-1]))
    step = max(1, math.ceil((high - low + 1) / 12))
    exponents = range(low, high + 1, step)
    return dict(tickvals=[2.0 ** e for e in exponents], ticktext=[f"2^{e}" for e in exponents])
