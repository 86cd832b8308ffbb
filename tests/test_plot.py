"""`plot`: the PNG's size and content, its default place, its errors; and the sweep config
that produces the results it is meant for."""

from __future__ import annotations

import shutil
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from reducebench.core.errors import ReducebenchError, ResultsFileError
from reducebench.results.files import read_results

from reducebench.render.plots import HEIGHT_PX, WIDTH_PX, plot_results
from cli_runner import invoke

needs_matplotlib = pytest.mark.skipif(find_spec("matplotlib") is None,
                                      reason="needs matplotlib (pip install matplotlib)")

FIXTURES = Path(__file__).parent / "fixtures"
SWEEP = FIXTURES / "sweep_small.csv"
CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def png_shape(path: Path) -> tuple[int, int]:
    from matplotlib.image import imread

    image = imread(path)
    return image.shape[1], image.shape[0]  # width, height


@needs_matplotlib
def test_plot_writes_png_of_fixed_size(tmp_path):
    out = tmp_path / "sweep.png"
    result = invoke("plot", SWEEP, "-o", out)
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png_shape(out) == (WIDTH_PX, HEIGHT_PX) == (1200, 500)
    assert f"wrote {out}" in result.stdout
    # 4 float32 rungs + 2 float64 ones; the FAIL row is left out
    assert "6 line(s)" in result.stdout and "47 point(s)" in result.stdout
    assert "1 unverified row(s) left out" in result.stdout


@needs_matplotlib
def test_plot_counts_cases_the_run_skipped_apart_from_unverified_ones(tmp_path):
    import pandas as pd

    frame = pd.read_csv(SWEEP)
    frame["error"] = frame["error"].astype(object)
    ok = frame.index[frame["status"] == "ok"]
    frame.loc[ok[:3], ["status", "error"]] = ["skipped", "cub does not take float16"]
    csv = tmp_path / "skips.csv"
    frame.to_csv(csv, index=False)
    result = invoke("plot", csv, "-o", tmp_path / "skips.png")
    assert result.exit_code == 0, result.output
    assert "1 unverified row(s) left out" in result.stdout  # the FAIL row
    assert "3 skipped row(s) left out" in result.stdout


@needs_matplotlib
def test_plot_default_path_in_the_current_folder_never_overwrites(tmp_path, monkeypatch):
    data, here = tmp_path / "data", tmp_path / "here"
    data.mkdir(), here.mkdir()
    monkeypatch.chdir(here)
    csv = data / "run.csv"
    shutil.copy(SWEEP, csv)
    result = invoke("plot", csv)
    assert result.exit_code == 0, result.output
    png = Path("run.png")
    assert png.is_file() and f"wrote {png}" in result.stdout
    assert list(data.iterdir()) == [csv]   # nothing written next to the CSV
    first = png.read_bytes()
    result = invoke("plot", csv)   # the default never replaces a figure already there
    second = Path("run_2.png")
    assert result.exit_code == 0 and f"wrote {second}" in result.stdout
    assert png.read_bytes() == first and png_shape(second) == (WIDTH_PX, HEIGHT_PX)
    result = invoke("plot", csv, "-o", png)   # an explicit --out does replace
    assert result.exit_code == 0 and f"replaced {png}" in result.stdout


@needs_matplotlib
def test_plot_content(tmp_path, saved_figures):
    """Lines per rung and dtype, the peak as a dashed line, log2 and log-log axes."""
    info = plot_results(read_results(SWEEP), tmp_path / "x.png", source=SWEEP)
    fig = saved_figures[-1]
    bandwidth, latency = fig.axes[:2]
    assert bandwidth.get_xscale() == "log" and bandwidth.get_yscale() == "linear"
    assert latency.get_xscale() == "log" and latency.get_yscale() == "log"
    peak = [line for line in bandwidth.get_lines() if line.get_linestyle() == "--"]
    assert len(peak) == 1 and peak[0].get_ydata()[0] == pytest.approx(3352.3)
    assert len(latency.get_lines()) == info.lines == 6
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "shfl float64" in labels and "cub float32" in labels
    assert any(label.startswith("theoretical peak 3,352") for label in labels)
    assert "NVIDIA H100 80GB HBM3" in fig._suptitle.get_text()
    vector = [line for line in latency.get_lines() if len(line.get_xdata()) == 7]
    assert len(vector) == 1   # vector_load float32 lost its FAIL point at 2^16


