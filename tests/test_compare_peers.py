"""compare's second drift reference: where the same-size read moved between two runs
(the machine changed), each case is also judged against the median move of the other
cases of its size, and is FASTER or SLOWER only where that judgment agrees too. The
figures are those of an H200 A/A pair (results/h200/aa_run1_e5c595e.csv against
aa_run3_e5c595e.csv, n = 2^20): the read moved +1.39%, most rungs about +3%, multi_elem
+3.9%, every round apart. Expected values are worked by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from reducebench.analysis.compare import NOISY, SAME, SLOWER, compare_runs
from reducebench.analysis.compare.judge import MIN_PEERS, common_moves, judge_rounds
from reducebench.analysis.compare.match import match_runs

READ_BASE = (4.576, 4.608, 4.608, 4.608, 4.608)        # median 4.608
READ_NEW = tuple(x * 1.0139 for x in READ_BASE)         # the read moved +1.39%
ROUNDS = (10.688, 10.752, 10.688, 10.688, 10.688)       # median 10.688, spread 0.6%


def moved(rounds: tuple, factor: float) -> tuple:
    return tuple(x * factor for x in rounds)


def test_a_case_that_moved_with_the_other_cases_is_noisy():
    judged = judge_rounds(1.039, ROUNDS, moved(ROUNDS, 1.039), READ_BASE, READ_NEW, 2.0, "",
                          peers=1.03)
    # raw +3.9%: SLOWER; against the read 1.039 / 1.0139 - 1 = +2.48%: SLOWER;
    # against the others 1.039 / 1.03 - 1 = +0.87%: SAME
    assert judged["raw_verdict"] == SLOWER and judged["verdict"] == NOISY
    assert judged["peers_change_pct"] == pytest.approx(3.0)
    assert judged["note"] == (
        "the same-size read moved +1.39% between the runs, the other cases of its size "
        "+3.00% (median); raw: SLOWER +3.90%; against the read: SLOWER +2.48%; against "
        "the other cases of its size: SAME +0.87%: they disagree, so the change is not "
        "told apart from the machine's")


def test_without_the_other_cases_the_same_pair_stays_slower():
    judged = judge_rounds(1.039, ROUNDS, moved(ROUNDS, 1.039), READ_BASE, READ_NEW, 2.0, "")
    assert judged["verdict"] == SLOWER and "peers_change_pct" not in judged


def test_a_real_slowdown_beside_a_moved_machine_stays_slower():
    judged = judge_rounds(1.10, ROUNDS, moved(ROUNDS, 1.10), READ_BASE, READ_NEW, 2.0, "",
                          peers=1.03)
    # against the others: 1.10 / 1.03 - 1 = +6.80%, still SLOWER
    assert judged["verdict"] == SLOWER
    assert "against the other cases of its size: SLOWER +6.80%" in judged["note"]


def test_the_other_cases_count_only_when_the_read_moved():
    # the read did not move: a change every kernel shares is the code's, never the
    # machine's, and stays SLOWER
    judged = judge_rounds(1.039, ROUNDS, moved(ROUNDS, 1.039), READ_BASE, READ_BASE, 2.0, "",
                          peers=1.039)
    assert judged["verdict"] == SLOWER and judged["read_moved"] is False


ROW = dict(dtype="float32", n=2**20, block=256, params="", status="ok", error="", note="",
           noise_pct=0.5, source="", source_hash="", rows=1)


def frame(moves: dict[str, float], read: tuple, n: int = 2**20) -> pd.DataFrame:
    """One run: each rung's rounds ROUNDS moved by its factor, the read's rounds `read`."""
    return pd.DataFrame([{**ROW, "n": n, "rung": rung, "median_us": 10.688 * factor,
                          "round_medians_us": ";".join(f"{x:.4f}" for x in moved(ROUNDS, factor)),
                          "read_rounds_us": ";".join(f"{x:.4f}" for x in read)}
                         for rung, factor in moves.items()])


RUNGS = ["gmem", "smem_interleaved", "first_add", "unroll_last_warp", "multi_elem", "shfl",
         "shfl_xor", "vector_load"]


def test_an_aa_pair_whose_machine_moved_passes_the_gate():
    base = frame({r: 1.0 for r in RUNGS}, READ_BASE)
    # every rung +2.6% to +3.4%, multi_elem +3.9%: each one's others move +3.0% or so
    factors = dict(zip(RUNGS, (1.026, 1.03, 1.034, 1.028, 1.039, 1.032, 1.029, 1.031)))
    comparison = compare_runs(base, frame(factors, READ_NEW), 2.0)
    assert comparison.slower.empty and comparison.faster.empty
    assert comparison.gate_failures.empty
    multi = comparison.rows.set_index("rung").loc["multi_elem"]
    assert multi["raw_verdict"] == SLOWER and multi["verdict"] == NOISY


def test_one_kernel_made_slower_in_a_full_ladder_is_still_slower():
    base = frame({r: 1.0 for r in RUNGS}, READ_BASE)
    factors = {r: 1.03 for r in RUNGS} | {"shfl": 1.08}
    comparison = compare_runs(base, frame(factors, READ_NEW), 2.0)
    assert list(comparison.slower["rung"]) == ["shfl"]
    assert not comparison.gate_failures.empty
    (note,) = comparison.slower["note"]
    # the other seven moved +3.00%: against them 1.08 / 1.03 - 1 = +4.85%
    assert "the other cases of its size +3.00% (median)" in note
    assert "against the other cases of its size: SLOWER +4.85%" in note


def test_common_moves_leave_each_case_out_and_keep_sizes_apart():
    base = pd.concat([frame({r: 1.0 for r in RUNGS[:6]}, READ_BASE),
                      frame({r: 1.0 for r in RUNGS[:3]}, READ_BASE, n=2**24)])
    factors = dict(zip(RUNGS[:6], (1.01, 1.02, 1.03, 1.04, 1.05, 1.50)))
    new = pd.concat([frame(factors, READ_NEW),
                     frame({r: 1.2 for r in RUNGS[:3]}, READ_NEW, n=2**24)])
    pairs = match_runs(base, new).pairs
    moves = {(pairs.iloc[i].rung, int(pairs.iloc[i].n)): round(m, 4)
             for i, m in common_moves(pairs).items()}
    # at 2^20 each case's five others: the median of the five left when it is taken out
    # (1.50 is one of them for every case but itself); at 2^24 two others each: too few
    assert MIN_PEERS == 5
    assert moves == {("gmem", 2**20): 1.04, ("smem_interleaved", 2**20): 1.04,
                     ("first_add", 2**20): 1.04, ("unroll_last_warp", 2**20): 1.03,
                     ("multi_elem", 2**20): 1.03, ("shfl", 2**20): 1.03}


def test_cases_without_rounds_or_not_timed_are_no_peers():
    base = frame({r: 1.0 for r in RUNGS[:6]}, READ_BASE)
    new = frame(dict(zip(RUNGS[:6], (1.01, 1.02, 1.03, 1.04, 1.05, 1.06))), READ_NEW)
    new.loc[new["rung"] == "gmem", "status"] = "FAIL"
    pairs = match_runs(base, new).pairs
    assert common_moves(pairs) == {}   # five timed: four others each
    base.loc[base["rung"] == "shfl", "round_medians_us"] = "10.688"
    new.loc[new["rung"] == "gmem", "status"] = "ok"
    assert common_moves(match_runs(base, new).pairs) == {}   # shfl: one round a side


def test_two_rounds_a_side_make_a_peer_and_a_time_that_is_no_time_does_not():
    base = frame({r: 1.0 for r in RUNGS[:7]}, READ_BASE)
    new = frame(dict(zip(RUNGS[:7], (1.01, 1.02, 1.03, 1.04, 1.05, 1.06, 1.07))), READ_NEW)
    for side in (base, new):   # MIN_ROUNDS (2) round medians a side are rounds enough
        side["round_medians_us"] = side["round_medians_us"].map(
            lambda text: ";".join(text.split(";")[:2]))
    pairs = match_runs(base, new).pairs
    assert len(common_moves(pairs)) == 7
    # a side whose median is no time (0, status still ok) is not timed, on either side
    for side in (base, new):
        broken = side.copy()
        broken.loc[broken["rung"] == "gmem", "median_us"] = 0.0
        pair = (base, broken) if side is new else (broken, new)
        moves = common_moves(match_runs(*pair).pairs)
        assert len(moves) == 6   # six timed: five others each


def test_a_case_of_several_rows_names_its_same_shape_read():
    judged = judge_rounds(1.039, ROUNDS, moved(ROUNDS, 1.039), READ_BASE, READ_NEW, 2.0, "",
                          peers=1.03, rows=2)
    assert judged["note"].startswith("the same-shape read moved +1.39% between the runs")
    one_row = judge_rounds(1.039, ROUNDS, moved(ROUNDS, 1.039), READ_BASE, READ_NEW, 2.0, "",
                           peers=1.03, rows=1)
    assert one_row["note"].startswith("the same-size read moved +1.39% between the runs")
