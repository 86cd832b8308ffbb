"""Deciding from raw samples: the rank test, the bootstrap interval and the verdict rule,
on synthetic sample sets whose right answer is known by construction."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from importlib.util import find_spec

import numpy as np
import pytest

from reducebench.analysis.significance import (FASTER, SAME, SLOWER, bootstrap_medians, decide,
                                      mann_whitney, rank_average, ratio_interval)

needs_scipy = pytest.mark.skipif(find_spec("scipy") is None, reason="needs scipy")


def timings(count: int, seed: int, scale: float = 1.0) -> np.ndarray:
    """Kernel-like times around 10 us: a right-skewed spread of ~0.5% and 1% outliers
    20% slower, times `scale` (the shift a test builds in)."""
    rng = np.random.default_rng(seed)
    times = 10.0 * (1.0 + 0.003 * rng.gamma(2.0, 1.0, size=count))
    times[rng.random(count) < 0.01] *= 1.2
    return times * scale


def two_levels(count: int, share_at_10: float, seed: int) -> np.ndarray:
    """Exactly round(count x share) samples at 10 us and the rest at 11 us, shuffled."""
    at_10 = int(round(count * share_at_10))
    values = np.r_[np.full(at_10, 10.0), np.full(count - at_10, 11.0)]
    np.random.default_rng(seed).shuffle(values)
    return values


# ---- the rank test -------------------------------------------------------------------

def test_ranks_average_ties_and_count_them():
    ranks, ties = rank_average(np.array([5.0, 1.0, 5.0, 3.0, 5.0]))
    # 1 -> 1, 3 -> 2, the three 5s share ranks 3, 4, 5 -> 4
    assert ranks.tolist() == [4.0, 1.0, 4.0, 2.0, 4.0]
    assert ties == 3**3 - 3


def test_mann_whitney_worked_by_hand_with_ties():
    # new 1 2 2 4, base 2 3 5. Pairs new > base (ties half): 1: 0; each 2: 0.5; 4: 2 -> U = 3.
    # Mean U = 4*3/2 = 6. Three tied 2s: tie term 3^3 - 3 = 24, N = 7:
    # var = 4*3/12 * (8 - 24/(7*6)); z = (|3 - 6| - 0.5) / sqrt(var).
    result = mann_whitney([1, 2, 2, 4], [2, 3, 5])
    z = 2.5 / math.sqrt(8 - 24 / 42)
    assert result.u_new == 3
    assert result.z == pytest.approx(z)
    assert result.p_value == pytest.approx(math.erfc(z / math.sqrt(2)))
    assert result.prob_new_slower == pytest.approx(3 / 12)


def test_mann_whitney_all_equal_is_no_evidence():
    result = mann_whitney([7.0] * 12, [7.0] * 15)
    assert result.p_value == 1.0 and result.prob_new_slower == 0.5


def test_mann_whitney_sees_a_clear_shift_in_its_direction():
    slower = mann_whitney(timings(50, 1, 1.05), timings(50, 2))
    assert slower.p_value < 1e-6 and slower.prob_new_slower > 0.9
    faster = mann_whitney(timings(50, 1, 0.95), timings(50, 2))
    assert faster.p_value < 1e-6 and faster.prob_new_slower < 0.1


@needs_scipy
def test_mann_whitney_matches_scipy():
    from scipy.stats import mannwhitneyu

    rng = np.random.default_rng(5)
    for _ in range(20):
        new = np.round(rng.normal(10, 1, size=rng.integers(10, 60)), 1)  # rounded: ties
        base = np.round(rng.normal(10.3, 1, size=rng.integers(10, 60)), 1)
        expected = mannwhitneyu(new, base, alternative="two-sided", method="asymptotic")
        ours = mann_whitney(new, base)
        assert ours.u_new == pytest.approx(expected.statistic)
        assert ours.p_value == pytest.approx(expected.pvalue, rel=1e-9)


@pytest.mark.parametrize("rounding", [None, 0.05])
def test_false_positive_rate_is_about_alpha(rounding):
    """Same distribution on both sides, 2000 times: p < 0.05 about 5% of the time, with
    continuous times and with times on a coarse grid (heavy ties)."""
    alpha, trials, hits = 0.05, 2000, 0
    for seed in range(trials):
        base, new = timings(30, 2 * seed), timings(30, 2 * seed + 1)
        if rounding:
            base, new = np.round(base / rounding) * rounding, np.round(new / rounding) * rounding
        hits += mann_whitney(new, base).p_value < alpha
    # expected 100, binomial sd ~10: a test that is too eager or too shy lands outside
    assert 70 <= hits <= 130, hits


# ---- the bootstrap interval --------------------------------------------------------------

@pytest.mark.parametrize("samples", [[3.0, 1.0, 4.0, 1.5], [2.0, 7.0, 1.0, 8.0, 2.0]])
def test_fast_bootstrap_median_has_the_resampling_distribution(samples):
    """Against the exact distribution of the median of every resample with replacement
    (4^4 and 5^5 of them, enumerated)."""
    exact = Counter(float(np.median(r)) for r in itertools.product(samples, repeat=len(samples)))
    total = len(samples) ** len(samples)
    draws = 200_000
    fast = Counter(bootstrap_medians(samples, draws, np.random.default_rng(0)).tolist())
    assert set(fast) <= set(exact)
    for value, count in exact.items():
        assert fast[value] / draws == pytest.approx(count / total, abs=0.005), value


def test_interval_is_seeded_and_covers_the_true_ratio():
    new, base = timings(200, 1, 1.03), timings(200, 2)
    assert ratio_interval(new, base, seed=7) == ratio_interval(new, base, seed=7)
    low, high = ratio_interval(new, base)
    assert low < 1.03 < high and high - low < 0.01


# ---- the verdict ---------------------------------------------------------------------

def test_same_distribution_is_same_with_a_large_p():
    result = decide(timings(300, 1), timings(300, 2))
    assert result.verdict == SAME and result.p_value > 0.05
    assert result.ci_low < 1 < result.ci_high
    assert "no significant difference" in result.reason


def test_same_distribution_rarely_called_a_change():
    changes = sum(decide(timings(40, 2 * s), timings(40, 2 * s + 1), threshold_pct=0,
                         alpha=0.05, draws=2000).verdict != SAME for s in range(400))
    # at most about alpha (0.05 x 400 = 20, sd ~4.4): the interval can only make it rarer
    assert changes <= 32, changes


def test_one_percent_is_significant_but_within_the_threshold():
    result = decide(timings(300, 1), timings(300, 2, 1.01), threshold_pct=2.0)
    assert result.verdict == SAME
    assert result.p_value < 1e-6 and result.ci_low > 1.0
    assert result.ratio == pytest.approx(1.01, abs=0.002)
    assert "significant but small" in result.reason and "2% threshold" in result.reason


def test_one_percent_is_slower_with_a_half_percent_threshold():
    result = decide(timings(300, 1), timings(300, 2, 1.01), threshold_pct=0.5)
    assert result.verdict == SLOWER


@pytest.mark.parametrize("scale, expected", [(1.03, SLOWER), (0.97, FASTER)])
def test_three_percent_is_a_change(scale, expected):
    result = decide(timings(300, 1), timings(300, 2, scale), threshold_pct=2.0)
    assert result.verdict == expected
    assert result.p_value < 1e-6
    assert not (result.ci_low <= 1.0 <= result.ci_high)
    assert result.ci_low < scale < result.ci_high
    assert "beyond the 2% threshold" in result.reason
    assert "p=" in result.describe() and "99% CI" in result.describe()


def test_tiny_samples_fall_back_with_a_reason():
    result = decide(timings(5, 1), timings(300, 2, 1.5))
    assert result.verdict is None and not result.decided
    assert result.n_base == 5 and math.isnan(result.p_value)
    assert "too few samples (5 base, 300 new" in result.reason and "ratio rule" in result.reason


def test_non_finite_samples_are_left_out_before_counting():
    base = np.r_[timings(9, 1), [np.nan, np.inf, 0.0]]
    assert decide(base, timings(50, 2)).verdict is None  # 9 usable, not 12


def test_bimodal_modes_remixed_moves_the_median_by_the_gap():
    """70% of samples at 10 us in BASE, 30% in NEW: both medians sit firmly on a mode, so
    the median moved by the whole 1 us gap (+10%), while the mean moved by 0.4 us (+3.9%)."""
    result = decide(two_levels(1000, 0.7, 1), two_levels(1000, 0.3, 2))
    assert result.verdict == SLOWER and result.p_value < 1e-10
    assert result.ratio == pytest.approx(1.1)
    assert result.ci_low == pytest.approx(1.1) and result.ci_high == pytest.approx(1.1)
    assert result.mean_ratio == pytest.approx(10.7 / 10.3)
    assert "+10.00%" in result.reason and "means tell another story (+3.88%)" in result.reason


def test_bimodal_median_between_modes_is_explained_not_called():
    """52% at 10 us in BASE (its median is on the 10 us mode, but a resample often puts it
    on the 11 us one), 40% in NEW: the rank test sees the shift in the mix, the median
    ratio's interval reaches 1, so no change is called and the reason says why."""
    result = decide(two_levels(1000, 0.52, 1), two_levels(1000, 0.40, 2))
    assert result.p_value < 1e-4
    assert result.ratio == pytest.approx(1.1) and result.ci_low == pytest.approx(1.0)
    assert result.verdict == SAME
    assert "not clearly in their median" in result.reason


