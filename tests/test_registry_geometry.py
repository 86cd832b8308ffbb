"""The ladder as data and the launch arithmetic derived from it: grids, passes, buffers,
accumulation shape and the instantiations each case needs."""

import math

import pytest

from reducebench.ladder import sources as kernels
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.ladder.geometry import MAX_GRID_X, GridRule, ceil_div
from reducebench.ladder.registry import LADDER, RUNGS, get_rung, parse_rungs

SM = 132
F32 = DTYPES["float32"]
KERNEL_RUNGS = [r for r in RUNGS if not r.is_library and not r.dispatch]
LIBRARY_RUNGS = [r for r in RUNGS if r.is_library]
RELAUNCH = [r for r in KERNEL_RUNGS if r.finish == "relaunch"]
SIZES = [1, 31, 32, 33, 1000, 2**20 - 1, 1000003, 2**24 + 3]

# The grid each kernel's indexing expects (cuda_src/*.cu): elements per thread, or a
# grid-stride grid of so many blocks per multiprocessor.
EXPECTED_GRID = {
    "gmem": ("per_thread", 1), "smem_interleaved": ("per_thread", 1),
    "smem_strided": ("per_thread", 1), "smem_sequential": ("per_thread", 1),
    "first_add": ("per_thread", 2), "unroll_last_warp": ("per_thread", 2),
    "complete_unroll": ("per_thread", 2), "gmem_unroll4": ("per_thread", 4),
    "smem_unroll4": ("per_thread", 4), "multi_elem": ("stride", 8),
    "shfl": ("per_thread", 1), "shfl_unroll": ("per_thread", 4),
    "shfl_xor": ("per_thread", 1), "warp_atomic": ("per_thread", 1),
    "gridstride_atomic": ("stride", 8), "vector_load": ("stride", 8),
    "single_pass": ("stride", 8), "pingpong": ("stride", 8),
    "one_block": ("fixed", 1),
    "one_shot": ("per_thread", 16),  # 4 loads of a float4
}
# Elements each thread of a grid-stride rung must have before another block is added.
WORK_PER_THREAD = {"multi_elem": 1, "gridstride_atomic": 1, "vector_load": 16, "single_pass": 16,
                   "pingpong": 16}


def test_every_rung_name_is_unique():
    names = [r.name for r in RUNGS]
    assert len(names) == len(set(names))
    assert list(LADDER) == names


def test_every_kernel_rung_has_an_expected_grid_rule():
    assert set(EXPECTED_GRID) == {r.name for r in KERNEL_RUNGS}


def test_library_rungs_have_no_source_kernel_or_launches():
    assert {r.name for r in LIBRARY_RUNGS} == {"triton_atomic", "triton_two_pass", "cub", "cupy",
                                               "torch"}
    for rung in LIBRARY_RUNGS:
        assert rung.source is None and rung.kernel is None and rung.grid is None
        plan = rung.plan(1024, F32, 0, SM)
        assert plan.library == rung.name and plan.launches == () and plan.bytes_read == 4096


def test_kernel_rungs_name_an_existing_source_and_finish():
    for rung in KERNEL_RUNGS:
        assert rung.source and rung.kernel, rung.name
        assert kernels.source_path(rung.source).is_file(), rung.name
        assert rung.finish in ("relaunch", "atomic", "single", "pingpong"), rung.name


@pytest.mark.parametrize("rung", KERNEL_RUNGS, ids=lambda r: r.name)
@pytest.mark.parametrize("n", SIZES)
def test_first_pass_grid_follows_the_rungs_rule(rung, n):
    kind, k = EXPECTED_GRID[rung.name]
    block = 256
    plan = rung.plan(n, F32, block, SM)
    if kind == "per_thread":
        assert plan.grid == ceil_div(n, block * k)
    elif kind == "fixed":
        assert plan.grid == k and len(plan.launches) == 1
    else:
        work = WORK_PER_THREAD[rung.name]
        assert plan.grid == max(1, min(SM * k, ceil_div(n, block * work)))


