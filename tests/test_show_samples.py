"""`show-samples` on a synthetic samples file: the summary numbers, the figure, where it
goes, and the errors (one line, exit 2)."""

from __future__ import annotations

import sys
from importlib.util import find_spec
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from reducebench.cli import ReducebenchGroup
from reducebench.cli.show_samples import COMMANDS
from reducebench.results.samples_file import CaseSamples, SamplesWriter
from reducebench.results.naming import samples_path

needs_matplotlib = pytest.mark.skipif(find_spec("matplotlib") is None,
                                      reason="needs matplotlib (pip install matplotlib)")

DRIFTING = ("vector_load", "float32", 2**20, 256, "loads=4")
BIMODAL = ("cub", "float32", 2**20, 0, "")


@click.group(cls=ReducebenchGroup)
def group() -> None:
    """The commands under test, with the CLI's error handling."""


for _command in COMMANDS:
    group.add_command(_command)


def invoke(*args):
    return CliRunner().invoke(group, ["show-samples", *map(str, args)])


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    """show-samples draws into the current folder by default: here, the test's own."""
    monkeypatch.chdir(tmp_path)


def make_run(folder: Path) -> tuple[Path, Path]:
    """A results CSV (its content does not matter here) and its samples file: a case that
    drifts from 10 to 11 us with three throttled samples, and a two-mode case."""
    results = folder / "run.csv"
    results.write_text("schema_version,rung\n")
    writer = SamplesWriter(samples_path(results))
    times = [10.0] * 10 + [50.0] + [10.5] * 10 + [50.0, 50.0] + [11.0] * 10
    clocks = [1700.0 if t == 50.0 else 1980.0 for t in times]
    writer.write_case("r1", DRIFTING, CaseSamples(times_us=times, sm_clock_mhz=clocks,
                                                  kept=[t != 50.0 for t in times]))
    writer.write_case("r1", BIMODAL, CaseSamples(times_us=[5.0, 6.0] * 10 + [6.0] * 5))
    return results, samples_path(results)


def summary_row(output: str, rung: str) -> list[str]:
    """The cells after dtype, n, rung (with its parameters) and block of `rung`'s row, in
    the bordered table of a wide terminal: count, kept, median, min, max, noise, drift,
    phase."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) > 4 and cells[2].split(" ")[0] == rung:
            return cells[4:]
    raise AssertionError(f"no row for {rung} in:\n{output}")


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")


@needs_matplotlib
def test_summary_numbers_and_figure(tmp_path):
    results, samples = make_run(tmp_path)
    result = invoke(samples)
    assert result.exit_code == 0, result.output
    # count, kept, median, min, max, noise (sqrt(5/29)/10.5), drift (11/10)
    assert summary_row(result.output, "vector_load") == \
        ["33", "30", "10.500", "10.000", "11.000", "3.95", "+10.00", "-"]
    assert "float32 │ 2^20 │ vector_load loads=4 │   256" in result.output
    # ten 5.0s and fifteen 6.0s: median 6.0
    assert summary_row(result.output, "cub")[:5] == ["25", "25", "6.000", "5.000", "6.000"]
    png = tmp_path / "run.samples.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {png.name} (2 case(s), 58 sample(s))" in result.output


@needs_matplotlib
def test_a_results_csv_finds_its_samples_and_case_filters(tmp_path):
    results, _ = make_run(tmp_path)
    result = invoke(results, "--case", "cub n=1M")
    assert result.exit_code == 0, result.output
    assert summary_row(result.output, "cub")[:2] == ["25", "25"]
    assert "vector_load" not in result.output
    assert "(1 case(s), 25 sample(s))" in result.output


@needs_matplotlib
def test_the_default_figure_never_replaces_a_file(tmp_path):
    _, samples = make_run(tmp_path)
    taken = tmp_path / "run.samples.png"
    taken.write_text("mine")
    result = invoke(samples)
    assert result.exit_code == 0, result.output
    assert taken.read_text() == "mine"
    assert (tmp_path / "run.samples_1.png").is_file()
    assert invoke(samples).exit_code == 0 and (tmp_path / "run.samples_2.png").is_file()


@needs_matplotlib
def test_out_chooses_svg_by_suffix_and_refuses_other_suffixes(tmp_path):
    _, samples = make_run(tmp_path)
    svg = tmp_path / "look.svg"
    result = invoke(samples, "--out", svg)
    assert result.exit_code == 0, result.output
    assert svg.read_text().lstrip().startswith(("<?xml", "<svg"))
    bad = invoke(samples, "--out", tmp_path / "look.jpg")
    assert bad.exit_code == 2 and "PNG or SVG" in bad.output
    assert "Traceback" not in bad.output


def test_no_matching_case_is_one_line_exit_2(tmp_path):
    _, samples = make_run(tmp_path)
    result = invoke(samples, "--case", "shfl", "--no-plot")
    assert result.exit_code == 2
    assert "no case matches 'shfl' (2 case(s) in the file)" in result.output


def test_a_header_only_file_says_so(tmp_path):
    _, samples = make_run(tmp_path)
    header_only = tmp_path / "h.samples.csv"
    header_only.write_text(samples.read_text().splitlines()[0] + "\n")
    result = invoke(header_only, "--no-plot")
    assert result.exit_code == 2 and "no samples in the file" in result.output


def test_missing_file_and_foreign_file(tmp_path):
    result = invoke(tmp_path / "none.samples.csv")
    assert result.exit_code == 2 and "no such file" in result.output
    foreign = tmp_path / "x.samples.csv"
    foreign.write_text("a,b\n1,2\n")
    result = invoke(foreign, "--no-plot")
    assert result.exit_code == 2 and "not a reducebench samples file" in result.output
    alone = tmp_path / "alone.csv"
    alone.write_text("a,b\n1,2\n")
    result = invoke(alone, "--no-plot")
    assert result.exit_code == 2 and "no samples file (alone.samples.csv" in result.output


def test_without_matplotlib_a_clear_exit_2_and_no_plot_still_works(tmp_path, monkeypatch):
    _, samples = make_run(tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    result = invoke(samples)
    assert result.exit_code == 2
    assert "matplotlib, which is not installed" in result.output and "--no-plot" in result.output
    assert "10.500" not in result.output     # refused before any output: one line
    assert not list(tmp_path.glob("*.png"))
    summary = invoke(samples, "--no-plot")
    assert summary.exit_code == 0 and "10.500" in summary.output


def ladder_samples(path: Path, count: int) -> Path:
    """`count` cases of three samples each (1, 2, 3 us): a whole ladder's worth."""
    writer = SamplesWriter(path)
    for n in range(10, 10 + count):
        writer.write_case("r", ("cub", "float32", 2**n, 0, ""), CaseSamples([1.0, 2.0, 3.0]))
    return path