def three_levels(counts: dict[float, int], seed: int) -> np.ndarray:
    values = np.concatenate([np.full(c, v) for v, c in counts.items()])
    np.random.default_rng(seed).shuffle(values)
    return values


def test_a_median_that_moves_while_the_ranks_do_not_is_no_change():
    """BASE 330 at 9, 300 at 10, 470 at 11 us (median 10); NEW 495 at 9, 605 at 11
    (median 11). Both medians are firm (the interval is 1.1 to 1.1), yet a NEW sample
    beats a BASE one exactly half the time: P(new > base) + P(tie)/2 = 0.45 x 0.15 +
    0.55 x (0.5727 + 0.2136) = 0.5. The rank test holds the verdict at SAME; the means
    (10.127 and 10.1 us) agree with it, and the note says the medians disagree."""
    base = three_levels({9.0: 330, 10.0: 300, 11.0: 470}, 1)
    new = three_levels({9.0: 495, 11.0: 605}, 2)
    result = decide(base, new)
    assert result.ratio == pytest.approx(1.1) and result.ci_low == pytest.approx(1.1)
    assert result.prob_new_slower == pytest.approx(0.5)
    assert result.p_value > 0.9
    assert result.verdict == SAME and "no significant difference" in result.reason
    assert "means tell another story" in result.reason


