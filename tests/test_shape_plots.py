"""A shape sweep's pictures without a GPU: the data each figure draws, built from a small
frame and checked value by value against figures worked out here (the fastest rung per
shape, row_auto over the fastest library, a line per rung across COLS at each total), and
the figures and the report of a sweep run end to end on the host executor: each file
there, named by what it shows, of the size it should be."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pandas as pd
import pytest

from reducebench.analysis.shape_grids import (AUTO, LIBRARY, OURS, auto_grid,
                                              best_rung_grid, is_shape_file, kind_of,
                                              lines_by_total, nominal_total, row_cases)
from reducebench.core import shape_sweeps
from reducebench.core.shape_sweeps import ShapeSweep
from reducebench.render.shape_plots import figure_path, total_name
from cli_runner import invoke


def case(rung, rows, cols, median, pct=math.nan, block=256, params="", status="ok",
         variant="", dtype="float32"):
    return dict(rung=rung, dtype=dtype, n=rows * cols, rows=rows, cols=cols, block=block,
                params=params, status=status, median_us=median, pct_read=pct,
                finish="rows", variant=variant)


# Three shapes of 16 elements (4 x 4, 2 x 8, 1 x 16), one of 32 (8 x 4) and an odd one
# (2 x 9: 18 elements, nearest power of two 16). Times in us; the read takes 8 us at
# 16 elements and 10 at 32, so pct_read = 100 * read / median.
FRAME = pd.DataFrame([
    case("row_thread", 4, 4, 10.0, 80.0),
    case("row_warp", 4, 4, 16.0, 50.0),
    case("row_group", 4, 4, 9.0, 88.9, params="width=4"),     # the fastest at 4 x 4
    case("row_group", 4, 4, 12.0, 66.7, params="width=16"),
    case("row_thread", 2, 8, 20.0, 40.0),
    case("row_warp", 2, 8, 8.5, 94.1),                          # the fastest at 2 x 8
    case("row_thread", 1, 16, 32.0, 25.0),
    case("row_warp", 1, 16, 8.0, 100.0, status="FAIL"),         # wrong: never counted
    case("row_block", 1, 16, 16.0, 50.0),                       # the fastest verified
    case("row_thread", 8, 4, 12.5, 80.0),
    case("row_warp", 2, 9, 11.0, 72.7),
    case("row_auto", 4, 4, 9.0, 88.9, block=0, variant="row_group block=256 width=4 (x)"),
    case("row_auto", 1, 16, 20.0, 40.0, block=0, variant="row_block block=256 (x)"),
    case("torch_rows", 4, 4, 12.0, 66.7, block=0),
    case("torch_rows", 1, 16, 16.0, 50.0, block=0),
    case("cub_rows", 1, 16, 10.0, 80.0, block=0),               # a library the registry
])                                                              # does not know yet


def test_each_rung_is_of_ours_a_dispatcher_or_a_library():
    assert kind_of("row_warp") == OURS and kind_of("row_auto") == AUTO
    assert kind_of("torch_rows") == LIBRARY
    # rungs this registry does not know, by their rows
    assert kind_of("cub_rows", "", 0) == LIBRARY
    assert kind_of("row_split", "", 256) == OURS
    assert kind_of("row_auto2", "row_split block=256 (x)", 0) == AUTO


def test_a_shapes_total_is_rounded_to_a_power_of_two():
    assert nominal_total(31775 * 33) == 2**20 and nominal_total(18) == 16
    assert nominal_total(2 * 1000003) == 2**21 and nominal_total(1) == 1


def test_the_best_rung_grid_holds_the_fastest_verified_rung_of_ours_per_shape():
    grid = best_rung_grid(row_cases(FRAME))
    assert grid.measure == "pct_read"
    assert (grid.rows_log2, grid.cols_log2) == ([0, 1, 2, 3], [2, 3, 4])
    assert grid.at(4, 4) == pytest.approx(88.9) and grid.label_at(4, 4) == "row_group"
    assert grid.at(2, 8) == pytest.approx(94.1) and grid.label_at(2, 8) == "row_warp"
    assert grid.at(1, 16) == 50.0 and grid.label_at(1, 16) == "row_block"
    assert grid.at(8, 4) == 80.0 and grid.label_at(8, 4) == "row_thread"
    # ROWS 8 x COLS 8 was never measured; the odd shape is not on the grid
    assert math.isnan(grid.at(8, 8)) and grid.label_at(8, 8) == ""
    assert grid.cells == 4 and grid.left_out == [(2, 9)]
    assert grid.values.shape == (4, 3)


def test_the_auto_grid_is_row_autos_time_over_the_fastest_librarys():
    grid = auto_grid(row_cases(FRAME))
    assert grid.measure == "ratio" and grid.cells == 2
    assert grid.at(4, 4) == 9.0 / 12.0 and grid.label_at(4, 4) == "torch_rows"
    # at 1 x 16 cub_rows (10 us) is faster than torch_rows (16): 20 / 10
    assert grid.at(1, 16) == 2.0 and grid.label_at(1, 16) == "cub_rows"


def test_row_autos_standing_counts_ties_within_a_tick_the_worst_shape_and_the_read_bar(
        monkeypatch):
    from reducebench.analysis import shape_grids
    from reducebench.render.shape_plots import auto_standing_line

    frame = pd.DataFrame([
        case("row_auto", 4, 4, 9.0, 96.0, block=0, variant="v"),
        case("torch_rows", 4, 4, 9.0, 96.0, block=0),             # a tie: level
        case("row_auto", 2, 8, 10.03, 95.0, block=0, variant="v"),
        case("cub_rows", 2, 8, 10.0, 95.3, block=0),              # 30 ns over: level
        case("row_auto", 1, 16, 10.5, block=0, variant="v"),        # no read
        case("torch_rows", 1, 16, 10.0, block=0),                 # 500 ns, 5% over
        case("triton_rows", 1, 16, 11.0, block=0),
        case("row_auto", 2, 9, 12.0, 90.0, block=0, variant="v"),   # odd: counted too
        case("triton_rows", 2, 9, 13.0, 83.1, block=0),
        case("row_auto", 8, 8, 5.0, 99.0, block=0, variant="v"),    # no library: not counted
    ])
    monkeypatch.setattr(shape_grids, "READ_BAR_TOTAL", 16)       # every total here is 16
    standing = shape_grids.auto_standing(row_cases(frame))
    assert standing == shape_grids.AutoStanding(shapes=4, level=3,
                                                worst=(1, 16, pytest.approx(5.0), "torch_rows"),
                                                large=3, at_read_bar=2)
    assert auto_standing_line(standing) == (
        "row_auto: within one 32 ns tick of the fastest library, or faster, at 3 of 4 "
        "shape(s); at worst 5.0% slower (1x16, torch_rows); at 95% of the same-shape read "
        "or more at 2 of 3 shape(s) of 2^24 elements or more")
    assert shape_grids.auto_standing(row_cases(frame[frame["rung"] != "torch_rows"][:0])) \
        is None


def test_row_autos_worst_shape_is_the_one_furthest_behind_whatever_comes_after_it(
        monkeypatch):
    from reducebench.analysis import shape_grids

    frame = pd.DataFrame([
        case("row_auto", 1, 8, 5.0, 99.0, block=0, variant="v"),    # no library: skipped,
        case("row_auto", 1, 16, 10.5, 95.0, block=0, variant="v"),  # the shapes after counted
        case("torch_rows", 1, 16, 10.0, block=0),                 # 0.5 us over: 5% slower
        case("row_auto", 2, 8, 12.0, 0.5, block=0, variant="v"),    # a read, if a poor one
        case("cub_rows", 2, 8, 10.0, block=0),                    # 2 us over: 20% slower
        case("row_auto", 4, 4, 23.98, block=0, variant="v"),       # no read
        case("triton_rows", 4, 4, 20.0, block=0),                 # 3.98 us over: 19.9%
        case("row_auto", 8, 2, 9.0, block=0, variant="v"),
        case("torch_rows", 8, 2, 10.0, block=0),                  # faster: level
    ])
    monkeypatch.setattr(shape_grids, "READ_BAR_TOTAL", 16)       # 1x8's 8 is under it
    assert shape_grids.auto_standing(row_cases(frame)) == shape_grids.AutoStanding(
        shapes=4, level=1, worst=(2, 8, pytest.approx(20.0), "cub_rows"), large=2,
        at_read_bar=1)


def test_plot_says_row_autos_standing_once_a_dtype_naming_each_where_there_are_several(
        tmp_path, monkeypatch):
    from reducebench.render import shape_plots

    monkeypatch.setattr(shape_plots, "plot_shape_sweep", lambda *args: [])  # no figures
    frame = pd.DataFrame([
        case("row_auto", 1, 16, 10.5, block=0, variant="v"),      # 0.5 us over 10: 5% slower
        case("torch_rows", 1, 16, 10.0, block=0),
        case("row_auto", 4, 4, 9.0, block=0, variant="v", dtype="int32"),
        case("cub_rows", 4, 4, 9.0, block=0, dtype="int32"),      # a tie
    ])
    out = tmp_path / "sweep.png"
    assert shape_plots.plot_lines(frame, out, None, "gbps") == [
        "row_auto (float32): within one 32 ns tick of the fastest library, or faster, at 0 "
        "of 1 shape(s); at worst 5.0% slower (1x16, torch_rows)",
        "row_auto (int32): within one 32 ns tick of the fastest library, or faster, at 1 of "
        "1 shape(s)"]
    # one dtype: no dtype named
    assert shape_plots.plot_lines(frame[frame["dtype"] == "int32"], out, None, "gbps") == [
        "row_auto: within one 32 ns tick of the fastest library, or faster, at 1 of 1 "
        "shape(s)"]


def test_row_auto_one_tick_behind_is_level_however_the_floats_round():
    from reducebench.analysis.shape_grids import auto_standing

    frame = pd.DataFrame([
        case("row_auto", 4, 4, 10.016, block=0, variant="v"),
        case("torch_rows", 4, 4, 9.984, block=0),         # 32 ns: one tick, level
        case("row_auto", 2, 8, 10.049, block=0, variant="v"),
        case("torch_rows", 2, 8, 10.0, block=0),          # 49 ns: behind
    ])
    standing = auto_standing(row_cases(frame))
    assert (standing.shapes, standing.level) == (2, 1)
    assert standing.worst[:2] == (2, 8)


def test_a_line_per_rung_across_cols_at_each_total():
    lines = lines_by_total(row_cases(FRAME))
    assert list(lines) == [16]          # 32 elements: one COLS only, no line
    by_rung = {line.rung: line for line in lines[16]}
    # in ladder order: ours, row_auto, then the libraries (cub_rows unknown: last)
    assert [line.rung for line in lines[16]] == ["row_thread", "row_group", "row_warp",
                                                 "row_block", "row_auto", "torch_rows",
                                                 "cub_rows"]
    assert (by_rung["row_thread"].cols, by_rung["row_thread"].values) == \
        ([4, 8, 16], [80.0, 40.0, 25.0])
    # row_group's better width; row_warp with the odd 2 x 9 and without its failed row
    assert by_rung["row_group"].values == [pytest.approx(88.9)]
    assert (by_rung["row_warp"].cols, by_rung["row_warp"].medians) == ([4, 8, 9],
                                                                       [16.0, 8.5, 11.0])
    assert by_rung["row_auto"].kind == AUTO and by_rung["torch_rows"].kind == LIBRARY


def test_without_the_same_size_read_the_grid_holds_gb_per_s():
    frame = FRAME.drop(columns="pct_read").assign(gbps=FRAME["n"] * 4 / FRAME["median_us"])
    grid = best_rung_grid(row_cases(frame))
    assert grid.measure == "gbps" and grid.at(2, 8) == 64 / 8.5


def test_figure_names_say_what_they_show():
    assert [total_name(t) for t in (64, 2**10, 2**24, 3 * 2**20, 2**30)] == \
        ["64", "1K", "16M", "3M", "1G"]
    assert figure_path(Path("out/run.svg"), "by_cols_at_16M", "float16") == \
        Path("out/run_by_cols_at_16M_float16.svg")


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def sweep_file(tmp_path, fake_device, monkeypatch):
    """A sweep at 64 elements run end to end on the host executor: every row rung."""
    monkeypatch.setitem(shape_sweeps.SWEEPS, "tiny", ShapeSweep("tiny", "64", totals=(64,)))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    out = tmp_path / "sweep.csv"
    result = invoke("run", "--shape", "sweep:tiny", "--rounds", "1", "--out", out)
    assert result.exit_code == 0, result.output
    return out


def test_plot_draws_a_sweeps_figures_named_by_what_they_show(sweep_file, tmp_path):
    assert is_shape_file(pd.read_csv(sweep_file))
    out = tmp_path / "fig" / "sweep.png"
    out.parent.mkdir()
    result = invoke("plot", sweep_file, "-o", out)
    assert result.exit_code == 0, result.output
    # the host executor has no same-size read: the heatmap holds GB/s
    names = {"sweep_best_rung_gbps.png": (1400, 700),
             "sweep_row_auto_vs_library.png": (900, 700),
             "sweep_by_cols_at_64.png": (1200, 500)}
    assert sorted(p.name for p in out.parent.iterdir()) == sorted(names)
    for name, size in names.items():
        assert png_size(out.parent / name) == size
        assert (out.parent / name).stat().st_size > 10_000
        assert f"wrote {out.parent / name} ({size[0]}x{size[1]} px" in result.output
    assert "5 shape(s)" in result.output       # 16x4, 8x8, 4x16, 2x32, 1x64 (2x33 is odd)
    # row_auto against the libraries at all six shapes, the odd one too
    assert "row_auto: within one 32 ns tick of the fastest library, or faster, at " in \
        result.output and " of 6 shape(s)" in result.output
    again = invoke("plot", sweep_file, "-o", out)
    assert again.output.count("replaced ") == 3


def test_plot_draws_a_sweep_as_svg_too(sweep_file, tmp_path):
    out = tmp_path / "sweep.svg"
    assert invoke("plot", sweep_file, "-o", out).exit_code == 0
    assert (tmp_path / "sweep_best_rung_gbps.svg").read_text().startswith("<?xml")


def test_the_report_of_a_sweep_holds_its_charts(sweep_file, tmp_path):
    out = tmp_path / "sweep.html"
    result = invoke("report", sweep_file, "-o", out)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "<h3>The shape sweep</h3>" in page
    for chart in ("chart-shape-best-0-0", "chart-shape-auto-0-0", "chart-shape-total-0-0-64"):
        assert f'id="{chart}"' in page
    assert "row_auto against the fastest library" in page


def test_a_file_without_row_cases_is_plotted_as_before(tmp_path, fake_device):
    out = tmp_path / "run.csv"
    assert invoke("run", "--size", "2^10,2^12", "--rung", "shfl", "--rounds", "1",
                  "--out", out).exit_code == 0
    assert not is_shape_file(pd.read_csv(out))
    result = invoke("plot", out, "-o", tmp_path / "run.png")
    assert result.exit_code == 0 and "line(s)" in result.output
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["run.png"]
    assert png_size(tmp_path / "run.png") == (1200, 500)
