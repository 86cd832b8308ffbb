"""`compare`: verdicts, thresholds, warnings, baseline ratios and the CLI's formats and
errors, on the small results files under tests/fixtures/ (see make_fixtures.py)."""

from __future__ import annotations

import csv
import io
import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest

from reducebench.analysis.compare import (FAILED, FASTER, SAME, SLOWER, baseline_ratios, compare_runs,
                                 geometric_mean)
from reducebench.core.errors import UsageError
from reducebench.results.files import read_results
from cli_runner import invoke

FIXTURES = Path(__file__).parent / "fixtures"
BASE = FIXTURES / "compare_base.csv"
NEW = FIXTURES / "compare_new.csv"
A100 = FIXTURES / "compare_a100_warm.csv"
SWEEP = FIXTURES / "sweep_small.csv"
M20, M24 = 2**20, 2**24


def row(comparison, rung: str, n: int):
    rows = comparison.rows
    found = rows[(rows["rung"] == rung) & (rows["n"] == n)]
    assert len(found) == 1, (rung, n, found)
    return found.iloc[0]


@pytest.fixture(scope="module")
def base():
    return read_results(BASE)


@pytest.fixture(scope="module")
def new():
    return read_results(NEW)


@pytest.fixture(scope="module")
def comparison(base, new):
    return compare_runs(base, new, threshold_pct=2.0)


# ---- compare_runs ----------------------------------------------------------------------------

def test_verdicts(comparison):
    assert row(comparison, "shfl", M24)["verdict"] == FASTER
    assert row(comparison, "shfl", M24)["ratio"] == pytest.approx(0.88)
    assert row(comparison, "shfl", M24)["change_pct"] == pytest.approx(-12.0)
    assert row(comparison, "smem_sequential", M24)["verdict"] == SLOWER
    assert row(comparison, "smem_sequential", M20)["verdict"] == SAME   # +1% < 2%
    assert row(comparison, "cub", M24)["verdict"] == SAME               # +1.5% < 2%


def test_noise_widens_the_band(comparison):
    """+4% is beyond the 2% threshold, but within vector_load's 5% noise: SAME."""
    r = row(comparison, "vector_load", M24)
    assert r["change_pct"] == pytest.approx(4.0)
    assert r["band_pct"] == pytest.approx(5.0)
    assert r["verdict"] == SAME


def test_noise_alone_decides_without_threshold(base, new):
    c = compare_runs(base, new, threshold_pct=0)
    cub = row(c, "cub", M24)               # +1.5%, noise 0.7% / 0.8%
    assert cub["band_pct"] == pytest.approx(0.8)
    assert cub["verdict"] == SLOWER
    assert row(c, "vector_load", M24)["verdict"] == SAME   # +4% within 5% noise


@pytest.mark.parametrize("threshold, shown", [(-0.5, "-0.5"), (float("nan"), "nan"),
                                              (float("inf"), "inf")])
def test_a_threshold_below_zero_or_not_finite_is_refused_with_its_value(base, new, threshold,
                                                                         shown):
    with pytest.raises(UsageError) as refused:
        compare_runs(base, new, threshold_pct=threshold)
    assert str(refused.value) == f"threshold {shown} must be a percentage of 0 or more"


def test_threshold(base, new):
    c = compare_runs(base, new, threshold_pct=0.5)
    assert row(c, "cub", M24)["verdict"] == SLOWER   # +1.5% > max(0.5%, 0.8% noise)
    assert row(c, "smem_sequential", M20)["verdict"] == SLOWER
    c = compare_runs(base, new, threshold_pct=10)
    assert row(c, "smem_sequential", M24)["verdict"] == SAME
    assert row(c, "shfl", M24)["verdict"] == FASTER  # -12% is still beyond 10%
    with pytest.raises(UsageError):
        compare_runs(base, new, threshold_pct=-1)


def test_failed_rows_are_named_not_timed(comparison):
    r = row(comparison, "gridstride_atomic", M24)
    assert r["verdict"] == FAILED
    assert pd.isna(r["ratio"])
    assert r["base_status"] == "ok" and r["new_status"] == "FAIL"
    assert r["note"].startswith("new FAIL: result")
    assert list(comparison.failed["rung"]) == ["gridstride_atomic"]
    assert set(comparison.regressions["rung"]) == {"smem_sequential", "gridstride_atomic"}