@pytest.mark.parametrize("rung", [r for r in KERNEL_RUNGS if EXPECTED_GRID[r.name][0] == "stride"],
                         ids=lambda r: r.name)
@pytest.mark.parametrize("n", SIZES + [2**30])
@pytest.mark.parametrize("block", [64, 256, 1024])
def test_grid_stride_grids_are_bounded_and_never_idle(rung, n, block):
    """No more blocks than the SMs hold, and none without a full iteration of work."""
    plan = rung.plan(n, F32, block, SM)
    assert plan.grid <= SM * rung.params["blocks_per_sm"]
    assert plan.grid <= ceil_div(n, block * WORK_PER_THREAD[rung.name])
    assert plan.grid >= 1


def test_grid_stride_grid_follows_the_blocks_per_sm_parameter():
    rung = get_rung("gridstride_atomic")
    assert rung.plan(2**24, F32, 256, SM, {"blocks_per_sm": 2}).grid == 2 * SM
    assert rung.plan(2**24, F32, 256, 100).grid == 800


@pytest.mark.parametrize("dtype_name, loads, block, n, grid", [
    # one block per block x loads 16-byte vectors: 4 floats, 8 halves, 2 doubles each
    ("float32", 4, 256, 2**20, 256),        # 2^20 / (256 * 4 * 4)
    ("float16", 4, 256, 2**20, 128),        # 2^20 / (256 * 4 * 8)
    ("bfloat16", 16, 1024, 2**30, 8192),    # 2^30 / (1024 * 16 * 8)
    ("float64", 4, 256, 2**20, 512),        # 2^20 / (256 * 4 * 2)
    ("int32", 1, 128, 2**20 + 1, 2049),     # one more element: one more (partial) tile
    ("float32", 4, 256, 1, 1),
    ("float32", 16, 1024, 2**32, 65536),    # 2^32 / (1024 * 16 * 4)
])
def test_one_shot_launches_one_block_per_tile_of_16_byte_vectors(dtype_name, loads, block, n,
                                                                  grid):
    plan = get_rung("one_shot").plan(n, DTYPES[dtype_name], block, SM, {"loads": loads})
    assert plan.grid == grid and plan.atomics == grid and plan.ping_pong
    assert plan.launches[0].per_block == block * loads * 16 // DTYPES[dtype_name].itemsize


def test_shfl_unroll_grid_follows_the_unroll_parameter():
    rung = get_rung("shfl_unroll")
    assert rung.plan(2**20, F32, 256, SM).grid == 2**20 // (256 * 4)
    assert rung.plan(2**20, F32, 256, SM, {"unroll": 8}).grid == 2**20 // (256 * 8)
    assert rung.plan(2**20, F32, 256, SM, {"unroll": 8}).chain == 8


@pytest.mark.parametrize("rung", RELAUNCH, ids=lambda r: r.name)
@pytest.mark.parametrize("n", [1, 1000, 2**20 - 1, 2**24 + 3, 2**28])
@pytest.mark.parametrize("block", [64, 256, 1024])
def test_relaunch_passes_chain_down_to_one_block(rung, n, block):
    plan = rung.plan(n, F32, block, SM)
    launches = plan.launches
    assert plan.zero_before == () and plan.atomics == 0
    assert launches[0].n == n and launches[0].element_type == "input"
    assert launches[0].src == ("scratch" if rung.in_place else "input")
    assert launches[-1].dst == "result" and launches[-1].grid == 1
    for index, launch in enumerate(launches):
        assert launch.pass_index == index and launch.block == block
        if index:
            previous = launches[index - 1]
            assert launch.element_type == "acc"
            assert launch.n == previous.grid          # one partial per block
            assert launch.src == previous.dst         # reads what the last pass wrote
            assert launch.dst != launch.src
    assert all(launch.dst != "result" for launch in launches[:-1])
    assert all(launch.grid > 1 for launch in launches[:-1])
    # every partials buffer is big enough for every pass that writes it
    for launch in launches:
        assert plan.buffers[launch.dst] >= launch.grid
    assert plan.buffers["result"] == 1


