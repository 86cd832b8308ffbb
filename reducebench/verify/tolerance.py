"""How far a kernel's sum may be from the float64 reference of a random input and still
count as correct (exact inputs need no tolerance: verify.py).

Every addition in the accumulator's precision rounds with a relative error of at most u
(2^-24 for float), of either sign and independent of the others, so rounding errors add up
like a random walk: the error's standard deviation is about u * sqrt(sum of s_i^2 / 3) over
the partial sums s_i the kernel forms. For inputs of both signs with rms r and sum S, a
reduction in which each thread first adds `chain` elements in sequence, then a tree of
depth log2(n), and finally `atomics` block or warp totals one after the other into a single
accumulator, forms partial sums whose squares add up to at most about

    n * r^2 * (chain + log2(n) + 1 + atomics / 2)   (the random-walk part; the running
                                                     atomic total walks too)
    S^2 * (1 + chain / sqrt(3n) + atomics / 3)^2    (the mean part, bounded generously)

tol is SIGMAS standard deviations of that. r is estimated from sum(|x|) / n (exact for the
harness's inputs up to 4%). docs/verification.md has the derivation and the numbers: for a
tree rung on 2^24 float32 elements the tolerance is about 0.01, far below the 0.5 that the
smallest element would move the sum by, so one dropped or doubled element fails. Rungs that
add half a million warp totals through atomics (warp_atomic) are noisier by construction;
their tolerance grows with them, which the table shows.
Integers are exact: tol = 0 (modulo 2^32, as an int32 accumulator wraps).
"""

from __future__ import annotations

import math

from reducebench.core.dtypes import DType

SIGMAS = 5.0
RMS_OVER_MEAN_ABS = 1.05  # sqrt(E[x^2]) / E[|x|] for magnitudes uniform in [0.5, 1.5)


def tolerance(n: int, dtype: DType, abs_sum: float, reference: float = 0.0,
              chain: int = 1, atomics: int = 0) -> float:
    if not dtype.is_float:
        return 0.0
    n = max(n, 1)
    rms = RMS_OVER_MEAN_ABS * abs_sum / n
    depth = math.log2(n) + 1
    walk = rms * math.sqrt(n * (chain + depth + atomics / 2))
    mean = abs(reference) * (1 + chain / math.sqrt(3 * n) + math.sqrt(atomics / 3))
    return SIGMAS * dtype.unit_roundoff * (walk + mean)



def wrap_int32(value: int) -> int:
    """An int32 accumulator wraps modulo 2^32; compare against the wrapped reference."""
    return (int(value) + 2**31) % 2**32 - 2**31
