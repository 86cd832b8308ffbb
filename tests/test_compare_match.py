"""Pairing two runs' rows (analysis/compare/match.py): what `normalise` makes of a file's
columns (missing, empty, old `verified`-only files, numbers as text, `auto` rows), the
ladder's order of rows, and the warning for a repeated key."""

from __future__ import annotations

import math

import pandas as pd

from reducebench.analysis.compare.match import in_ladder_order, match_runs, normalise


def test_missing_columns_are_filled_and_status_is_ok():
    df = normalise(pd.DataFrame({"rung": ["gmem"], "dtype": ["float32"], "n": [1024],
                                 "block": [256]}))
    row = df.iloc[0]
    assert [row[c] for c in ("params", "error", "note", "source", "source_hash",
                             "round_medians_us", "read_rounds_us")] == [""] * 7
    assert row["status"] == "ok"
    assert math.isnan(row["median_us"]) and math.isnan(row["noise_pct"])


def test_a_file_with_only_verified_takes_its_status_from_it():
    df = normalise(pd.DataFrame({"rung": ["gmem"] * 4, "dtype": ["float32"] * 4,
                                 "n": [1, 2, 3, 4], "block": [256] * 4,
                                 "verified": [True, False, "TRUE", "no"]}))
    assert list(df["status"]) == ["ok", "FAIL", "ok", "FAIL"]
    # a status column, even one with gaps, is kept; its gaps are ok
    df = normalise(pd.DataFrame({"rung": ["gmem"] * 2, "dtype": ["float32"] * 2,
                                 "n": [1, 2], "block": [256] * 2, "status": [None, "FAIL"],
                                 "verified": [False, False]}))
    assert list(df["status"]) == ["ok", "FAIL"]


def test_cells_are_text_and_numbers_whatever_the_file_held():
    df = normalise(pd.DataFrame({"rung": ["gmem", "gmem"], "dtype": ["float32"] * 2,
                                 "n": ["1024", "2048"], "block": ["", "128"],
                                 "params": [math.nan, "x=1"], "error": [math.nan, "wrong sum"],
                                 "median_us": ["10.5", "n/a"], "noise_pct": [0.5, "?"]}))
    assert list(df["n"]) == [1024, 2048] and df["n"].dtype.kind == "i"
    assert list(df["block"]) == [0, 128] and df["block"].dtype.kind == "i"
    assert list(df["params"]) == ["", "x=1"] and list(df["error"]) == ["", "wrong sum"]
    assert df["median_us"].iloc[0] == 10.5 and math.isnan(df["median_us"].iloc[1])
    assert df["noise_pct"].iloc[0] == 0.5 and math.isnan(df["noise_pct"].iloc[1])


def test_auto_rows_are_the_case_asked_for():
    df = normalise(pd.DataFrame({"rung": ["auto", "gmem"], "dtype": ["float32"] * 2,
                                 "n": [1024] * 2, "block": [512, 512],
                                 "params": ["unroll=4", "unroll=4"]}))
    assert list(df["block"]) == [0, 512] and list(df["params"]) == ["", "unroll=4"]


def test_rows_go_in_ladder_order_within_a_size():
    # smem_interleaved comes before first_add in the ladder, after it alphabetically
    frame = pd.DataFrame({"rung": ["first_add", "smem_interleaved", "gmem"],
                          "dtype": ["float32"] * 3, "n": [1024, 1024, 512],
                          "block": [256] * 3, "params": [""] * 3})
    assert list(in_ladder_order(frame)["rung"]) == ["gmem", "smem_interleaved", "first_add"]


def test_a_repeated_key_keeps_the_later_row_and_says_so():
    base = pd.DataFrame({"rung": ["gmem"] * 3, "dtype": ["float32"] * 3, "n": [1, 1, 2],
                         "block": [256] * 3, "median_us": [1.0, 2.0, 3.0]})
    matched = match_runs(base, base.iloc[[2]])
    assert matched.warnings == ["BASE has 1 repeated row(s) for the same (rung, dtype, n, "
                                "block, params); the last of each is used"]
    assert list(matched.only_base["median_us"]) == [2.0]
    matched = match_runs(base.iloc[[2]], base)
    assert matched.warnings == ["NEW has 1 repeated row(s) for the same (rung, dtype, n, "
                                "block, params); the last of each is used"]


def test_a_file_from_before_evict_first_pairs_with_a_run_that_does_not_stream():
    """Row rungs gained evict_first after files had been written: an older file's case
    (no evict_first in its params) ran the kernel that evict_first=0 runs now, so the two
    are one case; evict_first=1 is another."""
    def rows(*params):
        return pd.DataFrame({"rung": ["row_vec_block"] * len(params),
                             "dtype": ["float32"] * len(params), "n": [2**24] * len(params),
                             "block": [256] * len(params), "rows": [4096] * len(params),
                             "params": list(params), "median_us": [20.0] * len(params)})

    older = rows("loads=4")
    newer = rows("evict_first=0;loads=4", "evict_first=1;loads=4")
    matched = match_runs(older, newer)
    assert len(matched.pairs) == 1 and matched.pairs["params"].iloc[0] == "loads=4"
    assert list(matched.only_new["params"]) == ["evict_first=1;loads=4"]
    assert matched.only_base.empty
