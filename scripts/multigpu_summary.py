"""The short table the multi-GPU sweep prints last: the timing floors, the sharded sum's
scaling, and NCCL's busbw at every fourth size. Reads the CSVs of `reducebench multigpu`.

    python scripts/multigpu_summary.py SHARDED.csv NCCL.csv
"""

import sys

import pandas as pd


def show(title: str, frame: pd.DataFrame, columns: list[str]) -> None:
    print(f"\n{title}")
    print(frame[columns].to_string(index=False) if len(frame) else "  (no rows)")


frames = []
for path in sys.argv[1:]:
    try:
        frames.append(pd.read_csv(path))
    except (OSError, pd.errors.EmptyDataError) as exc:
        print(f"{path}: not read ({exc})")
if not frames:
    sys.exit("no results to summarise")
rows = pd.concat(frames, ignore_index=True)
pd.set_option("display.float_format", lambda v: f"{v:.2f}")
floors = rows[rows["case"] == "timing_floor"].drop_duplicates("gpus")
show("timing floor (us)", floors, ["gpus", "median_us", "status"])
sharded = rows[rows["case"] == "sharded_sum"]
show("sharded sum", sharded, ["n", "gpus", "median_us", "spread_us", "gbps", "speedup",
                              "efficiency", "status"])
nccl = rows[rows["case"].isin(["nccl_allreduce", "nccl_reduce"])]
every_fourth = sorted(nccl["bytes"].unique())[::4]
show("NCCL (every fourth size)", nccl[nccl["bytes"].isin(every_fourth)],
     ["case", "bytes", "gpus", "in_place", "median_us", "algbw_gbps", "busbw_gbps", "status"])
bad = rows[~rows["status"].isin(["ok", "skipped"])]
print(f"\n{len(rows)} rows, {len(bad)} not verified"
      + "".join(f"\n  {r.rung} n={r.n} gpus={r.gpus}: {r.status} {r.error}"
                for r in bad.itertuples()))
