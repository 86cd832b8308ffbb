"""What `compare` and `calibrate` read besides the rows: each file's samples (a note
where a file's samples cannot be used, so its rows are judged by the ratio rule), and
the threshold, checked."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

from reducebench.core.errors import UsageError
from reducebench.core.numbers import number
from reducebench.results.samples_file import load_samples


def check_threshold(threshold: float) -> float:
    if not (threshold >= 0 and math.isfinite(threshold)):
        raise UsageError(f"--threshold {number(threshold, 'g')}: expected a percentage of 0 "
                         "or more")
    return threshold


def samples_by_case(paths: list[Path], note: Callable[[str], None]) -> dict:
    """path -> its samples by case; note(line) for a samples file that gives none (a
    missing one is said by each row)."""
    out = {}
    for path in paths:
        loaded = load_samples(path)
        if loaded.frame is None and not loaded.missing:
            note(f"reducebench: note: {loaded.note}; its rows are judged by the ratio rule")
        out[path] = loaded.by_case()
    return out


def refuse_gates_with_baseline(fail_on_regression: bool, threshold_given: bool) -> None:
    """--fail-on-regression and --threshold judge NEW against BASE; with --baseline there
    is no second run, and a gate that silently judged nothing would always pass."""
    given = [name for name, used in (("--fail-on-regression", fail_on_regression),
                                     ("--threshold", threshold_given)) if used]
    if given:
        raise UsageError(f"{' and '.join(given)} judge NEW against BASE; --baseline compares "
                         "rungs within one run and judges nothing. Give BASE NEW to gate on "
                         "regressions")
