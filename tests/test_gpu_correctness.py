"""On the GPU: every rung, dtype and block size it lists returns the exact sum of exact
inputs at sizes that are not multiples of the block or the warp, three times in a row; and a
correct rung stays within the statistical tolerance on random inputs."""

import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.case import Case
from reducebench.ladder.registry import RUNGS

from gpu_support import check_cases, failures

pytestmark = pytest.mark.gpu

SIZES = (1, 31, 32, 33, 1000, 2**20 - 1, 1000003, 2**24 + 3)
RANDOM_SIZES = (1000003, 2**24 + 3)


@pytest.fixture(scope="session")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


def every_block(rung, dtype, sizes):
    return [Case(rung, dtype, n, block, dict(rung.params))
            for block in ([0] if rung.is_library or rung.dispatch else rung.blocks) for n in sizes]


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("rung", RUNGS, ids=lambda r: r.name)
def test_rung_returns_the_exact_sum_at_awkward_sizes(backend, rung, dtype_name):
    if dtype_name not in rung.dtypes:
        pytest.skip(f"{rung.name} does not take {dtype_name}")
    records = check_cases(backend, every_block(rung, DTYPES[dtype_name], SIZES))
    if all(r.status == "skipped" for r in records):
        pytest.skip(records[0].error)
    assert not failures(records), "\n".join(failures(records)[:20])


@pytest.mark.parametrize("rung", RUNGS, ids=lambda r: r.name)
def test_rung_is_within_tolerance_on_random_inputs(backend, rung):
    records = check_cases(backend, every_block(rung, DTYPES["float32"], RANDOM_SIZES),
                          inputs="random")
    assert not failures(records), "\n".join(failures(records)[:20])
