"""Past 2^31 elements: every rung either sums correctly (64-bit indices all the way) or
refuses the size with a clear message; none computes garbage. Needs about 9 GiB free."""

import pytest

from reducebench.dtypes import DTYPES
from reducebench.errors import UsageError
from reducebench.inputs import make_input
from reducebench.registry import RUNGS
from reducebench.runner import Case, CaseSkipped
from reducebench.tolerance import check

pytestmark = pytest.mark.gpu

HUGE = 2**31 + 5


@pytest.fixture(scope="module")
def huge_input():
    from reducebench.device import open_backend

    backend = open_backend(0)
    if backend.free_memory() < 10 * 2**30:
        pytest.skip("needs about 10 GiB of free device memory")
    dtype = DTYPES["float32"]
    host = make_input(HUGE, dtype, seed=31)
    return backend, host, backend.upload(host, dtype)


@pytest.mark.parametrize("rung", RUNGS, ids=lambda r: r.name)
def test_rung_sums_past_two_to_the_31(huge_input, rung):
    backend, host, x = huge_input
    dtype = DTYPES["float32"]
    block = 0 if rung.is_library else 256
    try:
        results, plan = backend.verify_once(Case(rung, dtype, HUGE, block, dict(rung.params)), x)
    except CaseSkipped as exc:  # e.g. CuPy's CUB binding stops at 2^31-1 elements
        assert "2^31" in str(exc) or "not installed" in str(exc)
        return
    except UsageError as exc:
        assert "blocks" in str(exc) or "at most" in str(exc)
        return
    for value in results:
        ok, error, tol = check(value, host.reference, HUGE, dtype, host.abs_sum,
                               plan.chain, plan.atomics)
        assert ok, f"{value!r} vs {host.reference!r}: error {error:.4g} > {tol:.4g}"