def test_one_sided_rows(comparison):
    assert list(comparison.only_base["rung"]) == ["shfl_unroll", "shfl_unroll"]
    assert list(comparison.only_base["n"]) == [M20, M24]
    assert list(comparison.only_new["rung"]) == ["single_pass", "single_pass"]
    counts = comparison.counts()
    assert counts == {"FASTER": 2, "SLOWER": 1, "SAME": 6, "NOISY": 0, "FAILED": 1,
                      "SKIPPED": 0, "SUSPECT": 0, "ONLY_BASE": 2, "ONLY_NEW": 2}
    everything = comparison.all_rows()
    assert len(everything) == 10 + 4
    assert set(everything["verdict"]) >= {"ONLY_BASE", "ONLY_NEW"}


def test_geometric_mean_per_rung(comparison):
    geo = comparison.geomean.set_index("rung")
    assert geo.loc["shfl", "ratio"] == pytest.approx(0.88)
    assert geo.loc["smem_sequential", "ratio"] == pytest.approx((1.06 * 1.01) ** 0.5)
    assert geo.loc["gridstride_atomic", "rows"] == 1      # the failed row is not averaged
    assert list(comparison.geomean["rung"])[0] == "smem_sequential"   # ladder order
    assert geometric_mean([2.0, 0.5]) == pytest.approx(1.0)


WITHOUT_ROUNDS = ("BASE and NEW were measured without rounds (results schema 4 or older, "
                  "or --rounds 1): verdicts come from samples of one process and cannot "
                  "see run-to-run variation (docs/samples.md)")


def test_same_file_warns_that_it_is_one_run_and_is_all_same(base):
    c = compare_runs(base, base)
    assert c.warnings[0] == ("BASE and NEW are the same run (5d0c11aa20b1): every time is "
                             "compared with itself")
    assert c.warnings[1:] == [WITHOUT_ROUNDS]  # the fixtures are single-round files
    assert set(c.rows["verdict"]) == {SAME}
    assert c.overall_geomean == pytest.approx(1.0)


def test_a_run_and_its_continuation_share_a_run_and_say_so(base):
    import pandas as pd

    continued = pd.concat([base, base.assign(run_id="0123456789ab", n=base["n"] * 2)],
                          ignore_index=True)
    c = compare_runs(base, continued)
    assert ("BASE and NEW share run(s) 5d0c11aa20b1: the rows of those runs are compared "
            "with themselves") in c.warnings, c.warnings


def test_two_runs_are_not_called_the_same_run(base):
    c = compare_runs(base, read_results(NEW))
    assert not any("same run" in w for w in c.warnings), c.warnings


def test_mismatched_gpu_driver_and_mode_warn(base):
    c = compare_runs(base, read_results(A100))
    text = "\n".join(c.warnings)
    assert "GPUs differ" in text and "NVIDIA A100-SXM4-80GB" in text
    assert "drivers differ" in text and "12.8" in text
    assert "cold/warm L2 modes differ" in text and "warm" in text


def test_duplicates_and_nothing_in_common(base):
    doubled = pd.concat([base, base])
    c = compare_runs(doubled, base)
    assert any("repeated" in w for w in c.warnings)
    other = base.assign(n=base["n"] * 2)
    c = compare_runs(base, other)
    assert len(c.rows) == 0 and len(c.only_base) == len(base)
    assert any("no (rung, dtype, n, block, params) in common" in w for w in c.warnings)


# ---- baseline_ratios ---------------------------------------------------------------------

def test_baseline_ratios():
    frame = read_results(SWEEP)
    r = baseline_ratios(frame, "cub")
    cub = r[r["rung"] == "cub"]
    assert (cub["ratio"] == 1.0).all()
    # every (n, dtype) of the file has its own baseline
    assert len(r[["n", "dtype"]].drop_duplicates()) == 16
    one = r[(r["rung"] == "shfl") & (r["dtype"] == "float64") & (r["n"] == 2**24)].iloc[0]
    raw = frame.set_index(["rung", "dtype", "n"])["median_us"]
    expected = raw[("shfl", "float64", 2**24)] / raw[("cub", "float64", 2**24)]
    assert one["ratio"] == pytest.approx(expected)
    assert one["speedup"] == pytest.approx(1 / expected)
    failed = r[(r["rung"] == "vector_load") & (r["n"] == 2**16)].iloc[0]
    assert failed["status"] == "FAIL" and pd.isna(failed["ratio"])


def test_baseline_rung_absent():
    with pytest.raises(UsageError, match="'single_pass' is not in the results"):
        baseline_ratios(read_results(SWEEP), "single_pass")
    frame = read_results(SWEEP)
    frame.loc[frame["rung"] == "cub", "status"] = "FAIL"
    with pytest.raises(UsageError, match="no verified row"):
        baseline_ratios(frame, "cub")


# ---- the command ---------------------------------------------------------------------------

