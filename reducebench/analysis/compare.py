"""Comparing results: two runs row by row, or every rung against one rung within a run.

Pure functions over the DataFrames that `results.read_results` returns; nothing here
prints, reads files or touches a GPU. Rows are matched on (rung, dtype, n, block, params):
the runner's own case key, so a parameter sweep compares setting by setting. Only rows
whose status is "ok" on both sides are timed; the others are reported, never ranked."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from reducebench.core.errors import UsageError
from reducebench.ladder.case import KEY_COLUMNS, case_key
from reducebench.ladder.registry import display_rank
from reducebench.analysis.significance import decide

KEY = list(KEY_COLUMNS)

FASTER, SLOWER, SAME = "FASTER", "SLOWER", "SAME"
FAILED, SKIPPED = "FAILED", "SKIPPED"          # matched, but not timed on both sides
ONLY_BASE, ONLY_NEW = "ONLY_BASE", "ONLY_NEW"  # present in one file only
TIMED_VERDICTS = (FASTER, SLOWER, SAME)
BAD_STATUS = ("FAIL", "error")

# Run metadata that makes two runs incomparable when it differs: column -> what it is.
CHECKED_META = {"gpu": "GPUs", "driver": "drivers", "mode": "cold/warm L2 modes",
                "timing": "timing methods", "inputs": "input kinds"}

ROW_COLUMNS = KEY + ["base_status", "new_status", "base_us", "new_us", "ratio", "change_pct",
                     "base_noise_pct", "new_noise_pct", "band_pct", "verdict", "rule",
                     "p_value", "ci_low", "ci_high", "note"]
# How a timed row was decided: from both runs' raw samples (significance.decide), or by
# the ratio of medians against the threshold and the noise (no samples on a side, or too
# few for the test).
SAMPLES_RULE, RATIO_RULE = "samples", "ratio"
SIDE_COLUMNS = KEY + ["status", "median_us"]


@dataclass
class Comparison:
    """The outcome of `compare_runs`.

    rows:      one row per matched key, columns ROW_COLUMNS. ratio = new/base median
               (< 1: NEW is faster), change_pct = 100 * (ratio - 1), band_pct = the
               larger of the threshold and both sides' noise; verdict FASTER / SLOWER /
               SAME, or FAILED / SKIPPED when a side has no verified timing (note says which).
    geomean:   per rung over its timed rows: rung, rows, ratio (geometric mean of new/base),
               change_pct.
    only_base, only_new: rows present in one file only, columns SIDE_COLUMNS.
    warnings:  differences that make the comparison doubtful (GPU, driver, mode, ...).
    """

    rows: pd.DataFrame
    geomean: pd.DataFrame
    only_base: pd.DataFrame
    only_new: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    threshold_pct: float = 2.0

    def rules(self) -> dict[str, int]:
        """How many timed rows each rule decided."""
        timed = self.timed
        return {rule: int((timed["rule"] == rule).sum()) for rule in (SAMPLES_RULE, RATIO_RULE)}

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
    def failed(self) -> pd.DataFrame:
        """Matched rows not timed on both sides (FAIL, error or skipped on one or both)."""
        return self.with_verdict(FAILED, SKIPPED)

    @property
    def newly_failing(self) -> pd.DataFrame:
        """Verified in BASE, FAIL or error in NEW: a correctness regression."""
        rows = self.rows
        return rows[(rows["base_status"] == "ok") & rows["new_status"].isin(BAD_STATUS)]

    @property
    def regressions(self) -> pd.DataFrame:
        """SLOWER beyond the threshold (and the noise), or newly failing."""
        return pd.concat([self.slower, self.newly_failing]).drop_duplicates(subset=KEY)

    @property
    def overall_geomean(self) -> float:
        return geometric_mean(self.timed["ratio"])

    def counts(self) -> dict[str, int]:
        counts = {v: int((self.rows["verdict"] == v).sum())
                  for v in (FASTER, SLOWER, SAME, FAILED, SKIPPED)}
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
        return _sorted(combined.reindex(columns=ROW_COLUMNS))


def geometric_mean(values) -> float:
    values = np.asarray(pd.to_numeric(pd.Series(values), errors="coerce"), dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    return float(np.exp(np.log(values).mean())) if len(values) else math.nan


def normalise(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with the columns the comparisons need, in the types they need: empty
    params and errors as "", n and block as int, times as float, status derived from
    `verified` where a frame has no status column."""
    df = frame.copy()
    for column in ("rung", "dtype", "params", "error", "status", "source", "source_hash"):
        if column not in df:
            df[column] = "" if column != "status" else None
    if df["status"].isna().all() and "verified" in df:
        df["status"] = np.where(df["verified"].astype(str).str.lower() == "true", "ok", "FAIL")
    df["status"] = df["status"].fillna("ok")
    for column in ("rung", "dtype", "params", "error", "status", "source", "source_hash"):
        df[column] = [("" if pd.isna(v) else str(v)) for v in df[column]]
    for column in ("n", "block"):
        df[column] = pd.to_numeric(df[column], errors="coerce").fillna(0).astype(int)
    for column in ("median_us", "noise_pct"):
        df[column] = pd.to_numeric(df[column], errors="coerce") if column in df else math.nan
    return df


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    if not len(frame):
        return frame.reset_index(drop=True)
    order = frame["rung"].map(display_rank)
    return (frame.assign(_order=order)
            .sort_values(["dtype", "n", "_order", "block", "params"], kind="stable")
            .drop(columns="_order").reset_index(drop=True))


