"""`explain` without a GPU: the kernel headers it quotes, how a counter's move is judged,
and the verdicts on synthetic metric rows whose answers are worked out by hand."""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

import click
import pandas as pd
import pytest
from click.testing import CliRunner

from reducebench.analysis import ladder_steps as ex
from reducebench.cli import ReducebenchGroup
from reducebench.cli.explain import explain_command
from reducebench.core.errors import ResultsFileError, UsageError
from reducebench.results.schema import METRIC_COLUMNS, blank_metrics
from reducebench.results.schema import COLUMNS, SCHEMA_VERSION

N = 2**24
REPO = Path(__file__).resolve().parents[1]


def row(rung: str, median_us: float, n: int = N, dtype: str = "float32", block: int = 256,
        noise_pct: float = 1.0, **counters) -> dict:
    """A results row with the usual columns and the metric columns."""
    record = {column: "" for column in COLUMNS}
    record.update(blank_metrics())
    record.update(schema_version=SCHEMA_VERSION, rung=rung, dtype=dtype, n=n, block=block,
                  status="ok", median_us=median_us, noise_pct=noise_pct,
                  ncu_version="2025.3.1.0", ncu_clock_control="none")
    record.update({f"ncu_{k}": v for k, v in counters.items()})
    return record


# Shaped like the H100: strided is slower than interleaved despite removing divergence.
INTERLEAVED = row("smem_interleaved", 83.36, threads_per_inst=18.0, inst_per_elem=90.0,
                  smem_ld_conflicts=0, smem_st_conflicts=0, dram_pct=24.0,
                  smem_wavefronts=9.0e6, occupancy_pct=85, stall_top="long_scoreboard",
                  stall_top_pct=40.0)
STRIDED = row("smem_strided", 101.18, threads_per_inst=31.7, inst_per_elem=83.3,
              smem_ld_conflicts=4_218_685, smem_st_conflicts=2_362_717, dram_pct=21.0,
              smem_wavefronts=9.5e6, occupancy_pct=83, stall_top="short_scoreboard",
              stall_top_pct=44.5)
SEQUENTIAL = row("smem_sequential", 81.12, threads_per_inst=31.7, inst_per_elem=60.0,
                 smem_ld_conflicts=120, smem_st_conflicts=0, dram_pct=25.0,
                 smem_wavefronts=3.0e6, occupancy_pct=86, stall_top="long_scoreboard",
                 stall_top_pct=50.0)


