"""`reducebench plot` of a `multigpu` file (results/h200x4/multigpu_sharded_f32_9acad4a.csv:
1, 2 and 4 H200s): one line per GPU count, each with its own marker; the peak drawn
k times for k GPUs (never one GPU's peak under a 4-GPU aggregate); the n = 1 timing
floor rows left out of both axes; the legend and the axis labels inside the figure."""

from pathlib import Path

import pytest

from reducebench.render.plots import plot_results
from reducebench.results.files import read_results

pytest.importorskip("matplotlib")

REPO = Path(__file__).resolve().parent.parent
SHARDED = REPO / "results" / "h200x4" / "multigpu_sharded_f32_9acad4a.csv"
H200_PEAK = 4814.3      # the file's peak_gbps column


@pytest.fixture
def drawn(tmp_path, saved_figures):
    info = plot_results(read_results(SHARDED), tmp_path / "mg.png", source=SHARDED)
    return info, saved_figures[-1]


def _data_lines(ax):
    return [line for line in ax.get_lines() if line.get_linestyle() != "--"]


def test_one_line_per_gpu_count_each_its_own_marker(drawn):
    info, fig = drawn
    bandwidth, latency = fig.axes[:2]
    lines = _data_lines(bandwidth)
    assert len(lines) == info.lines == 3
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    for k in ("1 GPU", "2 GPUs", "4 GPUs"):
        assert any(label.endswith(k) for label in labels), (k, labels)
    assert len({line.get_marker() for line in lines}) == 3


def test_the_floor_rows_are_left_out_of_both_axes(drawn):
    info, fig = drawn
    assert info.floors == 3 and info.skipped == 0 and info.points == 30
    for ax in fig.axes[:2]:
        smallest = min(min(line.get_xdata()) for line in _data_lines(ax))
        assert smallest == 2**24        # the file's smallest sharded n; the floor is n = 1
        assert ax.get_xlim()[0] > 2**20


def test_each_gpu_count_has_its_own_multiple_of_the_peak(drawn):
    _, fig = drawn
    bandwidth = fig.axes[0]
    peaks = sorted(line.get_ydata()[0] for line in bandwidth.get_lines()
                   if line.get_linestyle() == "--")
    assert peaks == pytest.approx([H200_PEAK, 2 * H200_PEAK, 4 * H200_PEAK])
    # every k-GPU line stays under k x peak, and above one GPU's peak for k > 1 at its top
    legend = fig.legends[0]
    for handle, text in zip(legend.legend_handles, legend.get_texts()):
        label = text.get_text()
        if " on " not in label:
            continue
        k = int(label.split(" on ")[1].split(" ")[0])
        line = next(l for l in _data_lines(bandwidth) if l.get_color() == handle.get_color()
                    and l.get_marker() == handle.get_marker())
        assert max(line.get_ydata()) < k * H200_PEAK, label
    assert bandwidth.get_ylim()[1] >= 4 * H200_PEAK


def test_legend_and_labels_are_inside_the_figure(drawn):
    _, fig = drawn
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    legend = fig.legends[0].get_window_extent(renderer)
    assert page.x0 <= legend.x0 and legend.x1 <= page.x1
    assert page.y0 <= legend.y0 and legend.y1 <= page.y1
    for ax in fig.axes[:2]:
        assert not legend.overlaps(ax.get_tightbbox(renderer))   # beside the axes, not on them
        for label in (ax.yaxis.label, ax.xaxis.label):
            box = label.get_window_extent(renderer)
            assert page.x0 <= box.x0 and box.x1 <= page.x1, label.get_text()
            assert page.y0 <= box.y0 and box.y1 <= page.y1, label.get_text()


def test_a_skipped_timing_floor_row_is_counted_once_as_a_floor(tmp_path):
    frame = read_results(SHARDED)
    floor = frame.index[frame["case"].astype(str) == "timing_floor"][0]
    frame.loc[floor, "status"] = "skipped"
    info = plot_results(frame, tmp_path / "mg.png", source=SHARDED)
    assert (info.floors, info.not_run, info.skipped) == (3, 0, 0)
