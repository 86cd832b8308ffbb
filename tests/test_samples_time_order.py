"""The one drawing of a case's samples in time order (render/samples_plot.py), shared by
show-samples' per-case figure and its overview panels: recorded on a stand-in axes."""

import pandas as pd

from reducebench.render.samples_plot import _draw_time_order


class Axes:
    def __init__(self):
        self.calls = []

    def plot(self, x, y, marker, **style):
        self.calls.append(("plot", list(x), marker, style))

    def axhline(self, y, **style):
        self.calls.append(("median", y, style["color"], style["linewidth"]))


ROWS = pd.DataFrame({"index": [0, 1, 2, 3, 4], "time_us": [5.0, 7.0, 6.0, 9.0, 1.0],
                     "kept": [True, True, True, True, False], "phase": [0, 0, 1, 1, 1]})


def test_a_figure_panel_draws_each_phase_its_median_and_the_discarded():
    ax = Axes()
    drawn = _draw_time_order(ROWS, ax, small=False, labelled=True)
    assert [(name, colour, list(part["index"])) for name, colour, part in drawn] == [
        ("phase 0", "tab:blue", [0, 1]), ("phase 1", "tab:orange", [2, 3])]
    assert ax.calls == [
        ("plot", [0, 1], ".", {"markersize": 3, "color": "tab:blue", "label": "phase 0"}),
        ("median", 6.0, "tab:blue", 1),                 # median of 5 and 7
        ("plot", [2, 3], ".", {"markersize": 3, "color": "tab:orange", "label": "phase 1"}),
        ("median", 7.5, "tab:orange", 1),               # median of 6 and 9
        ("plot", [4], "x", {"markersize": 4, "color": "0.5", "label": "discarded (1)"})]


def test_an_overview_panel_is_smaller_and_has_no_legend():
    ax = Axes()
    _draw_time_order(ROWS[ROWS["phase"] == 0], ax, small=True, labelled=False)
    assert ax.calls == [("plot", [0, 1], ".", {"markersize": 2, "color": "tab:blue"}),
                        ("median", 6.0, "tab:blue", 0.8)]
