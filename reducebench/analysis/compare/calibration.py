"""A/A calibration: several runs of the same code compared pair by pair. Every FASTER or
SLOWER verdict among them is a false alarm, and every pair whose regression gate fails is
a CI job that would have failed on unchanged code: the rate a user of `compare
--fail-on-regression` can expect on this machine."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from reducebench.core import defaults

from reducebench.analysis.compare import (FAILED, FASTER, NOISY, SAME, SKIPPED, SLOWER,
                                          SUSPECT, compare_runs)

PAIR_COLUMNS = ["base", "new", "timed", FASTER, SLOWER, NOISY, SAME, "untimed", "gate"]


@dataclass
class Calibration:
    """Every pair of runs judged: one row per pair (PAIR_COLUMNS; gate is "pass" or the
    number of regressions), and the warnings of each comparison, once each."""

    pairs: pd.DataFrame
    threshold_pct: float
    warnings: list[str] = field(default_factory=list)

    @property
    def cases(self) -> int:
        return int(self.pairs["timed"].sum())

    @property
    def false_alarms(self) -> int:
        return int(self.pairs[FASTER].sum() + self.pairs[SLOWER].sum())

    @property
    def failed_gates(self) -> int:
        return int((self.pairs["gate"] != "pass").sum())

    @property
    def passed(self) -> bool:
        return self.failed_gates == 0


def calibrate(runs: list[tuple[Path, pd.DataFrame]], threshold_pct: float = defaults.THRESHOLD_PCT,
              samples: dict | None = None) -> Calibration:
    """Each pair of runs (earlier as BASE), compared as `compare` would."""
    rows, warnings = [], []
    samples = samples or {}
    for (base_path, base), (new_path, new) in itertools.combinations(runs, 2):
        c = compare_runs(base, new, threshold_pct, samples.get(base_path),
                         samples.get(new_path))
        counts = c.counts()
        gate = len(c.gate_failures)
        rows.append({"base": str(base_path), "new": str(new_path), "timed": len(c.timed),
                     FASTER: counts[FASTER], SLOWER: counts[SLOWER], NOISY: counts[NOISY],
                     SAME: counts[SAME],
                     "untimed": counts[FAILED] + counts[SKIPPED] + counts[SUSPECT],
                     "gate": "pass" if not gate else str(gate)})
        warnings += [w for w in c.warnings if w not in warnings]
    return Calibration(pd.DataFrame(rows, columns=PAIR_COLUMNS), float(threshold_pct),
                       warnings)
