"""The short table the multi-GPU sweep prints last: the timing floors, the sharded sum's
scaling, and NCCL's busbw at every fourth size. Reads the CSVs of `reducebench multigpu`.
With --markdown it prints instead the tables of docs/multi-gpu.md (every figure read from
the files, none typed).

    python scripts/multigpu_summary.py SHARDED.csv NCCL.csv
    python scripts/multigpu_summary.py --markdown SHARDED.csv NCCL.csv
"""

import math
import sys

import pandas as pd


def show(title: str, frame: pd.DataFrame, columns: list[str]) -> None:
    print(f"\n{title}")
    print(frame[columns].to_string(index=False) if len(frame) else "  (no rows)")


def read(paths: list[str]) -> pd.DataFrame:
    frames = []
    for path in paths:
        try:
            frames.append(pd.read_csv(path))
        except (OSError, pd.errors.EmptyDataError) as exc:
            print(f"{path}: not read ({exc})")
    if not frames:
        sys.exit("no results to summarise")
    return pd.concat(frames, ignore_index=True)


def summary(rows: pd.DataFrame) -> None:
    pd.set_option("display.float_format", lambda v: f"{v:.2f}")
    floors = rows[rows["case"] == "timing_floor"].drop_duplicates("gpus")
    show("timing floor (us)", floors, ["gpus", "median_us", "status"])
    sharded = rows[rows["case"] == "sharded_sum"]
    show("sharded sum", sharded, ["n", "gpus", "median_us", "spread_us", "gbps", "speedup",
                                  "efficiency", "status"])
    nccl = rows[rows["case"].isin(["nccl_allreduce", "nccl_reduce"])]
    every_fourth = sorted(nccl["bytes"].unique())[::4]
    show("NCCL (every fourth size)", nccl[nccl["bytes"].isin(every_fourth)],
         ["case", "bytes", "gpus", "in_place", "median_us", "algbw_gbps", "busbw_gbps",
          "status"])
    bad = rows[~rows["status"].isin(["ok", "skipped"])]
    print(f"\n{len(rows)} rows, {len(bad)} not verified"
          + "".join(f"\n  {r.rung} n={r.n} gpus={r.gpus}: {r.status} {r.error}"
                    for r in bad.itertuples()))


# -- --markdown: the tables of docs/multi-gpu.md --------------------------------------------

def power(value: int) -> str:
    exponent = math.log2(value)
    return f"2^{exponent:.0f}" if exponent.is_integer() else str(value)


def cell(value, spec: str) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else format(value, spec)


def markdown_table(header: list[str], lines: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |",
                      "| " + " | ".join("---" for _ in header) + " |",
                      *("| " + " | ".join(line) + " |" for line in lines)])


def ok_rows(rows: pd.DataFrame, case: str) -> pd.DataFrame:
    return rows[(rows["case"] == case) & (rows["status"] == "ok")]


def floor_table(rows: pd.DataFrame, paths: list[str]) -> str:
    lines = []
    for path in paths:
        frame = pd.read_csv(path)
        for r in ok_rows(frame, "timing_floor").sort_values("gpus").itertuples():
            lines.append([path.rsplit("/", 1)[-1], str(r.gpus), cell(r.median_us, ".2f")])
    return markdown_table(["file", "GPUs", "floor, us (`median_us`)"], lines)


def sharded_table(rows: pd.DataFrame) -> str:
    sharded = ok_rows(rows, "sharded_sum")
    lines = []
    for n, group in sharded.groupby("n"):
        one = group[group["gpus"] == 1]
        for r in group[group["gpus"] > 1].sort_values("gpus").itertuples():
            first = one.iloc[0] if len(one) else None
            lines.append([power(n), cell(first["median_us"], ".2f") if first is not None else "",
                          cell(first["gbps"], ".0f") if first is not None else "",
                          str(r.gpus), cell(r.median_us, ".2f"), cell(r.spread_us, ".2f"),
                          cell(r.gbps, ".0f"), cell(r.speedup, ".2f"),
                          cell(r.efficiency, ".2f")])
    return markdown_table(["n", "1 GPU, us", "1 GPU, GB/s", "k", "k GPUs, us", "spread, us",
                           "k GPUs, GB/s", "speed-up", "efficiency"], lines)


def nccl_table(rows: pd.DataFrame, every: int = 2) -> str:
    nccl = pd.concat([ok_rows(rows, "nccl_allreduce"), ok_rows(rows, "nccl_reduce")])
    sizes = sorted(nccl["bytes"].unique())[::every]
    lines = []
    for (size, gpus), group in nccl[nccl["bytes"].isin(sizes)].groupby(["bytes", "gpus"]):
        def pick(case: str, in_place: bool, column: str, spec: str) -> str:
            hit = group[(group["case"] == case) & (group["in_place"] == in_place)]
            return cell(hit[column].iloc[0], spec) if len(hit) else ""
        lines.append([power(size), str(gpus),
                      pick("nccl_allreduce", False, "median_us", ".2f"),
                      pick("nccl_allreduce", False, "busbw_gbps", ".2f"),
                      pick("nccl_allreduce", True, "busbw_gbps", ".2f"),
                      pick("nccl_reduce", False, "median_us", ".2f"),
                      pick("nccl_reduce", False, "busbw_gbps", ".2f"),
                      pick("nccl_reduce", True, "busbw_gbps", ".2f")])
    return markdown_table(["bytes per GPU", "k", "all-reduce out, us", "all-reduce out, busbw",
                           "all-reduce in, busbw", "reduce out, us", "reduce out, busbw",
                           "reduce in, busbw"], lines)


def markdown(rows: pd.DataFrame, paths: list[str]) -> None:
    print(floor_table(rows, paths), end="\n\n")
    print(sharded_table(rows), end="\n\n")
    print(nccl_table(rows))


def main(argv: list[str]) -> None:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return
    as_markdown = "--markdown" in argv
    paths = [arg for arg in argv if arg != "--markdown"]
    rows = read(paths)
    if as_markdown:
        markdown(rows, paths)
    else:
        summary(rows)


if __name__ == "__main__":
    main(sys.argv[1:])
