"""Which variant `auto` should use on a GPU without a tuning table: for each of the
built-in table's size ranges, every variant measured at every sample size of that range
in the given tune candidate files (`reducebench tune --records`), ranked by its worst
ratio to the best variant at any one sample size and GPU. The built-in table
(DEFAULT_TABLE in reducebench/ladder/auto.py) should hold the first of each list.

    python3 scripts/default_variants.py results/h100/tune_candidates_C.csv results/h200/tune_candidates_C.csv
"""

from __future__ import annotations

import sys
import warnings

import pandas as pd

from reducebench.ladder.auto import DEFAULT_TABLE
from reducebench.results.files import read_results


def rankings(paths: list[str]) -> list[tuple[object, int, pd.DataFrame]]:
    """Per band of DEFAULT_TABLE: the band, its number of (file, size) points, and the
    variants measured at every one of them, best worst ratio first (column `max`)."""
    with warnings.catch_warnings():  # tune measures its finalists twice; the latest row counts
        warnings.simplefilter("ignore")
        frames = [read_results(p).assign(file=p) for p in paths]
    frame = pd.concat(frames, ignore_index=True)
    # The table is keyed by float32 elements; tune's float16 confirmations (the same
    # bytes, twice the n) would count as sample sizes of their own.
    frame = frame[(frame["status"] == "ok") & (frame["dtype"] == "float32")]
    frame["variant"] = (frame["rung"] + " " + frame["block"].astype(str) + " "
                        + frame["params"].astype(str))
    best = frame.groupby(["file", "n"])["median_us"].transform("min")
    frame["ratio"] = frame["median_us"] / best
    found = []
    for band in DEFAULT_TABLE.bands:
        high = band.n_max if band.n_max is not None else 2**62
        rows = frame[(frame["n"] >= band.n_min) & (frame["n"] <= high)]
        points = rows.groupby(["file", "n"]).ngroups
        ranked = (rows.groupby("variant")["ratio"].agg(["max", "size"])
                  .query("size == @points").sort_values("max"))
        found.append((band, points, ranked))
    return found


def main(paths: list[str]) -> None:
    for band, points, ranked in rankings(paths):
        label = f"{band.n_min}..{band.n_max or 'up'}"
        print(f"{label}: built-in {band.variant.label()}; {points} sample sizes x GPUs")
        for variant, row in ranked.head(4).iterrows():
            print(f"   {row['max']:.4f}  {variant}")


if __name__ == "__main__":
    main(sys.argv[1:])
