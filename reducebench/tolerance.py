"""How far a kernel's sum may be from the float64 reference and still count as correct.

Each addition in the accumulator's precision rounds with a relative error of at most u
(2^-24 for float). Rounding errors of a reduction are independent and of both signs, so
they grow like the square root of the number of additions on the longest path (the depth),
not like the depth itself; and with inputs of both signs the partial sums grow like
sqrt(n) times the average magnitude, not like sum(|x|). Putting the two together:

    tol = SAFETY * u * sum(|x|) * sqrt(depth / n),   depth = log2(n) + 1 + sqrt(n)

where sqrt(n) bounds the elements one thread may add sequentially before the tree (every
ladder rung, CUB and CuPy stay below it at the sizes they are run at). docs/verification.md
derives it and shows that it catches one dropped element of a 2^24-element float32 input
(whose elements are at least 0.5 in magnitude) while passing every correct order of
summation. Integers are exact: tol = 0.
"""

from __future__ import annotations

import math

from reducebench.dtypes import DType

SAFETY = 8.0


def depth_bound(n: int) -> float:
    return math.log2(max(n, 1)) + 1.0 + math.sqrt(n)


def tolerance(n: int, dtype: DType, abs_sum: float) -> float:
    if not dtype.is_float:
        return 0.0
    return SAFETY * dtype.unit_roundoff * abs_sum * math.sqrt(depth_bound(n) / max(n, 1))


def wrap_int32(value: int) -> int:
    """An int32 accumulator wraps modulo 2^32; compare against the wrapped reference."""
    return (int(value) + 2**31) % 2**32 - 2**31


def check(result: float, reference: float, n: int, dtype: DType,
          abs_sum: float) -> tuple[bool, float, float]:
    """(verified, |error|, tolerance). NaN or inf never passes."""
    if not dtype.is_float:
        error = abs(int(result) - wrap_int32(int(reference)))
        return error == 0, float(error), 0.0
    tol = tolerance(n, dtype, abs_sum)
    if not math.isfinite(result):
        return False, math.inf, tol
    error = abs(float(result) - float(reference))
    return error <= tol, error, tol
