"""The measured ceiling's device-free part: every kernel's grid covers the buffer, the
best timing becomes the ceiling, and its bandwidth and percentages are plain arithmetic.
The kernels compile with NVRTC (no GPU); timing them is tested on the GPU
(tests/test_gpu_tuning.py)."""

from __future__ import annotations

import math
import re
import struct

import pytest

from reducebench.ladder import nvrtc
from reducebench.ladder import sources as kernels
from reducebench.ladder.auto import DEFAULT_TABLE, load_table, shipped_dir
from reducebench.measuring.read_ceiling import (
    CEILING_SOURCE,
    KEEP_ALIVE_SENTINEL,
    KERNELS,
    LOAD_HINTS,
    MIN_BYTES,
    CeilingKernel,
    KernelTime,
    buffer_bytes,
    ceiling_from,
    pct_of_ceiling,
)

GIB = 1 << 30


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
@pytest.mark.parametrize("words", [1, 1000, 4095, 4096, 4097, 2**26, 2**28 + 3])
def test_every_word_is_in_exactly_one_tile_of_the_grid(kernel, words):
    tile = kernel.block * kernel.loads
    grid = kernel.grid(words, sm_count=132)
    if kernel.blocks_per_sm is None:  # one-shot: the tiles reach the end and no further
        assert grid * tile >= words > (grid - 1) * tile
    else:  # grid-stride: never more blocks than tiles, never more than one wave
        assert 1 <= grid <= min(132 * kernel.blocks_per_sm, -(-words // tile))


def test_one_shot_1024x4_reads_16k_float32_per_block_as_the_facts_describe():
    one_shot = next(k for k in KERNELS if k.name == "one-shot 1024x4")
    assert one_shot.block * one_shot.loads * 16 == 16384 * 4  # bytes of 16K float32
    assert one_shot.grid(GIB // 16, 132) == 16384              # 1 GiB / 64 KiB


def test_expressions_name_the_templates_with_their_arguments():
    assert CeilingKernel("a", 256, 16).expression == "read_one_shot<256, 16, 0u>"
    assert CeilingKernel("b", 512, 4, blocks_per_sm=3, hint="evict-first").expression == \
        "read_grid_stride<512, 4, 3, 1u>"
    assert CeilingKernel("c", 512, 2, hint="l2-prefetch").expression == \
        "read_one_shot<512, 2, 2u>"


def test_an_unknown_load_hint_is_refused_by_name():
    with pytest.raises(ValueError, match="'prefetch' is not one of ldg, evict-first, l2-prefetch"):
        CeilingKernel("d", 512, 2, hint="prefetch")


def _reads_of_auto() -> set[tuple[int, int, str]]:
    """(block, loads, hint) of every one_shot variant `auto` can run: the shipped tuning
    tables' bands and the built-in defaults."""
    tables = [load_table(path) for path in sorted(shipped_dir().glob("*.toml"))]
    assert tables, "no shipped tuning table found"
    reads = set()
    for table in [*tables, DEFAULT_TABLE]:
        for band in table.bands:
            variant = band.variant
            if variant.rung == "one_shot":
                params = variant.param_dict
                hint = "l2-prefetch" if params["l2_prefetch"] else "ldg"
                reads.add((variant.block, params["loads"], hint))
    return reads


def test_the_same_size_read_has_every_tile_and_load_hint_that_auto_runs():
    # A one_shot thread's LOADS 16-byte vectors are a read kernel's words: a tile `auto`
    # runs that no read kernel has could beat its own yardstick (pct_read over 100).
    one_shot_reads = {(k.block, k.loads, k.hint) for k in KERNELS if k.blocks_per_sm is None}
    missing = _reads_of_auto() - one_shot_reads
    assert not missing, f"no read kernel reads as auto does with {sorted(missing)}"


def test_the_read_kernels_have_distinct_names_and_instantiations():
    assert len({k.name for k in KERNELS}) == len(KERNELS)
    assert len({k.expression for k in KERNELS}) == len(KERNELS)


HINT_WORDS = {"ldg": "", "evict-first": " evict-first", "l2-prefetch": " L2 prefetch"}


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_each_read_kernel_is_named_for_its_settings(kernel):
    # Results and logs name the fastest read kernel: a name that says 4/SM over a grid
    # of 3 per SM would misreport what was measured.
    if kernel.blocks_per_sm is None:
        expected = f"one-shot {kernel.block}x{kernel.loads}{HINT_WORDS[kernel.hint]}"
        expected += ", block fold" if kernel.block_fold else ""
    else:
        expected = (f"grid-stride {kernel.block}x{kernel.loads}{HINT_WORDS[kernel.hint]}, "
                    f"{kernel.blocks_per_sm}/SM")
    assert kernel.name == expected


def test_the_block_fold_is_a_one_shot_template_argument():
    folded = CeilingKernel("f", 512, 2, hint="l2-prefetch", block_fold=True)
    assert folded.expression == "read_one_shot<512, 2, 2u, true>"
    with pytest.raises(ValueError, match="only a one-shot kernel has a block fold"):
        CeilingKernel("g", 512, 4, blocks_per_sm=3, block_fold=True)


def test_no_table_runs_another_rung_with_a_load_hint_no_read_kernel_issues():
    # Only the one-shot read kernels carry the L2 prefetch hint: a band of another rung
    # with l2_prefetch=1 would read in a way the same-size read does not.
    tables = [load_table(path) for path in sorted(shipped_dir().glob("*.toml"))]
    grid_hints = {k.hint for k in KERNELS if k.blocks_per_sm is not None}
    for table in [*tables, DEFAULT_TABLE]:
        for band in table.bands:
            variant = band.variant
            if variant.rung != "one_shot" and variant.param_dict.get("l2_prefetch"):
                assert "l2-prefetch" in grid_hints, (table.gpu, variant.describe())


def test_the_hint_numbers_are_the_ones_the_cuda_source_declares():
    source = (kernels.source_dir() / CEILING_SOURCE).read_text()
    declared = {name: int(value) for name, value in
                re.findall(r"\b(kLdg|kEvictFirst|kL2Prefetch) = (\d+)u", source)}
    assert declared == {"kLdg": LOAD_HINTS["ldg"], "kEvictFirst": LOAD_HINTS["evict-first"],
                        "kL2Prefetch": LOAD_HINTS["l2-prefetch"]}


def test_the_keep_alive_sentinel_is_the_one_the_cuda_source_stores():
    source = (kernels.source_dir() / CEILING_SOURCE).read_text()
    declared = re.findall(r"constexpr int kKeepAliveSentinel = (0x[0-9a-fA-F]+);", source)
    assert [int(value, 16) for value in declared] == [KEEP_ALIVE_SENTINEL]


def test_the_keep_alive_sentinel_survives_a_float_block_sum_unchanged():
    # A block fold sums the folded words as floats: a NaN pattern would come back as the
    # canonical NaN, and a denormal could be flushed to zero.
    as_float = struct.unpack("<f", struct.pack("<i", KEEP_ALIVE_SENTINEL))[0]
    assert math.isfinite(as_float) and abs(as_float) >= 2.0**-126
    assert struct.unpack("<i", struct.pack("<f", as_float + 0.0))[0] == KEEP_ALIVE_SENTINEL


def test_the_fastest_kernel_is_the_ceiling_and_its_bandwidth_is_bytes_over_time():
    timings = [KernelTime("slow", 360.0, 30), KernelTime("fast", 341.79, 30),
               KernelTime("broken", float("nan"), 0)]
    ceiling = ceiling_from(timings, GIB)
    assert ceiling.kernel == "fast" and ceiling.median_us == 341.79
    # 1073741824 bytes in 341.79 us: 3141.5 GB/s (worked by hand: 1.073741824e9 / 3.4179e-4)
    assert ceiling.gbps == pytest.approx(3141.53, abs=0.01)
    assert len(ceiling.timings) == 3


def test_equal_medians_go_to_the_first_kernel_listed():
    ceiling = ceiling_from([KernelTime("first", 100.0, 30), KernelTime("second", 100.0, 30)],
                           GIB)
    assert ceiling.kernel == "first"


def test_no_usable_timing_is_an_error_not_a_ceiling():
    with pytest.raises(ValueError):
        ceiling_from([KernelTime("zero", 0.0, 30)], GIB)


def test_percent_of_ceiling():
    assert pct_of_ceiling(3109.0, 3140.0) == pytest.approx(99.0127, abs=1e-3)
    assert pct_of_ceiling(3166.0, 3140.0) > 100  # a larger input may beat the ceiling
    assert math.isnan(pct_of_ceiling(3000.0, 0.0))
    assert math.isnan(pct_of_ceiling(3000.0, float("nan")))


def test_the_buffer_is_the_requested_gib_where_half_the_free_memory_holds_it():
    assert buffer_bytes(GIB, free_bytes=80 * GIB) == GIB
    assert buffer_bytes(GIB, free_bytes=GIB) == GIB // 2
    assert buffer_bytes(GIB, free_bytes=GIB + 40) % 16 == 0
    with pytest.raises(ValueError, match="too little"):
        buffer_bytes(GIB, free_bytes=MIN_BYTES)


needs_nvrtc = pytest.mark.skipif(
    not nvrtc.available(), reason="NVRTC or the CUDA headers are missing")


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_ceiling_kernel_compiles_without_warnings(arch):
    expressions = [k.expression for k in KERNELS]
    result = nvrtc.compile_source(kernels.expanded_source(CEILING_SOURCE), expressions,
                                  arch=arch, file_name=CEILING_SOURCE,
                                  options=kernels.COMPILE_OPTIONS)
    assert result.ok, result.log
    assert "warning" not in result.log.lower(), result.log
    assert all(result.lowered.get(e) for e in expressions)


@needs_nvrtc
def test_the_read_kernels_compile_before_sm_80_where_the_prefetch_hint_does_not_exist():
    # ptxas refuses .L2::256B below sm_80; the kernels are one module, so one kernel with
    # the hint would take every read (and pct_read, pct_ceiling) away from a T4-class GPU.
    expressions = [k.expression for k in KERNELS]
    result = nvrtc.compile_source(kernels.expanded_source(CEILING_SOURCE), expressions,
                                  arch="sm_75", file_name=CEILING_SOURCE,
                                  options=kernels.COMPILE_OPTIONS)
    assert result.ok, result.log
    assert all(result.lowered.get(e) for e in expressions)
    # sm_75 holds 1024 threads per SM: 3 blocks of 512 cannot all be resident there
    warnings = [line for line in result.log.splitlines() if "warning" in line.lower()]
    assert all(".minnctapersm will be ignored" in line for line in warnings), warnings
