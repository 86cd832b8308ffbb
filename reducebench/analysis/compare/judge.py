"""The verdict on each case both runs hold, where both sides were verified and timed:
from both runs' rounds (rounds.py: FASTER, SLOWER, SAME or NOISY, judged against what
varies between runs, and against the same-size read where that moved) where both were
measured in rounds; for runs without rounds, from both runs' raw samples
(significance.decide: a rank test and a bootstrap interval of the ratio of medians)
where both kept enough of them, else by the ratio rule (the ratio of medians against the
threshold and the noise). The row says which rule and why. A pair not timed on both
sides is FAILED, SKIPPED or SUSPECT, never ranked."""

from __future__ import annotations

import math
import statistics

import pandas as pd

from reducebench.analysis.compare.match import KEY, in_ladder_order
from reducebench.analysis.compare.round_verdict import (FASTER, MIN_ROUNDS, NOISY, SAME, SLOWER,
                                                 decide_rounds, reference_shift)
from reducebench.analysis.significance import ALPHA, decide
from reducebench.ladder.case import case_key
from reducebench.results.schema import ERROR, FAIL, OK, parse_medians
from reducebench.results.schema import SUSPECT as SUSPECT_STATUS
from reducebench.core.numbers import number

# The fewest other timed cases of one size whose median move stands for the machine's.
MIN_PEERS = 5
FAILED, SKIPPED = "FAILED", "SKIPPED"          # matched, but not timed on both sides
# A side whose figure is impossible (status suspect: faster than the memory allows, the
# work probably ran outside the timed stream): shown, never ranked.
SUSPECT = "SUSPECT"
ONLY_BASE, ONLY_NEW = "ONLY_BASE", "ONLY_NEW"  # present in one file only
TIMED_VERDICTS = (FASTER, SLOWER, SAME, NOISY)
BAD_STATUS = (FAIL, ERROR)

# How a timed row was decided: from both runs' rounds (rounds.py), from both runs' raw
# samples (significance.decide: runs without rounds), or by the ratio of medians against
# the threshold and the noise (no samples on a side, or too few for the test).
ROUNDS_RULE, SAMPLES_RULE, RATIO_RULE = "rounds", "samples", "ratio"

ROW_COLUMNS = KEY + ["base_status", "new_status", "base_us", "new_us", "ratio", "change_pct",
                     "base_noise_pct", "new_noise_pct", "band_pct", "verdict", "rule",
                     "p_value", "ci_low", "ci_high", "base_rounds", "new_rounds",
                     "round_spread_pct", "read_change_pct", "read_moved", "peers_change_pct",
               "raw_verdict",
                     "note"]

Samples = dict | None   # case key -> sample times, as results.samples_file.samples_for_results


def verdict(change_pct: float, band_pct: float) -> str:
    """The ratio rule: SAME within the band, else FASTER or SLOWER by the sign."""
    if abs(change_pct) <= band_pct:
        return SAME
    return FASTER if change_pct < 0 else SLOWER


def source_change(base_source: str, base_hash: str, new_source: str, new_hash: str) -> str:
    """A note when the two rows ran different kernel source (by content hash): what a
    user comparing two versions of their own kernel needs to see."""
    if not base_hash or not new_hash or base_hash == new_hash:
        return ""
    where = new_source if base_source == new_source else f"{base_source} -> {new_source}"
    return f"source changed: {where} {base_hash[:8]} -> {new_hash[:8]}"


def judge_timed(change_pct: float, band_pct: float, threshold_pct: float, base_times,
                new_times, changed: str) -> dict:
    """The verdict of a row timed on both sides: from the samples where both exist and
    suffice, else the ratio rule, saying why."""
    if base_times is None or new_times is None:
        return {"verdict": verdict(change_pct, band_pct), "rule": RATIO_RULE,
                "note": _join("no samples: ratio rule", changed)}
    decision = decide(base_times, new_times, threshold_pct)
    if not decision.decided:
        return {"verdict": verdict(change_pct, band_pct), "rule": RATIO_RULE,
                "note": _join(decision.reason, changed)}
    return {"verdict": decision.verdict, "rule": SAMPLES_RULE, "p_value": decision.p_value,
            "ci_low": decision.ci_low, "ci_high": decision.ci_high,
            "note": _join(decision.describe(), changed)}


