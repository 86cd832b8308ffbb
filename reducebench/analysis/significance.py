"""Deciding FASTER / SLOWER / SAME from two cases' raw samples.

The summary rule in `compare` (ratio of medians against max(threshold, both rows' noise))
asks "is the change bigger than the noise?" with the noise as a rough yardstick. With
the samples at hand the question can be asked properly, as google-benchmark's compare.py
and asv do:

1. Is there a difference at all? A two-sided Mann-Whitney U test (rank-sum; no
   assumption of normal timings, which are skewed and have outliers), ties corrected,
   normal approximation with continuity correction; p < alpha (default 0.01).
2. How big is it? The ratio of medians new/base, the figure `compare` prints, with a
   bootstrap percentile interval at confidence 1 - alpha.
3. Does it matter? |ratio - 1| > threshold (default 2%, the CLI's --threshold).

FASTER or SLOWER needs all three and needs them to agree: p < alpha, the interval on
one side of 1, the median ratio on that same side beyond the threshold, and the rank
test's direction (P(new > base) above or below one half) the same way. Anything less is
SAME, with a reason saying which condition failed, so a reader can tell "no evidence of
a change" from "a real change, smaller than the threshold" from "the samples differ in
shape (e.g. the mix of two modes) but not clearly in their median".

Why not let the threshold be "the whole interval beyond 1 +/- threshold"? Because then
a real 5% slowdown measured with a wide interval ([1.01, 1.09]) would be called SAME:
a regression gate must not hide a change whose best estimate is over the threshold just
because it is noisy. The interval only has to exclude "no change".

Below MIN_SAMPLES per side the normal approximation is not trusted; `decide` returns no
verdict and a reason, and the caller falls back to the summary rule and says so.

numpy only: scipy is not a dependency (the tests cross-check against scipy where present).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from reducebench.core.numbers import MISSING, number

FASTER, SLOWER, SAME = "FASTER", "SLOWER", "SAME"  # the words reducebench.analysis.compare uses

ALPHA = 0.01             # significance level, and 1 - the interval's confidence
MIN_SAMPLES = 10         # per side, for the normal approximation of U
BOOTSTRAP_DRAWS = 10_000
DEFAULT_SEED = 0         # fixed: the same two files always give the same interval


@dataclass(frozen=True)
class MannWhitney:
    u_new: float           # U of the new samples: pairs (new, base) with new > base, ties half
    p_value: float         # two-sided
    z: float               # standardised |U - mean|, after the continuity correction
    prob_new_slower: float  # u_new / (n_new * n_base): P(a new sample > a base sample)


def rank_average(values: np.ndarray) -> tuple[np.ndarray, float]:
    """Ranks 1..N with ties given the average of the ranks they span, and the tie term
    sum(t^3 - t) over groups of t equal values (0 without ties)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)               # rank of the last value in each group
    first = last - counts + 1
    average = (first + last) / 2.0
    ties = float(np.sum(counts.astype(float) ** 3 - counts))
    return average[inverse.reshape(-1)], ties


def mann_whitney(new: Sequence[float], base: Sequence[float]) -> MannWhitney:
    """Two-sided Mann-Whitney U test of new against base: normal approximation with tie
    correction and continuity correction (scipy.stats.mannwhitneyu(new, base,
    method="asymptotic") gives the same p). Needs at least one sample per side."""
    x = np.asarray(new, dtype=float)
    y = np.asarray(base, dtype=float)
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        raise ValueError("the Mann-Whitney test needs samples on both sides")
    ranks, ties = rank_average(np.concatenate([x, y]))
    u_new = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2.0)
    mean = n1 * n2 / 2.0
    total = n1 + n2
    variance = n1 * n2 / 12.0 * ((total + 1) - ties / (total * (total - 1)))
    if variance <= 0:  # every value equal: no evidence of any difference
        return MannWhitney(u_new, 1.0, 0.0, u_new / (n1 * n2))
    z = max(abs(u_new - mean) - 0.5, 0.0) / math.sqrt(variance)
    p = min(1.0, math.erfc(z / math.sqrt(2.0)))
    return MannWhitney(u_new, p, z, u_new / (n1 * n2))


def bootstrap_medians(samples: Sequence[float], draws: int, rng: np.random.Generator
                      ) -> np.ndarray:
    """`draws` bootstrap replicates of the median: the same distribution as resampling
    the samples with replacement and taking each resample's median, in O(draws) time
    instead of O(draws x samples).

    A resample of size m is m uniform draws U mapped through the samples' quantile
    function Q(u) = sorted[floor(m u)]; Q is monotone, so the resample's k-th smallest is
    Q(k-th smallest U). The median needs only the middle one or two order statistics of
    m uniforms: U_(k) ~ Beta(k, m - k + 1), and the next one is U_(k) plus the minimum of
    the m - k uniforms above it, (1 - U_(k)) (1 - V^(1/(m-k))) with V uniform."""
    ordered = np.sort(np.asarray(samples, dtype=float))
    m = len(ordered)
    if m == 1:
        return np.full(draws, ordered[0])

    def quantile(u: np.ndarray) -> np.ndarray:
        return ordered[np.minimum((u * m).astype(np.int64), m - 1)]

    if m % 2:
        k = (m + 1) // 2
        return quantile(rng.beta(k, m - k + 1, size=draws))
    k = m // 2
    lower = rng.beta(k, m - k + 1, size=draws)
    upper = lower + (1.0 - lower) * (1.0 - rng.random(draws) ** (1.0 / (m - k)))
    return (quantile(lower) + quantile(upper)) / 2.0


