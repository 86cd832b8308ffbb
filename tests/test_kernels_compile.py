"""Every kernel rung compiles with NVRTC, without a GPU: per rung, dtype and arch, one
program holding every block size's instantiations (both passes of a re-launch rung),
with no warning in the log and a lowered name for every name expression."""

from __future__ import annotations

import pytest

from reducebench.ladder import sources as kernels
from reducebench.ladder import nvrtc
from reducebench.core.dtypes import DTYPES
from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS, RUNGS

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")
if not nvrtc.available():
    pytest.skip("NVRTC or the CUDA headers (cuda_fp16.h) are missing",
                allow_module_level=True)

ARCHS = ("sm_80", "sm_90")



def runs_on(rung, arch: str) -> bool:
    """Whether the rung is for this arch (sm_80: 8.0): row_cluster needs 9.0."""
    return rung.min_cc is None or int(arch.removeprefix("sm_")) >= 10 * rung.min_cc[0] + \
        rung.min_cc[1]


CASES = [
    pytest.param(rung, dtype_name, arch, id=f"{rung.name}-{dtype_name}-{arch}")
    for rung in (*RUNGS, *ROW_RUNGS)
    if not rung.is_library and not rung.dispatch
    for dtype_name in rung.dtypes
    for arch in ARCHS
    if runs_on(rung, arch)
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
    assert covered == {r.name for r in (*RUNGS, *ROW_RUNGS)
                       if not r.is_library and not r.dispatch}


@pytest.mark.parametrize("dtype_name", ["float32", "int32", "float16", "bfloat16", "float64"])
def test_the_row_group_compiles_at_every_width(dtype_name):
    """row_group's width is a template parameter: each power of two from 2 to 16, at
    every block size (a width the template refuses fails its static_assert)."""
    rung, dtype = ROW_LADDER["row_group"], DTYPES[dtype_name]
    expressions = sorted({rung.name_expression(dtype.cpp, dtype.acc_cpp, block, {"width": w})
                          for block in rung.blocks for w in (2, 4, 8, 16)})
    result = nvrtc.compile_source(kernels.expanded_source(rung.source), expressions,
                                  arch="sm_90", file_name=rung.source,
                                  options=kernels.COMPILE_OPTIONS)
    assert result.ok and "warning" not in result.log.lower(), result.log
    assert all(result.lowered.get(e) for e in expressions)


def test_the_row_group_refuses_a_width_that_is_not_a_power_of_two():
    rung, dtype = ROW_LADDER["row_group"], DTYPES["float32"]
    expression = rung.name_expression(dtype.cpp, dtype.acc_cpp, 256, {"width": 6})
    result = nvrtc.compile_source(kernels.expanded_source(rung.source), [expression],
                                  arch="sm_90", file_name=rung.source,
                                  options=kernels.COMPILE_OPTIONS)
    assert not result.ok and "WIDTH: a power of two" in result.log


@pytest.mark.parametrize("dtype_name", ["float32", "int32", "float16", "bfloat16", "float64"])
def test_the_vector_row_group_compiles_at_every_lane_count_and_loads(dtype_name):
    """row_vec_group's lanes and loads are template parameters: every lane count, 1 to
    32 (a power of two), with loads 1, 2 and 4 at block 256, and every block size with
    one lane and a warp a row (the block only sets how many rows a block holds; every
    instantiation is a compile, and this test is one of the suite's slowest)."""
    rung, dtype = ROW_LADDER["row_vec_group"], DTYPES[dtype_name]
    combos = {(256, lanes, loads) for lanes in (1, 2, 4, 8, 16, 32) for loads in (1, 2, 4)}
    combos |= {(block, lanes, 4) for block in rung.blocks for lanes in (1, 32)}
    expressions = sorted({rung.name_expression(dtype.cpp, dtype.acc_cpp, block,
                                               {"lanes": lanes, "loads": loads})
                          for block, lanes, loads in combos})
    result = nvrtc.compile_source(kernels.expanded_source(rung.source), expressions,
                                  arch="sm_90", file_name=rung.source,
                                  options=kernels.COMPILE_OPTIONS)
    assert result.ok and "warning" not in result.log.lower(), result.log
    assert all(result.lowered.get(e) for e in expressions)


def test_the_two_pass_row_rung_compiles_its_second_launch_over_the_accumulators():
    """row_two_pass's second launch is the same kernel for the accumulator type:
    float16 needs both reduce_rows_two_pass<__half, float, ...> and <float, float, ...>."""
    rung, dtype = ROW_LADDER["row_two_pass"], DTYPES["float16"]
    expressions = kernels.all_name_expressions(rung, dtype, 256)
    assert expressions == ["reduce_rows_two_pass<__half, float, 256, 4>",
                           "reduce_rows_two_pass<float, float, 256, 4>"]


@pytest.mark.parametrize("cluster", [2, 3, 8])
def test_the_cluster_rung_compiles_for_hopper_and_not_before(cluster):
    """__cluster_dims__ compiles for sm_90, cooperative groups without libcu++ (NVRTC's
    include path has none); for sm_80 it does not, which is why the harness skips the
    rung on GPUs before 9.0 instead of compiling it there."""
    rung, dtype = ROW_LADDER["row_cluster"], DTYPES["float32"]
    expression = rung.name_expression(dtype.cpp, dtype.acc_cpp, 1024, {"cluster": cluster})
    source = kernels.expanded_source(rung.source)
    hopper = nvrtc.compile_source(source, [expression], arch="compute_90",
                                  file_name=rung.source, options=kernels.COMPILE_OPTIONS)
    assert hopper.ok and "warning" not in hopper.log.lower(), hopper.log
    assert f".reqnctapercluster {cluster}, 1, 1" in hopper.ptx
    assert "mapa" in hopper.ptx and "barrier.cluster.wait" in hopper.ptx
    ampere = nvrtc.compile_source(source, [expression], arch="sm_80", file_name=rung.source,
                                  options=kernels.COMPILE_OPTIONS)
    assert not ampere.ok and "__cluster_dims__" in ampere.log


EXTRA_READ = "tests/fixtures/kernels/extra_read_grid_stride_sum.cu"
EXTRA_KERNELS = ["grid_stride_sum", *(f"extra_read_{c}" for c in (0, 10, 20, 30, 40, 50, 60,
                                                                 70, 80, 100, 150, 200))]


@pytest.mark.parametrize("dtype_name", ["float32", "int32", "float16", "bfloat16"])
def test_the_extra_read_kernels_of_the_sensitivity_check_compile_as_user_kernels(dtype_name):
    """scripts/verdict_checks.sh's deliberately slower kernels pass the --kernel contract
    check and compile without a warning for every dtype the example takes: every kernel
    of the file in one compile a dtype (the file is one source)."""
    from reducebench.ladder.custom import parse_kernel_option, user_rungs

    rungs = [user_rungs([parse_kernel_option(f"{EXTRA_READ}:{name}", "atomic", "per-sm=8")])[0]
             for name in EXTRA_KERNELS]
    (source,) = {kernels.rung_source(rung) for rung in rungs}
    dtype = DTYPES[dtype_name]
    expressions = [e for rung in rungs for e in kernels.rung_expressions(rung, dtype)]
    result = nvrtc.compile_source(source, expressions, file_name=rungs[0].source)
    assert result.ok and not result.log.strip(), (dtype_name, result.log)
    assert all(result.lowered.get(e) for e in expressions)


@pytest.mark.parametrize("block, loads, shared_bytes", [
    (32, 16, (32 * 16 + 1) * 16), (256, 4, (256 * 4 + 1) * 16), (256, 16, (2048 + 1) * 16),
    (1024, 16, (2048 + 1) * 16)])
def test_the_row_tile_takes_at_most_32_kb_of_shared_memory(block, loads, shared_bytes):
    """row_tile's tile is block x loads 16-byte vectors, capped at 2048 (32 KB), and one
    vector more for a span that does not start on a 16-byte boundary: what the PTX
    declares, so that no block size and loads asks for more than a block may have."""
    rung, dtype = ROW_LADDER["row_tile"], DTYPES["float32"]
    expression = rung.name_expression(dtype.cpp, dtype.acc_cpp, block, {"loads": loads})
    result = nvrtc.compile_source(kernels.expanded_source(rung.source), [expression],
                                  arch="compute_90", file_name=rung.source,
                                  options=kernels.COMPILE_OPTIONS)
    assert result.ok and "warning" not in result.log.lower(), result.log
    assert ".shared .align 16 .b8 " in result.ptx and f"[{shared_bytes}];" in result.ptx


@pytest.mark.parametrize("dtype_name", ["float32", "float16"])
def test_row_multi_compiles_at_every_lane_count_with_several_rows_and_loads(dtype_name):
    """row_multi's lanes, rows a group, loads and load hints are template parameters:
    each lane count from 1 to 32, with one row a group, one load and no hint, with three
    rows, four loads and the L2 hint, and with two rows, two loads and the evict-first
    hint, with and without the L2 hint (a lane count the template refuses would fail
    its static_assert)."""
    rung, dtype = ROW_LADDER["row_multi"], DTYPES[dtype_name]
    expressions = sorted({rung.name_expression(dtype.cpp, dtype.acc_cpp, 256,
                                               {"lanes": lanes, "group_rows": rows,
                                                "loads": loads, "l2_prefetch": hint,
                                                "evict_first": evict})
                          for lanes in (1, 2, 4, 8, 16, 32)
                          for rows, loads, hint, evict in ((1, 1, 0, 0), (3, 4, 1, 0),
                                                           (2, 2, 0, 1), (2, 2, 1, 1))})
    result = nvrtc.compile_source(kernels.expanded_source(rung.source), expressions,
                                  arch="sm_90", file_name=rung.source,
                                  options=kernels.COMPILE_OPTIONS)
    assert result.ok and "warning" not in result.log.lower(), result.log
    assert all(result.lowered.get(e) for e in expressions)


@pytest.mark.parametrize("name", ["row_vec_block", "row_split", "row_tile"])
def test_the_row_rungs_that_stream_compile_with_either_load_hint(name):
    """evict_first is a template parameter of row_vec_block, row_split and row_tile as of
    row_multi: each compiles with and without it, and with it and the L2 hint where the
    rung takes that (the four asm loads of rb::load16): the PTX has streaming loads and
    read-only ones."""
    rung, dtype = ROW_LADDER[name], DTYPES["float32"]
    hints = (0, 1) if "l2_prefetch" in rung.params else (0,)
    expressions = sorted({rung.name_expression(dtype.cpp, dtype.acc_cpp, 256,
                                               {**rung.params, "l2_prefetch": hint,
                                                "evict_first": evict})
                          for hint in hints for evict in (0, 1)})
    result = nvrtc.compile_source(kernels.expanded_source(rung.source), expressions,
                                  arch="compute_90", file_name=rung.source,
                                  options=kernels.COMPILE_OPTIONS)
    assert result.ok and "warning" not in result.log.lower(), result.log
    assert all(result.lowered.get(e) for e in expressions)
    assert ("ld.global.cs" in result.ptx) and ("ld.global.nc" in result.ptx)