def test_cli_table():
    result = invoke("compare", BASE, NEW)
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in ("FASTER", "SLOWER", "SAME", "FAILED", "only in BASE", "only in NEW",
                 "geometric mean", "2 faster, 1 slower, 6 same"):
        assert text in out


def test_cli_refuses_a_file_with_a_word_for_a_size_in_one_line(tmp_path):
    lines = BASE.read_text().splitlines(keepends=True)
    header = lines[0].rstrip("\r\n").split(",")
    cells = lines[1].rstrip("\r\n").split(",")
    cells[header.index("n")] = "abc"
    bad = tmp_path / "word_for_n.csv"
    bad.write_text(lines[0] + ",".join(cells) + "\r\n" + "".join(lines[2:]))
    for args in (("compare", bad, BASE), ("compare", BASE, bad), ("compare", bad, "--baseline", "cub")):
        result = invoke(*args)
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "line 2: n: 'abc' is not a whole number" in result.stderr
        assert "Traceback" not in result.output


def test_cli_fail_on_regression_exit_codes(tmp_path):
    assert invoke("compare", BASE, BASE, "--fail-on-regression").exit_code == 0
    result = invoke("compare", BASE, NEW, "--fail-on-regression")
    assert result.exit_code == 1
    assert "regression" in result.stderr and "smem_sequential" in result.stderr
    # NEW -> BASE: shfl is 13.6% slower; a 15% threshold lets it pass (and gridstride_atomic
    # going from FAIL to ok is a fix, not a regression), once NEW's single_pass rows are
    # left out: BASE lacks them, and a case missing from the later run is a loss
    assert invoke("compare", NEW, BASE, "--fail-on-regression").exit_code == 1
    lines = NEW.read_text().splitlines(keepends=True)
    shared = tmp_path / "new_without_single_pass.csv"
    shared.write_text("".join(line for line in lines if ",single_pass," not in line))
    assert invoke("compare", shared, BASE, "--fail-on-regression",
                  "--threshold", "15").exit_code == 0
    result = invoke("compare", NEW, BASE, "--fail-on-regression", "--threshold", "15")
    assert result.exit_code == 1 and "single_pass" in result.stderr
    # without the flag, a regression is reported but the exit code stays 0
    assert invoke("compare", NEW, BASE).exit_code == 0
    # a row failing in NEW that passed in BASE is a regression whatever the threshold
    assert invoke("compare", BASE, NEW, "--fail-on-regression",
                  "--threshold", "15").exit_code == 1


def test_cli_warns_on_mismatch():
    result = invoke("compare", BASE, A100)
    assert result.exit_code == 0
    assert "GPUs differ" in result.output and "modes differ" in result.output


def test_cli_csv():
    result = invoke("compare", BASE, NEW, "--format", "csv")
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(io.StringIO(result.stdout))
    assert len(frame) == 14
    assert {"rung", "dtype", "n", "block", "base_us", "new_us", "ratio", "verdict"} <= set(frame)
    verdicts = frame.set_index(["rung", "n"])["verdict"]
    assert verdicts[("shfl", M24)] == "FASTER"
    assert verdicts[("single_pass", M20)] == "ONLY_NEW"


def test_cli_json():
    result = invoke("compare", BASE, A100, "--format", "json", "--threshold", "3")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)           # warnings go to stderr too, never to stdout
    assert doc["threshold_pct"] == 3.0
    assert any("GPUs differ" in w for w in doc["warnings"])
    doc = json.loads(invoke("compare", BASE, NEW, "--format", "json").stdout)
    assert doc["counts"]["SLOWER"] == 1
    assert {r["rung"] for r in doc["only_base"]} == {"shfl_unroll"}
    assert [r["rung"] for r in doc["failed"]] == ["gridstride_atomic"]
    assert doc["failed"][0]["ratio"] is None
    assert {g["rung"] for g in doc["geomean"]} == {"smem_sequential", "shfl",
                                                   "gridstride_atomic", "vector_load", "cub"}


def _markdown_tables(text: str) -> list[list[list[str]]]:
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    return tables


def test_cli_markdown():
    result = invoke("compare", BASE, NEW, "--format", "markdown")
    assert result.exit_code == 0, result.output
    tables = _markdown_tables(result.stdout)
    assert len(tables) == 2
    main, geo = tables
    assert main[0][:3] == ["rung", "params", "dtype"]
    assert set(main[1]) == {"---"}
    assert all(len(r) == len(main[0]) for r in main)
    assert len(main) == 2 + 14
    assert geo[-1][0] == "**all**"


