"""The one verification path: `run`, `check` and `sanitize` all judge a case's values here.

With exact inputs (the default) the reference is exact and so must be every value: any
difference fails. With random inputs the values carry rounding error; they pass within
the statistical tolerance of tolerance.py, and the error itself is reported as accuracy
(relative error, and ulps of the accumulator at the reference). NaN or inf never passes.
A guard found overwritten (a write outside a buffer) fails whatever the values, and a
value that shows a guard value entered the sum is named as a read outside (guards.py).
docs/verification.md says what each regime guarantees."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from reducebench.core.dtypes import DType
from reducebench.verify.guard_regions import READ_OUTSIDE, guard_read_evidence
from reducebench.verify.inputs import HostInput
from reducebench.ladder.plan import Plan
from reducebench.verify.tolerance import tolerance, wrap_int32
from reducebench.core.numbers import number


@dataclass(frozen=True)
class Verdict:
    ok: bool
    abs_error: float       # the largest |value - reference| over the values checked
    tolerance: float       # 0 for exact references
    rel_error: float       # abs_error / |reference|
    ulps: float            # abs_error in units in the last place of the reference
    message: str = ""      # why it failed, for the record's error column


def verify(values: list, host: HostInput, dtype: DType, plan: Plan,
           guard_breaches: Sequence[str] = ()) -> Verdict:
    """Judge every value of a case against its input's reference, and the guards the
    executor found overwritten after its verified runs (guards.overwritten)."""
    if not values:
        raise ValueError("nothing to verify")
    reference = expected(host, dtype)
    tol = 0.0 if host.exact else tolerance(host.data.size, dtype, host.abs_sum, reference,
                                           plan.chain, plan.atomics)
    errors = [error_of(v, reference, dtype) for v in values]
    worst = max(errors)
    breaches = list(dict.fromkeys(guard_breaches))  # each verified run finds them again
    ok = worst <= tol and not breaches
    reasons = breaches + ([value_message(values, reference, worst, tol, host, dtype)]
                          if worst > tol else [])
    message = "; ".join(reasons)
    return Verdict(ok, worst, tol, relative(worst, reference), ulps(worst, reference, dtype),
                   message)


def value_message(values: list, reference, worst: float, tol: float, host: HostInput,
                  dtype: DType) -> str:
    """Why the values fail: the guard read they show, or the result against the reference."""
    later = f" (later runs: {', '.join(map(repr, values[1:]))})" if len(values) > 1 else ""
    compared = f"result {values[0]!r}{later} vs reference {reference!r}"
    for value in values:
        evidence = guard_read_evidence(value, reference, dtype.is_float)
        if evidence:
            return f"{READ_OUTSIDE}: {compared}; {evidence}"
    rule = "the reference is exact" if host.exact else f"tolerance {number(tol, '.4g')}"
    return f"{compared}: error {number(worst, '.4g')} where {rule}"


def expected(host: HostInput, dtype: DType) -> float | int:
    """What a correct kernel returns: int32 accumulators wrap modulo 2^32."""
    return wrap_int32(host.reference) if not dtype.is_float else host.reference


def error_of(value, reference, dtype: DType) -> float:
    if not dtype.is_float:
        return float(abs(int(value) - int(reference)))
    value = float(value)
    if not math.isfinite(value):
        return math.inf
    return abs(value - float(reference))


def relative(error: float, reference) -> float:
    return error / abs(float(reference)) if reference else math.inf if error else 0.0


def ulps(error: float, reference, dtype: DType) -> float:
    """The error in units in the last place of the accumulator's value nearest the
    reference: comparable across rungs and sizes of one dtype."""
    if not dtype.is_float:
        return error
    acc = np.float64 if dtype.acc_name == "float64" else np.float32
    unit = float(np.spacing(acc(abs(float(reference)))))
    return error / unit if unit else math.inf


def verify_rows(values: list, host: HostInput, dtype: DType,
                guard_breaches: Sequence[str] = (), chain: int = 1) -> Verdict:
    """Judge a row case: every run's value of every row against that row's sum
    (host.row_references, int32 wrapping as its accumulator does): exactly for exact
    inputs, within each row's rounding bound for random ones (tolerance.py, a row of
    COLS elements whose lanes each add `chain` of them in sequence). The message names
    the first wrong row (its index, what it should hold, what it holds) and how many rows
    are wrong; a value that shows a guard entered a row's sum says so."""
    if not values:
        raise ValueError("nothing to verify")
    if host.row_references is None:
        raise ValueError("a row case needs an input with a reference per row")
    wanted = expected_rows(host, dtype)
    bounds = row_tolerances(host, dtype, chain)
    reasons = list(dict.fromkeys(guard_breaches))
    worst = 0.0
    for run, got in enumerate(values):
        errors = row_errors(np.asarray(got), wanted, dtype)
        worst = max(worst, float(errors.max()))
        wrong = np.flatnonzero(errors > bounds)
        if wrong.size and len(reasons) == len(dict.fromkeys(guard_breaches)):
            reasons.append(wrong_rows_message(wrong, wanted, np.asarray(got), run,
                                              len(values), dtype, bounds))
    peak = np.abs(wanted).max().item() if wanted.size else 0
    return Verdict(not reasons, worst, float(bounds.max()), relative(worst, peak),
                   ulps(worst, peak, dtype), "; ".join(reasons))


