"""compare on runs measured in rounds: a change counts only where it stands out from
what varies between runs. Worked examples with known answers: the exact two-sided
Mann-Whitney p of 5 rounds against 5 where every round of one side lies beyond every
round of the other is 2 / C(10, 5) = 2 / 252; a run-level jump like the ones measured
between processes on an H100 (smem_unroll4 at 2^20: 7.9, 8.35 and 8.8 us in rounds of
one process) must not be SLOWER; a real shift must be."""

import json
import math

import pandas as pd
import pytest
from click.testing import CliRunner

from reducebench.analysis.compare import NOISY, SAME, SLOWER, FASTER, compare_runs
from reducebench.analysis.compare.round_verdict import (decide_rounds, reference_shift,
                                                 rounds_p_value, spread_pct)
from reducebench.cli import cli
from reducebench.results.files import RowWriter
from reducebench.results.schema import Record, medians_text

SEPARATED_P = 2 / 252          # every round of NEW beyond every round of BASE, 5 a side
STEADY = [24.352, 24.384, 24.352, 24.320, 24.352]            # a bandwidth-bound rung
# Run-level jumps of a multi-launch rung at 2^20: the rounds of one process sit on
# three levels about 0.45 us apart.
JUMPY_A = [7.904, 8.352, 8.800, 7.904, 8.352]
JUMPY_B = [8.352, 8.800, 8.768, 8.352, 8.800]    # another process, same code


def test_the_exact_p_of_two_separated_sides_of_five():
    assert rounds_p_value(STEADY, [x * 1.03 for x in STEADY]) == pytest.approx(SEPARATED_P)
    # one round of NEW among BASE's: the test can no longer reach 1%
    assert rounds_p_value(STEADY, [24.352] + [x * 1.03 for x in STEADY[1:]]) > 0.01
    assert rounds_p_value([5.0] * 5, [5.0] * 5) == 1.0


def test_a_real_three_percent_shift_of_a_steady_rung_is_slower():
    new = [x * 1.03 for x in STEADY]
    v = decide_rounds(STEADY, new, ratio=1.03, threshold_pct=2.0, alpha=0.01)
    assert v.verdict == SLOWER and v.p_value == pytest.approx(SEPARATED_P)


def test_a_tiny_or_a_huge_threshold_is_shown_in_lower_case():
    new = [x * 1.03 for x in STEADY]
    assert decide_rounds(STEADY, new, 1.03, 1e-05, 0.01).reason.startswith(
        "+3.00%, beyond the 1e-05% threshold, and every round stands apart")
    assert decide_rounds(STEADY, new, 1.03, 1e+06, 0.01).reason == (
        "+3.00% is within the 1e+06% threshold")


def test_a_faster_rung_is_faster():
    new = [x * 0.95 for x in STEADY]
    assert decide_rounds(STEADY, new, 0.95, 2.0, 0.01).verdict == FASTER


def test_a_run_level_jump_is_not_slower():
    # +5.4% between the two processes' medians, beyond the 2% threshold: the samples
    # of each run agree tightly, so a test over samples calls it SLOWER; the rounds
    # show the case moving 10.7% by itself, so it is NOISY
    ratio = 8.800 / 8.352
    v = decide_rounds(JUMPY_A, JUMPY_B, ratio, 2.0, 0.01)
    assert v.verdict == NOISY
    assert v.spread_pct == pytest.approx(100 * (8.800 - 7.904) / 8.352)
    assert "moves 10.7% between rounds" in v.reason and "overlap" in v.reason


def test_a_change_within_the_threshold_is_same_however_clear():
    new = [x * 1.01 for x in STEADY]
    v = decide_rounds(STEADY, new, 1.01, 2.0, 0.01)
    assert v.verdict == SAME and v.p_value == pytest.approx(SEPARATED_P)


def test_the_rounds_must_agree_with_the_ratio_on_the_direction():
    # the pooled medians say +3%, but the round medians say NEW is the faster
    v = decide_rounds([10.0] * 5, [9.9] * 5, 1.03, 2.0, 0.01)
    assert v.verdict == NOISY


