"""The throttle rule and the retry policy, on synthetic SM-clock series."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reducebench.measuring.throttle import KEEP_FRACTION, ThrottlePolicy, check_clocks


def test_boost_wander_keeps_everything():
    # 15 MHz steps under 1980: the ordinary wander of boost clocks, not throttling
    clocks = [1980, 1965, 1980, 1950, 1935, 1980] * 5
    check = check_clocks(clocks)
    assert check.discarded == 0 and check.kept.all()
    assert (check.clock_min_mhz, check.clock_max_mhz) == (1935, 1980)


def test_a_throttled_stretch_is_discarded():
    clocks = [1980] * 40 + [1755] * 20 + [1980] * 40
    check = check_clocks(clocks)
    assert check.discarded == 20 and check.kept_count == 80
    assert not check.kept[40:60].any() and check.kept[:40].all() and check.kept[60:].all()
    assert (check.clock_min_mhz, check.clock_max_mhz) == (1755, 1980)


def test_the_floor_is_the_fraction_of_the_highest_clock_in_the_case():
    # 0.95 x 2000 = 1900: 1900 is kept, 1899 is not, whatever the GPU's rated boost
    check = check_clocks([2000, 1900, 1899, 1950])
    assert check.floor_mhz == pytest.approx(1900)
    assert check.kept.tolist() == [True, True, False, True]
    assert KEEP_FRACTION == 0.95


def test_a_uniformly_slow_case_keeps_its_samples():
    """A GPU locked (or held) at 1410 MHz for the whole case: nothing in the case ran
    faster, so nothing is discarded (the run-level check flags such a case)."""
    check = check_clocks([1410, 1410, 1395, 1410])
    assert check.discarded == 0


def test_unknown_clocks_are_kept_and_do_not_set_the_floor():
    check = check_clocks([None, 1980, math.nan, 1700, 1980])
    assert check.kept.tolist() == [True, True, True, False, True]
    assert (check.clock_min_mhz, check.clock_max_mhz) == (1700, 1980)
    nothing = check_clocks([None, math.nan])
    assert nothing.kept.all() and nothing.discarded == 0 and math.isnan(nothing.clock_max_mhz)


def test_fraction_out_of_range_is_refused():
    with pytest.raises(ValueError):
        check_clocks([1980], fraction=0)
    with pytest.raises(ValueError):
        check_clocks([1980], fraction=1.2)


def sample_loop(clock_series, wanted: int, policy: ThrottlePolicy):
    """The sampling loop as the device layer runs it, with clocks from a series:
    `wanted` samples (the stop rule's count), then replacements while the policy asks."""
    clocks = [next(clock_series) for _ in range(wanted)]
    pauses = []
    while True:
        check = check_clocks(clocks, policy.fraction)
        if not policy.needs_more(check.kept_count, check.discarded, wanted):
            return check, clocks, pauses
        pauses.append(policy.pause_s(bool(check.kept[-1])))
        clocks.append(next(clock_series))


def test_retries_replace_discarded_samples_once_the_clock_recovers():
    # 30 samples wanted; samples 10..19 throttled, then the clock is back
    series = iter([1980] * 10 + [1700] * 10 + [1980] * 1000)
    policy = ThrottlePolicy(max_extra=50)
    check, clocks, pauses = sample_loop(series, 30, policy)
    assert check.kept_count == 30 and check.discarded == 10 and len(clocks) == 40
    assert not policy.still_throttled(check.kept_count, 30)
    assert pauses == [0.0] * 10  # the last sample was kept every time: no pause needed


def test_retries_pause_after_a_discarded_sample():
    series = iter([1980] * 30 + [1700] * 3 + [1980] * 1000)
    policy = ThrottlePolicy(max_extra=50, recovery_s=0.05)
    check, clocks, pauses = sample_loop(series, 30, policy)  # 30 kept at once: no retry
    assert pauses == [] and check.discarded == 0
    series = iter([1980] * 29 + [1700] * 4 + [1980] * 1000)
    check, clocks, pauses = sample_loop(series, 30, policy)
    # the 30th and three replacements throttled, each followed by a pause; the 4th is kept
    assert pauses == [0.05] * 4 and len(clocks) == 34 and check.kept_count == 30


def test_a_case_still_throttled_after_the_extras_is_flagged():
    series = iter([1980] * 10 + [1700] * 1000)
    policy = ThrottlePolicy(max_extra=25)
    check, clocks, _ = sample_loop(series, 30, policy)
    assert len(clocks) == 30 + 25           # the extras, and not one more
    assert check.kept_count == 10
    assert policy.still_throttled(check.kept_count, 30)


def test_nothing_discarded_needs_nothing_more():
    policy = ThrottlePolicy()
    assert not policy.needs_more(kept=30, discarded=0, wanted=30)
    assert policy.needs_more(kept=29, discarded=1, wanted=30)
    assert not policy.needs_more(kept=29, discarded=1 + policy.max_extra, wanted=30)


def test_check_returns_numpy_mask_for_indexing_times():
    times = np.array([5.0, 9.0, 5.1])
    check = check_clocks([1980, 1500, 1980])
    assert times[check.kept].tolist() == [5.0, 5.1]