def _meta_values(frame: pd.DataFrame, column: str) -> list[str]:
    if column not in frame:
        return []
    values = []
    for value in frame[column].dropna():
        text = str(value).strip()
        if text and text not in values:
            values.append(text)
    return sorted(values)


def _dedupe(frame: pd.DataFrame, side: str, warnings: list[str]) -> pd.DataFrame:
    duplicated = frame.duplicated(subset=KEY, keep="last")
    if duplicated.any():
        warnings.append(f"{side} has {int(duplicated.sum())} repeated row(s) for the same "
                        "(rung, dtype, n, block, params); the last of each is used")
    return frame[~duplicated]


def verdict(change_pct: float, band_pct: float) -> str:
    if abs(change_pct) <= band_pct:
        return SAME
    return FASTER if change_pct < 0 else SLOWER


def _note(base_status: str, new_status: str, base_error: str, new_error: str) -> str:
    parts = []
    for side, status, error in (("base", base_status, base_error),
                                ("new", new_status, new_error)):
        if status != "ok":
            text = f"{side} {status}"
            if error:
                text += f": {error}"
            parts.append(text)
    return "; ".join(parts)


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
                "note": "; ".join(filter(None, ("no samples: ratio rule", changed)))}
    decision = decide(base_times, new_times, threshold_pct)
    if not decision.decided:
        return {"verdict": verdict(change_pct, band_pct), "rule": RATIO_RULE,
                "note": "; ".join(filter(None, (decision.reason, changed)))}
    return {"verdict": decision.verdict, "rule": SAMPLES_RULE, "p_value": decision.p_value,
            "ci_low": decision.ci_low, "ci_high": decision.ci_high,
            "note": "; ".join(filter(None, (decision.describe(), changed)))}


