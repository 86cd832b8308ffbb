"""On the GPU: every rung, dtype and block size it lists gives the right sum at sizes that
are not multiples of the block or the warp, and keeps giving it on a second run."""

import pytest

from reducebench.dtypes import DTYPES
from reducebench.inputs import make_input
from reducebench.registry import RUNGS
from reducebench.runner import Case, CaseSkipped
from reducebench.tolerance import check

pytestmark = pytest.mark.gpu

SIZES = (1, 31, 32, 33, 1000, 2**20 - 1, 1000003, 2**24 + 3)


@pytest.fixture(scope="session")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


@pytest.fixture(scope="session")
def device_inputs(backend):
    cache = {}

    def get(n, dtype):
        key = (n, dtype.name)
        if key not in cache:
            host = make_input(n, dtype, seed=n * 7919 + len(dtype.name))
            cache[key] = (host, backend.upload(host, dtype))
        return cache[key]

    return get


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("rung", RUNGS, ids=lambda r: r.name)
def test_rung_sums_correctly_at_awkward_sizes(backend, device_inputs, rung, dtype_name):
    dtype = DTYPES[dtype_name]
    if dtype_name not in rung.dtypes:
        pytest.skip(f"{rung.name} does not take {dtype_name}")
    failures = []
    for block in ([0] if rung.is_library else rung.blocks):
        for n in SIZES:
            host, x = device_inputs(n, dtype)
            try:
                results, plan = backend.verify_once(
                    Case(rung, dtype, n, block, dict(rung.params)), x)
            except CaseSkipped as exc:
                pytest.skip(str(exc))
            for value in results:
                ok, error, tol = check(value, host.reference, n, dtype, host.abs_sum,
                                       plan.chain, plan.atomics)
                if not ok:
                    failures.append(f"block={block} n={n}: {value!r} vs {host.reference!r} "
                                    f"(error {error:.3g}, tolerance {tol:.3g})")
    assert not failures, "\n".join(failures[:20])
