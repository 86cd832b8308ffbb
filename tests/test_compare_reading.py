"""What `compare` and `calibrate` read besides the rows (analysis/compare/reading.py): the
threshold checked, each file's samples or the note that says why it has none, and the
gates refused with --baseline, each refusal in its exact words."""

from __future__ import annotations

import math

import pytest

from reducebench.analysis.compare.reading import (check_threshold, refuse_gates_with_baseline,
                                                  samples_by_case)
from reducebench.core.errors import UsageError
from reducebench.results.samples_file import COLUMNS, CaseSamples, SamplesWriter


@pytest.mark.parametrize("threshold", [0.0, 2.0, 0.5])
def test_a_threshold_of_zero_or_more_is_kept(threshold):
    assert check_threshold(threshold) == threshold


@pytest.mark.parametrize("threshold, shown", [(-1.0, "-1"), (-0.5, "-0.5"), (math.inf, "inf"),
                                              (math.nan, "-")])
def test_a_threshold_below_zero_or_not_finite_is_refused(threshold, shown):
    with pytest.raises(UsageError) as refused:
        check_threshold(threshold)
    assert str(refused.value) == f"--threshold {shown}: expected a percentage of 0 or more"


def test_the_samples_of_each_file_or_a_note_for_an_unusable_samples_file(tmp_path):
    with_samples = tmp_path / "a.csv"
    SamplesWriter(tmp_path / "a.samples.csv").write_case(
        "r1", ("shfl", "float32", 1024, 256, ""), CaseSamples(times_us=[3.0, 4.0, 5.0]))
    missing = tmp_path / "b.csv"                        # no samples file: the rows say so
    header_only = tmp_path / "c.csv"
    (tmp_path / "c.samples.csv").write_text(",".join(COLUMNS) + "\n")
    notes = []
    found = samples_by_case([with_samples, missing, header_only], notes.append)
    assert list(found) == [with_samples, missing, header_only]
    assert list(found[with_samples]) == [("shfl", "float32", 1024, 256, "")]
    assert list(found[with_samples][("shfl", "float32", 1024, 256, "")]) == [3.0, 4.0, 5.0]
    assert found[missing] is None and found[header_only] is None
    assert notes == [f"reducebench: note: {tmp_path / 'c.samples.csv'}: no samples in the "
                     "file (a header only); its rows are judged by the ratio rule"]


@pytest.mark.parametrize("gate, threshold, named", [
    (True, False, "--fail-on-regression"), (False, True, "--threshold"),
    (True, True, "--fail-on-regression and --threshold")])
def test_gates_are_refused_with_a_baseline_naming_each(gate, threshold, named):
    with pytest.raises(UsageError) as refused:
        refuse_gates_with_baseline(gate, threshold)
    assert str(refused.value) == (
        f"{named} judge NEW against BASE; --baseline compares rungs within one run and "
        "judges nothing. Give BASE NEW to gate on regressions")


def test_no_gate_no_refusal():
    assert refuse_gates_with_baseline(False, False) is None
