"""The figure `plot` draws: the dtype in its title, 21 rungs as 21 lines told apart by
colour, marker and line style together, one size as bars, and the format from --out."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import pytest

from reducebench.render.plots import plot_results
from reducebench.ladder.registry import RUNGS
from reducebench.results.schema import SCHEMA_VERSION, Record
from reducebench.results.files import RowWriter, read_results
from cli_runner import invoke

pytestmark = pytest.mark.skipif(find_spec("matplotlib") is None, reason="needs matplotlib")

FIXTURES = Path(__file__).parent / "fixtures"
SWEEP = FIXTURES / "sweep_small.csv"   # float32 and float64, 2^10..2^24
META = {"schema_version": SCHEMA_VERSION, "gpu": "NVIDIA H100 80GB HBM3", "mode": "cold",
        "peak_gbps": 3352.3}


def ladder_file(tmp_path: Path, sizes: list[int], dtype: str = "float32") -> Path:
    """Every rung of the ladder (21), verified, at the given sizes."""
    path = tmp_path / f"ladder_{len(sizes)}.csv"
    writer = RowWriter(path)
    for n in sizes:
        for i, rung in enumerate(RUNGS):
            median = 5.0 + i + n / 1e6
            writer.write(Record(rung.name, dtype, n, 0 if rung.is_library else 256,
                                samples=10, median_us=median, gbps=4 * n / (median * 1e3),
                                meta=dict(META)))
    return path


def test_the_title_names_the_dtypes(tmp_path, saved_figures):
    plot_results(read_results(SWEEP), tmp_path / "x.png", source=SWEEP)
    title = saved_figures[-1]._suptitle.get_text()
    assert "float32 / float64" in title and "H100" in title and "cold L2" in title


def test_21_rungs_are_21_lines_no_two_alike(tmp_path, saved_figures):
    from matplotlib.colors import to_hex

    assert len(RUNGS) >= 21
    path = ladder_file(tmp_path, [2**20, 2**22, 2**24])
    info = plot_results(read_results(path), tmp_path / "x.png")
    assert info.lines == len(RUNGS) and info.kind == "lines"
    bandwidth = saved_figures[-1].axes[0]
    peak = "--"
    lines = [line for line in bandwidth.get_lines() if line.get_linestyle() != peak]
    assert len(lines) == len(RUNGS)
    looks = {(to_hex(line.get_color()), line.get_marker()) for line in lines}
    assert len(looks) == len(RUNGS)   # colour and marker together already tell them apart
    # and the rungs that share a colour (there are ten) differ in line style too
    for colour in {to_hex(line.get_color()) for line in lines}:
        styles = [str(line.get_linestyle()) for line in lines
                  if to_hex(line.get_color()) == colour]
        assert len(set(styles)) == len(styles), (colour, styles)


def test_one_size_is_drawn_as_bars(tmp_path, saved_figures):
    path = ladder_file(tmp_path, [2**24])
    info = plot_results(read_results(path), tmp_path / "x.png")
    assert info.kind == "bars" and info.points == len(RUNGS)
    bandwidth, latency = saved_figures[-1].axes[:2]
    assert len(bandwidth.patches) == len(RUNGS) == len(latency.patches)
    labels = [t.get_text() for t in bandwidth.get_yticklabels()]
    assert sorted(labels) == sorted(r.name for r in RUNGS)
    assert not [line for line in bandwidth.get_lines() if line.get_marker() not in
                (None, "None", "")]           # no column of dots
    widths = {round(p.get_width(), 6) for p in bandwidth.patches}
    assert round(4 * 2**24 / (5.0 * 1e3 + 2**24 / 1e3), 6) in widths   # gmem's GB/s
    result = invoke("plot", path, "-o", tmp_path / "bars.png")
    assert result.exit_code == 0 and f"{len(RUNGS)} bar(s) at one size" in result.stdout


@pytest.mark.parametrize("name, magic", [("plot.svg", b"<svg"), ("plot.SVG", b"<svg"),
                                         ("plot.png", b"\x89PNG"), ("plot.PNG", b"\x89PNG")])
def test_out_chooses_the_format_by_suffix(tmp_path, name, magic):
    out = tmp_path / name
    result = invoke("plot", SWEEP, "-o", out)
    assert result.exit_code == 0, result.output
    head = out.read_bytes()[:400]
    assert magic in head


@pytest.mark.parametrize("name", ["plot.pdf", "plot.jpg", "plot"])
def test_any_other_format_is_refused_in_one_line(tmp_path, name):
    result = invoke("plot", SWEEP, "-o", tmp_path / name)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "PNG or SVG" in lines[0]
    assert not (tmp_path / name).exists()


def test_the_default_never_overwrites_a_committed_figure(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # the default figure goes to the current folder
    csv = tmp_path / "h100_sweep.csv"
    csv.write_text(SWEEP.read_text())
    committed = tmp_path / "h100_sweep.png"
    committed.write_bytes(b"the committed figure")
    taken = tmp_path / "h100_sweep_2.png"
    taken.write_bytes(b"another")
    result = invoke("plot", csv)
    assert result.exit_code == 0, result.output
    assert committed.read_bytes() == b"the committed figure"
    assert taken.read_bytes() == b"another"
    assert (tmp_path / "h100_sweep_3.png").read_bytes()[:4] == b"\x89PNG"
