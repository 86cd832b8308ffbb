"""Comparing results: two runs row by row, or every rung against one rung within a run.

Pure functions over the DataFrames that `results.files.read_results` returns; nothing
here prints, reads files or touches a GPU. Three steps, one module each:

    match.py    pair BASE's and NEW's rows by case key (rung, dtype, n, block, params);
                a key a file holds twice keeps the later row
    judge.py    the verdict per pair: from both runs' rounds (rounds.py) where both were
                measured in rounds; else the samples' rank test and bootstrap interval
                where both runs kept samples, the ratio rule otherwise, saying which;
                only rows verified ("ok") on both sides are ranked
    summary.py  the Comparison: counts, geometric means, warnings, and the gate's losses

and baseline.py for one run's rungs against one of them."""

from __future__ import annotations

import math

import pandas as pd

from reducebench.core import defaults

from reducebench.analysis.compare.baseline import BASELINE_COLUMNS, baseline_ratios
from reducebench.analysis.compare.judge import (BAD_STATUS, FAILED, FASTER, NOISY,
                                                ONLY_BASE, ONLY_NEW, RATIO_RULE,
                                                ROUNDS_RULE, ROW_COLUMNS, SAME,
                                                SAMPLES_RULE, SKIPPED, SLOWER, SUSPECT,
                                                SUSPECT_STATUS, TIMED_VERDICTS, Samples,
                                                judge_pairs, source_change, verdict)
from reducebench.analysis.compare.match import (KEY, SIDE_COLUMNS, in_ladder_order,
                                                match_runs, normalise)
from reducebench.analysis.compare.summary import (CHECKED_META, GATE_COLUMNS, Comparison,
                                                  geometric_mean, summarise)
from reducebench.core.errors import UsageError

__all__ = ["BAD_STATUS", "BASELINE_COLUMNS", "CHECKED_META", "FAILED", "FASTER",
           "GATE_COLUMNS", "KEY", "NOISY", "ONLY_BASE", "ONLY_NEW", "RATIO_RULE", "ROUNDS_RULE", "ROW_COLUMNS",
           "SAME", "SAMPLES_RULE", "SIDE_COLUMNS", "SKIPPED", "SLOWER", "SUSPECT",
           "SUSPECT_STATUS", "TIMED_VERDICTS", "Comparison", "baseline_ratios",
           "compare_runs", "geometric_mean", "in_ladder_order", "normalise",
           "source_change", "verdict"]


def compare_runs(base_df: pd.DataFrame, new_df: pd.DataFrame, threshold_pct: float = defaults.THRESHOLD_PCT,
                 base_samples: Samples = None, new_samples: Samples = None) -> Comparison:
    """Match two runs' rows and judge every change.

    Where both runs measured a case in rounds (its round_medians_us), the rounds
    decide (rounds.py: the change against the threshold and an exact rank test over the
    round medians; NOISY where the change does not stand out from the rounds; judged
    against the same-size read where that moved). Otherwise, where both runs kept a
    case's raw samples (results.samples_file.samples_for_results: case
    key -> times), the samples decide (significance.decide: a rank test, a bootstrap
    interval of the ratio of medians, and the threshold), with the p-value and interval
    recorded. Otherwise the ratio rule: a change (new/base - 1, in percent) is SAME when
    it is within the larger of `threshold_pct` and the two sides' noise (noise_pct), and
    the row's note says the samples were missing."""
    if not (threshold_pct >= 0 and math.isfinite(threshold_pct)):
        raise UsageError(f"threshold {threshold_pct!r} must be a percentage of 0 or more")
    matched = match_runs(base_df, new_df)
    rows = judge_pairs(matched.pairs, threshold_pct, base_samples, new_samples)
    return summarise(matched, rows, threshold_pct)
