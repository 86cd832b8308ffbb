"""Markdown tables from results CSVs written by `reducebench run` (for BENCHMARKS.md and
docs/): every figure is read from the file, none typed.

    python scripts/bench_tables.py results/h100/harris_20f55eb.csv [--published harris]
    python scripts/bench_tables.py FILE.csv --headline | --counters | --accuracy | --energy
"""

from __future__ import annotations

import math
import sys

from reducebench.render.tables import ratios
from reducebench.results.schema import Record
from reducebench.results.files import read_results

# Published times in ms, in ladder order, for the configs that reproduce them.
PUBLISHED = {
    # Mark Harris, "Optimizing Parallel Reduction in CUDA" (2007), G80, 2^22 ints.
    "harris": {"smem_interleaved": 8.054, "smem_strided": 3.456, "smem_sequential": 1.722,
               "first_add": 0.965, "unroll_last_warp": 0.536, "complete_unroll": 0.381,
               "multi_elem": 0.268},
    # A CUDA reduction tutorial the ladder was designed from: RTX 3080, 2^24 ints, 256 threads.
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


def _cell(value, spec: str) -> str:
    try:
        return fmt(float(value), spec)
    except (TypeError, ValueError):
        return str(value) if value == value else ""


def counters(path: str) -> str:
    """The hardware counters of a `run --metrics` file, one row per rung."""
    frame = read_results(path)
    lines = ["| rung | median us | ncu kernels (us) | DRAM read / input | DRAM % | L2 hit % | "
             "occupancy % | threads / inst | inst / element | smem conflicts | top stall |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        conflicts = float(r.ncu_smem_ld_conflicts) + float(r.ncu_smem_st_conflicts)
        lines.append("| " + " | ".join([
            r.rung, _cell(r.median_us, ".2f"), str(r.ncu_kernel_us).replace(" us", ""),
            _cell(r.ncu_dram_read_per_input, ".3f"), _cell(r.ncu_dram_pct, ".1f"),
            _cell(r.ncu_l2_hit_pct, ".1f"), _cell(r.ncu_occupancy_pct, ".1f"),
            _cell(r.ncu_threads_per_inst, ".2f"), _cell(r.ncu_inst_per_elem, ".2f"),
            _cell(conflicts, ",.0f"),
            f"{r.ncu_stall_top} ({_cell(r.ncu_stall_top_pct, '.0f')}%)"]) + " |")
    return "\n".join(lines)


def accuracy(path: str) -> str:
    """Each rung's error on random inputs, in ulps and relative."""
    frame = read_results(path)
    lines = ["| rung | result | exact sum | error | relative error | error ulps | "
             "deterministic |", "|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        lines.append(f"| {r.rung} | {r.result:.6f} | {r.reference:.6f} | {r.abs_error:.6f} | "
                     f"{r.rel_error:.2e} | {r.error_ulps:.2f} | "
                     f"{'yes' if str(r.deterministic) == 'True' else 'no'} |")
    return "\n".join(lines)


def energy(path: str) -> str:
    """Energy per run and GB per joule, per size and rung."""
    frame = read_results(path)
    lines = ["| n | rung | median us | energy per run (uJ) | GB per joule | bound % | "
             "method |", "|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        size = f"2^{int(r.n).bit_length() - 1}"
        note = r.energy_method if isinstance(r.energy_method, str) else ""
        if not note and isinstance(getattr(r, "energy_note", ""), str):
            note = r.energy_note
        lines.append(f"| {size} | {r.rung} | {r.median_us:.2f} | {_cell(r.energy_uj, ',.1f')} "
                     f"| {_cell(r.gb_per_joule, '.2f')} | {_cell(r.energy_err_pct, '.2f')} | "
                     f"{note} |")
    return "\n".join(lines)


def auto(path: str, sizes=(2**10, 2**12, 2**16, 2**20, 2**24, 2**28, 2**30, 2**32)) -> str:
    """auto against CUB and PyTorch at a few sizes, with its % of the measured ceiling."""
    frame = read_results(path)
    frame = frame[frame.status == "ok"]
    lines = ["| dtype | n | auto us | cub us | auto / cub | torch us | auto % of ceiling | "
             "variant |", "|---|---|---|---|---|---|---|---|"]
    for (dtype, n), g in frame.groupby(["dtype", "n"], sort=True):
        if n not in sizes:
            continue
        a = g[g.rung == "auto"].iloc[0]
        cub = g[g.rung == "cub"].median_us.min() if (g.rung == "cub").any() else math.nan
        torch = g[g.rung == "torch"].median_us.min() if (g.rung == "torch").any() else math.nan
        variant = str(a.variant).split(" (")[0]
        lines.append(f"| {dtype} | 2^{int(n).bit_length() - 1} | {a.median_us:.2f} | "
                     f"{fmt(cub, '.2f')} | {fmt(a.median_us / cub, '.3f')} | "
                     f"{fmt(torch, '.2f')} | {fmt(a.pct_ceiling, '.1f')} | {variant} |")
    return "\n".join(lines)


VIEWS = {"--auto": auto, "--headline": headline, "--counters": counters, "--accuracy": accuracy,
         "--energy": energy}

if __name__ == "__main__":
    view = next((VIEWS[a] for a in sys.argv if a in VIEWS), None)
    if view is not None:
        print(view(sys.argv[1]))
    else:
        published = sys.argv[sys.argv.index("--published") + 1] \
            if "--published" in sys.argv else None
        print(table(sys.argv[1], published))