def frame(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def only_report(result: ex.Explanation) -> ex.StepReport:
    assert len(result.reports) == 1
    return result.reports[0]


# ---- the source side: kernel headers ----
def test_the_source_note_quotes_the_header_of_the_rung_file():
    note = ex.source_note("smem_strided")
    assert note.changed_from == "smem_interleaved"
    assert note.changed.startswith("the same pairs are added")
    assert note.why.startswith("whole warps either work or skip")
    assert note.cost.startswith("consecutive threads touch words 2*stride apart")


def test_header_sections_stop_at_the_code():
    text = ("// Rung x: a title\n//\n// Changed from y: one. Two.\n// more of two.\n"
            "// Why faster: because.\n#include \"common.cuh\"\n// Why not: ignored\n")
    assert ex.header_sections(text) == [("Changed from y", "one. Two. more of two."),
                                        ("Why faster", "because.")]


def test_every_step_names_rungs_of_the_ladder_and_known_counters():
    for step in ex.STEPS:
        assert step.before in ex.LADDER and step.after in ex.LADDER
        assert all(e.counter in ex.COUNTERS and e.direction in ("up", "down", "same")
                   for e in step.expects)


# ---- judging a move ----
@pytest.mark.parametrize("before, after, expected", [
    (100, 104, "same"), (100, 106, "up"), (100, 94, "down"), (0, 5, "up"), (0, 0, "same"),
    (math.nan, 5, None),
])
def test_a_move_within_the_tolerance_is_no_move(before, after, expected):
    assert ex.direction(before, after, 0.05) == expected


def test_the_time_tolerance_widens_with_the_rows_noise():
    time = ex.COUNTERS["time"]
    assert ex.tolerance(time, {"noise_pct": 2.0}, {"noise_pct": 3.0}) == pytest.approx(0.05)
    assert ex.tolerance(time, {"noise_pct": 0.5}, {"noise_pct": 0.5}) == pytest.approx(0.03)


# ---- verdicts ----
def test_conflicts_that_rise_where_the_textbook_says_fall_are_a_finding():
    worse = dict(SEQUENTIAL, ncu_smem_ld_conflicts=9_000_000)
    report = only_report(ex.explain(frame(STRIDED, worse), ["smem_strided", "smem_sequential"]))
    assert report.outcome == ex.FINDING
    assert "bank conflicts went up" in report.verdict()
    assert "the textbook says down" in report.verdict()
    assert "time" not in report.verdict()  # time did fall, as expected


def test_the_strided_to_sequential_step_as_the_textbook_says():
    report = only_report(ex.explain(frame(STRIDED, SEQUENTIAL), ["smem_sequential"]))
    assert (report.step.before, report.step.after) == ("smem_strided", "smem_sequential")
    assert report.outcome == ex.EXPECTED
    assert report.verdict() == "as the textbook says"


def test_a_slower_strided_rung_is_reported_while_its_counters_agree():
    report = only_report(ex.explain(frame(INTERLEAVED, STRIDED), ["smem_strided"]))
    held = {c.expect.counter: c.held for c in report.checks}
    assert held == {"threads_per_inst": True, "conflicts": True, "inst_per_elem": True,
                    "time": False}
    assert report.verdict() == ("finding: time went up (+21%), the textbook says down")


def test_same_is_a_claim_too():
    shfl = row("shfl", 62.56, inst_per_elem=20.0)
    xor = row("shfl_xor", 62.53, inst_per_elem=20.5)
    assert only_report(ex.explain(frame(shfl, xor), ["shfl_xor"])).outcome == ex.EXPECTED
    slower = row("shfl_xor", 70.0, inst_per_elem=20.5)
    report = only_report(ex.explain(frame(shfl, slower), ["shfl_xor"]))
    assert "time went up (+12%), the textbook says same" in report.verdict()


def test_missing_counters_are_said_not_guessed():
    bare = row("smem_sequential", 81.12)  # timed, but no ncu_ values
    report = only_report(ex.explain(frame(STRIDED, bare), ["smem_sequential"]))
    assert report.outcome == ex.UNKNOWN
    assert report.verdict() == "counters missing for: bank conflicts"


def test_a_pair_the_textbook_does_not_cover_has_no_claim():
    report = only_report(ex.explain(frame(INTERLEAVED, SEQUENTIAL),
                                    ["smem_interleaved", "smem_sequential"]))
    assert report.outcome == ex.NO_CLAIM and not report.checks
    assert [line.counter.key for line in report.lines] == list(ex.SHOWN)


def test_the_counter_lines_show_before_after_and_change():
    report = only_report(ex.explain(frame(INTERLEAVED, STRIDED), ["smem_strided"]))
    lines = {line.counter.key: line.text for line in report.lines}
    assert lines["conflicts"] == "bank conflicts: 0 -> 6.58M (new)"
    assert lines["time"] == "time: 83.4 us -> 101.2 us (+21%)"
    assert report.stall == ("long_scoreboard 40%", "short_scoreboard 44%")


# ---- which steps and rows ----
def test_by_default_every_textbook_step_with_both_rows_in_ladder_order():
    result = ex.explain(frame(SEQUENTIAL, STRIDED, INTERLEAVED))
    assert [(r.step.before, r.step.after) for r in result.reports] == [
        ("smem_interleaved", "smem_strided"), ("smem_strided", "smem_sequential")]
    assert ("smem_sequential", "first_add") in [(s.before, s.after) for s in result.skipped]


def test_named_rungs_are_compared_in_the_order_given():
    result = ex.explain(frame(INTERLEAVED, STRIDED, SEQUENTIAL),
                        ["smem_sequential", "smem_interleaved", "smem_strided"])
    assert [(r.step.before, r.step.after) for r in result.reports] == [
        ("smem_sequential", "smem_interleaved"), ("smem_interleaved", "smem_strided")]


def test_a_rung_without_a_row_is_one_clear_error():
    with pytest.raises(UsageError, match="no verified row for rung 'shfl'"):
        ex.explain(frame(STRIDED, SEQUENTIAL), ["smem_strided", "shfl"])
    with pytest.raises(UsageError, match="not a rung of the ladder"):
        ex.explain(frame(STRIDED, SEQUENTIAL), ["smem_strided", "nope"])


def test_failed_rows_are_not_explained():
    failed = dict(SEQUENTIAL, status="FAIL")
    with pytest.raises(UsageError, match="smem_sequential"):
        ex.explain(frame(STRIDED, failed), ["smem_strided", "smem_sequential"])


def test_several_sizes_need_a_choice():
    small = dict(STRIDED, n=2**20)
    rows = frame(STRIDED, SEQUENTIAL, small)
    with pytest.raises(UsageError, match="--size"):
        ex.explain(rows)
    assert ex.explain(rows, size=N).n == N


def test_the_block_256_row_is_used_when_a_rung_has_several():
    wide = dict(SEQUENTIAL, block=1024, median_us=500.0)
    rows = frame(STRIDED, wide, SEQUENTIAL)
    report = only_report(ex.explain(rows, ["smem_strided", "smem_sequential"]))
    assert report.after["median_us"] == 81.12


def test_results_without_counters_are_refused():
    plain = frame(STRIDED, SEQUENTIAL).drop(columns=list(METRIC_COLUMNS))
    with pytest.raises(ResultsFileError, match="no hardware counters"):
        ex.explain(plain)
    empty = frame(row("smem_strided", 101.0), row("smem_sequential", 81.0))
    with pytest.raises(ResultsFileError, match="no hardware counters"):
        ex.explain(empty)


# ---- the command ----
def cli() -> click.Group:
    group = ReducebenchGroup()
    group.add_command(explain_command)
    return group


def write_results(path: Path, *rows: dict) -> Path:
    columns = list(COLUMNS) + [c for c in METRIC_COLUMNS if c not in COLUMNS]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_explain_prints_the_steps_from_a_results_file(tmp_path):
    path = write_results(tmp_path / "m.csv", INTERLEAVED, STRIDED, SEQUENTIAL)
    result = CliRunner().invoke(cli(), ["explain", "--from", str(path)])
    assert result.exit_code == 0, result.output
    assert "smem_strided" in result.output and "finding: time went up" in result.output
    assert "as the textbook says" in result.output


def test_explain_without_a_file_says_what_it_needs():
    result = CliRunner().invoke(cli(), ["explain"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "--metrics" in result.output


@pytest.mark.parametrize("run", [
    "default_f32_run2_caa4c7e.csv",
    # a sweep of many sizes: refused for its missing counters before being asked for a size
    "pct_read_f32_0438d50.csv",
])
def test_explain_on_a_file_without_counters_is_one_line(tmp_path, run):
    path = tmp_path / "plain.csv"
    shutil.copy(REPO / "results" / "h100" / run, path)
    result = CliRunner().invoke(cli(), ["explain", "--from", str(path)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "no hardware counters" in result.output


def test_several_sizes_of_one_dtype_ask_for_a_size_only():
    at_20 = dict(STRIDED, n=2**20)
    with pytest.raises(UsageError) as info:
        ex.explain(frame(STRIDED, SEQUENTIAL, at_20))
    assert str(info.value).endswith("pick one with --size")
