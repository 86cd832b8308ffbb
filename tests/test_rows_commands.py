"""The commands around a measurement take shapes, on the CPU (the host executor of every
plan): `run --shape --metrics` profiles each row case by running that very --shape case
again under ncu (a stand-in ncu here, which runs the child command line it is given and
reports the kernels the child launched), `explain` steps through the row ladder shape by
shape, `sanitize --shape` runs `check --shape` under each tool and names the row
rungs' kernels in its report, and `report` puts a shape run on one page, case by case
and shape by shape."""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS
from reducebench.measuring import counters
from reducebench.results.files import read_results

from cli_runner import invoke, one_error_line

REPO = Path(__file__).resolve().parent.parent
OUR_ROW_RUNGS = [r.name for r in ROW_RUNGS if not r.is_library and not r.dispatch]


# -- run --shape --metrics -----------------------------------------------------------------

def raw_page(kernels: list[tuple[str, int]], elements: int, itemsize: int) -> str:
    """ncu's raw CSV page (as --csv --page raw prints it) for kernels of (name, grid):
    each 1000 ns, reading the input once, 64 registers."""
    metrics = [counters.TIME, counters.DRAM_READ, counters.DRAM_PCT, counters.WARP_INST,
               counters.THREAD_INST, counters.GRID_SIZE, counters.REGISTERS]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(["ID", "Kernel Name", "Grid Size", *metrics])
    writer.writerow(["", "", "", "nsecond", "byte", "%", "inst", "inst", "", "register/thread"])
    for index, (name, grid) in enumerate(kernels):
        writer.writerow([index, name, f"({grid}, 1, 1)", 1000, elements * itemsize, 80.0,
                         elements // 8, elements * 4, grid, 64])
    return "==PROF== Connected to process 1\n" + out.getvalue()


class FakeNcu:
    """ncu as counters.collect runs it: the child `reducebench run ... --profile` it is
    given runs here (through the fake device), and the page lists, for each of the
    child's three profile-mode samples, one kernel per launch of the child's case, named
    as its range filter says. Each profiled command line is kept."""

    def __init__(self) -> None:
        self.children: list[list[str]] = []
        self.filters: list[str] = []

    def __call__(self, argv, timeout):
        from types import SimpleNamespace

        if argv[-1] == "--version":
            return SimpleNamespace(returncode=0, stdout="Version 2025.3.1.0\n", stderr="")
        self.filters.append(argv[argv.index("--nvtx-include") + 1])
        child = list(argv[argv.index("reducebench") + 1:])
        self.children.append(child)
        done = invoke(*child)
        assert done.exit_code == 0, done.output
        (row,) = read_results(Path(child[child.index("--out") + 1])).to_dict("records")
        launches = [(f"{row['rung']}_kernel", int(row["grid"]) or 1)] * max(1, row["launches"])
        itemsize = {"float32": 4, "int32": 4, "float64": 8}.get(row["dtype"], 2)
        page = raw_page(launches * 3, int(row["n"]), itemsize)
        return SimpleNamespace(returncode=0, stdout=page, stderr="")


@pytest.fixture
def fake_ncu(monkeypatch) -> FakeNcu:
    ncu = FakeNcu()
    monkeypatch.setattr(counters, "find_ncu", lambda env=None: "/fake/ncu")
    monkeypatch.setattr(counters, "collect", functools.partial(counters.collect, runner=ncu))
    return ncu


@pytest.fixture(scope="module")
def metrics_run(tmp_path_factory):
    """`run --shape 1000x33,4x2^10 --metrics` on the fake device and the fake ncu: the
    results file, and the fake ncu (one module-wide run: each case runs twice)."""
    import reducebench.device
    from fakes import FakeCliBackend

    patch = pytest.MonkeyPatch()
    ncu = FakeNcu()
    patch.setattr(reducebench.device, "open_backend", lambda device=0: FakeCliBackend())
    patch.setattr(counters, "find_ncu", lambda env=None: "/fake/ncu")
    patch.setattr(counters, "collect", functools.partial(counters.collect, runner=ncu))
    out = tmp_path_factory.mktemp("metrics") / "rows.csv"
    try:
        result = invoke("run", "--shape", "1000x33,4x2^10", "--metrics", "--out", out,
                        "--seed", 3)
    finally:
        patch.undo()
    assert result.exit_code == 0, result.output
    return out, ncu


def test_each_row_case_is_profiled_by_running_that_shape_again(metrics_run):
    out, ncu = metrics_run
    frame = read_results(out)
    assert len(frame) == 2 * len(ROW_RUNGS) == len(ncu.children)
    for child, row in zip(ncu.children, frame.to_dict("records")):
        assert child[:3] == ["run", "--shape", f"{row['rows']}x{row['cols']}"]
        assert "--size" not in child and "--profile" in child
        assert child[child.index("--rung") + 1] == row["rung"]
    assert ncu.filters[0] == "reducebench@row_thread float32 shape=1000x33 block=256/"
    assert "reducebench@row_group float32 shape=1000x33 block=256 width=8/" in ncu.filters


def test_each_row_case_gets_its_counters_from_its_own_launches(metrics_run):
    out, _ = metrics_run
    frame = read_results(out)
    assert set(frame["status"]) == {"ok"} and frame["ncu_error"].isna().all()
    for row in frame.to_dict("records"):
        assert row["ncu_kernels"] == 1, row["rung"]   # one launch a row case
        assert row["ncu_dram_read_per_input"] == 1.0
        if row["rung"] in OUR_ROW_RUNGS:
            assert str(row["ncu_grids"]) == str(row["grid"])
    grids = {(r["rung"], r["rows"]): str(r["ncu_grids"]) for r in frame.to_dict("records")}
    # by hand: a warp a row, 8 rows a block of 256: 125 blocks for 1000 rows, 1 for 4
    assert grids[("row_warp", 1000)] == "125" and grids[("row_warp", 4)] == "1"
    assert grids[("row_block", 1000)] == "1000"


def test_a_users_row_kernel_and_row_function_are_profiled_as_shape_runs(
        tmp_path, fake_device, fake_ncu):
    functions = tmp_path / "rows.py"
    functions.write_text("def row_sum(x):\n    return x.sum(axis=1, dtype=x.dtype)\n")
    out = tmp_path / "mine.csv"
    result = invoke("run", "--shape", "1000x33", "--dtype", "int32", "--rung", "none",
                    "--kernel", "examples/row_sum.cu:row_sum_warp4", "--grid",
                    "lanes-per-row=32", "--callable", f"{functions}:row_sum", "--metrics",
                    "--out", out)
    assert result.exit_code == 0, result.output
    kernel, function = fake_ncu.children
    assert kernel[:3] == ["run", "--shape", "1000x33"]
    at = kernel.index("--kernel")
    assert kernel[at:at + 6] == ["--kernel", "examples/row_sum.cu:row_sum_warp4", "--finish",
                                 "rows", "--grid", "lanes-per-row=32"]
    assert function[:3] == ["run", "--shape", "1000x33"]
    assert function[function.index("--callable") + 1] == f"{functions}:row_sum"
    frame = read_results(out)
    assert list(frame["ncu_grids"].map(str)) == ["125", "1"]
    assert set(frame["status"]) == {"ok"}


# -- explain -----------------------------------------------------------------------------------

def test_explain_steps_through_the_row_ladder_as_its_headers_say(metrics_run):
    from reducebench.analysis.ladder_steps import all_steps

    rows = [(s.before, s.after) for s in all_steps() if s.after in ROW_LADDER]
    # each row kernel's header: "Changed from <the rung before it>:"
    assert rows == list(zip(OUR_ROW_RUNGS, OUR_ROW_RUNGS[1:]))
    out, _ = metrics_run
    result = invoke("explain", "--from", out, "--shape", "1000x33", "--format", "text",
                    width=200)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "shape = 1000x33 (33,000 elements) float32" in said
    for before, after in rows:
        assert f"{before} -> {after}" in said
    assert "smem_strided" not in said and "no textbook claim for this pair" in said
    assert "Changed from" not in said and "a row is shared by a whole warp" in said


def test_explain_asks_which_shape_of_several_and_names_them(metrics_run):
    out, _ = metrics_run
    line = one_error_line(invoke("explain", "--from", out),
                          "holds several shapes or dtypes", "pick one with --shape")
    assert "float32 shape=2^2x2^10" in line and "float32 shape=1000x33" in line
    one_error_line(invoke("explain", "--from", out, "--shape", "5x5"),
                   "no verified rows for shape=5x5")
    one_error_line(invoke("explain", "--from", out, "--shape", "2^1..2^2x4"),
                   "explain takes one shape")
    shown = invoke("explain", "row_warp", "--from", out, "--shape", "4x1024", "--format",
                   "text", width=200)
    assert shown.exit_code == 0, shown.output
    assert "row_group -> row_warp" in " ".join(shown.output.split())


# -- sanitize --shape --------------------------------------------------------------------------

@pytest.fixture
def stand_in_sanitizer(tmp_path, monkeypatch):
    """A compute-sanitizer that records the program it is given and reports an invalid
    read in row_warp's kernel."""
    argv_file = tmp_path / "argv.json"
    fake = tmp_path / "compute-sanitizer"
    fake.write_text(f"#!{sys.executable}\nimport json, sys\n"
                    f"json.dump(sys.argv, open({str(argv_file)!r}, 'w'))\n"
                    "print('========= Invalid __global__ read of size 4 bytes')\n"
                    "print('=========     at void reduce_rows_warp<float, float, 256u>"
                    "(const float *, float *, long long, long long)+0x1b0')\n"
                    "print('========= ERROR SUMMARY: 1 error')\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return argv_file


def test_sanitize_runs_check_by_shape_and_names_the_row_kernel_it_blames(
        tmp_path, stand_in_sanitizer, fake_device):
    report = tmp_path / "s.md"
    result = invoke("sanitize", "--shape", "1000x33", "--tool", "memcheck", "--kernel",
                    f"{REPO}/tests/fixtures/kernels/rows_user.cu:row_sum_block", "--grid",
                    "lanes-per-row=block", "--out", report, width=200)
    assert result.exit_code == 1, result.output   # the tool found an error
    argv = json.loads(stand_in_sanitizer.read_text())
    child = argv[argv.index("reducebench") + 1:]
    assert child[:3] == ["check", "--shape", "1000x33"]
    # torch_rows is a library; row_auto is checked as the variant it runs, as auto is
    checked_rungs = [r.name for r in ROW_RUNGS if not r.is_library]
    assert child[child.index("--rung") + 1] == ",".join(checked_rungs)
    assert child[-4:] == ["--kernel", f"{REPO}/tests/fixtures/kernels/rows_user.cu:"
                          "row_sum_block", "--grid", "lanes-per-row=block"]
    checked = invoke(*child)                       # what each tool runs, on the fake device
    assert checked.exit_code == 0, checked.output
    for name in (*checked_rungs, "row_sum_block"):
        assert f"{name} float32 shape=1000x33" in checked.output
    text = report.read_text()
    assert "shape=1000x33, float32, block 256" in text
    assert "| row_warp | dirty (1) |" in text and "| row_block | clean |" in text
    assert "| row_sum_block | clean |" in text and "torch_rows" not in text.split("##")[0]
    assert "compute-sanitizer, shape=1000x33 float32 block=256" in " ".join(
        result.output.split())


def test_sanitize_with_a_shape_and_a_size_is_one_line(fake_device):
    one_error_line(invoke("sanitize", "--shape", "4x4", "--size", "2^10"),
                   "--size and --shape: give one")
    one_error_line(invoke("sanitize", "--shape", "4x4", "--rung", "shfl"),
                   "shfl sums the whole array to one value")
    assert not fake_device.opened


# -- report of a --shape run -------------------------------------------------------------------

@pytest.fixture(scope="module")
def shape_page(tmp_path_factory):
    """Two shapes of one n (1000x33, 33x1000) and a third, run twice (BASE, NEW), and
    the page of each alone and of both."""
    pytest.importorskip("plotly")
    pytest.importorskip("jinja2")
    import reducebench.device
    from fakes import FakeCliBackend

    folder = tmp_path_factory.mktemp("page")
    patch = pytest.MonkeyPatch()
    patch.setattr(reducebench.device, "open_backend", lambda device=0: FakeCliBackend())
    try:
        for name in ("base", "new"):
            done = invoke("run", "--shape", "1000x33,33x1000,2^10x8", "--rung",
                          "row_warp,row_block", "--out", folder / f"{name}.csv")
            assert done.exit_code == 0, done.output
    finally:
        patch.undo()
    pages = {}
    for name, files in (("one", ["base.csv"]), ("two", ["base.csv", "new.csv"])):
        done = invoke("report", *[folder / f for f in files], "-o", folder / f"{name}.html")
        assert done.exit_code == 0, done.output
        pages[name] = (folder / f"{name}.html").read_text(encoding="utf-8")
    return folder, pages


def test_the_page_has_a_row_per_case_named_by_its_shape(shape_page):
    from test_html_report import rows_of

    folder, pages = shape_page
    frame = pd.read_csv(folder / "base.csv")
    rows = rows_of(pages["one"])["ladder-0"]
    assert len(rows) == len(frame) == 6
    assert len({case for case, _ in rows}) == 6     # two shapes of one n stay apart
    shown = {(cells[0], cells[2]) for _, cells in rows}
    assert shown == {(rung, shape) for rung in ("row_warp", "row_block")
                     for shape in ("1000x33", "33x1000", "2^10x2^3")}
    assert {case for case, _ in rows} >= {"row_warp float32 shape=1000x33 block=256",
                                          "row_warp float32 shape=33x1000 block=256"}
    # in order of n, then rows: 2^10x2^3 (8192 elements), 33x1000, 1000x33 (33000)
    assert [cells[2] for _, cells in rows][::2] == ["2^10x2^3", "33x1000", "1000x33"]


def test_the_sweep_chart_has_a_point_per_shape_and_the_samples_a_menu_entry(shape_page):
    from reducebench.render.html import charts
    from reducebench.render.html.run_files import load_runs

    folder, pages = shape_page
    run = load_runs([folder / "base.csv"])[0]
    lines = charts.series(charts.verified_rows(run))
    assert [label for _, label, _ in lines] == ["row_warp", "row_block"]
    assert all(len(rows) == 3 for _, _, rows in lines)
    page = pages["one"]
    assert "shape (rows x cols), by elements" in page
    for shape in ("1000x33", "33x1000", "2^10x2^3"):
        assert f"shape = {shape} float32" in page     # a samples menu entry per shape


def test_two_shape_runs_are_compared_shape_by_shape(shape_page):
    from test_html_report import rows_of

    _, pages = shape_page
    rows = next(table for name, table in rows_of(pages["two"]).items()
                if name.startswith("table-compare"))
    assert sorted((cells[0], cells[2]) for _, cells in rows) == sorted(
        (rung, shape) for rung in ("row_warp", "row_block")
        for shape in ("1000x33", "33x1000", "2^10x2^3"))