def test_bimodal_same_mix_is_same():
    result = decide(two_levels(500, 0.6, 1), two_levels(500, 0.6, 2))
    assert result.verdict == SAME and result.p_value == pytest.approx(1.0)


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError):
        decide(timings(20, 1), timings(20, 2), alpha=0)
    with pytest.raises(ValueError):
        decide(timings(20, 1), timings(20, 2), threshold_pct=-1)


# ---- the edges of each step (worked by hand; the mutation run, tests/mutation/, found
# them untested) -------------------------------------------------------------------------

def test_mann_whitney_needs_a_sample_a_side_and_one_is_enough():
    for new, base in (([], [1.0]), ([1.0], []), ([], [])):
        with pytest.raises(ValueError, match="^the Mann-Whitney test needs samples on both "
                                             "sides$"):
            mann_whitney(new, base)
    # one against two: U = 2 (NEW above both), mean 1, variance 1*2/12*(3+1) = 2/3,
    # z = (|2 - 1| - 0.5) / sqrt(2/3) = 0.6124, p = erfc(z / sqrt 2) = 0.5403
    test = mann_whitney([3.0], [1.0, 2.0])
    assert test.u_new == 2.0 and test.z == pytest.approx(0.5 / math.sqrt(2 / 3))
    assert test.p_value == pytest.approx(math.erfc(0.5 / math.sqrt(2 / 3) / math.sqrt(2)))
    assert test.p_value == pytest.approx(0.5403, abs=1e-4)
    assert mann_whitney([1.0], [2.0]).p_value == pytest.approx(1.0)


def test_mann_whitney_of_all_equal_values_has_u_at_its_mean_and_z_zero():
    test = mann_whitney([5.0] * 3, [5.0] * 4)
    assert test.u_new == 6.0 and test.z == 0.0 and test.p_value == 1.0      # 3 * 4 / 2
    assert test.prob_new_slower == 0.5


