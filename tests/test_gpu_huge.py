"""Past 2^31 elements: every rung either returns the exact sum (64-bit indices all the
way) or refuses the size with a clear reason; none computes garbage. Needs about 9 GiB
free. At this size an exact float32 input is +-1 with balanced signs: exact for any order
that does not depend on the values (docs/verification.md)."""

import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.case import Case
from reducebench.ladder.registry import RUNGS

from gpu_support import check_cases, failures

pytestmark = pytest.mark.gpu

HUGE = 2**31 + 5


@pytest.fixture(scope="module")
def backend():
    from reducebench.device import open_backend

    backend = open_backend(0)
    if backend.free_memory() < 10 * 2**30:
        pytest.skip("needs about 10 GiB of free device memory")
    return backend


def test_every_rung_sums_past_two_to_the_31_or_says_why_not(backend):
    f32 = DTYPES["float32"]
    cases = [Case(r, f32, HUGE, 0 if r.is_library else 256, dict(r.params)) for r in RUNGS]
    records = check_cases(backend, cases)
    assert not failures(records), "\n".join(failures(records))
    for r in records:
        if r.status == "skipped":  # e.g. CuPy's CUB binding stops at 2^31-1 elements
            assert "2^31" in r.error or "blocks" in r.error or "not installed" in r.error, \
                f"{r.rung}: {r.error}"
