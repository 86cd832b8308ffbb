"""Sample statistics and the rule that decides when a case has been measured enough."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    samples: int
    median: float
    min: float
    max: float
    mean: float
    stdev: float

    @property
    def noise(self) -> float:
        """Relative standard deviation (stdev / mean), as a fraction."""
        return self.stdev / self.mean if self.mean > 0 else math.inf


def summarize(times: list[float]) -> Summary:
    if not times:
        raise ValueError("no samples to summarize")
    stdev = statistics.stdev(times) if len(times) > 1 else 0.0
    return Summary(len(times), statistics.median(times), min(times), max(times),
                   statistics.fmean(times), stdev)


@dataclass(frozen=True)
class StopRule:
    """Sample until the noise is under max_noise after at least min_samples, or until
    max_time seconds (or max_samples) have gone into the case: nvbench's stdrel idea."""

    min_samples: int = 10
    max_noise: float = 0.005
    max_time: float = 0.5
    max_samples: int = 2000

    def done(self, times: list[float], elapsed: float) -> bool:
        count = len(times)
        if count >= self.max_samples:
            return True
        if count < self.min_samples:
            return False
        return elapsed >= self.max_time or summarize(times).noise < self.max_noise