def ratio_interval(new: Sequence[float], base: Sequence[float], confidence: float = 1 - ALPHA,
                   draws: int = BOOTSTRAP_DRAWS, seed: int = DEFAULT_SEED
                   ) -> tuple[float, float]:
    """Bootstrap percentile interval of median(new) / median(base), each side resampled
    on its own; seeded, so the same samples always give the same interval."""
    rng = np.random.default_rng(seed)
    ratios = bootstrap_medians(new, draws, rng) / bootstrap_medians(base, draws, rng)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class SampleVerdict:
    """What the samples say about NEW against BASE.

    verdict:  FASTER / SLOWER / SAME, or None when the samples cannot decide (too few):
              the caller then uses the summary rule and shows `reason`.
    ratio:    median(new) / median(base).
    p_value, ci_low, ci_high: the rank test's two-sided p and the ratio's interval at
              confidence 1 - alpha (NaN when not computed).
    prob_new_slower: P(a new sample > a base sample), 0.5 for no difference.
    mean_ratio: mean(new) / mean(base): when it tells another story than the medians
              (they differ by more than the threshold), the reason says so: the
              samples are multimodal or skewed, and the median may have moved from one
              mode to another while the typical cost moved less.
    reason:   one line saying why this verdict (or why none)."""

    verdict: str | None
    ratio: float
    p_value: float
    ci_low: float
    ci_high: float
    prob_new_slower: float
    mean_ratio: float
    n_base: int
    n_new: int
    alpha: float
    threshold_pct: float
    reason: str

    @property
    def decided(self) -> bool:
        return self.verdict is not None

    @property
    def change_pct(self) -> float:
        return 100.0 * (self.ratio - 1.0)

    def describe(self) -> str:
        """A compact note for a table: p, interval, and the reason."""
        if not self.decided:
            return self.reason
        return (f"p={format_p(self.p_value)}, {number(100 * (1 - self.alpha), 'g', '%')} CI "
                f"{number(self.ci_low, '.4f')}-{number(self.ci_high, '.4f')}: {self.reason}")


def format_p(p: float) -> str:
    if not math.isfinite(p):
        return MISSING
    return number(p, ".2g") if p >= 1e-4 else "<1e-4"


def _finite_positive(values: Sequence[float]) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    return array[np.isfinite(array) & (array > 0)]


def decide(base: Sequence[float], new: Sequence[float], threshold_pct: float = 2.0,
           alpha: float = ALPHA, seed: int = DEFAULT_SEED, draws: int = BOOTSTRAP_DRAWS,
           min_samples: int = MIN_SAMPLES) -> SampleVerdict:
    """FASTER / SLOWER / SAME for NEW against BASE from their raw samples (microseconds),
    by the rule in this module's docstring. Non-finite and non-positive samples are left
    out. Returns verdict None, with the reason, below `min_samples` on either side."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha {alpha!r} must lie between 0 and 1")
    if not (threshold_pct >= 0 and math.isfinite(threshold_pct)):
        raise ValueError(f"threshold {threshold_pct!r} must be a percentage of 0 or more")
    b, n = _finite_positive(base), _finite_positive(new)
    nan = math.nan
    ratio = float(np.median(n) / np.median(b)) if len(b) and len(n) else nan
    mean_ratio = float(np.mean(n) / np.mean(b)) if len(b) and len(n) else nan

    def result(verdict, p=nan, low=nan, high=nan, superiority=nan, reason=""):
        return SampleVerdict(verdict, ratio, p, low, high, superiority, mean_ratio, len(b),
                             len(n), alpha, float(threshold_pct), reason)

    if len(b) < min_samples or len(n) < min_samples:
        return result(None, reason=f"too few samples ({len(b)} base, {len(n)} new; the "
                                   f"test needs {min_samples} a side): ratio rule")
    test = mann_whitney(n, b)
    low, high = ratio_interval(n, b, confidence=1 - alpha, draws=draws, seed=seed)
    threshold = threshold_pct / 100.0
    change = number(100 * (ratio - 1), "+.2f", "%")

    def verdict_with(verdict: str, reason: str) -> SampleVerdict:
        if abs(mean_ratio - ratio) > threshold:
            reason += (f"; the means tell another story "
                       f"({number(100 * (mean_ratio - 1), '+.2f', '%')}): "
                       "multimodal or skewed samples, see show-samples")
        return result(verdict, test.p_value, low, high, test.prob_new_slower, reason)

    if test.p_value >= alpha:
        return verdict_with(SAME, f"no significant difference (p >= {number(alpha, 'g')})")
    slower = low > 1.0 and ratio > 1.0 and test.prob_new_slower > 0.5
    faster = high < 1.0 and ratio < 1.0 and test.prob_new_slower < 0.5
    if not (slower or faster):
        return verdict_with(SAME, "the samples differ (rank test) but not clearly in their "
                                  "median: the interval includes 1 or the two disagree on "
                                  "direction (a change in shape, e.g. the mix of two modes)")
    if abs(ratio - 1.0) <= threshold:
        return verdict_with(SAME, f"significant but small: {change} is within the "
                                  f"{number(threshold_pct, 'g', '%')} threshold")
    return verdict_with(SLOWER if slower else FASTER,
                        f"{change}, significant and beyond the "
                        f"{number(threshold_pct, 'g', '%')} threshold")
