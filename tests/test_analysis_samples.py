"""show-samples' figures of one case (analysis/samples_summary.py) at their edges, worked by
hand: no sample kept, one kept, times below a microsecond or of zero, and parameters
whose values hold "=" or several settings."""

from __future__ import annotations

import math

import pytest

from reducebench.analysis.samples_summary import (SampleSummary, case_label, drift_pct, matches,
                                          summarize_samples)

nan = math.nan
TWO_SETTINGS = ("vector_load", "float32", 1024, 256, "loads=4;mask=a=b")


def test_drift_of_times_below_a_microsecond_and_of_zero():
    assert drift_pct([0.5, 0.6, 1.0]) == pytest.approx(100.0)      # 1.0 over 0.5
    assert math.isnan(drift_pct([0.0, 1.0, 2.0]))                   # nothing to divide by


def test_every_sample_is_kept_unless_said():
    s = summarize_samples([2.0, 4.0, 6.0])
    assert (s.count, s.kept, s.discarded, s.median) == (3, 3, 0, 4.0)


def test_no_sample_kept_is_all_nan_but_the_counts():
    s = summarize_samples([1.0, 2.0], [False, False])
    assert (s.count, s.kept, s.discarded) == (2, 0, 2)
    assert all(math.isnan(v) for v in (s.median, s.min, s.max, s.noise_pct, s.drift_pct))
    assert type(s) is SampleSummary


def test_one_kept_sample_has_no_noise_and_two_have_their_spread():
    one = summarize_samples([0.5, 9.0], [True, False])
    assert (one.median, one.min, one.max, one.noise_pct) == (0.5, 0.5, 0.5, 0.0)
    assert math.isnan(one.drift_pct)
    # 0.5 and 0.7: mean 0.6, sample stdev sqrt(0.02) = 0.1414, noise 23.57%
    two = summarize_samples([0.5, 0.7])
    assert two.noise_pct == pytest.approx(100 * math.sqrt(0.02) / 0.6)
    assert summarize_samples([0.0, 0.0]).noise_pct == math.inf


def test_a_label_and_a_match_with_several_settings_and_an_equals_sign_in_a_value():
    assert case_label(TWO_SETTINGS) == "vector_load float32 n=2^10 block=256 loads=4 mask=a=b"
    assert matches(TWO_SETTINGS, "mask=a=b loads=4")
    assert not matches(TWO_SETTINGS, "mask=a") and not matches(TWO_SETTINGS, "loads=4;mask")