def test_the_read_moved_when_it_stands_apart_by_more_than_half_the_threshold():
    moved = reference_shift(STEADY, [x * 1.028 for x in STEADY], 2.0, 0.01)
    assert moved.moved and moved.change_pct == pytest.approx(2.8, abs=1e-9)
    still = reference_shift(STEADY, [x * 1.008 for x in STEADY], 2.0, 0.01)
    assert not still.moved    # apart, but 0.8% cannot push a case across 2%
    assert reference_shift(STEADY, [24.0], 2.0, 0.01) is None


# -- whole files ------------------------------------------------------------------------------

def _row(rung, n, rounds, read_rounds=(), status="ok"):
    median = sorted(rounds)[len(rounds) // 2] if rounds else math.nan
    return Record(rung=rung, dtype="float32", n=n, block=256, status=status,
                  samples=50 * len(rounds), median_us=median, noise_pct=0.5,
                  rounds=len(rounds), round_medians_us=medians_text(rounds),
                  read_rounds_us=medians_text(read_rounds),
                  meta={"schema_version": 5, "kind": "single", "run_id": "r",
                        "gpu": "NVIDIA H100 80GB HBM3", "mode": "cold"})


def _frame(tmp_path, name, rows):
    path = tmp_path / f"{name}.csv"
    writer = RowWriter(path)
    for row in rows:
        row.meta = {**row.meta, "run_id": name}
        writer.write(row)
    from reducebench.results.files import read_results
    return path, read_results(path)


READ = [20.0, 20.02, 19.98, 20.01, 20.0]


def test_a_change_the_read_explains_is_not_slower_and_one_it_does_not_is(tmp_path):
    drift = 1.028
    _, base = _frame(tmp_path, "base", [_row("pingpong", 2**24, STEADY, READ),
                                        _row("vector_load", 2**24, [x * 1.06 for x in STEADY],
                                             READ)])
    # NEW: the same code on a machine 2.8% slower, and vector_load really 3% slower
    _, new = _frame(tmp_path, "new", [
        _row("pingpong", 2**24, [x * drift for x in STEADY], [x * drift for x in READ]),
        _row("vector_load", 2**24, [x * 1.06 * drift * 1.03 for x in STEADY],
             [x * drift for x in READ])])
    c = compare_runs(base, new, 2.0)
    rows = c.rows.set_index("rung")
    assert rows.loc["pingpong", "raw_verdict"] == SLOWER     # +2.8% raw
    assert rows.loc["pingpong", "verdict"] == NOISY          # 0% against the read: they
    assert "raw: SLOWER +2.80%; against the read: SAME" in rows.loc["pingpong", "note"]
    assert rows.loc["vector_load", "verdict"] == SLOWER      # +6.1% raw, +3% against it
    moved = [w for w in c.warnings if "the same-size read itself moved +2.80%" in w]
    assert len(moved) == 1 and "n=2^24 float32" in moved[0]
    assert list(c.gate_failures["rung"]) == ["vector_load"]


def test_noisy_is_shown_and_never_fails_the_gate(tmp_path):
    base_path, base = _frame(tmp_path, "base", [_row("smem_unroll4", 2**20, JUMPY_A)])
    new_path, new = _frame(tmp_path, "new", [_row("smem_unroll4", 2**20, JUMPY_B)])
    c = compare_runs(base, new, 2.0)
    assert list(c.rows["verdict"]) == [NOISY] and c.counts()[NOISY] == 1
    assert c.gate_failures.empty
    result = CliRunner().invoke(cli, ["compare", str(base_path), str(new_path),
                                      "--fail-on-regression"])
    assert result.exit_code == 0, result.output
    assert "NOISY" in result.output and "1 noisy" in result.output
    as_json = CliRunner().invoke(cli, ["compare", str(base_path), str(new_path),
                                       "--format", "json"])
    doc = json.loads(as_json.output)
    assert doc["counts"]["NOISY"] == 1 and doc["rows"][0]["rule"] == "rounds"
    assert doc["rows"][0]["round_spread_pct"] == pytest.approx(100 * 0.896 / 8.352, rel=1e-6)


def test_a_real_slowdown_fails_the_gate(tmp_path):
    base_path, _ = _frame(tmp_path, "base", [_row("grid_stride_sum", 2**24, STEADY)])
    new_path, _ = _frame(tmp_path, "new", [_row("grid_stride_sum", 2**24,
                                                [x * 1.03 for x in STEADY])])
    result = CliRunner().invoke(cli, ["compare", str(base_path), str(new_path),
                                      "--fail-on-regression"])
    assert result.exit_code == 1, result.output
    assert "SLOWER by +3.0%" in " ".join(result.output.split())


def test_files_without_rounds_keep_the_samples_rule_and_say_what_it_cannot_see(tmp_path):
    old = Record(rung="cub", dtype="float32", n=2**20, block=0, samples=100, median_us=8.0,
                 noise_pct=0.5, meta={"schema_version": 4, "run_id": "old"})
    _, base = _frame(tmp_path, "base", [old])
    _, new = _frame(tmp_path, "new", [_row("cub", 2**20, [8.0] * 5)])
    new["block"] = 0
    c = compare_runs(base, new, 2.0)
    assert c.rows["rule"].tolist() == ["ratio"]
    assert [w for w in c.warnings if "without rounds" in w] == [
        "BASE was measured without rounds (results schema 4 or older, or --rounds 1): "
        "verdicts come from samples of one process and cannot see run-to-run variation "
        "(docs/samples.md)"]


def test_a_case_the_read_does_not_explain_keeps_its_raw_verdict_when_they_agree(tmp_path):
    """one_block at 2^20 on an H200 kept its time within 0.1% while the read moved 2%:
    against the read alone it would be FASTER; raw it is SAME, so it is not FASTER."""
    _, base = _frame(tmp_path, "base", [_row("one_block", 2**20, STEADY, READ)])
    _, new = _frame(tmp_path, "new", [_row("one_block", 2**20, [x * 0.9988 for x in STEADY],
                                           [x * 1.0204 for x in READ])])
    (row,) = compare_runs(base, new, 2.0).rows.itertuples()
    # raw -0.12%: SAME; against the read 0.9988 / 1.0204 - 1 = -2.1%: FASTER
    assert row.raw_verdict == SAME and row.verdict == NOISY
    assert "against the read: FASTER -2.12%" in row.note


def test_equal_round_medians_agree_with_neither_direction():
    """11 rounds a side on quantised times: the two sides' median round medians are both
    24.352 (ratio 1 exactly), yet the ranks stand apart (p = 0.0041 < 0.01, scipy's exact
    test). Equal medians are on neither side of 1, so whichever way the rows' ratio
    points, the case is NOISY: swapping BASE and NEW must mirror the verdict."""
    low = [24.32] * 5 + [24.352] * 6        # median 24.352
    high = [24.352] * 6 + [24.384] * 5      # median 24.352
    assert rounds_p_value(low, high) < 0.01
    assert decide_rounds(high, low, 0.95, 2.0, 0.01).verdict == NOISY
    assert decide_rounds(low, high, 1 / 0.95, 2.0, 0.01).verdict == NOISY


# -- the edges of each rule (worked by hand; the mutation run, tests/mutation/, found them
# untested) --------------------------------------------------------------------------------

def test_the_p_of_tiny_sides():
    assert math.isnan(rounds_p_value([], [1.0])) and math.isnan(rounds_p_value([1.0], []))
    # one round a side: two orders, this one is an extreme, two-sided 2 * 1/2
    assert rounds_p_value([1.0], [2.0]) == pytest.approx(1.0)
    # 1 against 2: three places for BASE's round, lowest is the extreme: 2 * 1/3
    assert rounds_p_value([1.0], [2.0, 3.0]) == pytest.approx(2 / 3)
    assert rounds_p_value([2.0, 3.0], [1.0]) == pytest.approx(2 / 3)
    # two distinct values, one per side: fully separated, not "all equal"
    assert rounds_p_value([1.0] * 5, [2.0] * 5) == pytest.approx(SEPARATED_P)


def test_the_spread_of_two_rounds():
    assert spread_pct([9.0, 11.0]) == pytest.approx(20.0)     # 2 / median 10
    assert math.isnan(spread_pct([10.0]))


BASE_ROUNDS = [15.0, 16.0, 17.0, 16.0, 16.0]     # median 16, spread 2/16 = 12.5%
NEW_ROUNDS = [20.0, 20.0, 21.0, 19.0, 20.0]      # median 20, spread 2/20 = 10%: all apart


def test_a_same_verdict_says_why_and_keeps_the_spread():
    v = decide_rounds(BASE_ROUNDS, NEW_ROUNDS, 1.01, 2.0, 0.01)
    assert v.verdict == SAME and v.reason == "+1.00% is within the 2% threshold"
    assert v.spread_pct == pytest.approx(12.5) and v.change_pct == pytest.approx(1.0)


def test_a_change_exactly_at_the_threshold_is_same():
    # 100 * (1.25 - 1) is 25 exactly in binary floating point
    assert decide_rounds(BASE_ROUNDS, NEW_ROUNDS, 1.25, 25.0, 0.01).verdict == SAME
    assert decide_rounds(BASE_ROUNDS, NEW_ROUNDS, 1.25, 24.9, 0.01).verdict == SLOWER


def test_a_p_equal_to_alpha_does_not_stand_out():
    # the separated sides' p is 2/252 exactly; "p < alpha" is strict
    assert decide_rounds(BASE_ROUNDS, NEW_ROUNDS, 1.25, 2.0, SEPARATED_P).verdict == NOISY
    assert decide_rounds(BASE_ROUNDS, NEW_ROUNDS, 1.25, 2.0, 0.0080).verdict == SLOWER


def test_a_slower_verdict_says_why_and_keeps_the_spread():
    v = decide_rounds(BASE_ROUNDS, NEW_ROUNDS, 1.25, 2.0, 0.01)
    assert v.verdict == SLOWER and v.spread_pct == pytest.approx(12.5)
    assert v.reason == ("+25.00%, beyond the 2% threshold, and every round stands apart "
                        "from the other run's (spread 12.5%)")


def test_a_noisy_verdict_says_why_and_keeps_the_change():
    base = [10.0, 11.0, 12.0, 10.0, 11.0]   # median 11, spread 2/11 = 18.2%
    new = [11.0, 12.0, 13.0, 11.0, 12.0]    # overlaps BASE
    v = decide_rounds(base, new, 1.1, 2.0, 0.01)
    assert v.verdict == NOISY and v.change_pct == pytest.approx(10.0)
    assert v.reason == ("+10.00% but the rounds overlap: this case moves 18.2% between "
                        "rounds (5 base, 5 new), so the change is not told apart from "
                        "run-to-run variation")


def test_two_read_rounds_a_side_are_enough_to_measure_the_read():
    shift = reference_shift([20.0, 20.0], [21.0, 21.0], 2.0, 0.01)
    # 2 against 2, separated: 2 / C(4, 2); too few rounds to stand out
    assert shift.ratio == pytest.approx(1.05) and shift.p_value == pytest.approx(1 / 3)
    assert not shift.moved


def test_the_read_moving_exactly_half_the_threshold_has_not_moved():
    # 17 / 16 = 1.0625 exactly: +6.25%, half of 12.5%
    shift = reference_shift([16.0] * 5, [17.0] * 5, 12.5, 0.01)
    assert shift.p_value == pytest.approx(SEPARATED_P) and not shift.moved
    assert reference_shift([16.0] * 5, [17.0] * 5, 12.4, 0.01).moved
    # and "p < alpha" is strict here too
    assert not reference_shift([16.0] * 5, [17.0] * 5, 2.0, SEPARATED_P).moved
