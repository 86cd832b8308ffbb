"""A run's raw samples at a glance, for show-samples: each case's count, kept, median,
spread, noise and drift, how a case is named, and which cases a --case pattern picks.
Pure functions over the values results.samples_file reads; nothing here reads files."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from reducebench.core.sizes import format_size, parse_size
from reducebench.results.samples_file import CaseKey, case_key


@dataclass(frozen=True)
class SampleSummary:
    count: int           # samples in the file for this case (and phase)
    kept: int            # of which the throttle rule kept
    median: float        # over the kept samples, us
    min: float
    max: float
    noise_pct: float     # stdev / mean of the kept samples, percent
    drift_pct: float     # median of the last third / median of the first third - 1, percent

    @property
    def discarded(self) -> int:
        return self.count - self.kept


def drift_pct(times: Sequence[float]) -> float:
    """How far the last third of the samples (in time order) sits from the first third,
    by their medians, in percent: + means the case got slower while it was sampled.
    NaN below 3 samples (no thirds to compare)."""
    times = list(times)
    third = len(times) // 3
    if third < 1:
        return math.nan
    first = statistics.median(times[:third])
    last = statistics.median(times[-third:])
    return 100.0 * (last / first - 1.0) if first > 0 else math.nan


def summarize_samples(times_us: Sequence[float], kept: Sequence[bool] | None = None
                      ) -> SampleSummary:
    """Count, kept, and median/min/max/noise/drift over the kept samples (time order)."""
    times = [float(t) for t in times_us]
    mask = [True] * len(times) if kept is None else [bool(k) for k in kept]
    good = [t for t, k in zip(times, mask) if k]
    if not good:
        nan = math.nan
        return SampleSummary(len(times), 0, nan, nan, nan, nan, nan)
    mean = statistics.fmean(good)
    stdev = statistics.stdev(good) if len(good) > 1 else 0.0
    noise = 100.0 * stdev / mean if mean > 0 else math.inf
    return SampleSummary(len(times), len(good), statistics.median(good), min(good),
                         max(good), noise, drift_pct(good))


def case_label(key: CaseKey) -> str:
    """How show-samples names a case: `vector_load float32 n=2^24 block=256 loads=4`."""
    rung, dtype, n, block, params = case_key(*key)
    parts = [rung, dtype, f"n={format_size(n)}"]
    if block:
        parts.append(f"block={block}")
    parts.extend(p for p in params.split(";") if p)
    return " ".join(parts)


def matches(key: CaseKey, pattern: str) -> bool:
    """Does the case match every word of `pattern`? A bare word is the rung or the dtype;
    n=SIZE takes any size syntax (n=2^24, n=16M); block=B; any other k=v is a parameter."""
    rung, dtype, n, block, params = case_key(*key)
    settings = dict(p.split("=", 1) for p in params.split(";") if "=" in p)
    for word in pattern.split():
        name, eq, value = word.partition("=")
        if not eq:
            if word not in (rung, dtype):
                return False
        elif name == "n":
            if parse_size(value) != n:
                return False
        elif name == "block":
            if not value.isdigit() or int(value) != block:
                return False
        elif settings.get(name) != value:
            return False
    return True
