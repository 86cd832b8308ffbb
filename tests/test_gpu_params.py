"""On the GPU: every rung under every value of every parameter the registry allows (one
parameter varied at a time, the others at their defaults), not only the defaults:
unroll 1..64, loads 1..16, blocks_per_sm 1..32, l2_prefetch 0 and 1. Every value in
float32 and int32; the smallest, default and largest in the other dtypes. Exact inputs,
two sizes that are not multiples of anything, each case run three times."""

import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.sources import all_name_expressions
from reducebench.ladder.case import Case
from reducebench.ladder.registry import PARAM_RANGES, RUNGS

from gpu_support import check_cases, failures

pytestmark = pytest.mark.gpu

SIZES = (1000003, 2**24 + 3)
BLOCK = 256
EVERY_VALUE_DTYPES = ("float32", "int32")
TUNABLE = [r for r in RUNGS if r.params]


@pytest.fixture(scope="module")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


def values_for(name: str, default: int, every: bool) -> list[int]:
    low, high = PARAM_RANGES[name]
    return list(range(low, high + 1)) if every else sorted({low, default, high})


def variants(rung, dtype_name: str) -> list[dict[str, int]]:
    every = dtype_name in EVERY_VALUE_DTYPES
    found = []
    for name, default in rung.params.items():
        for value in values_for(name, default, every):
            params = {**rung.params, name: value}
            if params not in found:
                found.append(params)
    return found


def test_the_sweep_covers_every_allowed_value():
    for rung in TUNABLE:
        for name in rung.params:
            low, high = PARAM_RANGES[name]
            seen = {v[name] for v in variants(rung, "float32")}
            assert seen == set(range(low, high + 1)), (rung.name, name)


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("rung", TUNABLE, ids=lambda r: r.name)
def test_every_parameter_value_sums_exactly(backend, rung, dtype_name):
    from reducebench.device.compile import precompile

    if dtype_name not in rung.dtypes:
        pytest.skip(f"{rung.name} does not take {dtype_name}")
    dtype = DTYPES[dtype_name]
    sets = variants(rung, dtype_name)
    # one compile for every variant, instead of one per value
    precompile(rung, dtype, [e for p in sets for e in all_name_expressions(rung, dtype, BLOCK, p)])
    cases = [Case(rung, dtype, n, BLOCK, params) for params in sets for n in SIZES]
    records = check_cases(backend, cases)
    assert len(records) == len(sets) * len(SIZES)
    assert not failures(records), "\n".join(failures(records)[:20])