def test_cli_baseline_formats():
    result = invoke("compare", SWEEP, "--baseline", "cub")
    assert result.exit_code == 0, result.output
    assert "every rung against cub" in result.stdout
    frame = pd.read_csv(io.StringIO(invoke("compare", SWEEP, "--baseline", "cub",
                                           "--format", "csv").stdout))
    assert len(frame) == 48 and (frame[frame["rung"] == "cub"]["ratio"] == 1).all()
    doc = json.loads(invoke("compare", SWEEP, "--baseline", "shfl", "--format", "json").stdout)
    assert doc["baseline"] == "shfl" and len(doc["rows"]) == 48
    tables = _markdown_tables(invoke("compare", SWEEP, "--baseline", "cub",
                                     "--format", "markdown").stdout)
    assert len(tables) == 1 and len(tables[0]) == 2 + 48


def test_cli_baseline_absent_rung():
    result = invoke("compare", SWEEP, "--baseline", "single_pass")
    assert result.exit_code == 2
    assert str(SWEEP) in result.stderr and "single_pass" in result.stderr


def test_cli_argument_errors():
    assert invoke("compare", BASE).exit_code == 2
    assert invoke("compare", BASE, NEW, SWEEP).exit_code == 2
    assert invoke("compare", BASE, NEW, "--baseline", "cub").exit_code == 2
    assert invoke("compare", BASE, NEW, "--threshold", "-2").exit_code == 2
    assert invoke("compare", BASE, NEW, "--format", "xml").exit_code == 2


def test_cli_newest_two_under_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("results").mkdir()
    result = invoke("compare")
    assert result.exit_code == 2 and "found 0" in result.stderr
    older, newer = Path("results/a_old.csv"), Path("results/b_new.csv")
    older.write_text(BASE.read_text())
    newer.write_text(NEW.read_text())
    now = time.time()
    os.utime(older, (now - 100, now - 100))
    os.utime(newer, (now, now))
    result = invoke("compare", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["base"].endswith("a_old.csv") and doc["new"].endswith("b_new.csv")
    result = invoke("compare", "--baseline", "cub", "--format", "csv")
    assert result.exit_code == 0 and "single_pass" in result.stdout   # the newest file


# ---- files that are not results -------------------------------------------------------------

def _bad_files(tmp_path: Path) -> dict[str, Path]:
    text = BASE.read_text()
    files = {
        "missing": tmp_path / "missing.csv",
        "empty": tmp_path / "empty.csv",
        "other_tool": tmp_path / "nvbench.csv",
        "truncated": tmp_path / "truncated.csv",
        "schema": tmp_path / "schema9.csv",
    }
    files["empty"].write_text("")
    files["other_tool"].write_text(
        "Benchmark,Device,Elements,GPU Time,Noise\n"
        "reduce,0,16777216,29.8us,0.7%\n")
    cut = text.rstrip("\n")
    files["truncated"].write_text(cut[: cut.rfind(",", 0, len(cut) - 200)] + "\n")
    lines = text.splitlines(keepends=True)
    files["schema"].write_text(lines[0] + "".join("9" + line[1:] for line in lines[1:]))
    return files


@pytest.mark.parametrize("kind, message", [
    ("missing", "no such file"), ("empty", "empty"),
    ("other_tool", "not a reducebench results file"), ("truncated", "truncated"),
    ("schema", "schema version 9"),
])
@pytest.mark.parametrize("position", ["base", "new", "baseline"])
def test_cli_bad_files_exit_2_with_one_line(tmp_path, kind, message, position):
    bad = _bad_files(tmp_path)[kind]
    args = {"base": ("compare", bad, NEW), "new": ("compare", BASE, bad),
            "baseline": ("compare", bad, "--baseline", "cub")}[position]
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(bad) in lines[0] and message in lines[0]
    assert lines[0].startswith("reducebench: error:")
    assert "Traceback" not in result.output


def test_fixtures_are_real_results_files():
    """The fixtures have exactly the columns a run writes (they were written by
    RowWriter), so the tests follow the real format."""
    from reducebench.results.schema import COLUMNS

    for path in (BASE, NEW, A100, SWEEP):
        header = next(csv.reader(io.StringIO(path.read_text())))
        assert tuple(header) == COLUMNS


def test_a_schema_version_1_file_is_read_with_the_newer_columns_empty():
    from reducebench.results.schema import COLUMNS
    from reducebench.results.files import read_results

    old = BASE.parent / "results_schema_v1.csv"
    header = next(csv.reader(io.StringIO(old.read_text())))
    assert "inputs" not in header and "error_ulps" not in header
    frame = read_results(old)
    assert set(COLUMNS) <= set(frame.columns) and frame["inputs"].isna().all()
    assert compare_runs(frame, read_results(BASE)).counts()[SAME] > 0
