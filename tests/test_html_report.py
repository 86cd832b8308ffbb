"""`reducebench report` without a browser: the page's assembly from committed real runs
(one row per case, the run's metadata, the comparison's verdicts, the different-GPU
warning, nothing fetched from the network) and bad input as one line and exit 2. Every
expected value is read from the CSV with pandas here, not through reducebench. Pages
are built once per module; tests/test_report_browser.py opens them in Chromium."""

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("plotly")
pytest.importorskip("jinja2")

from reducebench.cli import cli  # noqa: E402
from reducebench.render.html.run_files import load_runs  # noqa: E402
from reducebench.render.html.report_tables import ladder_table, status_of  # noqa: E402

RESULTS = Path(__file__).resolve().parent.parent / "results"
DEFAULT = RESULTS / "h100/default_f32_803a10d.csv"
BASE = RESULTS / "h100/compare_base_abb9594.csv"
SLOWED = RESULTS / "h100/compare_slowed_abb9594.csv"
H200 = RESULTS / "h200/half_9acad4a.csv"


def report(*args) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["report", *map(str, args)])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    """The default run, the two compared runs, and two GPUs' runs together, each written
    by the command once."""
    folder = tmp_path_factory.mktemp("pages")
    out = {}
    for name, files in (("default", [DEFAULT]), ("compare", [BASE, SLOWED]),
                        ("gpus", [BASE, H200])):
        code, output = report(*files, "-o", folder / f"{name}.html")
        assert code == 0, output
        assert f"wrote {folder / name}.html" in output
        out[name] = (folder / f"{name}.html").read_text(encoding="utf-8")
    return out


