"""The fleet check (analysis/fleet.py) at its edges, worked by hand: which cases count,
what an undecided case records, the size rule exactly at the threshold, and p exactly
at alpha. tests/test_cluster.py has the worked examples of a slow GPU."""

from __future__ import annotations

import math

from reducebench.analysis.fleet import judge_fleet
from reducebench.analysis.significance import mann_whitney

FLEET = [95.0, 96.0, 97.0, 98.0, 99.0, 101.0, 102.0, 103.0, 104.0, 105.0]   # median 100
AT_125 = [120.0, 121.0, 122.0, 123.0, 124.0, 126.0, 127.0, 128.0, 129.0, 130.0]


def test_only_cases_timed_on_two_gpus_count_and_every_gpu_is_listed():
    report = judge_fleet({"alone": {3: FLEET, 5: []}, "pair": {3: FLEET, 5: FLEET},
                          "also": {3: FLEET, 5: FLEET}})
    assert report.cases == 2 and list(report.gpus) == [3, 5]
    assert report.gpus[3].gpu == 3 and report.gpus[5].gpu == 5
    assert [c.case for c in report.gpus[5].cases] == ["pair", "also"]


def test_a_case_with_too_few_samples_on_either_side_is_undecided_and_says_why():
    report = judge_fleet({"c": {0: FLEET, 1: [200.0] * 9}})
    mine, theirs = report.gpus[0].cases[0], report.gpus[1].cases[0]
    assert mine.case == "c" and mine.median_us == 100.0 and mine.fleet_median_us == 150.0
    assert math.isnan(mine.p_value) and mine.slower is False
    assert mine.reason == "fewer than 10 samples" and theirs.reason == mine.reason
    assert report.flagged == [] and report.gpus[1].worst is None


def test_ten_samples_a_side_are_enough():
    report = judge_fleet({"c": {0: FLEET, 1: [x * 2 for x in FLEET]}})
    judged = report.gpus[1].cases[0]
    assert judged.reason == "" and judged.p_value < 0.01 and judged.slower
    assert judged.case == "c" and report.flagged == [1]


def test_a_median_exactly_at_the_threshold_is_not_slower():
    # fleet median 100 (two GPUs at 100, one at 125); 100 x (1 + 25/100) = 125 exactly
    samples = {"c": {0: FLEET, 1: FLEET, 2: AT_125}}
    assert judge_fleet(samples, threshold_pct=25.0).flagged == []
    assert judge_fleet(samples, threshold_pct=24.9).flagged == [2]


def test_a_p_exactly_at_alpha_is_not_evidence():
    samples = {"c": {0: FLEET, 1: FLEET, 2: AT_125}}
    p = mann_whitney(AT_125, FLEET + FLEET).p_value
    assert judge_fleet(samples, alpha=p).flagged == []
    assert judge_fleet(samples, alpha=p * 1.001).flagged == [2]
