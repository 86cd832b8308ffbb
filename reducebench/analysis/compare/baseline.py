"""One run's rungs against one of its rungs: every row's median as a ratio to the
baseline rung's at the same (n, dtype)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from reducebench.analysis.compare.match import in_ladder_order, normalise
from reducebench.core.choices import did_you_mean
from reducebench.core.errors import UsageError
from reducebench.results.schema import OK

BASELINE_COLUMNS = ["dtype", "n", "rung", "block", "params", "status", "median_us",
                    "baseline_us", "ratio", "speedup"]


def baseline_ratios(df: pd.DataFrame, rung: str) -> pd.DataFrame:
    """Every row's median as a ratio to `rung`'s median at the same (n, dtype), within one
    run: ratio = median / baseline (< 1: faster than the baseline), speedup = its inverse.
    Where the baseline rung has several verified rows at one (n, dtype) (block sizes or
    parameters), the fastest is the baseline. Rows that are not verified (suspect ones
    included), and (n, dtype) the baseline did not verify, get no ratio. Raises
    UsageError if `rung` has no rows, or no verified row, in the run."""
    frame = normalise(df)
    present = list(dict.fromkeys(frame["rung"]))
    if rung not in present:
        raise UsageError(f"baseline rung {rung!r}{did_you_mean(rung, present)} is not in "
                         "the results; rungs present: "
                         f"{', '.join(present) or 'none'}")
    timed = frame[(frame["status"] == OK) & (frame["median_us"] > 0)]
    base = timed[timed["rung"] == rung]
    if not len(base):
        raise UsageError(f"baseline rung {rung!r} has no verified row in the results "
                         "(every row of it failed or was skipped)")
    best = base.groupby(["n", "dtype"])["median_us"].min().rename("baseline_us").reset_index()
    out = frame.merge(best, on=["n", "dtype"], how="left")
    ok = (out["status"] == OK) & (out["median_us"] > 0)
    out["ratio"] = np.where(ok, out["median_us"] / out["baseline_us"], math.nan)
    out["speedup"] = np.where(ok, out["baseline_us"] / out["median_us"], math.nan)
    return in_ladder_order(out.reindex(columns=BASELINE_COLUMNS))[BASELINE_COLUMNS]
