"""Issue #27's targets from results files (`reducebench run` CSVs with read_us and
pct_read): per dtype and size, the same-size read, auto, pct_read, auto minus the read,
the library reference (cub; torch.sum past 2^31-1) and auto over it, and which target
each size misses:
  READ   from 2^20 up, auto below 99% of the same-size read
  +0.3   below 2^20, auto more than 0.3 us above the same-size read
  LIB    auto slower than the library reference paired in the same run

    python3 scripts/pct_read_summary.py results/h100/pct_read_f32_265b265.csv [...]
    python3 scripts/pct_read_summary.py --markdown FILE.csv ...   the same as a table
    python3 scripts/pct_read_summary.py --wide-pct-read FILE.csv ...   auto's pct_read,
        one row per n, one column per GPU and dtype (--wide-ratio: auto / library;
        --wide-over-read: auto's median minus the read in us, below 2^20 only)
Where several files have a size, the first listed counts.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd

CUB_MAX_N = 2**31 - 1


def rows(frame: pd.DataFrame):
    ok = frame[frame.status == "ok"]
    for (gpu, dtype), g in ok.groupby(["gpu", "dtype"], sort=False):
        for n, h in g.groupby("n"):
            auto = h[h.rung == "auto"]
            if not len(auto):
                continue
            a = auto.iloc[0]
            ref_rung = "cub" if n <= CUB_MAX_N else "torch"
            ref = h[h.rung == ref_rung]
            if not len(ref) and ref_rung == "cub":  # cub takes no bfloat16 or float16
                ref_rung, ref = "torch", h[h.rung == "torch"]
            ref_us = float(ref.median_us.iloc[0]) if len(ref) else math.nan
            misses = []
            if n >= 2**20 and not a.pct_read >= 99:
                misses.append("READ")
            if n < 2**20 and not a.median_us - a.read_us <= 0.3:
                misses.append("+0.3")
            if a.median_us > ref_us:
                misses.append("LIB")
            yield dict(gpu=gpu, dtype=dtype, n=int(n), read_us=a.read_us, auto_us=a.median_us,
                       pct_read=a.pct_read, over_read_us=a.median_us - a.read_us,
                       ref=ref_rung, ref_us=ref_us, auto_over_ref=a.median_us / ref_us,
                       misses=" ".join(misses), variant=str(a.get("variant", "")))


def log2(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def short_gpu(name: str) -> str:
    return "H100" if "H100" in name else "H200" if "H200" in name else name


def wide(found: list[dict], key: str, fmt: str, dtypes: tuple[str, ...],
         below: int = 2**64) -> None:
    """One markdown row per n (under `below`), one column per (GPU, dtype): `key` of
    auto's row."""
    gpus = list(dict.fromkeys(r["gpu"] for r in found))
    columns = [(g, d) for g in gpus for d in dtypes]
    print("| n | " + " | ".join(f"{short_gpu(g)} {d}" for g, d in columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    table = {(r["gpu"], r["dtype"], r["n"]): r for r in found}
    for n in sorted({r["n"] for r in found if r["n"] < below}):
        cells = []
        for g, d in columns:
            r = table.get((g, d, n))
            value = r[key] if r else math.nan
            cells.append("" if value != value else format(value, fmt)
                         + (" (torch)" if r and key == "auto_over_ref" and r["ref"] == "torch"
                            else ""))
        print(f"| {log2(n)} | " + " | ".join(cells) + " |")


def main(argv: list[str]) -> None:
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return
    markdown = "--markdown" in argv
    pct = "--wide-pct-read" in argv
    ratio = "--wide-ratio" in argv
    over = "--wide-over-read" in argv
    files = [a for a in argv if not a.startswith("--")]
    missing = [f for f in files if not Path(f).is_file()]
    if not files or missing:
        print(f"pct_read_summary: {'no such file: ' + missing[0] if missing else 'no files'}"
              " (usage: scripts/pct_read_summary.py [--markdown | --wide-pct-read |"
              " --wide-ratio | --wide-over-read] RESULTS.csv ...)", file=sys.stderr)
        sys.exit(2)
    frame = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    found = list(rows(frame))
    if pct:
        wide(found, "pct_read", ".2f", ("float32", "int32", "float16", "bfloat16"))
        return
    if ratio:
        wide(found, "auto_over_ref", ".3f", ("float32", "int32", "float16", "bfloat16"))
        return
    if over:
        wide(found, "over_read_us", "+.3f", ("float32", "int32", "float16", "bfloat16"),
             below=2**20)
        return
    if markdown:
        print("| GPU | dtype | n | read us | auto us | pct_read | auto - read us | "
              "library | library us | auto / library | misses |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in found:
            print(f"| {r['gpu']} | {r['dtype']} | {log2(r['n'])} | {r['read_us']:.2f} | "
                  f"{r['auto_us']:.2f} | {r['pct_read']:.2f} | {r['over_read_us']:+.2f} | "
                  f"{r['ref']} | {r['ref_us']:.2f} | {r['auto_over_ref']:.3f} | "
                  f"{r['misses']} |")
        return
    last = None
    for r in found:
        if (r["gpu"], r["dtype"]) != last:
            last = (r["gpu"], r["dtype"])
            print(f"\n{r['gpu']} {r['dtype']}\n{'n':>5s} {'read':>9s} {'auto':>9s} "
                  f"{'%read':>7s} {'a-read':>7s} {'lib':>5s} {'lib us':>9s} {'a/lib':>6s} misses")
        print(f"{log2(r['n']):>5s} {r['read_us']:9.2f} {r['auto_us']:9.2f} "
              f"{r['pct_read']:7.2f} {r['over_read_us']:+7.2f} {r['ref']:>5s} "
              f"{r['ref_us']:9.2f} {r['auto_over_ref']:6.3f} {r['misses']}")


if __name__ == "__main__":
    main(sys.argv[1:])