def row_tolerances(host: HostInput, dtype: DType, chain: int) -> np.ndarray:
    """Each row's bound: 0 for exact inputs, else tolerance.py's for a row of COLS
    elements, its magnitudes and its sum."""
    rows = len(host.row_references)
    if host.exact or host.row_abs_sums is None:
        return np.zeros(rows)
    cols = host.data.size // rows
    return np.asarray(tolerance(cols, dtype, host.row_abs_sums,
                                np.asarray(host.row_references, dtype=np.float64), chain),
                      dtype=np.float64) * np.ones(rows)


def expected_rows(host: HostInput, dtype: DType) -> np.ndarray:
    """Each row's sum as a correct kernel leaves it: exact, in int64 (int32 wraps modulo
    2^32, as tolerance.wrap_int32), or the float64 sum of a random row. Whole arrays, not
    a Python number a row: a case of 2^24 rows is judged in milliseconds."""
    if not host.exact:
        return np.asarray(host.row_references, dtype=np.float64)
    sums = np.asarray(host.row_references, dtype=np.int64)
    return sums if dtype.is_float else (sums + 2**31) % 2**32 - 2**31


def row_errors(got: np.ndarray, wanted: np.ndarray, dtype: DType) -> np.ndarray:
    """|got - wanted| per row; inf for a row that is not a finite number or for a run
    that returned the wrong number of rows."""
    if got.shape != wanted.shape:
        return np.full(len(wanted), math.inf)
    if not dtype.is_float:
        return np.abs(got.astype(np.int64) - wanted.astype(np.int64)).astype(float)
    as_float = got.astype(np.float64)
    errors = np.abs(as_float - wanted.astype(np.float64))
    return np.where(np.isfinite(as_float), errors, math.inf)


def wrong_rows_message(wrong: np.ndarray, wanted: np.ndarray, got: np.ndarray, run: int,
                       runs: int, dtype: DType, bounds: np.ndarray | None = None) -> str:
    """'row 5 of 1000: expected 123, got 456 (3 of 1000 rows wrong)', with the run when
    it was not the first, the row's tolerance where it has one, and what a guard value
    in the row's sum says."""
    rows = len(wanted)
    if got.shape != (rows,):
        return f"{got.size} values for {rows} rows (run {run + 1} of {runs})"
    row = int(wrong[0])
    value, expected = got[row].item(), wanted[row].item()
    said = f"row {row} of {rows}: expected {expected!r}, got {value!r}"
    if bounds is not None and bounds[row] > 0:
        error = error_of(value, expected, dtype)
        said += f" (error {number(error, '.4g')} where tolerance {number(bounds[row], '.4g')})"
    evidence = guard_read_evidence(value, expected, dtype.is_float)
    if evidence:
        said = f"{READ_OUTSIDE}: {said}; {evidence}"
    later = f", run {run + 1} of {runs}" if run else ""
    return f"{said} ({wrong.size} of {rows} rows wrong{later})"