def test_relaunch_example_numbers():
    plan = get_rung("shfl").plan(2**24, F32, 256, SM)
    assert [(l.grid, l.n, l.src, l.dst) for l in plan.launches] == [
        (65536, 2**24, "input", "partials0"),
        (256, 65536, "partials0", "partials1"),
        (1, 256, "partials1", "result"),
    ]
    assert plan.buffers == {"partials0": 65536, "partials1": 256, "result": 1}
    assert plan.chain == 1


def test_relaunch_reuses_two_partials_buffers_sized_for_their_largest_pass():
    plan = get_rung("shfl").plan(2**30, F32, 32, SM)
    dsts = [l.dst for l in plan.launches]
    assert dsts == ["partials0", "partials1", "partials0", "partials1", "partials0", "result"]
    assert plan.buffers["partials0"] == plan.launches[0].grid
    assert plan.buffers["partials1"] == plan.launches[1].grid


def test_one_element_needs_one_launch():
    plan = get_rung("shfl").plan(1, F32, 256, SM)
    assert len(plan.launches) == 1 and plan.launches[0].dst == "result"


@pytest.mark.parametrize("name", ["gridstride_atomic", "vector_load"])
@pytest.mark.parametrize("n", [1, 1000, 2**24 + 3])
def test_block_atomic_rungs_add_one_total_per_block(name, n):
    plan = get_rung(name).plan(n, F32, 256, SM)
    assert plan.zero_before == ("result",)
    assert len(plan.launches) == 1 and plan.launches[0].dst == "result"
    assert plan.atomics == plan.grid
    assert plan.buffers == {"result": 1}


@pytest.mark.parametrize("n", [1, 1000, 2**24])
@pytest.mark.parametrize("block", [32, 256, 1024])
def test_warp_atomic_adds_one_total_per_warp(n, block):
    plan = get_rung("warp_atomic").plan(n, F32, block, SM)
    assert plan.zero_before == ("result",)
    assert plan.grid == ceil_div(n, block)
    assert plan.atomics == plan.grid * block // 32


@pytest.mark.parametrize("n", [1, 1000, 2**24 + 3])
def test_single_pass_sizes_its_workspace_to_the_grid(n):
    plan = get_rung("single_pass").plan(n, F32, 256, SM)
    (launch,) = plan.launches
    assert plan.zero_before == () and plan.atomics == 0
    assert plan.buffers == {"result": 1, "workspace": plan.grid}
    assert launch.args == ("src", "dst", "n", "workspace", "ticket")
    assert launch.dst == "result"


def test_in_place_rungs_reduce_a_scratch_copy():
    in_place = {r.name for r in KERNEL_RUNGS if r.in_place}
    assert in_place == {"gmem", "gmem_unroll4"}
    for rung in KERNEL_RUNGS:
        plan = rung.plan(2**20, F32, 256, SM)
        assert plan.scratch_copy == rung.in_place
        assert (plan.launches[0].src == "scratch") == rung.in_place


@pytest.mark.parametrize("name, n, block, chain", [
    ("shfl", 2**24, 256, 1), ("first_add", 2**24, 256, 2), ("smem_unroll4", 2**24, 256, 4),
    ("gridstride_atomic", 2**24, 256, ceil_div(2**24, 8 * SM * 256)),
    ("vector_load", 2**24, 256, ceil_div(2**24, 8 * SM * 256)),
    ("multi_elem", 2**24, 128, ceil_div(2**24, 8 * SM * 128)),
    ("gridstride_atomic", 1000, 256, 1),
])
def test_chain_is_the_elements_one_thread_adds_in_sequence(name, n, block, chain):
    assert get_rung(name).plan(n, F32, block, SM).chain == chain