def test_plot_refuses_malformed_csv(tmp_path):
    bad = tmp_path / "malformed.csv"
    lines = SWEEP.read_text().splitlines(keepends=True)
    lines[3] = lines[3][: len(lines[3]) // 2] + "\r\n"  # a row cut short, then more rows
    bad.write_text("".join(lines))
    result = invoke("plot", bad)
    assert result.exit_code == 2
    assert str(bad) in result.stderr and "malformed" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not bad.with_suffix(".png").exists()


def test_plot_ignores_the_row_a_killed_run_left_unfinished(tmp_path):
    cut = tmp_path / "killed.csv"
    text = SWEEP.read_text()
    cut.write_text(text[: len(text) - 300])  # the last row half-written, no line break
    result = invoke("plot", cut, "-o", tmp_path / "killed.png")
    assert result.exit_code == 0, result.output
    assert "unfinished" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    other = tmp_path / "other.csv"
    other.write_text("name,time\nreduce,1.0\n")
    result = invoke("plot", other)
    assert result.exit_code == 2 and "not a reducebench results file" in result.stderr
    result = invoke("plot", tmp_path / "missing.csv")
    assert result.exit_code == 2 and "no such file" in result.stderr


@needs_matplotlib
def test_plot_refuses_no_verified_rows(tmp_path):
    lines = SWEEP.read_text().splitlines(keepends=True)
    failed = tmp_path / "failed.csv"
    failed.write_text(lines[0] + "".join(l.replace(",ok,", ",FAIL,") for l in lines[1:]))
    result = invoke("plot", failed)
    assert result.exit_code == 2 and "no verified row" in result.stderr
    with pytest.raises(ResultsFileError):
        plot_results(read_results(failed), tmp_path / "f.png")


def test_plot_refuses_bad_output(tmp_path):
    result = invoke("plot", SWEEP, "-o", tmp_path / "plot.jpg")
    assert result.exit_code == 2 and ".png" in result.stderr
    result = invoke("plot", SWEEP, "-o", tmp_path / "no" / "such" / "plot.png")
    assert result.exit_code == 2 and "does not exist" in result.stderr


def test_plot_without_matplotlib(tmp_path, monkeypatch):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ReducebenchError, match="needs matplotlib"):
        plot_results(read_results(SWEEP), tmp_path / "x.png")
    result = invoke("plot", SWEEP, "-o", tmp_path / "x.png")
    assert result.exit_code == 2 and "pip install" in result.stderr
    assert not (tmp_path / "x.png").exists()


# ---- the sweep config --------------------------------------------------------------------------

def test_sweep_config_parses_as_run_would():
    from reducebench.measuring.settings import load_config, settings_from

    values = load_config(CONFIGS / "sweep.toml")
    settings = settings_from(values)
    assert settings.sizes == [2**e for e in range(10, 29)]
    assert [d.name for d in settings.dtypes] == ["float32"]
    assert [r.name for r in settings.rungs] == ["smem_sequential", "shfl", "shfl_unroll",
                                                "gridstride_atomic", "vector_load",
                                                "single_pass", "cub"]
    assert settings.blocks == [256] and settings.cold


def test_sweep_config_through_the_run_command(monkeypatch):
    """`reducebench run --config configs/sweep.toml` gets as far as opening the GPU."""
    import reducebench.measuring.session as run_module
    import reducebench.device as device

    seen = {}

    def fake_open_backend(index):
        seen["index"] = index
        raise ReducebenchError("no GPU here (test)")

    monkeypatch.setattr(device, "open_backend", fake_open_backend)
    expand = run_module.expand_cases
    monkeypatch.setattr(run_module, "expand_cases",
                        lambda s: seen.setdefault("cases", expand(s)))
    result = invoke("run", "--config", CONFIGS / "sweep.toml")
    assert result.exit_code == 2 and "no GPU here" in result.stderr
    assert seen["index"] == 0
    assert len(seen["cases"]) == 19 * 7
