"""Every kernel rung compiles with NVRTC, without a GPU: per rung, dtype and arch, one
program holding every block size's instantiations (both passes of a re-launch rung),
with no warning in the log and a lowered name for every name expression."""

from __future__ import annotations

import pytest

from reducebench.ladder import sources as kernels
from reducebench.ladder import nvrtc
from reducebench.core.dtypes import DTYPES
from reducebench.ladder.registry import RUNGS

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")
if not nvrtc.available():
    pytest.skip("NVRTC or the CUDA headers (cuda_fp16.h) are missing",
                allow_module_level=True)

ARCHS = ("sm_80", "sm_90")

CASES = [
    pytest.param(rung, dtype_name, arch, id=f"{rung.name}-{dtype_name}-{arch}")
    for rung in RUNGS
    if not rung.is_library and not rung.dispatch
    for dtype_name in rung.dtypes
    for arch in ARCHS
]


@pytest.mark.parametrize("rung, dtype_name, arch", CASES)
def test_rung_compiles(rung, dtype_name, arch):
    dtype = DTYPES[dtype_name]
    expressions: list[str] = []
    for block in rung.blocks:
        for expr in kernels.all_name_expressions(rung, dtype, block):
            if expr not in expressions:
                expressions.append(expr)
    source = kernels.expanded_source(rung.source)
    result = nvrtc.compile_source(source, expressions, arch=arch, file_name=rung.source,
                                  options=kernels.COMPILE_OPTIONS)
    assert result.ok, f"{rung.source} failed for {dtype_name} on {arch}:\n{result.log}"
    assert "warning" not in result.log.lower(), f"warnings:\n{result.log}"
    missing = [e for e in expressions if not result.lowered.get(e)]
    assert not missing, f"no lowered name for {missing}"


def test_every_kernel_rung_is_covered():
    covered = {case.values[0].name for case in CASES}
    assert covered == {r.name for r in RUNGS if not r.is_library and not r.dispatch}
