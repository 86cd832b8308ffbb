"""compare's judging of one pair (analysis/compare/judge.py), rule by rule, on rows built
in memory: what each rule returns, the note it writes (with the source change appended),
and which pairs are timed at all. Expected values are worked by hand: a separated 5
against 5 rounds has the exact two-sided p 2 / C(10, 5) = 2/252, shown as 0.0079."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from reducebench.analysis.compare import (FAILED, FASTER, NOISY, SAME, SKIPPED, SLOWER,
                                          SUSPECT, compare_runs, source_change, verdict)
from reducebench.analysis.compare.judge import judge_rounds, judge_timed, judge_untimed
from reducebench.analysis.significance import decide
from reducebench.ladder.case import case_key

SRC = "source changed: k.cu aaaaaaaa -> bbbbbbbb"
BASE_ROUNDS = (15.0, 16.0, 17.0, 16.0, 16.0)     # median 16, spread 2/16 = 12.5%
NEW_ROUNDS = (20.0, 20.0, 21.0, 19.0, 20.0)      # every round beyond BASE's
SLOWER_NOTE = ("p=0.0079 over rounds: +25.00%, beyond the 2% threshold, and every round "
               "stands apart from the other run's (spread 12.5%)")
STEADY = (24.352, 24.384, 24.352, 24.320, 24.352)
READ = (20.0, 20.02, 19.98, 20.01, 20.0)


# -- the ratio rule and the source note ------------------------------------------------------

def test_the_ratio_rule_at_the_band_and_by_the_sign():
    assert verdict(2.0, 2.0) == SAME and verdict(-2.0, 2.0) == SAME
    assert verdict(2.01, 2.0) == SLOWER and verdict(-2.01, 2.0) == FASTER
    assert verdict(0.5, 0.1) == SLOWER and verdict(-0.5, 0.1) == FASTER


def test_a_source_note_only_where_both_hashes_are_known_and_differ():
    assert source_change("k.cu", "aaaaaaaa1111", "k.cu", "bbbbbbbb2222") == SRC
    assert (source_change("a.cu", "aaaaaaaa1111", "b.cu", "bbbbbbbb2222")
            == "source changed: a.cu -> b.cu aaaaaaaa -> bbbbbbbb")
    assert source_change("k.cu", "aaaaaaaa1111", "k.cu", "aaaaaaaa1111") == ""
    assert source_change("k.cu", "", "k.cu", "bbbbbbbb2222") == ""
    assert source_change("k.cu", "aaaaaaaa1111", "k.cu", "") == ""
    assert source_change("", "", "", "") == ""


# -- judge_timed: samples, or the ratio rule saying why ----------------------------------------

def test_without_samples_the_ratio_rule_says_so_and_keeps_the_source_note():
    assert judge_timed(5.0, 2.0, 2.0, None, [1.0] * 20, SRC) == {
        "verdict": SLOWER, "rule": "ratio", "note": f"no samples: ratio rule; {SRC}"}
    assert judge_timed(-5.0, 2.0, 2.0, [1.0] * 20, None, "")["verdict"] == FASTER


def test_too_few_samples_fall_back_to_the_ratio_rule_with_the_reason():
    assert judge_timed(5.0, 2.0, 2.0, [1.0] * 3, [1.05] * 3, SRC) == {
        "verdict": SLOWER, "rule": "ratio",
        "note": f"too few samples (3 base, 3 new; the test needs 10 a side): ratio rule; {SRC}"}
    assert judge_timed(1.0, 2.0, 2.0, [1.0] * 3, [1.01] * 3, "")["verdict"] == SAME


BASE_SAMPLES = [10.0 + 0.01 * i for i in range(20)]
NEW_SAMPLES = [x * 1.05 for x in BASE_SAMPLES]     # every sample 5% slower


def test_the_samples_decide_with_the_threshold_given():
    # 5% slower is beyond a 2% threshold and within a 10% one
    judged = judge_timed(5.0, 10.0, 10.0, BASE_SAMPLES, NEW_SAMPLES, SRC)
    decision = decide(BASE_SAMPLES, NEW_SAMPLES, 10.0)
    assert judged == {"verdict": SAME, "rule": "samples", "p_value": decision.p_value,
                      "ci_low": decision.ci_low, "ci_high": decision.ci_high,
                      "note": f"{decision.describe()}; {SRC}"}
    assert "+5.00% is within the 10% threshold" in judged["note"]
    assert judged["ci_low"] < 1.05 < judged["ci_high"]
    assert judge_timed(5.0, 2.0, 2.0, BASE_SAMPLES, NEW_SAMPLES, "")["verdict"] == SLOWER


# -- judge_untimed: FAILED, SUSPECT or SKIPPED, with which side and why -------------------------

def _untimed(judged: dict) -> dict:
    for column in ("ratio", "change_pct", "band_pct"):
        assert math.isnan(judged.pop(column))
    return judged


def test_a_failed_side_is_named_with_its_detail():
    assert _untimed(judge_untimed("FAIL", "ok", "wrong sum", "", SRC)) == {
        "verdict": FAILED, "note": f"base FAIL: wrong sum; {SRC}"}
    assert _untimed(judge_untimed("FAIL", "error", "wrong sum", "launch failed", "")) == {
        "verdict": FAILED, "note": "base FAIL: wrong sum; new error: launch failed"}
    assert _untimed(judge_untimed("FAIL", "ok", "", "", "")) == {
        "verdict": FAILED, "note": "base FAIL"}
    assert _untimed(judge_untimed("ok", "ok", "", "", "")) == {
        "verdict": FAILED, "note": "no median time on one side"}
    assert judge_untimed("suspect", "ok", "too fast", "", "")["verdict"] == SUSPECT
    assert judge_untimed("ok", "skipped", "", "", "")["verdict"] == SKIPPED


# -- judge_rounds: the rounds, and the same-size read ----------------------------------------

def test_the_rounds_verdict_with_everything_it_records():
    judged = judge_rounds(1.25, BASE_ROUNDS, NEW_ROUNDS, (), (), 2.0, SRC)
    assert judged == pytest.approx({
        "verdict": SLOWER, "rule": "rounds", "p_value": 2 / 252, "band_pct": 2.0,
        "base_rounds": 5, "new_rounds": 5, "round_spread_pct": 12.5, "raw_verdict": SLOWER,
        "note": f"{SLOWER_NOTE}; {SRC}"})
    # one read round a side measures no read: the same, with nothing about it
    assert judge_rounds(1.25, BASE_ROUNDS, NEW_ROUNDS, (20.0,), (21.0,), 2.0, SRC) == judged


def test_a_case_the_moved_read_explains_is_noisy_and_says_both():
    drift = 1.028
    judged = judge_rounds(drift, STEADY, tuple(x * drift for x in STEADY), READ,
                          tuple(x * drift for x in READ), 2.0, SRC)
    assert judged["verdict"] == NOISY and judged["raw_verdict"] == SLOWER
    assert judged["read_moved"] and judged["read_change_pct"] == pytest.approx(2.8)
    assert judged["note"] == (
        "the same-size read moved +2.80% between the runs; raw: SLOWER +2.80%; against "
        "the read: SAME +0.00%: they disagree, so the change is not told apart from the "
        f"machine's; {SRC}")


def test_a_case_slower_both_ways_stays_slower_and_says_both():
    drift = 1.028
    judged = judge_rounds(1.1, STEADY, tuple(x * 1.1 for x in STEADY), READ,
                          tuple(x * drift for x in READ), 2.0, SRC)
    assert judged["verdict"] == SLOWER
    # against the read: 1.1 / 1.028 - 1 = +7.00%
    assert judged["note"] == ("the same-size read moved +2.80% between the runs; raw: "
                              f"SLOWER +10.00%; against the read: SLOWER +7.00%; {SRC}")


def test_a_read_that_did_not_move_leaves_the_raw_verdict():
    judged = judge_rounds(1.25, BASE_ROUNDS, NEW_ROUNDS, READ, READ, 2.0, "")
    assert judged["read_moved"] is False and judged["read_change_pct"] == pytest.approx(0.0)
    assert judged["verdict"] == SLOWER and judged["note"] == SLOWER_NOTE


# -- judge_pair, through compare_runs on rows in memory ----------------------------------------

ROW = dict(rung="shfl", dtype="float32", n=1024, block=256, params="", status="ok", error="",
           note="", median_us=10.0, noise_pct=0.5, source="k.cu", source_hash="",
           round_medians_us="", read_rounds_us="")


def _judged(base: dict, new: dict) -> pd.Series:
    rows = compare_runs(pd.DataFrame([{**ROW, **base}]), pd.DataFrame([{**ROW, **new}]),
                        2.0).rows
    assert len(rows) == 1
    return rows.iloc[0]


def test_a_pair_keeps_each_sides_noise_and_the_source_note():
    row = _judged({"noise_pct": 0.7, "source_hash": "aaaaaaaa1111"},
                  {"median_us": 11.0, "noise_pct": 1.3, "source_hash": "bbbbbbbb2222"})
    assert row["base_noise_pct"] == 0.7 and row["new_noise_pct"] == 1.3
    assert row["base_status"] == "ok" and row["new_status"] == "ok"
    assert row["base_us"] == 10.0 and row["new_us"] == 11.0
    assert row["verdict"] == SLOWER and row["note"] == f"no samples: ratio rule; {SRC}"


def test_an_untimed_pair_gives_each_sides_detail_and_the_source_note():
    row = _judged({"status": "FAIL", "error": "wrong sum", "source_hash": "aaaaaaaa1111"},
                  {"source_hash": "bbbbbbbb2222"})
    assert row["verdict"] == FAILED and row["note"] == f"base FAIL: wrong sum; {SRC}"
    # a suspect side's reason is its note, not its error
    row = _judged({"status": "suspect", "error": "E", "note": "faster than the memory"}, {})
    assert row["verdict"] == SUSPECT and row["note"] == "base suspect: faster than the memory"
    row = _judged({}, {"status": "error", "error": "launch failed"})
    assert row["verdict"] == FAILED and row["note"] == "new error: launch failed"
    assert row["base_status"] == "ok" and row["new_status"] == "error"
    row = _judged({}, {"status": "suspect", "error": "E", "note": "faster than the memory"})
    assert row["verdict"] == SUSPECT and row["note"] == "new suspect: faster than the memory"


def test_two_rounds_a_side_are_judged_by_the_rounds_with_the_source_note():
    row = _judged({"round_medians_us": "10.0;10.1", "source_hash": "aaaaaaaa1111"},
                  {"median_us": 12.0, "round_medians_us": "12.0;12.1",
                   "source_hash": "bbbbbbbb2222"})
    # 2 against 2: p = 2/6, so the +20% is NOISY
    assert row["rule"] == "rounds" and row["verdict"] == NOISY
    assert row["base_rounds"] == 2 and row["new_rounds"] == 2
    assert row["note"].startswith("p=0.33 over rounds: +20.00% but the rounds overlap")
    assert row["note"].endswith(f"; {SRC}")


@pytest.mark.parametrize("base_us, new_us", [(10.0, math.inf), (math.inf, 10.0),
                                             (0.0, 10.0), (10.0, 0.0)])
def test_a_time_that_is_not_finite_and_positive_is_no_time(base_us, new_us):
    row = _judged({"median_us": base_us}, {"median_us": new_us})
    assert row["verdict"] == FAILED and row["note"] == "no median time on one side"


def test_the_default_threshold_is_two_percent():
    # noise 0.5% a side: +2.5% is beyond 2%, +1.5% within it
    for new_us, seen in ((10.25, SLOWER), (10.15, SAME)):
        rows = compare_runs(pd.DataFrame([ROW]), pd.DataFrame([{**ROW, "median_us": new_us}]))
        assert rows.rows.loc[0, "verdict"] == seen


def test_a_time_below_a_microsecond_is_a_time():
    row = _judged({"median_us": 0.5}, {"median_us": 0.55})
    assert row["verdict"] == SLOWER and row["ratio"] == pytest.approx(1.1)


def test_a_pair_with_samples_on_both_sides_is_judged_by_them_at_the_threshold():
    key = case_key("shfl", "float32", 1024, 256, "")
    base = pd.DataFrame([ROW])
    new = pd.DataFrame([{**ROW, "median_us": 10.5}])
    # 5% slower, every sample: SLOWER at 2%, SAME at 10%
    rows = compare_runs(base, new, 2.0, {key: BASE_SAMPLES}, {key: NEW_SAMPLES}).rows
    assert rows.loc[0, "rule"] == "samples" and rows.loc[0, "verdict"] == SLOWER
    rows = compare_runs(base, new, 10.0, {key: BASE_SAMPLES}, {key: NEW_SAMPLES}).rows
    assert rows.loc[0, "rule"] == "samples" and rows.loc[0, "verdict"] == SAME
    # samples on one side only: the ratio rule, saying so
    for base_samples, new_samples in (({key: BASE_SAMPLES}, None), (None, {key: NEW_SAMPLES})):
        rows = compare_runs(base, new, 2.0, base_samples, new_samples).rows
        assert rows.loc[0, "rule"] == "ratio" and rows.loc[0, "note"] == "no samples: ratio rule"
