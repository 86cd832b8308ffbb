"""Which variant `auto` should use on a GPU without a tuning table: for each size range,
every variant measured at every float32 sample size of that range in the given tune
candidate files (`reducebench tune --records`), ranked by its worst ratio to the fastest
variant at any one sample size and GPU. The built-in table (docs/tuning.md, "The `auto`
rung") holds the first of each list; tests/test_default_variants.py checks it.

    python3 scripts/default_variants.py --ranges 2^16,2^24 H100_CANDIDATES.csv H200_CANDIDATES.csv

`--ranges A,B,...`: the upper ends of the ranges, in float32 elements; the last range
has none (1..A, A+1..B, ..., above the last).
"""

from __future__ import annotations

import sys

import pandas as pd

CASE = ["rung", "dtype", "n", "block", "params"]


def parse_size(text: str) -> int:
    """2^16 or 65536."""
    base, _, exponent = text.partition("^")
    return int(base) ** int(exponent) if exponent else int(base)


def ranges(uppers: list[int]) -> list[tuple[int, int | None]]:
    """[2^16, 2^24] -> (1, 2^16), (2^16 + 1, 2^24), (2^24 + 1, None)."""
    lows = [1] + [u + 1 for u in uppers]
    return list(zip(lows, [*uppers, None]))


def candidates(path: str) -> pd.DataFrame:
    """A tune candidates file; tune measures its finalists twice and the later row counts."""
    frame = pd.read_csv(path).drop_duplicates(subset=CASE, keep="last")
    return frame.assign(file=path)


def rankings(paths: list[str], uppers: list[int]) -> list[tuple[tuple, int, pd.DataFrame]]:
    """Per range: the range, its number of (file, size) points, and the variants measured
    at every one of them, best worst ratio first (column `max`)."""
    frame = pd.concat([candidates(p) for p in paths], ignore_index=True)
    # The table is keyed by float32 elements; tune's float16 confirmations (the same
    # bytes, twice the n) would count as sample sizes of their own.
    frame = frame[(frame["status"] == "ok") & (frame["dtype"] == "float32")].copy()
    frame["variant"] = (frame["rung"] + " " + frame["block"].astype(str) + " "
                        + frame["params"].astype(str))
    best = frame.groupby(["file", "n"])["median_us"].transform("min")
    frame["ratio"] = frame["median_us"] / best
    found = []
    for low, high in ranges(uppers):
        rows = frame[(frame["n"] >= low) & (frame["n"] <= (high or 2**62))]
        points = rows.groupby(["file", "n"]).ngroups
        ranked = (rows.groupby("variant")["ratio"].agg(["max", "size"])
                  .query("size == @points").sort_values("max"))
        found.append(((low, high), points, ranked))
    return found


def main(argv: list[str]) -> int:
    if not argv or "-h" in argv or "--help" in argv or "--ranges" not in argv:
        print(__doc__)
        return 0 if argv and ("-h" in argv or "--help" in argv) else 2
    at = argv.index("--ranges")
    uppers = [parse_size(s) for s in argv[at + 1].split(",")]
    paths = argv[:at] + argv[at + 2:]
    for (low, high), points, ranked in rankings(paths, uppers):
        print(f"{low}..{high or 'up'}: {points} sample sizes x GPUs")
        for variant, row in ranked.head(4).iterrows():
            print(f"   {row['max']:.4f}  {variant}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
