"""The registry and cuda_src/ agree: every rung's source file exists, opens with its
`// Rung <name>` comment, and defines the kernel the registry names."""

from __future__ import annotations

import re

import pytest

from reducebench.ladder import sources as kernels
from reducebench.ladder.registry import ROW_RUNGS, RUNGS

KERNEL_RUNGS = [pytest.param(r, id=r.name) for r in (*RUNGS, *ROW_RUNGS)
                if not r.is_library and not r.dispatch]


@pytest.mark.parametrize("rung", KERNEL_RUNGS)
def test_source_exists(rung):
    assert rung.source and rung.kernel
    assert kernels.source_path(rung.source).is_file(), f"missing cuda_src/{rung.source}"


@pytest.mark.parametrize("rung", KERNEL_RUNGS)
def test_source_opens_with_rung_comment(rung):
    first = kernels.source_path(rung.source).read_text().splitlines()[0]
    # A file may hold several rungs ("// Rung a and rung b: ..."): the name is one of them.
    match = re.match(r"// Rung (.+?):", first)
    assert match, f"{rung.source} should open with '// Rung {rung.name}: ...', not {first!r}"
    names = re.split(r",\s*|\s+and\s+(?:rung\s+)?", match.group(1))
    assert rung.name in names, f"{rung.source} opens with {first!r}, not rung {rung.name}"


@pytest.mark.parametrize("rung", KERNEL_RUNGS)
def test_source_defines_kernel(rung):
    text = kernels.source_path(rung.source).read_text()
    # attributes between `void` and the name: __launch_bounds__, __cluster_dims__
    attributes = r"((__launch_bounds__|__cluster_dims__)\([^)]*\)\s+)*"
    pattern = rf"__global__\s+void\s+{attributes}{re.escape(rung.kernel)}\s*\("
    assert re.search(pattern, text), f"{rung.source} does not define {rung.kernel}"
