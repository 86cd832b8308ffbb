"""What two matched, judged runs add up to: the verdicts counted, the geometric mean of
new/base per rung and overall, the warnings that make a comparison doubtful (different
GPUs, drivers, L2 modes, timing, inputs; repeated rows; nothing in common), and the
regression gate: every case NEW lost against BASE, with the reason."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from reducebench.core import defaults

from reducebench.analysis.compare.judge import (BAD_STATUS, FAILED, FASTER, MIN_PEERS, NOISY,
                                                ONLY_BASE, ONLY_NEW, RATIO_RULE,
                                                ROUNDS_RULE, ROW_COLUMNS, SAME,
                                                SAMPLES_RULE, SKIPPED, SLOWER, SUSPECT,
                                                TIMED_VERDICTS, read_name)
from reducebench.analysis.compare.round_verdict import MIN_ROUNDS
from reducebench.core.sizes import format_size
from reducebench.results.schema import OK, parse_medians
from reducebench.analysis.compare.match import KEY, Matched, in_ladder_order
from reducebench.ladder.registry import display_rank
from reducebench.core.numbers import number

# Run metadata that makes two runs incomparable when it differs: column -> what it is.
CHECKED_META = {"gpu": "GPUs", "driver": "drivers", "mode": "cold/warm L2 modes",
                "timing": "timing methods", "inputs": "input kinds"}
GEOMEAN_COLUMNS = ["rung", "rows", "ratio", "change_pct"]
GATE_COLUMNS = KEY + ["base_status", "new_status", "reason"]


@dataclass
class Comparison:
    """The outcome of `compare_runs`.

    rows:      one row per matched key, columns judge.ROW_COLUMNS. ratio = new/base
               median (< 1: NEW is faster), change_pct = 100 * (ratio - 1), band_pct =
               the larger of the threshold and both sides' noise; verdict FASTER / SLOWER
               / SAME, or FAILED / SKIPPED / SUSPECT when a side has no verified,
               believable timing (note says which).
    geomean:   per rung over its timed rows: rung, rows, ratio (geometric mean of new/base),
               change_pct.
    only_base, only_new: rows present in one file only, columns match.SIDE_COLUMNS.
    warnings:  differences that make the comparison doubtful (GPU, driver, mode, ...).
    """

    rows: pd.DataFrame
    geomean: pd.DataFrame
    only_base: pd.DataFrame
    only_new: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    threshold_pct: float = defaults.THRESHOLD_PCT

    def rules(self) -> dict[str, int]:
        """How many timed rows each rule decided."""
        timed = self.timed
        return {rule: int((timed["rule"] == rule).sum())
                for rule in (ROUNDS_RULE, SAMPLES_RULE, RATIO_RULE)}

    def with_verdict(self, *verdicts: str) -> pd.DataFrame:
        return self.rows[self.rows["verdict"].isin(verdicts)]

    @property
    def timed(self) -> pd.DataFrame:
        return self.with_verdict(*TIMED_VERDICTS)

    @property
    def faster(self) -> pd.DataFrame:
        return self.with_verdict(FASTER)

    @property
    def slower(self) -> pd.DataFrame:
        return self.with_verdict(SLOWER)

    @property
    def same(self) -> pd.DataFrame:
        return self.with_verdict(SAME)

    @property
    def noisy(self) -> pd.DataFrame:
        """Beyond the threshold, but within what the case's rounds vary by: shown, never
        a regression."""
        return self.with_verdict(NOISY)

    @property
    def failed(self) -> pd.DataFrame:
        """Matched rows not timed on both sides (FAIL, error, skipped or suspect on one
        side or both)."""
        return self.with_verdict(FAILED, SKIPPED, SUSPECT)

    @property
    def newly_failing(self) -> pd.DataFrame:
        """Verified in BASE, FAIL or error in NEW: a correctness regression."""
        rows = self.rows
        return rows[(rows["base_status"] == OK) & rows["new_status"].isin(BAD_STATUS)]

    @property
    def regressions(self) -> pd.DataFrame:
        """SLOWER beyond the threshold (and the noise), or newly failing."""
        return pd.concat([self.slower, self.newly_failing]).drop_duplicates(subset=KEY)

    @property
    def losses(self) -> pd.DataFrame:
        """Every case verified in BASE that NEW lost (GATE_COLUMNS, with the reason):
        FAIL, error, skipped or suspect in NEW, ok without a time, or missing from NEW."""
        return losses(self.rows, self.only_base)

    @property
    def gate_failures(self) -> pd.DataFrame:
        """What fails --fail-on-regression: SLOWER rows and every loss, with the reason."""
        slower = self.slower.assign(reason=[_slower_reason(r) for r in
                                            self.slower.itertuples()])
        return in_ladder_order(pd.concat([slower.reindex(columns=GATE_COLUMNS), self.losses],
                                         ignore_index=True))

    @property
    def overall_geomean(self) -> float:
        return geometric_mean(self.timed["ratio"])

    def counts(self) -> dict[str, int]:
        counts = {v: int((self.rows["verdict"] == v).sum())
                  for v in (FASTER, SLOWER, SAME, NOISY, FAILED, SKIPPED, SUSPECT)}
        counts[ONLY_BASE] = len(self.only_base)
        counts[ONLY_NEW] = len(self.only_new)
        return counts

    def all_rows(self) -> pd.DataFrame:
        """Matched rows and one-sided rows in one frame (verdict ONLY_BASE / ONLY_NEW)."""
        parts = [self.rows]
        for side, frame, verdict in (("base", self.only_base, ONLY_BASE),
                                     ("new", self.only_new, ONLY_NEW)):
            if len(frame):
                extra = frame[KEY].copy()
                extra[f"{side}_status"] = frame["status"].values
                extra[f"{side}_us"] = frame["median_us"].values
                extra["verdict"] = verdict
                extra["note"] = f"only in {side.upper()}"
                parts.append(extra)
        combined = pd.concat(parts, ignore_index=True) if len(parts) > 1 else self.rows.copy()
        return in_ladder_order(combined.reindex(columns=ROW_COLUMNS))


def geometric_mean(values) -> float:
    values = np.asarray(pd.to_numeric(pd.Series(values), errors="coerce"), dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    return float(np.exp(np.log(values).mean())) if len(values) else math.nan


def geomean_per_rung(rows: pd.DataFrame) -> pd.DataFrame:
    """GEOMEAN_COLUMNS per rung over its timed rows, in ladder order."""
    timed = rows[rows["verdict"].isin(TIMED_VERDICTS)]
    geo = []
    for rung, group in timed.groupby("rung", sort=False):
        ratio = geometric_mean(group["ratio"])
        geo.append({"rung": rung, "rows": len(group), "ratio": ratio,
                    "change_pct": 100.0 * (ratio - 1.0)})
    geomean = pd.DataFrame(geo, columns=GEOMEAN_COLUMNS)
    if not len(geomean):
        return geomean
    return (geomean.assign(_o=geomean["rung"].map(display_rank))
            .sort_values(["_o"], kind="stable").drop(columns="_o").reset_index(drop=True))


def meta_warnings(base: pd.DataFrame, new: pd.DataFrame) -> list[str]:
    """One warning per CHECKED_META column whose values differ between the runs."""
    warnings = []
    for column, what in CHECKED_META.items():
        a, b = _meta_values(base, column), _meta_values(new, column)
        if a and b and a != b:
            warnings.append(f"{what} differ: BASE {', '.join(a)}; NEW {', '.join(b)}"
                            " - the timings may not be comparable")
    return warnings


def same_run_warning(base: pd.DataFrame, new: pd.DataFrame) -> list[str]:
    """A warning when BASE and NEW hold the same run (the same file twice, a copy, or a
    file and its `--resume` continuation): those rows compare a time with itself, and
    SAME says nothing about them."""
    base_runs, new_runs = _meta_values(base, "run_id"), _meta_values(new, "run_id")
    shared = [run for run in base_runs if run in new_runs]
    if not shared:
        return []
    if base_runs == new_runs:
        return [f"BASE and NEW are the same run ({', '.join(shared)}): every time is "
                "compared with itself"]
    return [f"BASE and NEW share run(s) {', '.join(shared)}: the rows of those runs are "
            "compared with themselves"]


def rounds_warnings(base: pd.DataFrame, new: pd.DataFrame) -> list[str]:
    """One line when a side was measured without rounds: its verdicts then come from
    samples of one process, which cannot see what varies between runs."""
    without = [side for side, frame in (("BASE", base), ("NEW", new))
               if not _has_rounds(frame)]
    if not without:
        return []
    sides = " and ".join(without)
    return [f"{sides} {'was' if len(without) == 1 else 'were'} measured without rounds "
            "(results schema 4 or older, or --rounds 1): verdicts come from samples of one "
            "process and cannot see run-to-run variation (docs/samples.md)"]


def _has_rounds(frame: pd.DataFrame) -> bool:
    if "round_medians_us" not in frame:
        return False
    return any(len(parse_medians(v)) >= MIN_ROUNDS for v in frame["round_medians_us"])


def reference_lines(rows: pd.DataFrame) -> list[str]:
    """One line per size (or shape) and dtype whose read moved between the runs: the
    same-size read of a size, the same-shape read of each shape (two shapes of one n
    are two reads, each judging its own cases)."""
    if "read_moved" not in rows:
        return []
    moved = rows[rows["read_moved"].eq(True)]
    lines = []
    for (dtype, n, row_count), group in moved.groupby(["dtype", "n", "rows"], sort=False):
        change = float(group["read_change_pct"].iloc[0])
        rows_, n_ = int(row_count), int(n)
        where = (f"shape={format_size(rows_)}x{format_size(n_ // rows_)}" if rows_ > 1
                 else f"n={format_size(n_)}")
        lines.append(f"{read_name(rows_)} itself moved {number(change, '+.2f', '%')} at "
                     f"{where} {dtype} between BASE and NEW: the machine changed; its "
                     f"{len(group)} case(s) are judged against the read and, where "
                     f"{MIN_PEERS} or more others were timed, against the other cases' "
                     "median move "
                     "(each note gives the raw verdict)")
    return lines


def losses(rows: pd.DataFrame, only_base: pd.DataFrame) -> pd.DataFrame:
    """The cases verified in BASE with no verified, believable time in NEW (GATE_COLUMNS)."""
    lost = []
    for r in rows[rows["base_status"] == OK].itertuples():
        if r.new_status == OK and r.new_us > 0 and math.isfinite(r.new_us):
            continue
        if r.new_status == OK:
            reason = "ok in BASE, no median time in NEW"
        else:
            reason = f"ok in BASE, {r.new_status} in NEW" + _new_detail(r.note, r.new_status)
        lost.append({**{k: getattr(r, k) for k in KEY}, "base_status": r.base_status,
                     "new_status": r.new_status, "reason": reason})
    for r in only_base[only_base["status"] == OK].itertuples():
        lost.append({**{k: getattr(r, k) for k in KEY}, "base_status": r.status,
                     "new_status": "", "reason": "ok in BASE, missing from NEW"})
    return in_ladder_order(pd.DataFrame(lost, columns=GATE_COLUMNS))


def summarise(matched: Matched, rows: pd.DataFrame, threshold_pct: float) -> Comparison:
    """The Comparison of judged rows: warnings about the runs, then the means."""
    warnings = same_run_warning(matched.base, matched.new) + \
        meta_warnings(matched.base, matched.new) + matched.warnings + \
        rounds_warnings(matched.base, matched.new) + reference_lines(rows)
    if not len(rows):
        warnings.append("the two runs have no (rung, dtype, n, block, params) in common")
    elif not rows["verdict"].isin(TIMED_VERDICTS).any():
        warnings.append("no row is verified and timed on both sides")
    return Comparison(rows=rows, geomean=geomean_per_rung(rows), only_base=matched.only_base,
                      only_new=matched.only_new, warnings=warnings,
                      threshold_pct=float(threshold_pct))


def _meta_values(frame: pd.DataFrame, column: str) -> list[str]:
    if column not in frame:
        return []
    values = []
    for value in frame[column].dropna():
        text = str(value).strip()
        if text and text not in values:
            values.append(text)
    return sorted(values)


def _new_detail(note: str, status: str) -> str:
    """Why NEW has no result, out of the row's note ("base ...; new FAIL: wrong sum;
    source changed: ..."): the text after "new STATUS: ", which may itself hold "; "."""
    note = str(note)
    start = note.find(f"new {status}: ")
    if start < 0:
        return ""
    detail = note[start + len(f"new {status}: "):]
    return ": " + detail.split("; source changed: ")[0]


def _slower_reason(r) -> str:
    if r.rule == ROUNDS_RULE:
        return (f"SLOWER by {number(r.change_pct, '+.1f', '%')} (beyond the "
                f"{number(r.band_pct, '.1f', '%')} threshold, "
                f"every round apart: p={number(r.p_value, '.2g')}, rounds rule)")
    return (f"SLOWER by {number(r.change_pct, '+.1f', '%')} (beyond the "
            f"±{number(r.band_pct, '.1f', '%')} band, "
            f"{r.rule} rule)")
