"""Per dtype and size, the best variant of each rung in results files, by pct_read (the
same-size read over the median): what a geometry probe found, one line per rung.

    python3 scripts/variant_pct_read.py results/h100/probe_*.csv
"""

from __future__ import annotations

import sys

import pandas as pd

from reducebench.results.files import read_results


def variant(row) -> str:
    params = row.get("params") or ""
    return f"{row['block']} {params}".strip()


def main(paths: list[str]) -> None:
    frame = pd.concat([read_results(p) for p in paths], ignore_index=True)
    frame = frame[frame["status"] == "ok"]
    for (dtype, n), group in frame.groupby(["dtype", "n"], sort=True):
        read = group["read_us"].dropna()
        print(f"{dtype} n=2^{int(n).bit_length() - 1} read={read.min():.3f} us")
        for rung, rows in group.groupby("rung", sort=False):
            best = rows.loc[rows["median_us"].idxmin()]
            print(f"   {rung:10s} {best['median_us']:10.3f} us  {best['pct_read']:7.2f}%  "
                  f"{variant(best)}  ({len(rows)} variants)")


if __name__ == "__main__":
    main(sys.argv[1:])
