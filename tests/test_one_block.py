"""The one-block rung without a GPU: its kernel compiles with NVRTC for every dtype,
block size and loads value it may be given, without warnings; and a one-block plan is
one launch of one block that writes the result (executed on the host, it sums exactly).
Its results on the device are checked by tests/test_gpu_tuning.py."""

from __future__ import annotations

import pytest

from reducebench.ladder import sources as kernels
from reducebench.ladder import nvrtc
from reducebench.core.dtypes import DTYPES
from reducebench.ladder.geometry import BLOCK_SIZES
from reducebench.ladder.registry import LADDER

SOURCE = "18_one_block.cu"
LOADS = (1, 2, 4, 8, 16)

needs_nvrtc = pytest.mark.skipif(
    not nvrtc.available(), reason="NVRTC or the CUDA headers are missing")


@needs_nvrtc
@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_one_block_compiles_for_every_block_and_loads(dtype_name):
    dtype = DTYPES[dtype_name]
    expressions = [f"reduce_one_block<{dtype.cpp}, {dtype.acc_cpp}, {block}, {loads}>"
                   for block in BLOCK_SIZES for loads in LOADS]
    result = nvrtc.compile_source(kernels.expanded_source(SOURCE), expressions, arch="sm_90",
                                  file_name=SOURCE, options=kernels.COMPILE_OPTIONS)
    assert result.ok, result.log
    assert "warning" not in result.log.lower(), result.log
    assert all(result.lowered.get(e) for e in expressions)


@pytest.mark.skipif("one_block" not in LADDER, reason="one_block is not in the registry yet")
@pytest.mark.parametrize("n", [1, 31, 4096, 1000003])
def test_a_one_block_plan_is_one_launch_of_one_block_into_the_result(n):
    from reducebench.measuring.settings import RunSettings
    from reducebench.measuring.hostexec import HostBackend
    from reducebench.ladder.case import Case
    from reducebench.measuring.runner import run

    rung = LADDER["one_block"]
    plan = rung.plan(n, DTYPES["float32"], 256, 132)
    assert [(launch.grid, launch.dst) for launch in plan.launches] == [(1, "result")]
    assert plan.zero_before == () and not plan.ping_pong and plan.atomics == 0
    cases = [Case(rung, DTYPES[d], n, block, dict(rung.params))
             for d in ("float32", "int32") for block in (32, 1024)]
    records = run(RunSettings(timed=False, seed=7), HostBackend(), lambda r: None, cases=cases)
    assert [r.status for r in records] == ["ok"] * len(cases)