class Rows(HTMLParser):
    """Every table's body rows: table id -> [(data-case, [cell texts])]."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list] = {}
        self._table = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("id", ""), [])
        elif tag == "tr" and self._table is not None and "data-case" in attrs:
            self._row = (attrs["data-case"], [])
            self._table.append(self._row)
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self._row[1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr":
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def rows_of(page: str) -> dict[str, list]:
    parser = Rows()
    parser.feed(page)
    return parser.tables


def test_suspect_means_a_right_sum_with_an_impossible_time_on_the_page_and_in_its_doc(pages):
    # README and docs/verification.md: `suspect` is a verified sum timed faster than the
    # memory or the timing floor allows; throttled is another status word
    legend = re.search(r'<p class="note">One row per case.*?</p>', pages["default"],
                       re.S).group(0)
    meaning = re.search(r'<span class="suspect">suspect</span>: ([^;]*)', legend).group(1)
    assert "impossible time" in meaning and "throttled" not in meaning, meaning
    assert '<span class="ok">throttled</span>: verified' in legend
    doc = " ".join((RESULTS.parent / "docs" / "report.md").read_text().split())
    said = re.search(r"`suspect` \(([^)]*)", doc).group(1)
    assert "impossible time" in said and "throttled" not in said, said

def test_the_ladder_table_has_one_row_per_case(pages):
    frame = pd.read_csv(DEFAULT)
    rows = rows_of(pages["default"])["ladder-0"]
    assert len(rows) == len(frame) == 25
    assert len({case for case, _ in rows}) == len(rows)   # every case once
    by_rung = {cells[0]: cells for _, cells in rows}
    for record in frame.to_dict("records"):
        cells = by_rung[record["rung"]]
        assert f"{record['median_us']:.2f}" in cells           # its median
        assert f"{record['pct_ceiling']:.1f}" in cells         # % of the read ceiling
        assert cells[-1] == "verified"


def test_the_page_shows_the_runs_metadata(pages):
    first = pd.read_csv(DEFAULT, dtype=str).iloc[0]
    meta = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", pages["default"]))
    assert meta["GPU"] == first["gpu"] == "NVIDIA H100 80GB HBM3"
    assert meta["driver (CUDA version)"] == first["driver"]
    assert meta["CuPy"] == first["cupy"]
    assert meta["commit"] == first["git_commit"] == "803a10d"
    assert meta["seed"] == first["seed"]
    assert meta["inputs"] == first["inputs"]
    assert meta["timing mode"] == first["timing"]
    assert meta["L2 before each sample"] == first["mode"]
    clock = float(first["sm_clock_max_mhz"])
    assert meta["SM clock"].startswith(f"{clock:.0f} MHz")
    samples = pd.read_csv(DEFAULT.with_name(DEFAULT.stem + ".samples.csv"))
    assert meta["samples"].startswith(f"{len(samples):,} in ")


def test_the_page_fetches_nothing_from_the_network(pages):
    """Plotly's JavaScript is inline, whole; outside it (its code names URLs it never
    fetches for these charts: map tiles, its logo's link), no markup or style points at
    the network. The browser tests watch the requests themselves."""
    from plotly.offline import get_plotlyjs

    library = get_plotlyjs()
    for page in pages.values():
        assert page.count(library) == 1
        page = page.replace(library, "")
        assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
        assert not re.search(r"<script[^>]*\bsrc=", page, re.I)
        assert not re.search(r"<link\b", page, re.I)
        assert not re.search(r"""url\(\s*["']?(https?:)?//""", page, re.I)
        assert not re.search(r"@import", page)


def test_two_runs_get_the_comparison_with_verdicts_and_p_values(pages):
    base, new = pd.read_csv(BASE), pd.read_csv(SLOWED)
    rows = rows_of(pages["compare"])["table-compare-0-1"]
    assert len(rows) == len(base) == len(new) == 4
    header = re.search(r'<table class="sortable" id="table-compare-0-1">.*?</thead>',
                       pages["compare"], re.S).group(0)
    names = re.findall(r">([^<>]+)</th>", header)
    for case, cells in rows:
        cell = dict(zip(names, cells))
        b = base[base["rung"] == cell["rung"]]["median_us"].item()
        n = new[new["rung"] == cell["rung"]]["median_us"].item()
        assert cell["base us"] == f"{b:.2f}" and cell["new us"] == f"{n:.2f}"
        assert cell["change %"] == f"{100 * (n / b - 1):+.1f}"
        assert cell["rule"] == "samples" and cell["p"] and cell["interval"].startswith("[")
    slowed = dict(zip(names, dict(rows)[next(c for c, _ in rows if "grid_stride" in c)]))
    assert slowed["verdict"] == "SLOWER"   # the slowed file's kernel, 4.7% slower
    assert 'id="gpu-warning"' not in pages["compare"]


def test_files_of_different_gpus_get_a_warning_at_the_top(pages):
    page = pages["gpus"]
    banner = re.search(r'<div class="banner" id="gpu-warning"[^>]*>(.*?)</div>', page, re.S)
    assert banner, "no different-GPU banner"
    assert page.index('id="gpu-warning"') < page.index('<section')  # above every section
    for path in (BASE, H200):
        gpu = pd.read_csv(path)["gpu"].iloc[0]
        assert gpu in banner.group(1) and path.name in banner.group(1)
    assert 'id="gpu-warning"' not in pages["default"]


def test_the_samples_chart_shows_the_samples_each_median_summarises():
    """The samples drawn for a case are the ones its row's median was taken over (the
    kept samples of its fastest phase), for every case of the default run."""
    run = load_runs([DEFAULT])[0]
    samples = pd.read_csv(DEFAULT.with_name(DEFAULT.stem + ".samples.csv"))
    assert samples["phase"].max() > 0   # some cases were sampled in phases
    for row in pd.read_csv(DEFAULT).to_dict("records"):
        times = run.times_of(row)
        assert len(times) == row["samples"], row["rung"]
        assert float(np.median(times)) == pytest.approx(row["median_us"], rel=1e-6)


def test_status_words(tmp_path):
    """verified, throttled, suspect (with its note), FAIL and error (with the error)."""
    frame = pd.read_csv(BASE)
    frame["error"] = frame["error"].astype(object)
    frame["note"] = ""
    frame.loc[0, "throttled"] = True
    frame["verified"] = frame["verified"].astype(object)
    frame.loc[3, ["status", "note", "verified"]] = ["suspect", "faster than the memory allows",
                                                    False]
    frame.loc[1, ["status", "error", "verified"]] = ["FAIL", "sum 12 != 13", False]
    frame.loc[2, ["status", "error", "verified"]] = ["error", "illegal address", False]
    path = tmp_path / "statuses.csv"
    frame.to_csv(path, index=False)
    run = load_runs([path])[0]
    assert run.samples is None and "no samples file" in run.samples_note
    table = ladder_table(run, {})
    words = {key.split()[0]: cells[-1] for key, cells in zip(table.row_keys, table.rows)}
    expected = {frame.loc[0, "rung"]: "throttled", frame.loc[1, "rung"]: "FAIL",
                frame.loc[2, "rung"]: "error", frame.loc[3, "rung"]: "suspect"}
    assert {rung: words[rung].text for rung in expected} == expected
    assert words[frame.loc[1, "rung"]].title == "sum 12 != 13"
    assert words[frame.loc[3, "rung"]].title == "faster than the memory allows"
    assert status_of({"status": "ok", "throttled": "False"}) == "verified"


@pytest.mark.parametrize("make, fragment", [
    (lambda d: d, "is a folder"),
    (lambda d: _write(d / "empty.csv", ""), "the file is empty"),
    (lambda d: _write(d / "notes.csv", "a,b\n1,2\n"), "not a reducebench results file"),
    (lambda d: d / "missing.csv", "no such file"),
    (lambda d: DEFAULT.with_name(DEFAULT.stem + ".samples.csv"), "is a samples file"),
], ids=["folder", "empty", "not-results", "missing", "samples-file"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, make, fragment):
    code, output = report(make(tmp_path), "-o", tmp_path / "out.html")
    assert code == 2
    assert output.count("\n") == 1 and fragment in output and "Traceback" not in output
    assert not (tmp_path / "out.html").exists()


@pytest.mark.parametrize("out, fragment", [("page.csv", "ending in .html"),
                                           ("nowhere/page.html", "does not exist")])
def test_a_bad_output_is_one_line_and_exit_2(tmp_path, out, fragment):
    code, output = report(BASE, "-o", tmp_path / out)
    assert code == 2 and output.count("\n") == 1 and fragment in output


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---- run --report -----------------------------------------------------------------------

def test_run_report_writes_the_page_beside_the_csv_even_when_interrupted(fake_device,
                                                                         tmp_path):
    import os
    import signal

    def interrupt(entered: int) -> None:
        # 2 cases in 5 interleaved rounds: the 10th sampling is cub's last round, after
        # shfl's last round wrote its row: one case done
        if entered == 10:
            os.kill(os.getpid(), signal.SIGINT)

    fake_device.settings["hooks"] = {"sample": interrupt}
    out = tmp_path / "run.csv"
    result = CliRunner().invoke(cli, ["run", "--size", "2^10", "--rung", "shfl,cub",
                                      "--seed", "3", "--report", "--out", str(out)])
    assert result.exit_code == 130, result.output
    page = out.with_suffix(".html")
    assert page.exists(), result.output
    assert f"report: {page}" in " ".join(result.output.split())
    rows = rows_of(page.read_text(encoding="utf-8"))["ladder-0"]
    assert [case.split()[0] for case, _ in rows] == list(pd.read_csv(out)["rung"]) == ["shfl"]


def test_read_columns_are_shown_where_the_file_has_them(tmp_path):
    """read_us and pct_read (the read-only time of the input and the median's share of
    it) get their columns, pct_read with a bar; a file without them gets neither."""
    frame = pd.read_csv(BASE)
    frame["read_us"] = frame["median_us"] * 0.9
    frame["pct_read"] = 90.0
    path = tmp_path / "read.csv"
    frame.to_csv(path, index=False)
    table = ladder_table(load_runs([path])[0], {})
    labels = [h.label for h in table.headers]
    assert "read us" in labels and "% read" in labels
    for cells in table.rows:
        read = cells[labels.index("% read")]
        assert read.text == "90.0" and read.bar == 90.0
    plain = [h.label for h in ladder_table(load_runs([BASE])[0], {}).headers]
    assert "read us" not in plain and "% read" not in plain


def test_counters_and_explain_steps_of_a_metrics_run():
    from reducebench.render.html.report_tables import counters_table
    from reducebench.render.html.verdicts import steps

    path = RESULTS / "h100/metrics_f32_d016c49.csv"
    frame = pd.read_csv(path)
    counted = frame.filter(like="ncu_").drop(
        columns=["ncu_version", "ncu_clock_control", "ncu_kernel_us", "ncu_grids",
                 "ncu_stall_top"], errors="ignore").apply(pd.to_numeric, errors="coerce")
    run = load_runs([path])[0]
    table = counters_table(run, {})
    assert len(table.rows) == int(counted.notna().any(axis=1).sum()) > 0
    views = steps(run)
    assert len(views) == 1 and views[0].steps
    rungs = set(frame["rung"])
    assert all(s.before in rungs and s.after in rungs and s.verdict for s in views[0].steps)
    assert counters_table(load_runs([BASE])[0], {}) is None   # no counters: no section


def test_a_multi_gpu_file_gets_its_tables_not_the_ladders():
    from reducebench.render.html.report_tables import multigpu_tables, timing_floors

    path = RESULTS / "h200x4/multigpu_sharded_f32_9acad4a.csv"
    frame = pd.read_csv(path)
    run = load_runs([path])[0]
    assert run.kind == "multigpu" and run.samples is None
    tables = multigpu_tables(run)
    assert [t.id for t in tables] == ["sharded-0"]
    assert len(tables[0].rows) == int((frame["case"] == "sharded_sum").sum())
    floors = frame[frame["case"] == "timing_floor"].sort_values("gpus")
    assert timing_floors(run) == [f"k={k}: {us:.2f} us"
                                  for k, us in zip(floors["gpus"], floors["median_us"])]


def test_an_unreadable_samples_file_is_said_on_the_console_and_the_page_still_written(tmp_path):
    results = tmp_path / "run.csv"
    results.write_bytes(BASE.read_bytes())
    (tmp_path / "run.samples.csv").write_text("garbage,,\n1,2\n")
    result = CliRunner().invoke(cli, ["report", str(results), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r.html").exists()
    notes = [line for line in result.output.splitlines() if "note:" in line]
    assert len(notes) == 1 and "run.samples.csv" in notes[0], result.output
    assert "without their samples" in notes[0]


def test_a_missing_samples_file_is_no_console_note(tmp_path):
    results = tmp_path / "run.csv"
    results.write_bytes(BASE.read_bytes())
    result = CliRunner().invoke(cli, ["report", str(results), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0 and "note:" not in result.output, result.output


@pytest.mark.parametrize("garbage", [b"run_id\rrung,n\n1,2\n", bytes(range(1, 256))])
def test_a_samples_file_that_is_not_csv_at_all_is_a_note_not_a_traceback(tmp_path, garbage):
    results = tmp_path / "run.csv"
    results.write_bytes(BASE.read_bytes())
    (tmp_path / "run.samples.csv").write_bytes(garbage)
    result = CliRunner().invoke(cli, ["report", str(results), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0 and result.exception is None, result.output
    assert "note:" in result.output and "run.samples.csv" in result.output