def test_the_bootstrap_median_of_one_and_of_two_samples():
    rng = np.random.default_rng(0)
    one = bootstrap_medians([5.0], 7, rng)
    assert one.shape == (7,) and one.dtype == float and set(one) == {5.0}
    # whole numbers in, medians as floats out, as numpy's median gives them
    assert bootstrap_medians([1, 2, 3], 5, rng).dtype == float
    # two samples: a resample is (1, 1), (1, 3), (3, 1) or (3, 3): medians 1, 2, 2, 3
    two = Counter(bootstrap_medians([3.0, 1.0], 4000, rng))
    assert set(two) == {1.0, 2.0, 3.0}
    assert two[2.0] / 4000 == pytest.approx(0.5, abs=0.05)
    assert two[1.0] / 4000 == pytest.approx(0.25, abs=0.05)


@pytest.mark.parametrize("p, shown", [(math.nan, "-"), (math.inf, "-"), (0.5, "0.5"),
                                      (0.01234, "0.012"), (1e-4, "0.0001"),
                                      (9.9e-5, "<1e-4"), (0.0, "<1e-4")])
def test_format_p(p, shown):
    from reducebench.analysis.significance import format_p

    assert format_p(p) == shown


STEADY20 = [10.0 + 0.001 * i for i in range(20)]


def test_the_threshold_defaults_to_two_percent_and_is_recorded():
    new = [x * 1.025 for x in STEADY20]
    decision = decide(STEADY20, new)
    assert decision.verdict == SLOWER and decision.threshold_pct == 2.0
    assert decision.n_base == 20 and decision.n_new == 20
    assert decision.reason == "+2.50%, significant and beyond the 2% threshold"
    assert decide(STEADY20, new, 3.0).verdict == SAME


def test_samples_below_a_microsecond_count():
    decision = decide([x / 20 for x in STEADY20], [x / 10 for x in STEADY20])
    assert decision.n_base == 20 and decision.n_new == 20 and decision.verdict == SLOWER


def test_ten_samples_a_side_are_enough():
    assert decide(STEADY20[:10], [x * 1.05 for x in STEADY20[:10]]).decided
    assert not decide(STEADY20[:9], [x * 1.05 for x in STEADY20[:10]]).decided
    assert not decide(STEADY20[:10], [x * 1.05 for x in STEADY20[:9]]).decided


def test_an_empty_side_is_undecided_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")      # numpy's "mean of empty slice" would show
        for base, new in (([], STEADY20), (STEADY20, [])):
            decision = decide(base, new)
            assert not decision.decided
            assert math.isnan(decision.ratio) and math.isnan(decision.mean_ratio)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5, -0.1])
def test_alpha_outside_zero_to_one_is_refused_with_its_value(alpha):
    with pytest.raises(ValueError, match=f"^alpha {alpha!r} must lie between 0 and 1$"):
        decide(STEADY20, STEADY20, alpha=alpha)


def test_a_negative_threshold_is_refused_with_its_value():
    with pytest.raises(ValueError, match=r"^threshold -1\.0 must be a percentage of 0 or more$"):
        decide(STEADY20, STEADY20, -1.0)


def test_the_interval_uses_the_seed_draws_and_confidence_given():
    base, new = timings(40, 1), timings(40, 2, 1.01)
    for kwargs in ({"seed": 1}, {"draws": 500}, {"alpha": 0.05}):
        decision = decide(base, new, **kwargs)
        expected = ratio_interval(new, base, confidence=1 - kwargs.get("alpha", 0.01),
                                  draws=kwargs.get("draws", 10_000), seed=kwargs.get("seed", 0))
        assert (decision.ci_low, decision.ci_high) == expected
    assert decide(base, new, seed=1).ci_low != decide(base, new, seed=0).ci_low


def test_a_change_just_within_the_threshold_is_small():
    # +1.99%: within 2% (a threshold read as 2/101 would call it SLOWER)
    decision = decide(STEADY20, [x * 1.0199 for x in STEADY20])
    assert decision.verdict == SAME and decision.reason.startswith("significant but small")