def test_grid_beyond_cuda_limit_is_refused():
    with pytest.raises(UsageError, match="blocks"):
        get_rung("shfl").plan(2**40, F32, 32, SM)
    # a grid-stride rung handles the same size with a bounded grid
    assert get_rung("gridstride_atomic").plan(2**40, F32, 32, SM).grid == 8 * SM


def test_grid_exactly_at_cuda_limit_is_accepted():
    n = MAX_GRID_X * 32
    assert get_rung("shfl").plan(n, F32, 32, SM).grid == MAX_GRID_X
    with pytest.raises(UsageError):
        get_rung("shfl").plan(n + 1, F32, 32, SM)


def test_grid_rule_sets_exactly_one_of_its_fields():
    with pytest.raises(ValueError):
        GridRule()
    with pytest.raises(ValueError):
        GridRule(per_thread=1, blocks_per_sm=1)


def test_parse_rungs_all_is_ladder_order_without_cupy():
    # cupy (one block, ~12 ms a sample at 2^24) is measured only when named
    assert [r.name for r in parse_rungs("all")] == [r.name for r in RUNGS if r.name != "cupy"]
    assert [r.name for r in parse_rungs("all,cupy")] == [
        r.name for r in RUNGS if r.name != "cupy"] + ["cupy"]
    assert [r.name for r in parse_rungs("cupy")] == ["cupy"]


def test_parse_rungs_keeps_the_order_given_and_drops_repeats():
    chosen = parse_rungs("shfl, cub,shfl,gmem")
    assert [r.name for r in chosen] == ["shfl", "cub", "gmem"]
    assert parse_rungs(["cub", "all"]) == [LADDER["cub"]] + [
        r for r in RUNGS if r.name not in ("cub", "cupy")]
    assert parse_rungs("all,shfl") == [r for r in RUNGS if r.name != "cupy"]


def test_parse_rungs_rejects_unknown_names_listing_the_accepted_ones():
    with pytest.raises(UsageError) as info:
        parse_rungs("shfl,nosuch")
    assert "'nosuch'" in str(info.value)
    assert "shfl" in str(info.value) and "all" in str(info.value)


def test_parse_rungs_rejects_an_empty_list():
    with pytest.raises(UsageError, match="no rung"):
        parse_rungs([])             # a config's rung = []
    with pytest.raises(UsageError, match="empty rung in ' , '"):
        parse_rungs(" , ")          # a slip, said as for every comma list


def test_every_plan_reads_every_element_once():
    for rung in (r for r in RUNGS if not r.dispatch):
        block = 0 if rung.is_library else 256
        assert rung.plan(1000, DTYPES["float64"], block, SM).bytes_read == 8000
        assert rung.plan(1000, DTYPES["bfloat16"], block, SM).bytes_read == 2000


@pytest.mark.parametrize("name, args, expected", [
    ("shfl_unroll", ("float", "float", 256, None), "reduce_shfl_unroll<float, float, 256, 4>"),
    ("shfl_unroll", ("float", "float", 128, {"unroll": 8}),
     "reduce_shfl_unroll<float, float, 128, 8>"),
    ("shfl", ("__half", "float", 64, None), "reduce_shfl<__half, float, 64>"),
    ("vector_load", ("double", "double", 512, None), "reduce_vector_load<double, double, 512, 4, 0>"),
    ("single_pass", ("int", "int", 256, {"loads": 2, "l2_prefetch": 1}),
     "reduce_single_pass<int, int, 256, 2, 1>"),
    ("multi_elem", ("float", "float", 256, None), "reduce_multi_elem<float, float, 256>"),
])
def test_name_expression(name, args, expected):
    assert get_rung(name).name_expression(*args) == expected


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_relaunch_rungs_instantiate_half_input_and_float_partials(dtype):
    d = DTYPES[dtype]
    exprs = kernels.all_name_expressions(get_rung("shfl"), d, 256)
    assert exprs == [f"reduce_shfl<{d.cpp}, float, 256>", "reduce_shfl<float, float, 256>"]
    plan = get_rung("shfl").plan(2**20, F32, 256, SM)
    assert kernels.name_expressions(get_rung("shfl"), d, 256, plan) == {
        "input": f"reduce_shfl<{d.cpp}, float, 256>", "acc": "reduce_shfl<float, float, 256>"}


