"""What compare tells a user to believe, pair by pair: which run a bare `compare` pairs
with the newest, the verdict on a pair not timed on both sides, which row of a key a
frame holds twice is compared, and the confidence of the interval the samples give.
Expected values are worked out by hand in the comments."""

from __future__ import annotations

import math
from math import comb
from pathlib import Path

import pandas as pd
import pytest

from reducebench.analysis.compare import FAILED, SAME, SKIPPED, SUSPECT, compare_runs
from reducebench.analysis.significance import decide
from reducebench.results.files import newest_results

FIXTURES = Path(__file__).parent / "fixtures"
BASE = FIXTURES / "compare_base.csv"      # H100, cold, recorded 2026-11-21T18:40:02
NEW = FIXTURES / "compare_new.csv"        # H100, cold, recorded 2026-11-22T09:12:45


# -- a bare `compare`: the earlier run must share a case with the newest --------------------------

def _recorded(source: Path, path: Path, when: str, n_shift: int = 0) -> Path:
    frame = pd.read_csv(source, dtype=str, keep_default_na=False)
    frame["utc_time"] = when
    frame["n"] = [str(int(n) + n_shift) for n in frame["n"]]
    frame.to_csv(path, index=False)
    return path


def test_bare_compare_passes_over_an_earlier_run_with_no_case_in_common(tmp_path):
    """A run of the same kind recorded between BASE and NEW, at sizes NEW never ran
    (each n one more): it is the newest earlier run, but nothing in it compares."""
    _recorded(BASE, tmp_path / "base.csv", "2026-11-21T18:40:02+00:00")
    _recorded(NEW, tmp_path / "new.csv", "2026-11-22T09:12:45+00:00")
    _recorded(BASE, tmp_path / "between.csv", "2026-11-22T00:00:00+00:00", n_shift=1)
    assert [p.name for p in newest_results(tmp_path, 2)] == ["base.csv", "new.csv"]


# -- a pair not timed on both sides --------------------------------------------------------------

def _run(status: str, median_us: float, error: str = "") -> pd.DataFrame:
    return pd.DataFrame([{"rung": "shfl", "dtype": "float32", "n": 1024, "block": 256,
                          "params": "", "status": status, "median_us": median_us,
                          "noise_pct": 1.0, "error": error}])


@pytest.mark.parametrize("base, new, verdict", [
    (("ok", 10.0), ("error", math.nan, "boom"), FAILED),   # lost in NEW
    (("FAIL", 10.0, "wrong sum"), ("ok", 10.0), FAILED),   # mended in NEW: not a timing
    (("ok", 10.0), ("FAIL", 10.0, "wrong sum"), FAILED),
    (("error", math.nan, "boom"), ("ok", 10.0), FAILED),
    (("ok", 10.0), ("ok", math.nan), FAILED),              # ok, yet no time
    (("ok", 10.0), ("skipped", math.nan, "no float32"), SKIPPED),
    (("ok", 10.0), ("suspect", 0.1), SUSPECT),
    (("FAIL", 10.0, "wrong sum"), ("suspect", 0.1), FAILED),
])
def test_a_side_that_failed_makes_the_pair_failed_never_skipped(base, new, verdict):
    rows = compare_runs(_run(*base), _run(*new)).rows
    assert rows["verdict"].tolist() == [verdict]


def test_the_gate_fails_a_case_ok_in_base_and_error_in_new_saying_why():
    comparison = compare_runs(_run("ok", 10.0), _run("error", math.nan, "boom"))
    assert comparison.gate_failures["reason"].tolist() == ["ok in BASE, error in NEW: boom"]
    mended = compare_runs(_run("FAIL", 10.0, "wrong sum"), _run("ok", 10.0))
    assert mended.gate_failures.empty      # NEW mended it: nothing lost


# -- a key a frame holds twice: the later row is compared --------------------------------------------

def _twice(first_us: float, later_us: float) -> pd.DataFrame:
    return pd.concat([_run("ok", first_us), _run("ok", later_us)], ignore_index=True)


def test_compare_runs_uses_the_later_of_two_rows_of_a_key_on_either_side():
    # BASE measured 10 then 20 us; NEW 20 us: the later BASE row makes them the same
    comparison = compare_runs(_twice(10.0, 20.0), _run("ok", 20.0))
    row = comparison.rows.iloc[0]
    assert (row["base_us"], row["new_us"], row["verdict"]) == (20.0, 20.0, SAME)
    assert any(w.startswith("BASE has 1 repeated row(s)") and "the last of each is used" in w
               for w in comparison.warnings)
    comparison = compare_runs(_run("ok", 20.0), _twice(10.0, 20.0))
    assert comparison.rows.iloc[0]["new_us"] == 20.0
    assert any(w.startswith("NEW has 1 repeated row(s)") for w in comparison.warnings)


# -- the interval labelled 99% is a 99% interval -------------------------------------------------------

def _median_index_cdf(m: int, j: int) -> float:
    """P(the median of m values drawn with replacement from m sorted values is one of the
    j + 1 smallest): at least (m + 1) / 2 of the m draws among them, each with
    probability (j + 1) / m."""
    p, k = (j + 1) / m, (m + 1) // 2
    return sum(comb(m, i) * p**i * (1 - p) ** (m - i) for i in range(k, m + 1))


def test_the_99_percent_interval_is_the_0_5_and_99_5_percentiles():
    """BASE: eleven samples of 1 us (every bootstrap median is 1); NEW: 1, 2, ..., 11 us.
    The ratio's bootstrap median is then one of 1..11 with P(<= j + 1) as above:
    P(<= 1) = 0.0002, P(<= 2) = 0.0072, P(<= 3) = 0.0512; by symmetry P(>= 10) = 0.0072.
    The 0.5% point is 2 and the 99.5% point 10; a 98% interval (1% points) is 3 to 9."""
    cdf = [_median_index_cdf(11, j) for j in range(11)]
    assert cdf[0] < 0.005 < cdf[1] < 0.01 < cdf[2]
    decision = decide([1.0] * 11, [float(v) for v in range(1, 12)])
    assert (decision.ci_low, decision.ci_high) == (2.0, 10.0)
    assert "99% CI 2.0000-10.0000" in decision.describe()
