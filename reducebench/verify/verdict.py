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
