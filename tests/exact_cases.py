"""Exact inputs that are slow to make, made once per test session and shared by the
modules that need them (test_inputs.py, test_input_boundaries.py)."""

from functools import lru_cache

from reducebench.core.dtypes import DTYPES
from reducebench.verify.inputs import HostInput, case_inputs

# The largest n for which every exact input is exact in any order with float
# accumulators, worked out in docs/verification.md: 2^24 - 1 positives and at most
# 2^24 - 2 negatives. Its 2^24 - 2 random -1 positions take seconds to draw.
LAST_GUARANTEED = 2**25 - 3


@lru_cache(maxsize=1)
def largest_guaranteed() -> list[HostInput]:
    return case_inputs(LAST_GUARANTEED, DTYPES["float32"], 8)
