"""What a comparison adds up to (analysis/compare/summary.py), on rows built in memory:
the rules counted, the one-sided rows, the geometric means and their order, each
warning's exact words, every loss the gate fails on and the reason it gives. Expected
values are worked by hand (the geometric mean of 1 and 1.21 is 1.1; a separated 5
against 5 rounds has the exact p 2/252, shown as 0.0079)."""

from __future__ import annotations

import math
import random
import warnings

import pandas as pd
import pytest

from reducebench.analysis.compare import (FAILED, NOISY, ONLY_BASE, ONLY_NEW, ROW_COLUMNS,
                                          SAME, SLOWER, compare_runs, geometric_mean)
from reducebench.analysis.compare.summary import GEOMEAN_COLUMNS, rounds_warnings

ROW = dict(rung="gmem", dtype="float32", n=1024, block=256, params="", status="ok", error="",
           note="", median_us=10.0, noise_pct=0.5, source="", source_hash="",
           round_medians_us="", read_rounds_us="", run_id="r1")
BASE_ROUNDS, NEW_ROUNDS = "15;16;17;16;16", "20;20;21;19;20"    # NEW's all beyond BASE's
ROUNDS = "10;10;10;10;10"


def frame(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame([{**ROW, **row} for row in rows])


def compare(base: list[dict], new: list[dict], threshold: float = 2.0):
    return compare_runs(frame(*base), frame(*new), threshold)


# -- counts, one-sided rows ----------------------------------------------------------------

def test_the_rules_are_counted_one_by_one():
    c = compare([{"n": 1, "round_medians_us": ROUNDS}, {"n": 2, "round_medians_us": ROUNDS},
                 {"n": 3}],
                [{"n": 1, "round_medians_us": ROUNDS}, {"n": 2, "round_medians_us": ROUNDS},
                 {"n": 3}, {"n": 4}])
    assert c.rules() == {"rounds": 2, "samples": 0, "ratio": 1}


def test_all_rows_adds_each_one_sided_row_with_its_side():
    c = compare([{"n": 1}, {"n": 2, "status": "FAIL", "median_us": 12.0}],
                [{"n": 1}, {"n": 3, "median_us": 9.0}])
    rows = c.all_rows()
    assert list(rows.columns) == ROW_COLUMNS and list(rows.index) == [0, 1, 2]
    got = rows[["n", "base_status", "base_us", "new_status", "new_us", "verdict", "note"]]
    got = got.astype(object).where(got.notna(), None).to_dict("records")
    assert got == [
        {"n": 1, "base_status": "ok", "base_us": 10.0, "new_status": "ok", "new_us": 10.0,
         "verdict": SAME, "note": "no samples: ratio rule"},
        {"n": 2, "base_status": "FAIL", "base_us": 12.0, "new_status": None, "new_us": None,
         "verdict": ONLY_BASE, "note": "only in BASE"},
        {"n": 3, "base_status": None, "base_us": None, "new_status": "ok", "new_us": 9.0,
         "verdict": ONLY_NEW, "note": "only in NEW"}]
    # one side only
    only_new = compare([{"n": 1}], [{"n": 1}, {"n": 3}]).all_rows()
    assert list(only_new["verdict"]) == [SAME, ONLY_NEW]
    assert list(compare([{"n": 1}], [{"n": 1}]).all_rows()["verdict"]) == [SAME]
    # nothing in common: still every column
    apart = compare([{"n": 1}], [{"n": 2}]).all_rows()
    assert list(apart.columns) == ROW_COLUMNS and list(apart["verdict"]) == [ONLY_BASE, ONLY_NEW]


# -- geometric means -------------------------------------------------------------------------

def test_the_geometric_mean_leaves_out_what_is_not_a_positive_number():
    assert geometric_mean([1.0, 4.0]) == pytest.approx(2.0)
    assert geometric_mean([2.0, 8.0, 0.0, -1.0, math.nan, math.inf, "x"]) == pytest.approx(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no "mean of empty slice" on the terminal
        assert math.isnan(geometric_mean([0.0, math.inf]))


def test_the_geometric_mean_per_rung_in_ladder_order():
    # rows come by size first: gmem_unroll4 (later in the ladder) at the smaller size
    c = compare([{"rung": "gmem_unroll4", "n": 1024}, {"rung": "gmem_unroll4", "n": 2048},
                 {"rung": "gmem", "n": 4096}, {"rung": "gmem", "n": 8192, "status": "FAIL"}],
                [{"rung": "gmem_unroll4", "n": 1024}, {"rung": "gmem_unroll4", "n": 2048,
                                                       "median_us": 12.1},
                 {"rung": "gmem", "n": 4096, "median_us": 5.0}, {"rung": "gmem", "n": 8192}])
    assert list(c.geomean.columns) == GEOMEAN_COLUMNS and list(c.geomean.index) == [0, 1]
    gmem, unroll4 = c.geomean.to_dict("records")
    assert gmem == pytest.approx({"rung": "gmem", "rows": 1, "ratio": 0.5, "change_pct": -50.0})
    assert unroll4 == pytest.approx({"rung": "gmem_unroll4", "rows": 2, "ratio": 1.1,
                                     "change_pct": 10.0})
    assert c.overall_geomean == pytest.approx((0.5 * 1.0 * 1.21) ** (1 / 3))


def test_the_users_kernels_keep_the_order_they_came_in():
    # kernels outside the ladder share one place in it: the rows' order stands
    c = compare([{"rung": "zeta", "n": 1024}, {"rung": "alpha", "n": 2048}],
                [{"rung": "zeta", "n": 1024}, {"rung": "alpha", "n": 2048}])
    assert list(c.geomean["rung"]) == ["zeta", "alpha"]
    # and however many there are (an unstable sort reorders 40 equal places)
    names = [f"kernel{i:02d}" for i in range(40)]
    random.Random(1).shuffle(names)
    rows = [{"rung": name, "n": 1024 * (i + 1)} for i, name in enumerate(names)]
    assert list(compare(rows, rows).geomean["rung"]) == names


def test_no_timed_row_is_an_empty_table_with_its_columns():
    c = compare([{"status": "FAIL"}], [{}])
    assert c.geomean.empty and list(c.geomean.columns) == GEOMEAN_COLUMNS
    assert c.warnings[-1] == "no row is verified and timed on both sides"


# -- warnings ----------------------------------------------------------------------------------

def test_differing_run_metadata_is_named_with_both_sides_values():
    c = compare([{"n": 1, "gpu": "H100", "run_id": "a"}, {"n": 2, "gpu": "A100", "run_id": "b"}],
                [{"n": 1, "gpu": "H100", "run_id": "c"}, {"n": 2, "gpu": "H100", "run_id": "c"}])
    assert "GPUs differ: BASE A100, H100; NEW H100 - the timings may not be comparable" \
        in c.warnings
    c = compare([{"n": 1, "driver": "550"}], [{"n": 1, "driver": "560"}, {"n": 2, "driver": "570"}])
    assert "drivers differ: BASE 550; NEW 560, 570 - the timings may not be comparable" \
        in c.warnings


def test_shared_runs_are_named():
    same = compare([{"n": 1, "run_id": "a"}, {"n": 2, "run_id": "b"}],
                   [{"n": 1, "run_id": "a"}, {"n": 2, "run_id": "b"}])
    assert ("BASE and NEW are the same run (a, b): every time is compared with itself"
            in same.warnings)
    shared = compare([{"n": 1, "run_id": "a"}, {"n": 2, "run_id": "b"},
                      {"n": 3, "run_id": "c"}],
                     [{"n": 1, "run_id": "a"}, {"n": 2, "run_id": "b"}])
    assert ("BASE and NEW share run(s) a, b: the rows of those runs are compared with "
            "themselves" in shared.warnings)


def test_a_side_without_rounds_is_named_and_two_rounds_are_rounds():
    with_rounds = frame({"round_medians_us": "10;10.1"})
    assert rounds_warnings(with_rounds, with_rounds) == []
    without = pd.DataFrame({"rung": ["gmem"]})          # no round column at all
    (line,) = rounds_warnings(without, with_rounds)
    assert line.startswith("BASE was measured without rounds (results schema 4 or older")
    (line,) = rounds_warnings(without, without)
    assert line.startswith("BASE and NEW were measured without rounds")


def test_the_moved_read_is_one_line_per_size():
    steady = [24.352, 24.384, 24.352, 24.320, 24.352]
    read = [20.0, 20.02, 19.98, 20.01, 20.0]

    def side(drift: float) -> dict:
        return {"median_us": 24.352 * drift, "n": 2**20,
                "round_medians_us": ";".join(str(x * drift) for x in steady),
                "read_rounds_us": ";".join(str(x * drift) for x in read)}
    c = compare([side(1.0), {**side(1.0), "rung": "gmem_unroll4"}],
                [side(1.028), {**side(1.028), "rung": "gmem_unroll4"}])
    assert list(c.rows["verdict"]) == [NOISY, NOISY]
    assert [w for w in c.warnings if "read" in w] == [
        "the same-size read itself moved +2.80% at n=2^20 float32 between BASE and NEW: the "
        "machine changed; its 2 case(s) are judged against the read and, where 5 or more "
        "others were timed, against the other cases' median move (each note gives the raw "
        "verdict)"]


def test_nothing_in_common_says_so():
    c = compare([{"n": 1}], [{"n": 2}])
    assert c.warnings[-1] == "the two runs have no (rung, dtype, n, block, params) in common"


# -- the gate --------------------------------------------------------------------------------

def test_every_loss_and_its_reason():
    c = compare([{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}, {"n": 5}, {"n": 6}, {"n": 7},
                 {"n": 8, "status": "FAIL"}, {"n": 9}, {"n": 10, "status": "FAIL"}],
                [{"n": 1},                                          # kept: no loss
                 {"n": 2, "median_us": math.nan},
                 {"n": 3, "median_us": 0.0},
                 {"n": 4, "median_us": math.inf},
                 {"n": 5, "status": "FAIL", "error": "wrong sum"},  # keeps its time
                 {"n": 6, "status": "FAIL"},                        # no error given
                 {"n": 7, "status": "error", "median_us": math.nan},
                 {"n": 8},                                          # fixed: no loss
                 {"n": 11}])
    untimed = [_loss(n, "ok", "no median time in NEW") for n in (2, 3, 4)]
    assert c.losses.to_dict("records") == [
        *untimed, _loss(5, "FAIL", "FAIL in NEW: wrong sum"), _loss(6, "FAIL", "FAIL in NEW"),
        _loss(7, "error", "error in NEW"), _loss(9, "", "missing from NEW")]


def test_the_source_note_stays_out_of_a_loss_reason():
    c = compare([{"source": "k.cu", "source_hash": "a" * 16}],
                [{"status": "FAIL", "error": "wrong sum; twice", "source": "k.cu",
                  "source_hash": "b" * 16}])
    assert "source changed" in c.rows.loc[0, "note"]
    assert list(c.losses["reason"]) == ["ok in BASE, FAIL in NEW: wrong sum; twice"]


def test_a_time_below_a_microsecond_is_no_loss():
    c = compare([{"median_us": 0.5}], [{"median_us": 0.5}])
    assert c.losses.empty and list(c.losses.columns) == list(c.gate_failures.columns)


def test_the_gate_says_which_rule_called_a_case_slower():
    c = compare([{"n": 1, "median_us": 16.0, "round_medians_us": BASE_ROUNDS}, {"n": 2}],
                [{"n": 1, "median_us": 20.0, "round_medians_us": NEW_ROUNDS},
                 {"n": 2, "median_us": 11.0}])
    assert list(c.rows["verdict"]) == [SLOWER, SLOWER]
    assert list(c.gate_failures["reason"]) == [
        "SLOWER by +25.0% (beyond the 2.0% threshold, every round apart: p=0.0079, rounds "
        "rule)",
        "SLOWER by +10.0% (beyond the ±2.0% band, ratio rule)"]


def _key(n: int) -> dict:
    return {"rung": "gmem", "dtype": "float32", "n": n, "block": 256, "params": "", "rows": 1}


def _loss(n: int, new_status: str, in_new: str) -> dict:
    """The loss of the case of size n, ok in BASE, and what NEW made of it."""
    return {**_key(n), "base_status": "ok", "new_status": new_status,
            "reason": f"ok in BASE, {in_new}"}


def test_failed_rows_are_not_timed():
    c = compare([{"n": 1, "status": "FAIL"}], [{"n": 1}])
    assert list(c.failed["verdict"]) == [FAILED] and c.timed.empty
