"""Pairing two runs' rows: by case key (rung, dtype, n, block, params), the runner's own
key, so a parameter sweep compares setting by setting. A key a file holds twice (a
resumed run that measured a case again) keeps the later row, with a warning."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from reducebench.ladder.case import DISPATCHERS, KEY_COLUMNS, keyed_params
from reducebench.ladder.registry import display_rank
from reducebench.results.schema import OK

# The case key, and the row count a case of several rows adds (results schema 6; 1 for
# every case of --size and every row of an older file)
KEY = [*KEY_COLUMNS, "rows"]
SIDE_COLUMNS = KEY + ["status", "median_us"]
# What judging a pair needs from each side; a merged pair has each twice, suffixed
# _base and _new.
CASE_COLUMNS = KEY + ["status", "error", "note", "median_us", "noise_pct", "source",
                      "source_hash", "round_medians_us", "read_rounds_us"]
_TEXT_COLUMNS = ("rung", "dtype", "params", "error", "note", "status", "source",
                 "source_hash", "round_medians_us", "read_rounds_us")


@dataclass
class Matched:
    """Two runs paired. base, new: every row of each (normalised, before repeats are
    dropped); pairs: one row per key in both, CASE_COLUMNS suffixed _base and _new;
    only_base, only_new: keys in one file only (SIDE_COLUMNS, ladder order)."""

    base: pd.DataFrame
    new: pd.DataFrame
    pairs: pd.DataFrame
    only_base: pd.DataFrame
    only_new: pd.DataFrame
    warnings: list[str] = field(default_factory=list)


def normalise(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with the columns the comparisons need, in the types they need: empty
    params, errors and notes as "", params as the case key has them, n and block as int,
    times as float, status derived from `verified` where a frame has no status column."""
    df = frame.copy()
    for column in _TEXT_COLUMNS:
        if column not in df:
            df[column] = "" if column != "status" else None
    if df["status"].isna().all() and "verified" in df:
        df["status"] = np.where(df["verified"].astype(str).str.lower() == "true", "ok", "FAIL")
    df["status"] = df["status"].fillna(OK)
    for column in _TEXT_COLUMNS:
        df[column] = [("" if pd.isna(v) else str(v)) for v in df[column]]
    # the key's parameters (ladder/case.py): a parameter added since an older file was
    # written, at the value that runs that file's kernel, is left out on both sides
    df["params"] = [keyed_params(p) for p in df["params"]]
    for column in ("n", "block"):
        df[column] = pd.to_numeric(df[column], errors="coerce").fillna(0).astype(int)
    rows = pd.to_numeric(df["rows"], errors="coerce") if "rows" in df else None
    df["rows"] = rows.fillna(1).astype(int) if rows is not None else 1
    for column in ("median_us", "noise_pct"):
        df[column] = pd.to_numeric(df[column], errors="coerce") if column in df else math.nan
    # `auto` is the case asked for, whatever its table resolved it to (ladder/case.py):
    # two runs' auto rows pair up even when the tuning table changed between them
    is_auto = df["rung"].isin(DISPATCHERS)
    df.loc[is_auto, "block"] = 0
    df.loc[is_auto, "params"] = ""
    return df


def in_ladder_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows by dtype, n, then the ladder's order of rungs, block and params."""
    if not len(frame):
        return frame.reset_index(drop=True)
    order = frame["rung"].map(display_rank)
    return (frame.assign(_order=order)
            .sort_values(["dtype", "n", *(["rows"] if "rows" in frame else []), "_order",
                          "block", "params"], kind="stable")
            .drop(columns="_order").reset_index(drop=True))


def latest_per_key(frame: pd.DataFrame, side: str) -> tuple[pd.DataFrame, str | None]:
    """The frame with one row per key, the later one where a key repeats, and the
    warning that says so (None when no key repeats)."""
    repeated = frame.duplicated(subset=KEY, keep="last")
    if not repeated.any():
        return frame, None
    return frame[~repeated], (f"{side} has {int(repeated.sum())} repeated row(s) for the "
                              "same (rung, dtype, n, block, params); the last of each is used")


def match_runs(base_df: pd.DataFrame, new_df: pd.DataFrame) -> Matched:
    """Pair BASE's and NEW's rows by case key."""
    base, new = normalise(base_df), normalise(new_df)
    base_rows, base_warning = latest_per_key(base, "BASE")
    new_rows, new_warning = latest_per_key(new, "NEW")
    merged = base_rows[CASE_COLUMNS].merge(new_rows[CASE_COLUMNS], on=KEY, how="outer",
                                           suffixes=("_base", "_new"), indicator=True)
    return Matched(base=base, new=new,
                   pairs=merged[merged["_merge"] == "both"].drop(columns="_merge"),
                   only_base=_one_side(merged[merged["_merge"] == "left_only"], "_base"),
                   only_new=_one_side(merged[merged["_merge"] == "right_only"], "_new"),
                   warnings=[w for w in (base_warning, new_warning) if w])


def _one_side(frame: pd.DataFrame, suffix: str) -> pd.DataFrame:
    out = frame[KEY].copy()
    out["status"] = frame[f"status{suffix}"].values
    out["median_us"] = frame[f"median_us{suffix}"].values
    return in_ladder_order(out.reindex(columns=SIDE_COLUMNS))
