"""Markdown tables from results CSVs written by `reducebench run` (for BENCHMARKS.md and
docs/): every figure is read from the file, none typed.

    python scripts/bench_tables.py results/h100_harris.csv [--published harris]
"""

from __future__ import annotations

import math
import sys

from reducebench.report import ratios
from reducebench.results import Record, read_results

# Published times in ms, in ladder order, for the configs that reproduce them.
PUBLISHED = {
    # Mark Harris, "Optimizing Parallel Reduction in CUDA" (2007), G80, 2^22 ints.
    "harris": {"smem_interleaved": 8.054, "smem_strided": 3.456, "smem_sequential": 1.722,
               "first_add": 0.965, "unroll_last_warp": 0.536, "complete_unroll": 0.381,
               "multi_elem": 0.268},
    # shared/seeds/004: RTX 3080, 2^24 ints, 256 threads.
    "seed004": {"gmem": 0.2556, "smem_sequential": 0.1950, "gmem_unroll4": 0.1264,
                "smem_unroll4": 0.1036, "shfl": 0.1505, "shfl_unroll": 0.1022},
}


def records(path: str) -> list[Record]:
    frame = read_results(path)
    out = []
    for row in frame.to_dict("records"):
        fields = {k: row[k] for k in Record.__dataclass_fields__ if k in row and k != "meta"}
        fields["params"] = "" if not isinstance(fields.get("params"), str) else fields["params"]
        fields["error"] = "" if not isinstance(fields.get("error"), str) else fields["error"]
        out.append(Record(**fields, meta={"peak_gbps": row.get("peak_gbps")}))
    return out


def fmt(value: float, spec: str) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else format(value, spec)


def table(path: str, published: str | None = None) -> str:
    recs = records(path)
    groups: dict = {}
    for r in recs:
        groups.setdefault((r.n, r.dtype), []).append(r)
    lines = []
    for (n, dtype), rows in groups.items():
        lines.append(f"n = {n:,} {dtype}\n")
        head = "| rung | block | median us | min us | noise % | GB/s | % peak | vs prev | " \
               "vs first | vs cub | verified |"
        pub = PUBLISHED.get(published or "", {})
        if pub:
            head += " published ms | published step | published cumulative |"
        lines.append(head)
        lines.append("|" + "---|" * (head.count("|") - 1))
        previous_pub = first_pub = None
        for row in ratios(rows):
            r = row.record
            name = r.rung + (f" ({r.params})" if r.params else "")
            cells = [name, str(r.block or "-"), fmt(r.median_us, ".2f"), fmt(r.min_us, ".2f"),
                     fmt(r.noise_pct, ".2f"), fmt(r.gbps, ".0f"), fmt(r.pct_peak, ".1f"),
                     fmt(row.vs_previous, ".2f"), fmt(row.vs_first, ".2f"),
                     fmt(row.vs_reference, ".3f"), "yes" if r.verified else r.status]
            if pub:
                ms = pub.get(r.rung)
                step = cumulative = ""
                if ms is not None:
                    first_pub = first_pub or ms
                    step = f"{previous_pub / ms:.2f}" if previous_pub else ""
                    cumulative = f"{first_pub / ms:.2f}"
                    previous_pub = ms
                cells += [f"{ms}" if ms is not None else "", step, cumulative]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)




def headline(path: str) -> str:
    """Best rung of ours against cub and torch at each size and dtype."""
    frame = read_results(path)
    frame = frame[frame.status == "ok"]
    lines = ["| dtype | n | best rung | best us | cub us | torch us | best / cub | "
             "best % of peak |", "|---|---|---|---|---|---|---|---|"]
    for (dtype, n), g in frame.groupby(["dtype", "n"], sort=True):
        ours = g[~g.rung.isin(["cub", "cupy", "torch"])].sort_values("median_us")
        best = ours.iloc[0]
        lib = {r: g[g.rung == r].median_us.min() for r in ("cub", "torch")}
        lines.append(f"| {dtype} | 2^{int(n).bit_length() - 1} | {best.rung} | "
                     f"{best.median_us:.2f} | {fmt(lib['cub'], '.2f')} | "
                     f"{fmt(lib['torch'], '.2f')} | {best.median_us / lib['cub']:.3f} | "
                     f"{best.pct_peak:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if "--headline" in sys.argv:
        print(headline(sys.argv[1]))
    else:
        published = sys.argv[sys.argv.index("--published") + 1] \
            if "--published" in sys.argv else None
        print(table(sys.argv[1], published))
