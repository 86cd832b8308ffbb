"""The multi-GPU figure of docs/multi-gpu.md, drawn from the CSVs of `reducebench multigpu`
(every figure read from the files, none typed): on the left the sharded sum's GB/s over
all GPUs against n, one line per GPU count, with the speed-up over one GPU written at each
point; on the right NCCL's busbw against bytes per GPU, all-reduce and reduce, in place
solid and out of place dashed.

    python scripts/multigpu_plot.py [SHARDED.csv NCCL.csv [OUT.png]]

Without arguments it reads the committed 2 x H200 files and writes
results/h200x2/multigpu_scaling_4b0dece.png.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

SHARDED = Path("results/h200x2/multigpu_sharded_f32_4b0dece.csv")
NCCL = Path("results/h200x2/multigpu_nccl_f32_4b0dece.csv")
OUT = Path("results/h200x2/multigpu_scaling_4b0dece.png")
COLLECTIVE_COLOURS = {"nccl_allreduce": "tab:blue", "nccl_reduce": "tab:orange"}
GPU_COLOURS = {1: "tab:gray", 2: "tab:green", 4: "tab:purple", 8: "tab:red"}


def verified(frame: pd.DataFrame, case: str) -> pd.DataFrame:
    """The rows of one case that were measured and verified (a failed or skipped row has
    no figure worth drawing)."""
    rows = frame[(frame["case"] == case) & (frame["status"] == "ok")]
    return rows.sort_values(["gpus", "n"])


def power_of_two(value: float, _position=None) -> str:
    exponent = math.log2(value)
    return f"$2^{{{exponent:.0f}}}$" if exponent.is_integer() else f"{value:g}"


def bytes_label(value: float, _position=None) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value:g} B"


def log2_axis(axis, values, formatter, every: int = 1) -> None:
    axis.set_xscale("log", base=2)
    ticks = sorted(set(values))[::every]
    axis.xaxis.set_major_locator(FixedLocator(ticks))
    axis.xaxis.set_minor_locator(NullLocator())
    axis.xaxis.set_major_formatter(FuncFormatter(formatter))


def draw_sharded(axis, frame: pd.DataFrame) -> None:
    rows = verified(frame, "sharded_sum")
    for gpus, group in rows.groupby("gpus"):
        floor = group["floor_us"].iloc[0]
        axis.plot(group["n"], group["gbps"], marker="o", color=GPU_COLOURS.get(gpus),
                  label=f"{gpus} GPU{'s' if gpus > 1 else ''} (timing floor {floor:.2f} us)")
        if gpus > 1:
            for n, gbps, speedup in zip(group["n"], group["gbps"], group["speedup"]):
                axis.annotate(f"x{speedup:.2f}", (n, gbps), textcoords="offset points",
                              xytext=(0, 7), ha="center", fontsize=8,
                              color=GPU_COLOURS.get(gpus),
                              bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
    peak = frame["peak_gbps"].dropna()
    if len(peak):
        axis.axhline(peak.iloc[0], color="black", linestyle=":", linewidth=1,
                     label=f"one GPU's peak_gbps column ({peak.iloc[0]:.1f} GB/s)")
    log2_axis(axis, rows["n"], power_of_two)
    local = rows["local_rung"].dropna()
    dtype = rows["dtype"].iloc[0] if len(rows) else ""
    axis.set_title(f"Sharded sum of n {dtype} (local rung {local.iloc[0] if len(local) else '?'}"
                   ", then a one-element NCCL all-reduce)\nlabels: speed-up over 1 GPU",
                   fontsize=10)
    axis.set_xlabel("n (elements of the whole input)")
    axis.set_ylabel("GB/s over all GPUs (input bytes / median time)")
    axis.set_ylim(bottom=0, top=axis.get_ylim()[1] * 1.06)
    axis.grid(True, alpha=0.3)
    axis.legend(loc="upper left", fontsize=8)


def draw_collectives(axis, frame: pd.DataFrame) -> None:
    plotted = []
    for case, colour in COLLECTIVE_COLOURS.items():
        rows = verified(frame, case)
        # In place first, so the dashed out-of-place line stays visible on top of it.
        for (gpus, in_place), group in sorted(rows.groupby(["gpus", "in_place"]),
                                              key=lambda item: not item[0][1]):
            name = case.removeprefix("nccl_").replace("allreduce", "all-reduce")
            axis.plot(group["bytes"], group["busbw_gbps"], color=colour,
                      linestyle="-" if in_place else "--", marker="." if in_place else "",
                      linewidth=2.6 if in_place else 1.2, alpha=0.55 if in_place else 1.0,
                      label=f"{name}, {gpus} GPUs, {'in place' if in_place else 'out of place'}")
            plotted.append(group)
    if plotted:
        log2_axis(axis, pd.concat(plotted)["bytes"], bytes_label, every=2)
    axis.set_title("NCCL collectives, nccl-tests' busbw\n(all-reduce: algbw x 2(k-1)/k;"
                   " reduce: algbw)", fontsize=10)
    axis.set_xlabel("bytes per GPU")
    axis.set_ylabel("busbw, GB/s")
    axis.set_ylim(bottom=0)
    axis.grid(True, alpha=0.3)
    axis.legend(loc="upper left", fontsize=8)
    for label in axis.get_xticklabels():
        label.set_rotation(30)
        label.set_horizontalalignment("right")


def describe_run(sharded: pd.DataFrame, nccl: pd.DataFrame) -> str:
    rows = pd.concat([sharded, nccl], ignore_index=True)
    devices = max(rows["devices"].dropna(), key=lambda text: text.count(";"))
    names = [entry.split(":", 1)[1] for entry in devices.split(";")]
    gpus = f"{len(names)} x {names[0]}" if len(set(names)) == 1 else ", ".join(names)
    version = ", ".join(sorted(set(rows["nccl"].dropna().astype(str))))
    env = ", ".join(sorted(set(rows["nccl_env"].dropna().astype(str)))) or "no NCCL_* set"
    return f"{gpus} of one host · NCCL {version} · environment: {env.replace(';', ', ')}"


def main(argv: list[str]) -> None:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return
    sharded_path = Path(argv[0]) if len(argv) > 0 else SHARDED
    nccl_path = Path(argv[1]) if len(argv) > 1 else NCCL
    out = Path(argv[2]) if len(argv) > 2 else OUT
    sharded, nccl = pd.read_csv(sharded_path), pd.read_csv(nccl_path)
    figure = Figure(figsize=(14.0, 6.2), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2)
    draw_sharded(left, sharded)
    draw_collectives(right, nccl)
    figure.suptitle(f"reducebench multigpu on {describe_run(sharded, nccl)}\n"
                    f"from {sharded_path} and {nccl_path}", fontsize=11)
    figure.savefig(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
