"""A/A calibration's counting (analysis/compare/calibration.py) on runs built in memory:
what each pair counts, the threshold and samples each comparison is given, the gate
and the warnings, gathered once each."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from reducebench.analysis.compare import FASTER, NOISY, SAME, SLOWER
from reducebench.analysis.compare.calibration import PAIR_COLUMNS, calibrate
from reducebench.ladder.case import case_key

ROW = dict(rung="gmem", dtype="float32", n=1024, block=256, params="", status="ok",
           median_us=10.0, noise_pct=0.5, run_id="r", gpu="H100")


def run(name: str, *rows: dict) -> tuple[Path, pd.DataFrame]:
    return Path(name), pd.DataFrame([{**ROW, "run_id": name, **row} for row in rows])


def test_each_pair_counts_its_verdicts_and_its_untimed_cases():
    a = run("a.csv", {"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}, {"n": 5})
    b = run("b.csv", {"n": 1, "median_us": 10.3}, {"n": 2, "median_us": 9.0},
            {"n": 3, "status": "FAIL"}, {"n": 4, "status": "skipped"},
            {"n": 5, "status": "suspect"})
    c = calibrate([a, b])
    assert list(c.pairs.columns) == PAIR_COLUMNS
    # n=1 is SLOWER, and n=3, 4, 5 (ok in BASE, FAIL, skipped, suspect in NEW) are
    # losses: 4 on the gate
    assert c.pairs.to_dict("records") == [
        {"base": "a.csv", "new": "b.csv", "timed": 2, FASTER: 1, SLOWER: 1, NOISY: 0, SAME: 0,
         "untimed": 3, "gate": "4"}]
    assert c.cases == 2 and c.false_alarms == 2 and c.failed_gates == 1 and not c.passed


def test_the_threshold_defaults_to_two_percent():
    a, b = run("a.csv", {}), run("b.csv", {"median_us": 10.25})    # +2.5%
    assert calibrate([a, b]).false_alarms == 1
    assert calibrate([a, b]).threshold_pct == 2.0
    passed = calibrate([a, b], 3.0)
    assert passed.false_alarms == 0 and passed.passed and passed.threshold_pct == 3.0


def test_each_side_is_judged_by_its_own_samples():
    # medians 5% apart, but both runs' samples are one distribution: the samples say
    # SAME, where the ratio rule (a side without samples) says SLOWER
    a, b = run("a.csv", {}), run("b.csv", {"median_us": 10.5})
    times = [10.0 + 0.05 * i for i in range(20)]
    key = case_key("gmem", "float32", 1024, 256, "")
    both = {Path("a.csv"): {key: times}, Path("b.csv"): {key: list(reversed(times))}}
    assert calibrate([a, b], samples=both).pairs.loc[0, SAME] == 1
    for one in (Path("a.csv"), Path("b.csv")):
        only = calibrate([a, b], samples={one: both[one]})
        assert only.pairs.loc[0, SLOWER] == 1


def test_every_pair_earlier_first_and_each_warning_once():
    runs = [run("a.csv", {"gpu": "H100"}), run("b.csv", {"gpu": "A100"}),
            run("c.csv", {"gpu": "H200"})]
    c = calibrate(runs)
    assert [(p.base, p.new) for p in c.pairs.itertuples()] == [
        ("a.csv", "b.csv"), ("a.csv", "c.csv"), ("b.csv", "c.csv")]
    gpus = [w for w in c.warnings if w.startswith("GPUs differ")]
    assert gpus == [f"GPUs differ: BASE {x}; NEW {y} - the timings may not be comparable"
                    for x, y in (("H100", "A100"), ("H100", "H200"), ("A100", "H200"))]
    assert len(c.warnings) == len(set(c.warnings))
    assert all(p.gate == "pass" for p in c.pairs.itertuples())


def test_one_run_is_no_pair():
    c = calibrate([run("a.csv", {})])
    assert c.pairs.empty and list(c.pairs.columns) == PAIR_COLUMNS
    assert c.cases == 0 and c.passed
