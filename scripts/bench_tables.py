"""The markdown tables of BENCHMARKS.md, printed from results files: every figure is read
from the CSVs named on the command line, none is typed. tests/test_benchmarks_tables.py
runs the command written above each table of BENCHMARKS.md and checks that it prints
that table.

    python3 scripts/bench_tables.py VIEW FILE.csv [FILE.csv ...]

Views:
    gpus FILE...             one row per GPU: SMs, L2, theoretical and measured bandwidth,
                             timing floor, versions (the first file of each GPU)
    ladder FILE [FILE2]      the ladder at one size: medians (of both runs with FILE2),
                             bandwidth, % of the same-size read, ratio to CUB
    counters FILE            the hardware counters of a `run --metrics` file, per rung
    band-counters FILE       the same for a file of auto and CUB at several sizes
    accuracy FILE            a `--inputs random` run: the rungs grouped by the sum returned
    energy FILE [RUNG,...]   a `--energy` run at two sizes, one row per rung (those given)
    graph SINGLE GRAPH       single-launch against graph-replay medians per rung and size
    multigpu SHARDED NCCL    `reducebench multigpu` files: scaling and NCCL busbw at 1 GiB
    published NAME FILE      a published ladder (harris, seed004) beside this run
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd

# Published times in ms, in ladder order, for the configs that reproduce them
# (reducebench/analysis/ladder_steps.py cites this table for its textbook expectations).
PUBLISHED = {
    # Mark Harris, "Optimizing Parallel Reduction in CUDA" (2007), G80, 2^22 ints.
    "harris": {"smem_interleaved": 8.054, "smem_strided": 3.456, "smem_sequential": 1.722,
               "first_add": 0.965, "unroll_last_warp": 0.536, "complete_unroll": 0.381,
               "multi_elem": 0.268},
    # A CUDA reduction tutorial the ladder is designed from: RTX 3080, 2^24 ints, 256 threads.
    "seed004": {"gmem": 0.2556, "smem_sequential": 0.1950, "gmem_unroll4": 0.1264,
                "smem_unroll4": 0.1036, "shfl": 0.1505, "shfl_unroll": 0.1022},
}
CASE = ["device", "case", "rung", "dtype", "n", "bytes", "gpus", "in_place", "block", "params"]


def read(path: str) -> pd.DataFrame:
    """A results CSV; where a case appears twice, the later row counts."""
    frame = pd.read_csv(path)
    key = [c for c in CASE if c in frame]
    frame = frame.drop_duplicates(subset=key, keep="last") if key else frame
    return frame.reset_index(drop=True)


def cell(value, spec: str) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "" if value is None or value != value else str(value)
    return "" if math.isnan(number) else format(number, spec)


def power(n) -> str:
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


def short_gpu(name: str) -> str:
    return "H100" if "H100" in name else "H200" if "H200" in name else name


def rung_name(row) -> str:
    params = row.get("params")
    return row["rung"] + (f" ({params})" if isinstance(params, str) and params else "")


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def gpus(*paths: str) -> str:
    seen, rows = set(), []
    for path in paths:
        r = read(path).iloc[0]
        if r["gpu"] in seen:
            continue
        seen.add(r["gpu"])
        rows.append([r["gpu"], str(r["sm_count"]), f"{r['l2_bytes'] / 2**20:.0f} MiB",
                     cell(r["peak_gbps"], ".0f"), cell(r.get("ceiling_gbps"), ".0f"),
                     cell(r.get("timing_floor_us"), ".2f"),
                     f"{r['driver']} / {r['runtime']} / {r['cupy']}"])
    return markdown(["GPU", "SMs", "L2", "theoretical GB/s", "read ceiling GB/s (1 GiB)",
                     "timing floor us", "driver / runtime / CuPy"], rows)


def ladder(path: str, second: str | None = None) -> str:
    frame = read(path)
    other = read(second).set_index(["rung", "dtype", "n"]) if second else None
    cub = frame.loc[frame.rung == "cub", "median_us"]
    cub_us = float(cub.iloc[0]) if len(cub) else math.nan
    header = ["rung", "block", "median us"] + (["median us, run 2"] if second else []) + \
        ["GB/s", "% peak", "% read", "vs cub", "verified"]
    rows = []
    for _, r in frame.iterrows():
        cells = [rung_name(r), str(r["block"] or "-"), cell(r["median_us"], ".2f")]
        if other is not None:
            key = (r["rung"], r["dtype"], r["n"])
            cells.append(cell(other["median_us"].get(key), ".2f"))
        cells += [cell(r["gbps"], ".0f"), cell(r["pct_peak"], ".1f"),
                  cell(r.get("pct_read"), ".1f"), cell(r["median_us"] / cub_us, ".3f"),
                  "yes" if str(r["verified"]) == "True" else str(r["status"])]
        rows.append(cells)
    n, dtype = frame["n"].iloc[0], frame["dtype"].iloc[0]
    return f"n = {power(n)} ({int(n):,}) {dtype}\n\n" + markdown(header, rows)


def stall(r) -> str:
    return f"{r['ncu_stall_top']} ({cell(r['ncu_stall_top_pct'], '.0f')}%)"


def counters(path: str) -> str:
    rows = []
    for _, r in read(path).iterrows():
        conflicts = float(r["ncu_smem_ld_conflicts"]) + float(r["ncu_smem_st_conflicts"])
        rows.append([r["rung"], cell(r["median_us"], ".2f"),
                     str(r["ncu_kernel_us"]).replace(" us", ""),
                     cell(r["ncu_dram_read_per_input"], ".3f"), cell(r["ncu_dram_pct"], ".1f"),
                     cell(r["ncu_l2_hit_pct"], ".1f"), cell(r["ncu_occupancy_pct"], ".1f"),
                     cell(r["ncu_threads_per_inst"], ".2f"), cell(r["ncu_inst_per_elem"], ".2f"),
                     cell(conflicts, ",.0f"), stall(r)])
    return markdown(["rung", "median us", "ncu kernels (us)", "DRAM read / input", "DRAM %",
                     "L2 hit %", "occupancy %", "threads / inst", "inst / element",
                     "smem conflicts", "top stall"], rows)


def band_counters(path: str) -> str:
    rows = []
    for _, r in read(path).iterrows():
        variant = str(r.get("variant", "")).split(" (")[0] if r["rung"] == "auto" else "cub"
        rows.append([power(r["n"]), variant, cell(r["median_us"], ".2f"),
                     cell(r["read_us"], ".2f"), str(r["ncu_kernel_us"]).replace(" us", ""),
                     str(r["ncu_grids"]), cell(r["ncu_dram_read_per_input"], ".4f"),
                     cell(r["ncu_dram_pct"], ".1f"), cell(r["ncu_occupancy_pct"], ".1f"),
                     stall(r)])
    return markdown(["n", "rung", "median us", "read us", "ncu kernels (us)", "blocks",
                     "DRAM read / input", "DRAM %", "occupancy %", "top stall"], rows)


def accuracy(path: str) -> str:
    frame = read(path)
    reference = frame["reference"].iloc[0]
    rows = []
    for (result, det), g in frame.groupby(["result", "deterministic"], sort=False):
        rows.append([f"{result:.6f}", cell(g["error_ulps"].iloc[0], ".2f"),
                     f"{g['rel_error'].iloc[0]:.2e}", "yes" if str(det) == "True" else "no",
                     ", ".join(g["rung"])])
    order = sorted(rows, key=lambda r: float(r[1]))
    return (f"exact sum {reference:.6f} ({power(frame['n'].iloc[0])} "
            f"{frame['dtype'].iloc[0]}, seed {frame['seed'].iloc[0]})\n\n"
            + markdown(["result", "error ulps", "relative error", "deterministic", "rungs"],
                       order))


def energy(path: str, rungs: str = "") -> str:
    frame = read(path)
    if rungs:
        frame = frame[frame["rung"].isin(rungs.split(","))]
    sizes = sorted(frame["n"].unique())
    header = ["rung"]
    for n in sizes:
        header += [f"{power(n)} us", f"{power(n)} uJ", f"{power(n)} GB/J"]
    header.append("bound %")
    rows = []
    for rung, g in frame.groupby("rung", sort=False):
        by_n = g.set_index("n")
        cells, bounds = [rung], []
        for n in sizes:
            r = by_n.loc[n]
            cells += [cell(r["median_us"], ".2f"), cell(r["energy_uj"], ",.0f"),
                      cell(r["gb_per_joule"], ".2f")]
            bounds.append(float(r["energy_err_pct"]))
        measured = [b for b in bounds if not math.isnan(b)]
        cells.append(cell(max(measured), ".2f") if measured else "not measured")
        rows.append(cells)
    return markdown(header, rows)


def graph(single: str, replay: str, sizes=(2**10, 2**12, 2**16, 2**20, 2**24, 2**28)) -> str:
    a = read(single).set_index(["rung", "n"])["median_us"]
    b = read(replay).set_index(["rung", "n"])["median_us"]
    rungs = list(dict.fromkeys(read(single)["rung"]))
    rows = [[r] + [f"{a[(r, n)]:.3f} / {b[(r, n)]:.3f}" for n in sizes] for r in rungs]
    return markdown(["rung"] + [power(n) for n in sizes], rows)


def multigpu(sharded: str, nccl: str) -> str:
    s = read(sharded)
    s = s[s["case"] == "sharded_sum"]
    s = s[s["n"] == s["n"].max()].set_index("gpus")
    c = read(nccl)
    c = c[(c["bytes"] == c["bytes"].max()) & (c["in_place"].astype(str) == "False")]
    one = float(s.loc[1, "median_us"])
    rows = []
    for k in sorted(s.index):
        busbw = {case: cell(g["busbw_gbps"].iloc[0], ".2f")
                 for case, g in c[c["gpus"] == k].groupby("case")}
        rows.append([str(k), cell(s.loc[k, "median_us"], ".2f"), cell(s.loc[k, "gbps"], ".0f"),
                     cell(one / float(s.loc[k, "median_us"]), ".2f"),
                     busbw.get("nccl_allreduce", ""), busbw.get("nccl_reduce", "")])
    n, size = int(s["n"].iloc[0]), int(c["bytes"].iloc[0])
    return markdown(["GPUs", f"sharded sum {power(n)} us", "GB/s", "x one GPU",
                     f"all-reduce busbw GB/s ({size / 2**30:g} GiB per GPU)",
                     "reduce busbw GB/s"], rows)


def published(name: str, path: str) -> str:
    times = PUBLISHED[name]
    frame = read(path)
    cub_us = float(frame.loc[frame.rung == "cub", "median_us"].iloc[0])
    rows, first_us, first_ms = [], None, None
    for _, r in frame.iterrows():
        ms = times.get(r["rung"])
        if r["rung"] != "cub":
            first_us = first_us or r["median_us"]
        first_ms = first_ms or ms
        rows.append([rung_name(r), cell(r["median_us"], ".2f"),
                     cell(first_us / r["median_us"], ".2f") if r["rung"] != "cub" else "",
                     cell(r["median_us"] / cub_us, ".3f"), f"{ms}" if ms else "",
                     cell(first_ms / ms, ".2f") if ms else ""])
    n, dtype = frame["n"].iloc[0], frame["dtype"].iloc[0]
    return (f"n = {power(n)} {dtype}, block {frame['block'].iloc[0]}\n\n"
            + markdown(["rung", "median us", "x first rung", "vs cub", "published ms",
                        "published x first rung"], rows))


VIEWS = {"gpus": gpus, "ladder": ladder, "counters": counters, "band-counters": band_counters,
         "accuracy": accuracy, "energy": energy, "graph": graph, "multigpu": multigpu,
         "published": published}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in VIEWS:
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    view, args = VIEWS[argv[0]], argv[1:]
    missing = [a for a in args if a.endswith(".csv") and not Path(a).is_file()]
    if missing:
        print(f"bench_tables: no such file: {missing[0]}", file=sys.stderr)
        return 2
    print(view(*args))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
