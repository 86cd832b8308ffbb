"""The report in a real browser (headless Chromium through Playwright): the pages of the
committed H100 default run, a sweep, two runs compared, and a multi-GPU run next to a
one-GPU run (different GPUs) open without a console error or a network request, the
table has a row per case and sorts, every chart holds its series, hover shows a case's
median, the legend toggles a series, the samples menu switches size, and a rung keeps
its colour across the page. Expected values are read from the CSVs with pandas.

Run with `pytest -m browser` (skipped without Playwright and a Chromium binary)."""

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("plotly")
pytest.importorskip("jinja2")

from browser_support import launch, open_page  # noqa: E402
from reducebench.render.html.page import write_report  # noqa: E402

pytestmark = pytest.mark.browser

RESULTS = Path(__file__).resolve().parent.parent / "results"
DEFAULT = RESULTS / "h100/default_f32_803a10d.csv"
SWEEP = RESULTS / "h100/sweep_single_6f78c21.csv"
BASE = RESULTS / "h100/compare_base_abb9594.csv"
SLOWED = RESULTS / "h100/compare_slowed_abb9594.csv"
SHARDED = RESULTS / "h200x4/multigpu_sharded_f32_9acad4a.csv"
NCCL = RESULTS / "h200x4/multigpu_nccl_f32_9acad4a.csv"
PAGES = {"default": [DEFAULT], "sweep": [SWEEP], "compare": [BASE, SLOWED],
         "gpus": [SHARDED, NCCL, DEFAULT]}


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def opened(browser, tmp_path_factory):
    """Every page built once and opened once, watched from before it loads."""
    folder = tmp_path_factory.mktemp("pages")
    pages = {}
    for name, files in PAGES.items():
        info = write_report(files, folder / f"{name}.html")
        pages[name] = open_page(browser, info.path)
    return pages


def traces(page, chart: str) -> list[dict]:
    """A chart's traces as Plotly holds them after drawing (arrays as lists)."""
    return page.evaluate("""id => document.getElementById(id).data.map(t => ({
        name: t.name, x: t.x ? Array.from(t.x) : null, y: t.y ? Array.from(t.y) : null,
        visible: t.visible === undefined ? true : t.visible, xaxis: t.xaxis || 'x',
        colour: t.marker && t.marker.color ? t.marker.color : (t.line ? t.line.color : null)
    }))""", chart)


def hover_text(page, chart: str, curve: int, point: int, subplot: str = "xy") -> str:
    """What Plotly's hover layer shows for one point, as a user's pointer would get it."""
    return page.evaluate("""([id, curve, point, subplot]) => {
        const gd = document.getElementById(id);
        Plotly.Fx.hover(gd, [{curveNumber: curve, pointNumber: point}], subplot);
        const layer = gd.querySelector('.hoverlayer');
        return layer ? layer.textContent : '';
    }""", [chart, curve, point, subplot])


@pytest.mark.parametrize("name", list(PAGES))
def test_a_page_opens_without_errors_and_without_the_network(opened, name):
    watched = opened[name]
    assert watched.errors == []
    assert watched.network == []
    charts = watched.page.locator(".plotly-graph-div").count()
    assert charts >= 1
    drawn = watched.page.evaluate("""() => Array.from(document.querySelectorAll(
        '.plotly-graph-div')).filter(d => d.querySelector('.main-svg')).length""")
    assert drawn == charts


@pytest.mark.parametrize("name, table, csv", [("default", "ladder-0", DEFAULT),
                                              ("sweep", "ladder-0", SWEEP),
                                              ("compare", "ladder-0", BASE),
                                              ("compare", "ladder-1", SLOWED),
                                              ("compare", "table-compare-0-1", BASE)])
def test_the_table_has_a_row_per_case(opened, name, table, csv):
    page = opened[name].page
    frame = pd.read_csv(csv)
    assert page.locator(f"#{table} tbody tr").count() == len(frame)
    keys = page.eval_on_selector_all(f"#{table} tbody tr", "rows => rows.map(r => r.dataset.case)")
    assert len(set(keys)) == len(frame)


def test_clicking_a_header_sorts_the_table(opened):
    page = opened["default"].page
    frame = pd.read_csv(DEFAULT)
    header = page.locator("#ladder-0 th", has_text="median us")
    first = "#ladder-0 tbody tr:first-child td:first-child"
    header.click()
    assert page.inner_text(first).strip() == frame.loc[frame["median_us"].idxmin(), "rung"]
    header.click()
    assert page.inner_text(first).strip() == frame.loc[frame["median_us"].idxmax(), "rung"]


def test_the_ladder_chart_of_one_size_holds_a_bar_per_case(opened):
    frame = pd.read_csv(DEFAULT)
    bars = [t for t in traces(opened["default"].page, "chart-ladder-0") if t["xaxis"] == "x"]
    assert [t["name"] for t in bars] == list(frame["rung"])   # the ladder's order
    for t in bars:
        gbps = frame.loc[frame["rung"] == t["name"], "gbps"].item()
        assert t["x"] == [pytest.approx(gbps)]


def test_the_sweep_chart_holds_a_line_per_rung_over_every_size(opened):
    frame = pd.read_csv(SWEEP)
    lines = traces(opened["sweep"].page, "chart-sweep-0")
    bandwidth = [t for t in lines if t["xaxis"] == "x"]
    times = [t for t in lines if t["xaxis"] == "x2"]
    assert {t["name"] for t in bandwidth} == set(frame["rung"]) == {t["name"] for t in times}
    for t in times:
        rows = frame[frame["rung"] == t["name"]].sort_values("n")
        assert t["x"] == list(rows["n"]) and len(t["x"]) == 19
        assert t["y"] == pytest.approx(list(rows["median_us"]))


