"""Sample statistics and the rule that decides when a case has been measured enough."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from reducebench.core import defaults


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

    min_samples: int = defaults.MIN_SAMPLES
    max_noise: float = defaults.MAX_NOISE_PCT / 100
    max_time: float = defaults.MAX_TIME_S
    max_samples: int = defaults.MAX_SAMPLES

    def done(self, times: list[float], elapsed: float) -> bool:
        count = len(times)
        if count >= self.max_samples:
            return True
        if count < self.min_samples:
            return False
        return elapsed >= self.max_time or summarize(times).noise < self.max_noise

    def for_round(self, rounds: int) -> "StopRule":
        """The rule for one of `rounds` rounds of a case: the case's time and sample
        budgets shared out, so that a case in rounds takes as long as one without; at
        least MIN_ROUND_SAMPLES a round, so that each round has a median of its own."""
        if rounds <= 1:
            return self
        least = max(MIN_ROUND_SAMPLES, math.ceil(self.min_samples / rounds))
        return StopRule(min_samples=least, max_noise=self.max_noise,
                        max_time=self.max_time / rounds,
                        max_samples=max(least, self.max_samples // rounds))


# A round's median needs a few samples; the time budget, not this, sets most rounds' count.
MIN_ROUND_SAMPLES = 3


@dataclass(frozen=True)
class RoundSummary:
    """A case's rounds side by side: the median of each, and how far apart they lie."""

    medians: tuple[float, ...]

    @property
    def spread_pct(self) -> float:
        """(largest - smallest round median) / the median of the round medians, in
        percent: what separates rounds of one run, beside the noise inside a round."""
        if len(self.medians) < 2:
            return math.nan
        middle = statistics.median(self.medians)
        return 100 * (max(self.medians) - min(self.medians)) / middle if middle > 0 else math.nan


def round_medians(times: list[float], rounds: list[int]) -> RoundSummary:
    """Each round's median, in round order, from samples tagged with their round."""
    by_round: dict[int, list[float]] = {}
    for time, index in zip(times, rounds):
        by_round.setdefault(index, []).append(time)
    return RoundSummary(tuple(statistics.median(by_round[r]) for r in sorted(by_round)))
