"""`compare --baseline`'s ratios (analysis/compare/baseline.py) at their edges, on rows
built in memory: refusals in their words, times below a microsecond, sizes the baseline
did not measure, rows with no ratio."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from reducebench.analysis.compare import baseline_ratios
from reducebench.core.errors import UsageError


def frame(*rows: dict) -> pd.DataFrame:
    base = dict(dtype="float32", n=1024, block=256, params="", status="ok", median_us=1.0)
    return pd.DataFrame([{**base, **row} for row in rows])


def test_an_absent_rung_is_refused_with_the_closest_name_and_those_present():
    runs = frame({"rung": "shfl"}, {"rung": "cub"}, {"rung": "shfl", "n": 2048})
    with pytest.raises(UsageError) as refused:
        baseline_ratios(runs, "cbu")
    assert str(refused.value) == ("baseline rung 'cbu' (did you mean cub?) is not in the "
                                  "results; rungs present: shfl, cub")
    with pytest.raises(UsageError) as refused:
        baseline_ratios(frame({"rung": "shfl"}).iloc[:0], "cub")
    assert str(refused.value).endswith("rungs present: none")


def test_a_baseline_with_no_verified_row_is_refused():
    runs = frame({"rung": "cub", "status": "FAIL"}, {"rung": "cub", "median_us": 0.0},
                 {"rung": "shfl"})
    with pytest.raises(UsageError) as refused:
        baseline_ratios(runs, "cub")
    assert str(refused.value) == ("baseline rung 'cub' has no verified row in the results "
                                  "(every row of it failed or was skipped)")


def test_ratios_below_a_microsecond_and_where_the_baseline_is_missing():
    runs = frame({"rung": "cub", "median_us": 0.5}, {"rung": "shfl", "median_us": 0.25},
                 {"rung": "shfl", "median_us": 0.0, "block": 128},
                 {"rung": "shfl", "n": 4096, "median_us": 2.0})
    out = baseline_ratios(runs, "cub")
    rows = {(r.rung, r.n, r.block): r for r in out.itertuples()}
    assert rows[("shfl", 1024, 256)].ratio == 0.5 and rows[("shfl", 1024, 256)].speedup == 2.0
    assert rows[("cub", 1024, 256)].ratio == 1.0
    # no time; no baseline at that size
    for key in (("shfl", 1024, 128), ("shfl", 4096, 256)):
        assert math.isnan(rows[key].ratio) and math.isnan(rows[key].speedup)
    assert math.isnan(rows[("shfl", 4096, 256)].baseline_us)
    assert len(out) == 4