def test_hover_shows_a_cases_median(opened):
    frame = pd.read_csv(DEFAULT)
    page = opened["default"].page
    bars = traces(page, "chart-ladder-0")
    cub = next(i for i, t in enumerate(bars) if t["name"] == "cub" and t["xaxis"] == "x")
    text = hover_text(page, "chart-ladder-0", cub, 0)
    median = frame.loc[frame["rung"] == "cub", "median_us"].item()
    assert "cub" in text and f"median {median:.2f} us" in text

    sweep = pd.read_csv(SWEEP)
    page = opened["sweep"].page
    lines = traces(page, "chart-sweep-0")
    curve = next(i for i, t in enumerate(lines) if t["name"] == "vector_load" and t["xaxis"] == "x")
    at = lines[curve]["x"].index(2 ** 24)
    text = hover_text(page, "chart-sweep-0", curve, at)
    median = sweep.loc[(sweep["rung"] == "vector_load") & (sweep["n"] == 2 ** 24),
                       "median_us"].item()
    assert "n = 2^24" in text and f"median {median:.2f} us" in text


def test_the_legend_hides_and_shows_a_series_in_both_panels(opened):
    page = opened["sweep"].page
    item = page.locator("#chart-sweep-0 .legend .traces").first
    name = item.locator(".legendtext").text_content().strip()
    toggle = item.locator(".legendtoggle")
    toggle.click()
    page.wait_for_timeout(500)
    hidden = [t for t in traces(page, "chart-sweep-0") if t["name"] == name]
    assert len(hidden) == 2 and all(t["visible"] == "legendonly" for t in hidden)
    toggle.click()
    page.wait_for_timeout(500)
    assert all(t["visible"] is True for t in traces(page, "chart-sweep-0") if t["name"] == name)


def test_the_samples_chart_has_a_box_per_case_and_a_menu_per_size(opened):
    page = opened["default"].page
    boxes = traces(page, "chart-samples-0")
    assert len(boxes) == len(pd.read_csv(DEFAULT))
    assert all(t["visible"] is True for t in boxes)

    sweep = pd.read_csv(SWEEP)
    page = opened["sweep"].page
    boxes = traces(page, "chart-samples-0")
    assert len(boxes) == len(sweep)
    largest = sweep[sweep["n"] == sweep["n"].max()]
    assert sum(t["visible"] is True for t in boxes) == len(largest)   # the largest n first
    # Plotly's menu listens for clicks on its SVG groups, which its other layers cover
    # for the pointer: the clicks are dispatched to them, as the pointer's would be
    page.locator("#chart-samples-0 .updatemenu-header").dispatch_event("click")
    page.wait_for_timeout(500)
    page.locator("#chart-samples-0 .updatemenu-dropdown-button",
                 has_text="n = 2^10 float32").dispatch_event("click")
    page.wait_for_timeout(500)
    shown = [t["name"] for t in traces(page, "chart-samples-0") if t["visible"] is True]
    smallest = sweep[sweep["n"] == 2 ** 10]
    assert len(shown) == len(smallest)
    for name in shown:
        rung, median = name.split(" · ")
        assert median == f"{smallest.loc[smallest['rung'] == rung, 'median_us'].item():.2f} us"


def test_the_comparison_chart_and_a_rungs_colour_across_the_page(opened):
    page = opened["compare"].page
    points = traces(page, "chart-compare-0-1")
    assert sorted(t["name"] for t in points) == sorted(pd.read_csv(BASE)["rung"])
    colours = {t["name"]: t["colour"] for t in points}
    for chart in ("chart-ladder-0", "chart-ladder-1", "chart-samples-0", "chart-samples-1"):
        for t in traces(page, chart):
            rung = t["name"].split(" · ")[0]   # a box is named "rung · median"
            assert t["colour"] == colours[rung], (chart, t["name"])
    swatches = page.eval_on_selector_all(
        "#ladder-0 tbody tr", "rows => rows.map(r => [r.cells[0].innerText.trim(), "
        "r.cells[0].querySelector('.sw').style.background])")
    for rung, swatch in swatches:
        red, green, blue = (int(colours[rung][i:i + 2], 16) for i in (1, 3, 5))
        assert swatch == f"rgb({red}, {green}, {blue})"


def test_different_gpus_are_said_at_the_top_and_multi_gpu_runs_get_scaling_plots(opened):
    page = opened["gpus"].page
    banner = page.locator("#gpu-warning")
    assert banner.is_visible()
    words = banner.inner_text()
    for path in PAGES["gpus"]:
        assert pd.read_csv(path)["gpu"].iloc[0] in words and path.name in words
    assert banner.bounding_box()["y"] < page.locator("section").first.bounding_box()["y"]
    sharded = pd.read_csv(SHARDED)
    lines = [t for t in traces(page, "chart-scaling-0") if t["xaxis"] == "x"]
    assert {t["name"] for t in lines} == {f"{k} GPU(s)" for k in sharded["gpus"].unique()}
    for t in lines:
        k = int(t["name"].split()[0])
        rows = sharded[(sharded["case"] == "sharded_sum") & (sharded["gpus"] == k)]
        assert t["x"] == list(rows.sort_values("n")["n"])
    nccl = pd.read_csv(NCCL)
    collectives = nccl[nccl["case"] != "timing_floor"]
    series = collectives.groupby(["rung", "gpus", "in_place"]).ngroups
    assert len(traces(page, "chart-nccl-1")) == series