def judge_untimed(base_status: str, new_status: str, base_detail: str, new_detail: str,
                  changed: str) -> dict:
    """A pair not timed on both sides: FAILED where a side failed (or, ok, has no time),
    SUSPECT where a side's figure is impossible, SKIPPED otherwise; the note says which
    side and why."""
    note = _status_note(base_status, new_status, base_detail, new_detail)
    if not note:  # both "ok" but without a usable time
        note = "no median time on one side"
    if base_status in BAD_STATUS or new_status in BAD_STATUS or note.startswith("no median"):
        outcome = FAILED
    elif SUSPECT_STATUS in (base_status, new_status):
        outcome = SUSPECT
    else:
        outcome = SKIPPED
    return {"ratio": math.nan, "change_pct": math.nan, "band_pct": math.nan,
            "verdict": outcome, "note": _join(note, changed)}


def judge_rounds(ratio: float, base_rounds: tuple, new_rounds: tuple, base_read: tuple,
                 new_read: tuple, threshold_pct: float, changed: str,
                 peers: float | None = None, rows: int = 1) -> dict:
    """The verdict of a row both runs measured in rounds (rounds.py); where the
    same-size read (of a case of several rows: the same-shape read, each side's own
    shape's) moved between the runs, judged against it, and against `peers` (the median
    ratio of the other cases of its size, where enough were timed: common_moves), the
    raw verdict kept only where every judgment agrees."""
    raw = decide_rounds(base_rounds, new_rounds, ratio, threshold_pct, ALPHA)
    item = {"verdict": raw.verdict, "rule": ROUNDS_RULE, "p_value": raw.p_value,
            "band_pct": float(threshold_pct), "base_rounds": len(base_rounds),
            "new_rounds": len(new_rounds), "round_spread_pct": raw.spread_pct,
            "raw_verdict": raw.verdict, "note": _join(raw.describe(), changed)}
    shift = reference_shift(base_read, new_read, threshold_pct, ALPHA)
    if shift is None:
        return item
    item.update(read_change_pct=shift.change_pct, read_moved=shift.moved)
    if not shift.moved:
        return item
    judged = [("the read", shift.ratio)]
    if peers is not None:
        judged.append(("the other cases of its size", peers))
        item.update(peers_change_pct=100.0 * (peers - 1.0))
    relative = [(name, decide_rounds(base_rounds, tuple(x / moved for x in new_rounds),
                                     ratio / moved, threshold_pct, ALPHA))
                for name, moved in judged]
    agree = all(r.verdict == raw.verdict for _, r in relative)
    against = "; ".join(f"against {name}: {r.verdict} {number(r.change_pct, '+.2f', '%')}"
                        for name, r in relative)
    item.update(verdict=raw.verdict if agree else NOISY,
                note=_join(f"{read_name(rows)} moved {number(shift.change_pct, '+.2f', '%')} "
                           f"between the runs"
                           + ("" if peers is None else
                              f", the other cases of its size "
                              f"{number(100.0 * (peers - 1.0), '+.2f', '%')} (median)")
                           + f"; raw: {raw.verdict} {number(raw.change_pct, '+.2f', '%')}; "
                           + against
                           + ("" if agree else
                              ": they disagree, so the change is not told apart from the "
                              "machine's"), changed))
    return item


def read_name(rows: int) -> str:
    """What a case's drift reference is called: the same-size read of a case of one row
    (the 1-D ladder), the same-shape read of a case of several (the row ladder)."""
    return "the same-shape read" if rows > 1 else "the same-size read"


def common_moves(pairs: pd.DataFrame) -> dict[int, float]:
    """For each pair (by position) timed in rounds on both sides, the median ratio of
    the other such cases of its size (dtype, n, rows): how far the machine moved for
    kernels like it, leaving its own move out. Only where MIN_PEERS others were timed:
    fewer (a run of one kernel) say nothing about the machine."""
    timed = [(index, (pair.dtype, int(pair.n), int(pair.rows)),
              float(pair.median_us_new) / float(pair.median_us_base))
             for index, pair in enumerate(pairs.itertuples(index=False))
             if _in_rounds(pair)]
    groups: dict[tuple, list[tuple[int, float]]] = {}
    for index, group, ratio in timed:
        groups.setdefault(group, []).append((index, ratio))
    moves = {}
    for members in groups.values():
        for index, _ in members:
            others = [ratio for other, ratio in members if other != index]
            if len(others) >= MIN_PEERS:
                moves[index] = statistics.median(others)
    return moves