def test_a_change_exactly_at_the_threshold_is_small_and_the_means_exactly_at_it_quiet():
    # BASE all 4 us; NEW 12 at 5 us and 8 at 7.5 us: median ratio 1.25 and mean ratio
    # 6 / 4 = 1.5, all exact: the change is 25% and the means differ from it by 25%
    base, new = [4.0] * 20, [5.0] * 12 + [7.5] * 8
    decision = decide(base, new, 25.0)
    assert decision.ratio == 1.25 and decision.mean_ratio == 1.5
    assert decision.verdict == SAME
    assert decision.reason == "significant but small: +25.00% is within the 25% threshold"
    loud = decide(base, new, 20.0)
    assert loud.verdict == SLOWER and loud.reason == (
        "+25.00%, significant and beyond the 20% threshold; the means tell another story "
        "(+50.00%): multimodal or skewed samples, see show-samples")


def test_a_p_equal_to_alpha_is_no_evidence():
    base, new = timings(40, 1), timings(40, 2, 1.05)
    p = mann_whitney(new, base).p_value
    assert 0 < p < 0.01
    assert decide(base, new, alpha=p).reason == f"no significant difference (p >= {p:g})"
    assert decide(base, new, alpha=min(1.0, p * 1.0001)).verdict == SLOWER


def test_an_interval_that_reaches_one_is_not_beyond_it():
    # BASE all 10 us; NEW 11 at 9 us and 9 at 10 us: the median is 9 (-10%) and the
    # ranks say faster, but a quarter of the resamples have 11 or more 10s, whose
    # median ratio is 1: the interval's top is 1.0 exactly, not below 1
    decision = decide([10.0] * 20, [9.0] * 11 + [10.0] * 9)
    assert decision.ratio == 0.9 and decision.ci_high == 1.0
    assert decision.prob_new_slower < 0.5 and decision.p_value < 0.01
    assert decision.verdict == SAME and decision.reason == (
        "the samples differ (rank test) but not clearly in their median: the interval "
        "includes 1 or the two disagree on direction (a change in shape, e.g. the mix of two "
        "modes); the means tell another story (-5.50%): multimodal or skewed samples, see "
        "show-samples")       # NEW's mean (11 * 9 + 9 * 10) / 20 = 9.45
    assert ", 99% CI 0.9000-1.0000: the samples differ" in decision.describe()


def test_ranks_that_say_slower_with_a_median_that_says_faster_are_no_verdict():
    # BASE: 30% at 5 us, 70% at 10 (median 10); NEW: 65% at 9.9, 35% at 100 (median
    # 9.9): -1%, and with 1000 a side both medians hold in every resample, so the
    # interval lies below 1. But P(new > base) = 0.65 * 0.3 + 0.35 = 0.545: the ranks
    # say slower. The two disagree on direction: no verdict, whatever the threshold.
    base = [5.0] * 300 + [10.0] * 700
    new = [9.9] * 650 + [100.0] * 350
    decision = decide(base, new, 0.5)
    assert decision.ratio == pytest.approx(0.99) and decision.ci_high < 1.0
    assert decision.prob_new_slower == pytest.approx(0.545) and decision.p_value < 0.01
    assert decision.verdict == SAME and decision.reason.startswith("the samples differ")


def test_a_60_percent_interval_is_the_20_and_80_percent_points():
    """BASE eleven 1s, NEW 1..11 (as in test_compare_pairs): the ratio's bootstrap median
    is j + 1 with P(<= 4) = 0.173 and P(<= 5) = 0.379, so the 20% point is 5 and, by
    symmetry, the 80% point is 7."""
    assert ratio_interval([float(v) for v in range(1, 12)], [1.0] * 11,
                          confidence=0.6) == (5.0, 7.0)


def test_a_tiny_or_a_huge_threshold_is_shown_in_lower_case():
    new = [x * 1.025 for x in STEADY20]
    assert decide(STEADY20, new, 1e-05).reason == (
        "+2.50%, significant and beyond the 1e-05% threshold")
    assert decide(STEADY20, new, 1e+06).reason == (
        "significant but small: +2.50% is within the 1e+06% threshold")


def test_the_confidence_of_an_alpha_near_one_is_shown_in_lower_case():
    from reducebench.analysis.significance import SampleVerdict

    verdict = SampleVerdict(SLOWER, 1.05, 0.001, 1.01, 1.09, 0.9, 1.05, 20, 20,
                            alpha=0.9999999, threshold_pct=2.0, reason="r")
    assert verdict.describe() == "p=0.001, 1e-05% CI 1.0100-1.0900: r"
