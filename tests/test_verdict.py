"""What a case's verdict records besides pass or fail: the error, the tolerance it was
judged against, the relative error, the error in ulps of the accumulator at the
reference, and the message that goes into the error column. Every expected value is
worked out by hand in the comments (float32 spacing at 1024 = 2^10 * 2^-23 = 2^-13;
float64 spacing at 1024 = 2^10 * 2^-52 = 2^-42)."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.plan import Plan
from reducebench.verify.verdict import row_errors, verify, verify_rows, wrong_rows_message

F32, F64, F16, I32 = (DTYPES[name] for name in ("float32", "float64", "float16", "int32"))


def host(reference, exact=True, n=2**16, abs_sum=2**16 / 1.05):
    return SimpleNamespace(data=SimpleNamespace(size=n), reference=reference,
                           abs_sum=abs_sum, exact=exact)


def test_an_exact_reference_tolerates_nothing_and_the_message_shows_every_run():
    verdict = verify([1024.5, 1024.0, 1023.0], host(1024.0), F32, Plan())
    assert not verdict.ok
    assert verdict.abs_error == 1.0                 # the worst of 0.5, 0, 1
    assert verdict.tolerance == 0.0
    assert verdict.rel_error == 2.0**-10            # 1 / 1024
    assert verdict.ulps == 2.0**13                  # 1 / 2^-13
    assert verdict.message == ("result 1024.5 (later runs: 1024.0, 1023.0) vs reference "
                               "1024.0: error 1 where the reference is exact")


def test_two_runs_show_the_second_as_the_later_run():
    verdict = verify([1024.5, 1024.25], host(1024.0), F32, Plan())
    assert verdict.message == ("result 1024.5 (later runs: 1024.25) vs reference 1024.0: "
                               "error 0.5 where the reference is exact")


def test_one_run_has_no_later_runs_in_its_message():
    verdict = verify([1024.5], host(1024.0), F32, Plan())
    assert verdict.message == "result 1024.5 vs reference 1024.0: error 0.5 where the " \
                              "reference is exact"
    assert verdict.ulps == 2.0**12 and verdict.rel_error == 2.0**-11


def test_a_random_input_fails_beyond_its_tolerance_and_says_which():
    # n = 2^16, r = 1, S = 0: tol = 5 * 2^-24 * 256 * sqrt(18) = 3.2369e-4
    verdict = verify([0.001], host(0.0, exact=False), F32, Plan(chain=1, atomics=0))
    assert not verdict.ok
    assert verdict.tolerance == pytest.approx(5 * math.sqrt(18) / 2**16, rel=1e-12)
    assert verdict.message == "result 0.001 vs reference 0.0: error 0.001 where tolerance " \
                              "0.0003237"
    assert verdict.rel_error == math.inf            # an error where the sum is 0
    assert verify([0.0001], host(0.0, exact=False), F32, Plan()).ok


def test_small_errors_and_tolerances_are_written_with_a_lower_case_exponent():
    # as above with a thousandth of the magnitudes: tol = 3.2369e-7
    verdict = verify([1e-05], host(0.0, exact=False, abs_sum=2**16 / 1.05 / 1000), F32, Plan())
    assert verdict.message == ("result 1e-05 vs reference 0.0: error 1e-05 where tolerance "
                               "3.237e-07")


def test_the_tolerance_counts_the_reference_and_the_plan():
    # S = 2^20 on 2^20 elements, r = 1.05, atomics 3072, chain 4 (test_stats_tolerance:
    # tol = 10.32...): 10 off passes, 11 off fails
    big = host(float(2**20), exact=False, n=2**20, abs_sum=float(2**20))
    plan = Plan(chain=4, atomics=3072)
    assert verify([2.0**20 + 10], big, F32, plan).ok
    assert not verify([2.0**20 + 11], big, F32, plan).ok
    assert 10.3 < verify([2.0**20 + 11], big, F32, plan).tolerance < 10.4


def test_a_correct_value_passes_with_no_message():
    verdict = verify([1024.0], host(1024.0), F32, Plan())
    assert verdict.ok and verdict.message == ""
    assert (verdict.abs_error, verdict.rel_error, verdict.ulps) == (0.0, 0.0, 0.0)
    zero = verify([0.0], host(0.0), F32, Plan())
    assert zero.ok and zero.rel_error == 0.0


def test_ulps_are_of_the_accumulator():
    # float64 accumulates in float64: 1 / 2^-42; float16 accumulates in float32: 1 / 2^-13
    assert verify([1025.0], host(1024.0), F64, Plan()).ulps == 2.0**42
    assert verify([1025.0], host(1024.0), F16, Plan()).ulps == 2.0**13


def test_integers_count_their_error_in_whole_units():
    verdict = verify([1027], host(1024), I32, Plan())
    assert not verdict.ok
    assert (verdict.abs_error, verdict.ulps, verdict.rel_error) == (3.0, 3.0, 3 / 1024)


def test_nothing_to_verify_is_refused():
    with pytest.raises(ValueError, match="^nothing to verify$"):
        verify([], host(1024.0), F32, Plan())


# -- row cases (verify_rows): one sum a row, judged row by row --------------------------

def row_host(sums):
    """An exact input of len(sums) rows of 4 elements whose rows sum to `sums`."""
    from reducebench.verify.inputs import HostInput

    return HostInput(np.zeros(4 * len(sums), dtype=np.float32), int(sum(sums)),
                     float(sum(abs(s) for s in sums)), 0,
                     row_references=np.asarray(sums, dtype=np.int64))


def test_a_row_cases_relative_error_and_ulps_are_of_its_largest_row_and_a_later_run_named():
    # rows 1024, -2048, 5; the second run's row 0 off by 0.5: worst 0.5, peak |-2048|,
    # relative 0.5 / 2^11 = 2^-12, float32 spacing at 2^11 = 2^11 * 2^-23 = 2^-12: 2^11 ulps
    right = np.array([1024.0, -2048.0, 5.0], dtype=np.float32)
    off = np.array([1024.5, -2048.0, 5.0], dtype=np.float32)
    verdict = verify_rows([right, off], row_host([1024, -2048, 5]), F32)
    assert not verdict.ok
    assert (verdict.abs_error, verdict.tolerance) == (0.5, 0.0)
    assert (verdict.rel_error, verdict.ulps) == (2.0**-12, 2.0**11)
    assert verdict.message == "row 0 of 3: expected 1024, got 1024.5 (1 of 3 rows wrong, " \
                              "run 2 of 2)"


def test_a_run_with_the_wrong_number_of_rows_fails_every_row_and_says_how_many_it_gave():
    verdict = verify_rows([np.zeros(2, dtype=np.float32)], row_host([1, 2, 3]), F32)
    assert not verdict.ok and verdict.abs_error == math.inf
    assert verdict.message == "2 values for 3 rows (run 1 of 1)"
    errors = row_errors(np.zeros(2, dtype=np.int32), np.array([1, 2, 3], dtype=np.int64), I32)
    assert errors.tolist() == [math.inf] * 3


def test_a_wrong_row_of_a_random_input_names_its_error_and_tolerance():
    # row 1: 2 + 2^-20 for 2; error 2^-20 = 9.5367e-07 against 2^-30 = 9.3132e-10
    wanted = np.array([1.0, 2.0, 3.0])
    got = np.array([1.0, 2.0 + 2.0**-20, 3.0])
    said = wrong_rows_message(np.array([1]), wanted, got, 0, 1, F64, np.full(3, 2.0**-30))
    assert said == ("row 1 of 3: expected 2.0, got 2.0000009536743164 (error 9.537e-07 "
                    "where tolerance 9.313e-10) (1 of 3 rows wrong)")
    # an exact row's bound is 0: no tolerance to name
    assert wrong_rows_message(np.array([1]), wanted, got, 0, 1, F64, np.zeros(3)) == \
        "row 1 of 3: expected 2.0, got 2.0000009536743164 (1 of 3 rows wrong)"
