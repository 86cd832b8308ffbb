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


# -- the rule in words, each rank's samples, each rank's rows ----------------------------------

def test_the_rule_names_its_threshold_and_alpha():
    report = judge_fleet({"c": {0: FLEET, 1: FLEET}}, 5.0, 0.01)
    assert report.alpha == 0.01 and report.threshold_pct == 5.0
    assert report.rule() == (
        "SLOWER: median > fleet median x 1.05 and a two-sided Mann-Whitney U test against "
        "the other GPUs' pooled samples with p < 0.01 (at least 10 samples a side)")
    tiny = judge_fleet({"c": {0: FLEET, 1: FLEET}}, 1e8, 1e-05).rule()
    assert "fleet median x 1e+06 and" in tiny and "p < 1e-05 (" in tiny


def test_each_ranks_kept_samples_of_its_verified_or_suspect_cases():
    from types import SimpleNamespace

    from reducebench.analysis.fleet import fleet_samples
    from reducebench.results.samples_file import CaseSamples

    def record(status, rank=None, kept=None, **extra):
        meta = {} if rank is None else {"rank": rank}
        return SimpleNamespace(rung="shfl", dtype="float32", n=1024, block=256, params="",
                               status=status, meta=meta, **extra)

    samples = CaseSamples(times_us=[1.0, 2.0, 3.0], kept=[True, False, True])
    records = [record("FAIL", 3, raw_samples=CaseSamples(times_us=[9.0])),
               record("ok", 2),                                     # no samples kept
               record("ok", 1, raw_samples=samples),
               record("suspect", None, raw_samples=CaseSamples(times_us=[4.0, 5.0]))]
    assert fleet_samples(records) == {
        "shfl float32 n=1024 block=256": {1: [1.0, 3.0], 0: [4.0, 5.0]}}


def test_a_fleet_files_rows_by_rank_and_each_ranks_gpu(tmp_path):
    from reducebench.analysis.fleet import rank_frames

    path = tmp_path / "fleet.csv"
    header = "schema_version,run_id,rung,dtype,n,block,median_us,host,device,gpu,rank"
    rows = ["5,r,shfl,float32,1024,256,3.5,node1,0,H100,0",
            "5,r,shfl,float32,1024,256,3.6,node2,1,H200,1",
            "5,r,shfl,float32,2048,256,4.0,node1,0,H100,0"]
    path.write_text("\n".join([header, *rows]) + "\n")
    frames, names = rank_frames(path)
    assert names == {0: "node1:0 H100", 1: "node2:1 H200"}
    assert {r: frames[r]["n"].tolist() for r in frames} == {0: [1024, 2048], 1: [1024]}