def compare_runs(base_df: pd.DataFrame, new_df: pd.DataFrame,
                 threshold_pct: float = 2.0, base_samples: dict | None = None,
                 new_samples: dict | None = None) -> Comparison:
    """Match two runs' rows and judge every change.

    Where both runs kept a case's raw samples (samples.samples_for_results: case key ->
    times), the samples decide (significance.decide: a rank test, a bootstrap interval of
    the ratio of medians, and the threshold), with the p-value and interval recorded.
    Otherwise the ratio rule: a change (new/base - 1, in percent) is SAME when it is
    within the larger of `threshold_pct` and the two sides' noise (noise_pct), and the
    row's note says the samples were missing."""
    if not (threshold_pct >= 0 and math.isfinite(threshold_pct)):
        raise UsageError(f"threshold {threshold_pct!r} must be a percentage of 0 or more")
    warnings: list[str] = []
    base, new = normalise(base_df), normalise(new_df)

    for column, what in CHECKED_META.items():
        a, b = _meta_values(base, column), _meta_values(new, column)
        if a and b and a != b:
            warnings.append(f"{what} differ: BASE {', '.join(a)}; NEW {', '.join(b)}"
                            " - the timings may not be comparable")

    base = _dedupe(base, "BASE", warnings)
    new = _dedupe(new, "NEW", warnings)
    columns = KEY + ["status", "error", "median_us", "noise_pct", "source", "source_hash"]
    merged = base[columns].merge(new[columns], on=KEY, how="outer", suffixes=("_base", "_new"),
                                 indicator=True)

    def side(frame: pd.DataFrame, suffix: str) -> pd.DataFrame:
        out = frame[KEY].copy()
        out["status"] = frame[f"status{suffix}"].values
        out["median_us"] = frame[f"median_us{suffix}"].values
        return _sorted(out.reindex(columns=SIDE_COLUMNS))

    only_base = side(merged[merged["_merge"] == "left_only"], "_base")
    only_new = side(merged[merged["_merge"] == "right_only"], "_new")
    both = merged[merged["_merge"] == "both"]

    records = []
    for row in both.itertuples(index=False):
        item = {k: getattr(row, k) for k in KEY}
        b_status, n_status = row.status_base, row.status_new
        b_us, n_us = float(row.median_us_base), float(row.median_us_new)
        b_noise, n_noise = float(row.noise_pct_base), float(row.noise_pct_new)
        item.update(base_status=b_status, new_status=n_status, base_us=b_us, new_us=n_us,
                    base_noise_pct=b_noise, new_noise_pct=n_noise)
        timed = (b_status == "ok" and n_status == "ok"
                 and b_us > 0 and n_us > 0 and math.isfinite(b_us) and math.isfinite(n_us))
        changed = source_change(row.source_base, row.source_hash_base, row.source_new,
                                row.source_hash_new)
        if timed:
            ratio = n_us / b_us
            change = 100.0 * (ratio - 1.0)
            noises = [x for x in (b_noise, n_noise) if math.isfinite(x)]
            band = max([threshold_pct, *noises])
            item.update(ratio=ratio, change_pct=change, band_pct=band)
            key = case_key(*(item[k] for k in KEY))
            item.update(judge_timed(change, band, threshold_pct,
                                    (base_samples or {}).get(key), (new_samples or {}).get(key),
                                    changed))
        else:
            bad = b_status in BAD_STATUS or n_status in BAD_STATUS
            note = _note(b_status, n_status, row.error_base, row.error_new)
            if not note:  # both "ok" but without a usable time
                note = "no median time on one side"
            item.update(ratio=math.nan, change_pct=math.nan, band_pct=math.nan,
                        verdict=FAILED if bad or note.startswith("no median") else SKIPPED,
                        note="; ".join(filter(None, (note, changed))))
        records.append(item)
    rows = _sorted(pd.DataFrame(records, columns=ROW_COLUMNS))

    timed_rows = rows[rows["verdict"].isin(TIMED_VERDICTS)]
    geo = []
    for rung, group in timed_rows.groupby("rung", sort=False):
        ratio = geometric_mean(group["ratio"])
        geo.append({"rung": rung, "rows": len(group), "ratio": ratio,
                    "change_pct": 100.0 * (ratio - 1.0)})
    geomean = pd.DataFrame(geo, columns=["rung", "rows", "ratio", "change_pct"])
    if len(geomean):
        geomean = (geomean.assign(_o=geomean["rung"].map(display_rank))
                   .sort_values(["_o"], kind="stable").drop(columns="_o")
                   .reset_index(drop=True))

    if not len(rows):
        warnings.append("the two runs have no (rung, dtype, n, block, params) in common")
    elif not len(timed_rows):
        warnings.append("no row is verified and timed on both sides")
    return Comparison(rows=rows, geomean=geomean, only_base=only_base, only_new=only_new,
                      warnings=warnings, threshold_pct=float(threshold_pct))


BASELINE_COLUMNS = ["dtype", "n", "rung", "block", "params", "status", "median_us",
                    "baseline_us", "ratio", "speedup"]


def baseline_ratios(df: pd.DataFrame, rung: str) -> pd.DataFrame:
    """Every row's median as a ratio to `rung`'s median at the same (n, dtype), within one
    run: ratio = median / baseline (< 1: faster than the baseline), speedup = its inverse.
    Where the baseline rung has several verified rows at one (n, dtype) (block sizes or
    parameters), the fastest is the baseline. Rows that are not verified, and (n, dtype)
    the baseline did not verify, get no ratio. Raises UsageError if `rung` has no rows,
    or no verified row, in the run."""
    frame = normalise(df)
    present = list(dict.fromkeys(frame["rung"]))
    if rung not in present:
        raise UsageError(f"baseline rung {rung!r} is not in the results; rungs present: "
                         f"{', '.join(present) or 'none'}")
    timed = frame[(frame["status"] == "ok") & (frame["median_us"] > 0)]
    base = timed[timed["rung"] == rung]
    if not len(base):
        raise UsageError(f"baseline rung {rung!r} has no verified row in the results "
                         "(every row of it failed or was skipped)")
    best = base.groupby(["n", "dtype"])["median_us"].min().rename("baseline_us").reset_index()
    out = frame.merge(best, on=["n", "dtype"], how="left")
    ok = (out["status"] == "ok") & (out["median_us"] > 0)
    out["ratio"] = np.where(ok, out["median_us"] / out["baseline_us"], math.nan)
    out["speedup"] = np.where(ok, out["baseline_us"] / out["median_us"], math.nan)
    return _sorted(out.reindex(columns=BASELINE_COLUMNS))[BASELINE_COLUMNS]