def test_relaunch_rungs_need_one_instantiation_when_input_is_the_accumulator_type():
    assert kernels.all_name_expressions(get_rung("shfl"), DTYPES["float32"], 256) == \
        ["reduce_shfl<float, float, 256>"]


def test_atomic_and_single_rungs_need_only_the_input_instantiation():
    d = DTYPES["float16"]
    assert kernels.all_name_expressions(get_rung("vector_load"), d, 256) == \
        ["reduce_vector_load<__half, float, 256, 4, 0>"]
    assert kernels.all_name_expressions(get_rung("single_pass"), d, 128, {"loads": 2}) == \
        ["reduce_single_pass<__half, float, 128, 2, 0>"]


@pytest.mark.parametrize("name", ["gmem", "gmem_unroll4"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_in_place_rungs_use_the_accumulator_type_from_the_first_pass(name, dtype):
    d, rung = DTYPES[dtype], get_rung(name)
    expr = f"{rung.kernel}<{d.acc_cpp}, {d.acc_cpp}, 256>"
    assert kernels.all_name_expressions(rung, d, 256) == [expr]
    plan = rung.plan(2**20, F32, 256, SM)
    needed = kernels.name_expressions(rung, d, 256, plan)
    assert set(needed.values()) == {expr}


def test_every_plan_needs_only_instantiations_all_name_expressions_lists():
    for rung in KERNEL_RUNGS:
        for dtype in (DTYPES[d] for d in rung.dtypes):
            for block in rung.blocks:
                plan = rung.plan(2**20 + 5, F32, block, SM)
                needed = kernels.name_expressions(rung, dtype, block, plan)
                assert set(needed.values()) <= set(kernels.all_name_expressions(rung, dtype,
                                                                                block))


def test_half_types_accumulate_in_float():
    for name in ("float16", "bfloat16"):
        assert DTYPES[name].acc_cpp == "float" and DTYPES[name].acc_name == "float32"
    assert math.isclose(DTYPES["float16"].unit_roundoff, 2.0**-24)


@pytest.mark.parametrize("n", [1, 1000, 2**24, 2**31 + 5])
def test_pingpong_needs_no_memset_and_swaps_two_accumulators(n):
    rung = LADDER["pingpong"]
    plan = rung.plan(n, F32, 256, 132)
    assert plan.ping_pong and plan.zero_before == ()
    assert plan.buffers == {"result": 1, "next": 1}
    (launch,) = plan.launches
    assert launch.args == ("src", "dst", "n", "next") and launch.dst == "result"
    assert plan.atomics == plan.grid == LADDER["vector_load"].plan(n, F32, 256, 132).grid


def test_only_the_pingpong_finish_keeps_state_between_launches():
    assert [r.name for r in RUNGS if r.grid and r.plan(2**20, F32, 256, 132).ping_pong] == \
        ["pingpong", "one_shot"]


def test_a_vector_tile_rule_needs_the_element_size_and_is_not_for_relaunch():
    from reducebench.ladder.geometry import plan_relaunch

    rule = GridRule(per_thread_vectors=4)
    with pytest.raises(ValueError, match="element size"):
        rule.blocks(2**20, 256, SM, {})
    assert rule.blocks(2**20, 256, SM, {}, itemsize=2) == 2**20 // (256 * 4 * 8)
    with pytest.raises(ValueError, match="not for relaunch"):
        plan_relaunch(2**20, 256, SM, rule, {}, "input", itemsize=2)