def _in_rounds(pair) -> bool:
    """Timed on both sides, in rounds on both sides."""
    if not (pair.status_base == OK and pair.status_new == OK):
        return False
    if not (_usable(float(pair.median_us_base)) and _usable(float(pair.median_us_new))):
        return False
    return all(len(parse_medians(getattr(pair, f"round_medians_us_{side}", ""))) >= MIN_ROUNDS
               for side in ("base", "new"))


def judge_pair(pair, threshold_pct: float, base_samples: Samples, new_samples: Samples,
               peers: float | None = None) -> dict:
    """One matched pair (a row of Matched.pairs) as a row of ROW_COLUMNS."""
    item = {k: getattr(pair, k) for k in KEY}
    b_status, n_status = pair.status_base, pair.status_new
    b_us, n_us = float(pair.median_us_base), float(pair.median_us_new)
    b_noise, n_noise = float(pair.noise_pct_base), float(pair.noise_pct_new)
    item.update(base_status=b_status, new_status=n_status, base_us=b_us, new_us=n_us,
                base_noise_pct=b_noise, new_noise_pct=n_noise)
    changed = source_change(pair.source_base, pair.source_hash_base, pair.source_new,
                            pair.source_hash_new)
    timed = (b_status == OK and n_status == OK and _usable(b_us) and _usable(n_us))
    if not timed:
        item.update(judge_untimed(b_status, n_status, _detail(b_status, pair.error_base,
                                                              pair.note_base),
                                  _detail(n_status, pair.error_new, pair.note_new), changed))
        return item
    ratio = n_us / b_us
    change = 100.0 * (ratio - 1.0)
    band = max([threshold_pct, *(x for x in (b_noise, n_noise) if math.isfinite(x))])
    item.update(ratio=ratio, change_pct=change, band_pct=band)
    base_rounds = parse_medians(getattr(pair, "round_medians_us_base", ""))
    new_rounds = parse_medians(getattr(pair, "round_medians_us_new", ""))
    if len(base_rounds) >= MIN_ROUNDS and len(new_rounds) >= MIN_ROUNDS:
        item.update(judge_rounds(ratio, base_rounds, new_rounds,
                                 parse_medians(getattr(pair, "read_rounds_us_base", "")),
                                 parse_medians(getattr(pair, "read_rounds_us_new", "")),
                                 threshold_pct, changed, peers, int(pair.rows)))
        return item
    key = case_key(*(item[k] for k in KEY))
    item.update(judge_timed(change, band, threshold_pct, (base_samples or {}).get(key),
                            (new_samples or {}).get(key), changed))
    return item


def judge_pairs(pairs: pd.DataFrame, threshold_pct: float, base_samples: Samples = None,
                new_samples: Samples = None) -> pd.DataFrame:
    """Every matched pair judged: ROW_COLUMNS, in ladder order."""
    moves = common_moves(pairs)
    records = [judge_pair(pair, threshold_pct, base_samples, new_samples, moves.get(index))
               for index, pair in enumerate(pairs.itertuples(index=False))]
    return in_ladder_order(pd.DataFrame(records, columns=ROW_COLUMNS))


def _usable(us: float) -> bool:
    return us > 0 and math.isfinite(us)


def _detail(status: str, error: str, note: str) -> str:
    """Why a side has no plain result: a suspect row's reason is in its note (error
    for others); files from before the note column have none."""
    if status == SUSPECT_STATUS:
        return note or error
    return error


def _status_note(base_status: str, new_status: str, base_detail: str, new_detail: str
                 ) -> str:
    parts = []
    for side, status, detail in (("base", base_status, base_detail),
                                 ("new", new_status, new_detail)):
        if status != OK:
            parts.append(f"{side} {status}" + (f": {detail}" if detail else ""))
    return "; ".join(parts)


def _join(*parts: str) -> str:
    return "; ".join(filter(None, parts))