@needs_matplotlib
def test_a_whole_ladder_gets_an_overview_figure(tmp_path, saved_figures):
    """More than 8 cases: one small panel of samples in time order per case, each
    titled with its whole label, instead of no figure at all."""
    samples = ladder_samples(tmp_path / "big.samples.csv", 25)
    result = invoke(samples)
    assert result.exit_code == 0, result.output
    png = tmp_path / "big.samples.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {png.name} (25 case(s), 75 sample(s))" in result.output
    panels = [ax for ax in saved_figures[-1].axes if ax.get_visible() and ax.axison]
    titles = [" ".join(ax.get_title().split()) for ax in panels]
    assert titles == [f"cub float32 n=2^{n}" for n in range(10, 35)]


@needs_matplotlib
def test_more_than_one_overview_is_several_figures_never_replacing_a_file(tmp_path,
                                                                          monkeypatch):
    from reducebench.render import samples_plot

    assert samples_plot.pages(30) == 1 and samples_plot.pages(31) == 2
    monkeypatch.setattr(samples_plot, "PER_OVERVIEW", 6)   # smaller figures: a faster test
    samples = ladder_samples(tmp_path / "big.samples.csv", 9)
    taken = tmp_path / "big.samples_p1of2.png"
    taken.write_text("mine")
    result = invoke(samples)
    assert result.exit_code == 0, result.output
    assert taken.read_text() == "mine"
    first, second = tmp_path / "big.samples_1_p1of2.png", tmp_path / "big.samples_1_p2of2.png"
    assert f"wrote {first.name} (6 case(s), 18 sample(s))" in result.output
    assert f"wrote {second.name} (3 case(s), 9 sample(s))" in result.output
    result = invoke(samples, "--out", tmp_path / "all.svg")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "all_p1of2.svg").is_file() and (tmp_path / "all_p2of2.svg").is_file()


def test_a_label_wraps_whole():
    from reducebench.render.samples_plot import wrap_label

    label = "vector_load float32 n=2^24 block=256 blocks_per_sm=8 l2_prefetch=0 loads=4"
    wrapped = wrap_label(label, width=28)
    assert wrapped.split("\n") == ["vector_load float32 n=2^24", "block=256 blocks_per_sm=8",
                                   "l2_prefetch=0 loads=4"]
    assert wrap_label("a_name_longer_than_the_width_of_a_line x", 10).split("\n") == \
        ["a_name_longer_than_the_width_of_a_line", "x"]
