"""The row rungs that read with 16-byte loads and share a row between several blocks, on
the CPU: each one's geometry worked out by hand (grid, blocks per row, chain, the
partials' buffer, what is zeroed), the host executor's model of each finish (an atomic
add into sums the previous run zeroed, partials and a second launch, a cluster's total),
whole cases verified row by row, and planted faults that must fail: a block short, the
sums never swapped or never zeroed for the next run, the second launch left out, a part's sum in the neighbouring row, a grid that is not
a whole number of clusters. row_cluster on a GPU before compute capability 9.0 is a
skipped case in a sweep and one line with exit code 2 alone."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.ladder import geometry
from reducebench.ladder.case import Case
from reducebench.ladder.plan import (NEXT, RESULT, ROW_CLUSTER, ROW_PARTIAL_SUMS, ROW_PINGPONG,
                                     ROW_PARTIALS, ROW_SUMS, bound_arguments)
from reducebench.ladder.registry import ROW_LADDER
from reducebench.measuring import hostexec
from reducebench.measuring.runner import gpu_refusal, run
from reducebench.measuring.settings import settings_from

from cli_runner import invoke, one_error_line
from fakes import FakeBackend

F32, F16, F64 = DTYPES["float32"], DTYPES["float16"], DTYPES["float64"]
SPLIT, TWO_PASS, CLUSTER = (ROW_LADDER[n] for n in ("row_split", "row_two_pass",
                                                    "row_cluster"))
NEW_RUNGS = [ROW_LADDER[n] for n in ("row_vec_group", "row_vec_block", "row_split",
                                     "row_two_pass", "row_cluster")]
H100_SMS = 132


# -- geometry, by hand -----------------------------------------------------------------

# (rung, params, block) -> rows per block, grid and chain for 1000 rows of 33 columns: a
# group of `lanes` lanes owns block / lanes rows, a block one; each lane adds 33 / lanes.
VECTOR_GEOMETRY = [
    ("row_vec_group", {"lanes": 1}, 256, 256, 4, 33),
    ("row_vec_group", {"lanes": 4}, 128, 32, 32, 9),       # 1000 / 32 = 31.25
    ("row_vec_group", {"lanes": 32}, 64, 2, 500, 2),
    ("row_vec_block", {}, 512, 1, 1000, 1),
    ("row_vec_block", {}, 32, 1, 1000, 2),
]


@pytest.mark.parametrize("name, params, block, per_block, grid, chain", VECTOR_GEOMETRY,
                         ids=[f"{g[0]}-{g[2]}-{g[1]}" for g in VECTOR_GEOMETRY])
def test_the_vector_rungs_own_rows_as_worked_out_by_hand(name, params, block, per_block,
                                                         grid, chain):
    rung = ROW_LADDER[name]
    plan = rung.plan(1000 * 33, F32, block, H100_SMS, {**rung.params, **params}, rows=1000)
    (launch,) = plan.launches
    assert (launch.grid, launch.rows_per_block, launch.writes) == (grid, per_block, ROW_SUMS)
    assert plan.chain == chain and plan.buffers == {RESULT: 1000} and not plan.zero_before
    assert bound_arguments(launch) == ("input", RESULT, 1000, 33)


@pytest.mark.parametrize("lanes", [3, 64])
def test_lanes_that_are_not_a_power_of_two_up_to_a_warp_are_refused(lanes):
    with pytest.raises(UsageError, match=f"lanes {lanes}: .* power of two"):
        ROW_LADDER["row_vec_group"].plan(64, F32, 32, H100_SMS, {"lanes": lanes, "loads": 4},
                                         rows=2)


# (rung, shape, dtype, block, params) -> splits (blocks a row), grid, chain, tile.
# A tile is block x loads 16-byte vectors: 256 x 4 x 4 floats = 4096. Splits: enough
# blocks for blocks_per_sm x 132 SMs (8 x 132 = 1056; row_split's default 16 x 132 =
# 2112), ceil(that / rows), but no more than the row has tiles.
EIGHT = {"blocks_per_sm": 8}
SPLIT_GEOMETRY = [
    # 16 x 2^20: ceil(1056 / 16) = 66 of 256 tiles; chain ceil(2^20 / (66 x 256)) = 63
    ("row_split", (16, 2**20), F32, 256, EIGHT, 66, 1056, 63, 4096),
    # at the default 16 a multiprocessor: 2112 / 16 = 132; ceil(2^20 / (132 x 256)) = 32
    ("row_split", (16, 2**20), F32, 256, {}, 132, 2112, 32, 4096),
    # one row of 2^24, block 1024, 2 per SM: 264 of 1024 tiles of 16384; 2^24 / (264 x 1024)
    ("row_split", (1, 2**24), F32, 1024, {"blocks_per_sm": 2}, 264, 264, 63, 16384),
    # 8 x 2^24: 1056 / 8 = 132 blocks a row
    ("row_split", (8, 2**24), F32, 256, EIGHT, 132, 1056, 497, 4096),
    # the rows alone fill the GPU: one block a row
    ("row_split", (4096, 4096), F32, 256, {}, 1, 4096, 16, 4096),
    # float16 rows of 1000, block 32, one load: tiles of 32 x 8 halves = 256, so 4 tiles
    # a row; ceil(1056 / 8) = 132 wanted, 4 allowed; chain ceil(1000 / (4 x 32)) = 8
    ("row_split", (8, 1000), F16, 32, {"loads": 1}, 4, 32, 8, 256),
    # a cluster of 8 (the default) or 3 blocks a row, whatever the GPU's size
    ("row_cluster", (16, 2**20), F32, 256, {}, 8, 128, 512, 4096),
    ("row_cluster", (1000, 33), F32, 64, {"cluster": 3, "loads": 2}, 3, 3000, 1, 512),
]


@pytest.mark.parametrize("name, shape, dtype, block, params, splits, grid, chain, tile",
                         SPLIT_GEOMETRY,
                         ids=[f"{g[0]}-{g[1][0]}x{g[1][1]}-{g[2].name}-{g[3]}"
                              for g in SPLIT_GEOMETRY])
def test_a_row_shared_by_blocks_is_planned_as_worked_out_by_hand(name, shape, dtype, block,
                                                                 params, splits, grid,
                                                                 chain, tile):
    rung = ROW_LADDER[name]
    rows, cols = shape
    plan = rung.plan(rows * cols, dtype, block, H100_SMS, {**rung.params, **params},
                     rows=rows)
    (launch,) = plan.launches
    assert (launch.grid, launch.block, launch.splits, launch.tile) == (grid, block, splits,
                                                                       tile)
    assert plan.chain == chain and plan.zero_before == ()
    assert plan.row_outputs == rows and plan.bytes_read == rows * cols * dtype.itemsize
    if name == "row_split":  # an atomicAdd a block into sums the previous run zeroed
        assert launch.writes == ROW_PINGPONG and plan.ping_pong
        assert plan.buffers == {RESULT: rows, NEXT: rows} and plan.atomics == splits
        assert bound_arguments(launch) == ("input", RESULT, rows, cols, splits, NEXT)
    else:                    # the cluster writes its row once: nothing zeroed, no atomic
        assert launch.writes == ROW_CLUSTER and not plan.ping_pong and plan.atomics == 0
        assert plan.buffers == {RESULT: rows}
        assert bound_arguments(launch) == ("input", RESULT, rows, cols, splits)


def test_two_passes_write_partials_then_sum_each_rows_partials():
    """16 x 2^20 float32, block 256: 66 blocks a row write 16 x 66 = 1056 partials, then a
    block a row (16) reads its row's 66 partials; nothing zeroed, no atomic."""
    plan = TWO_PASS.plan(16 * 2**20, F32, 256, H100_SMS, rows=16)
    first, second = plan.launches
    assert (first.grid, first.splits, first.writes, first.element_type) == \
        (1056, 66, ROW_PARTIALS, "input")
    assert bound_arguments(first) == ("input", ROW_PARTIAL_SUMS, 16, 2**20, 66)
    assert (second.grid, second.block, second.splits, second.element_type) == \
        (16, 256, 1, "acc")
    assert bound_arguments(second) == (ROW_PARTIAL_SUMS, RESULT, 16, 66, 1)
    assert plan.buffers == {ROW_PARTIAL_SUMS: 1056, RESULT: 16}
    assert plan.zero_before == () and plan.atomics == 0 and plan.chain == 63


def test_the_second_pass_reads_accumulators_in_tiles_of_its_own_size():
    """float16: the first pass reads halves, 256 x 4 x 8 = 8192 a tile; its partials are
    float (4 bytes), 256 x 4 x 4 = 4096 a tile. float64: 256 x 4 x 2 = 2048 both."""
    first, second = TWO_PASS.plan(4 * 2**20, F16, 256, H100_SMS, rows=4).launches
    assert (first.tile, second.tile) == (8192, 4096)
    first, second = TWO_PASS.plan(4 * 2**20, F64, 256, H100_SMS, rows=4).launches
    assert (first.tile, second.tile) == (2048, 2048)


def test_two_passes_with_one_block_a_row_are_one_launch_into_the_result():
    plan = TWO_PASS.plan(4096 * 4096, F32, 256, H100_SMS, rows=4096)
    (launch,) = plan.launches
    assert (launch.grid, launch.splits, launch.dst) == (4096, 1, RESULT)
    assert plan.buffers == {RESULT: 4096}


def test_the_blocks_a_row_follow_the_gpus_size_and_blocks_per_sm():
    """16 x 2^20 on a GPU of 108 SMs at 4 blocks per SM: ceil(432 / 16) = 27 a row."""
    plan = SPLIT.plan(16 * 2**20, F32, 256, 108, {"blocks_per_sm": 4, "loads": 4}, rows=16)
    assert (plan.launches[0].splits, plan.grid) == (27, 432)


def test_the_row_tile_and_splits_rules():
    assert geometry.row_tile(256, 4, 4) == 4096 and geometry.row_tile(32, 1, 2) == 256
    assert geometry.row_tile(128, 2, 8) == 512
    assert geometry.row_splits(16, 2**20, 4096, 1056) == 66
    assert geometry.row_splits(1, 100, 4096, 1056) == 1         # one tile: one block
    assert geometry.row_splits(5000, 2**20, 4096, 1056) == 1    # rows enough
    assert geometry.row_splits(3, 1003, 128, 1056) == 8         # 8 tiles, 352 wanted


def test_each_block_sums_its_tiles_dealt_round_robin():
    """Two rows 0..9 and 10..19, tiles of 2, 3 parts: row 0's tiles sum to 1, 5, 9, 13,
    17; part 0 has tiles 0 and 3 (1 + 13), part 1 tiles 1 and 4 (5 + 17), part 2 tile 2."""
    parts = hostexec.row_part_sums(np.arange(20, dtype=np.int32), 2, 10, 3, 2)
    assert parts.tolist() == [[14, 22, 9], [54, 62, 29]]
    assert hostexec.row_part_sums(np.arange(6, dtype=np.float32), 2, 3, 1, 4).tolist() == \
        [[3.0], [12.0]]


# -- whole cases on the host -------------------------------------------------------------

def _run(rungs, shape, dtype="float32", block=32, params=None, backend=None):
    rows, cols = shape
    cases = [Case(rung, DTYPES[dtype], rows * cols, block, {**rung.params, **(params or {})},
                  rows=rows) for rung in rungs]
    settings = settings_from({"size": "2^10", "seed": 41, "rounds": 1})
    return run(settings, backend or FakeBackend(), lambda record: None, cases=cases)


SHAPES = [(1, 1), (3, 1003), (1, 2**12 + 1), (7, 5), (1000, 33)]


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{r}x{c}" for r, c in SHAPES])
def test_every_new_row_rung_is_verified_row_by_row_with_several_blocks_a_row(shape, dtype):
    """Block 32 and one load a thread: tiles of 128 floats, so rows of 1003 are shared by
    8 blocks (row_split, row_two_pass) and by the cluster's 8 in any case."""
    records = _run(NEW_RUNGS, shape, dtype, params={"loads": 1})
    assert [(r.rung, r.status, r.error) for r in records] == \
        [(rung.name, "ok", "") for rung in NEW_RUNGS]


def test_several_blocks_share_each_row_in_those_cases():
    backend = FakeBackend()
    _run([SPLIT, TWO_PASS, CLUSTER], (3, 1003), params={"loads": 1}, backend=backend)
    splits = {label.split()[0]: plan.launches[0].splits for label, plan in backend.plans.items()}
    assert splits == {"row_split": 8, "row_two_pass": 8, "row_cluster": 8}


def test_a_block_short_leaves_the_last_row_short_of_its_last_part(monkeypatch):
    """3 rows of 1003 floats, 8 blocks a row (24): without block 23, row 2 misses its
    part 7 (tile 7: elements 896..1002), and only row 2 is wrong."""
    real = geometry.check_grid
    monkeypatch.setattr(geometry, "check_grid", lambda grid: real(grid) - 1)
    (record,) = _run([SPLIT], (3, 1003), params={"loads": 1})
    assert record.status == "FAIL"
    assert "row 2 of 3: expected " in record.error and "(1 of 3 rows wrong)" in record.error


def test_the_atomic_finish_that_never_swaps_its_sums_fails_after_the_first_run(monkeypatch):
    """Without the swap each run adds into the sums of the run before: every row is then
    a multiple of its sum."""
    from reducebench.ladder import registry

    real = registry.plan_split_rows
    monkeypatch.setattr(registry, "plan_split_rows",
                        lambda *a, **k: replace(real(*a, **k), ping_pong=False))
    (record,) = _run([SPLIT], (3, 1003), "int32", params={"loads": 1})
    assert record.status == "FAIL"
    assert "row 0 of 3: expected " in record.error and "(3 of 3 rows wrong)" in record.error


@pytest.mark.parametrize("settings", [{"rounds": 1}, {"check": True}], ids=("run", "check"))
def test_the_atomic_finish_that_never_zeroes_the_next_sums_fails(monkeypatch, settings):
    """Each run adds into the sums the run before zeroed. A kernel that forgets to zero
    next[row] leaves the third run (`check`: the first run's sums again; `run`: a later
    sample read back) adding into a stale total."""
    real = hostexec.PlanRun.split_rows

    def forgetful(self, launch, src, dst, rows, cols, splits, *next_sums):
        stale = [following.copy() for following in next_sums]
        real(self, launch, src, dst, rows, cols, splits, *next_sums)
        for following, kept in zip(next_sums, stale):
            following[...] = kept

    monkeypatch.setattr(hostexec.PlanRun, "split_rows", forgetful)
    rows, cols = 3, 1003
    case = Case(SPLIT, F32, rows * cols, 32, {**SPLIT.params, "loads": 1}, rows=rows)
    (record,) = run(settings_from({"size": "2^10", "seed": 41, **settings}), FakeBackend(),
                    lambda record: None, cases=[case])
    assert record.status == "FAIL" and "rows wrong)" in record.error


def _ping_pong_launch(grid: int, sums: tuple[int, int] = (0, 0)):
    """Two rows of 8 int32 (0..15), 2 parts a row, tiles of 4, split by `grid` blocks
    into sums starting at `sums` and next sums 7, 9, 11: (sums, next) after the launch."""
    from reducebench.ladder.plan import Launch

    execution = hostexec.PlanRun.__new__(hostexec.PlanRun)
    execution.acc = np.dtype(np.int64)
    result, following = np.array(sums, np.int64), np.array([7, 9, 11], np.int64)
    launch = Launch(0, "input", grid, 32, 16, "input", RESULT, ROW_PINGPONG, rows=2,
                    splits=2, tile=4)
    execution.split_rows(launch, np.arange(16, dtype=np.int32), result, 2, 8, 2, following)
    return result.tolist(), following.tolist()


def test_each_rows_first_block_zeroes_that_rows_next_sum_and_no_other():
    """Blocks 0..3 (row 0 parts 0, 1; row 1 parts 0, 1) add 6 + 22 and 38 + 54 into the
    sums and zero next[0] and next[1], nothing past the rows; a grid of one block (row
    0's part 0) zeroes next[0] alone."""
    assert _ping_pong_launch(4) == ([28, 92], [0, 0, 11])
    assert _ping_pong_launch(3) == ([28, 38], [0, 0, 11])
    assert _ping_pong_launch(1) == ([6, 0], [0, 9, 11])


def test_each_block_adds_its_part_to_what_its_rows_sum_holds():
    """The model adds into the slot as atomicAdd does and zeroes next[row] whatever the
    slot held, so a plan whose sums were never zeroed shows up as wrong rows. The rows of
    the test above, their sums starting at 100 and 200: 100 + 6 + 22 and 200 + 38 + 54;
    a grid of three blocks leaves row 1 without its part 1 (54)."""
    assert _ping_pong_launch(4, (100, 200)) == ([128, 292], [0, 0, 11])
    assert _ping_pong_launch(3, (100, 200)) == ([128, 238], [0, 0, 11])


def test_two_passes_without_the_second_leave_the_sums_poisoned(monkeypatch):
    from reducebench.ladder import registry

    real = registry.plan_split_rows

    def first_only(*args, **kwargs):
        plan = real(*args, **kwargs)
        return replace(plan, launches=plan.launches[:1])

    monkeypatch.setattr(registry, "plan_split_rows", first_only)
    (record,) = _run([TWO_PASS], (3, 1003), params={"loads": 1})
    assert record.status == "FAIL" and "got nan" in record.error
    assert "(3 of 3 rows wrong)" in record.error


@pytest.mark.parametrize("rung", [SPLIT, TWO_PASS, CLUSTER], ids=lambda r: r.name)
def test_a_part_summed_from_the_neighbouring_row_fails_naming_the_row(monkeypatch, rung):
    real = hostexec.row_part_sums

    def shifted(src, rows, cols, splits, tile):  # each row's parts from the row before
        return np.roll(real(src, rows, cols, splits, tile), 1, axis=0)

    monkeypatch.setattr(hostexec, "row_part_sums", shifted)
    (record,) = _run([rung], (3, 1003), "int32", params={"loads": 1})
    assert record.status == "FAIL" and "row 0 of 3: expected " in record.error


def test_a_grid_that_is_not_whole_clusters_is_an_error_of_the_case(monkeypatch):
    real = geometry.check_grid
    monkeypatch.setattr(geometry, "check_grid", lambda grid: real(grid) - 1)
    (record,) = _run([CLUSTER], (3, 1003), params={"loads": 1})
    assert record.status == "error"
    assert "a grid of 23 blocks is not a whole number of clusters of 8" in record.error


def test_each_new_kernel_inlines_common_cuh_once_with_the_row_vectors_header():
    from reducebench.ladder import sources

    for rung in NEW_RUNGS:
        text = sources.expanded_source(rung.source)
        assert text.count("// ---- common.cuh ----") == 1, rung.name
        assert text.count("// ---- rows/row_vectors.cuh ----") == 1, rung.name
        assert "rb::row_share<" in text or "rb::block_row_share<" in text, rung.name


def test_only_the_atomic_finish_is_not_deterministic():
    assert [r.deterministic for r in NEW_RUNGS] == [True, True, False, True, True]


# -- row_cluster on a GPU without clusters -------------------------------------------------

@pytest.mark.parametrize("capability, refused", [("8.0", True), ("8.9", True),
                                                 ("9.0", False), ("10.0", False),
                                                 ("", False)])
def test_the_cluster_rung_needs_compute_capability_9(capability, refused):
    reason = gpu_refusal(CLUSTER, capability)
    assert bool(reason) is refused
    if refused:
        assert reason == ("row_cluster needs thread-block clusters, compute capability 9.0 "
                          f"or later; this GPU's is {capability}")
    assert gpu_refusal(SPLIT, "7.0") is None


def test_in_a_sweep_the_cluster_case_is_skipped_before_hopper_and_the_rest_run():
    records = _run([SPLIT, CLUSTER], (3, 1003), params={"loads": 1},
                   backend=FakeBackend(compute_capability="8.0"))
    assert [(r.rung, r.status) for r in records] == [("row_split", "ok"),
                                                     ("row_cluster", "skipped")]
    assert "compute capability 9.0 or later; this GPU's is 8.0" in records[1].error


def test_the_cluster_rung_alone_before_hopper_is_refused():
    with pytest.raises(UsageError, match="row_cluster needs thread-block clusters"):
        _run([CLUSTER], (3, 1003), backend=FakeBackend(compute_capability="8.6"))
    (record,) = _run([CLUSTER], (3, 1003), backend=FakeBackend(compute_capability="9.0"))
    assert record.status == "ok"


def test_run_refuses_the_cluster_rung_in_one_line_on_an_older_gpu(fake_device, tmp_path):
    fake_device.settings = {"compute_capability": "8.0"}
    one_error_line(invoke("run", "--shape", "16x2^10", "--rung", "row_cluster",
                          "--out", tmp_path / "c.csv"),
                   "row_cluster needs thread-block clusters, compute capability 9.0 or "
                   "later; this GPU's is 8.0")
    one_error_line(invoke("check", "--shape", "16x2^10", "--rung", "row_cluster"),
                   "row_cluster needs thread-block clusters")


def test_run_all_on_an_older_gpu_records_the_cluster_case_as_skipped(fake_device, tmp_path):
    import pandas as pd

    fake_device.settings = {"compute_capability": "8.0"}
    out = tmp_path / "rows.csv"
    result = invoke("run", "--shape", "16x2^10", "--rung", "row_split,row_cluster",
                    "--out", out)
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert dict(zip(frame["rung"], frame["status"])) == {"row_split": "ok",
                                                         "row_cluster": "skipped"}


# -- parameters ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, says", [
    (("--param", "lanes=3"), "parameter lanes: values must be powers of two from 1 to 32"),
    (("--param", "lanes=64"), "parameter lanes: values must be from 1 to 32"),
    (("--param", "cluster=16"), "parameter cluster: values must be from 2 to 8"),
    (("--param", "group_rows=17"), "parameter group_rows: values must be from 1 to 16"),
    (("--param", "group_rows=0"), "parameter group_rows: values must be from 1 to 16"),
    (("--rung", "row_warp", "--param", "cluster=4"), "--param cluster: none of the chosen "
                                                    "rungs takes it; rungs that do: "
                                                    "row_cluster"),
])
def test_a_bad_row_parameter_is_one_line_before_any_gpu(args, says, fake_device):
    one_error_line(invoke("run", "--shape", "4x4", *args), says)
    assert not fake_device.opened


def test_show_says_what_each_new_rung_needs_and_how_its_rows_are_shared():
    shown = invoke("show", "row_cluster", width=250).output
    assert "needs: compute capability 9.0 or later (thread-block clusters)" in shown
    assert "a thread-block cluster of `cluster` blocks a row" in shown
    assert "writes out[row]" in shown           # notes are text, not markup
    shown = invoke("show", "row_split", width=250).output
    assert "deterministic: no (float atomics)" in shown and "atomicAdd" in shown
    assert "params: blocks_per_sm=16, loads=4, l2_prefetch=1" in shown
    assert "a group of `lanes` lanes a row" in invoke("show", "row_vec_group", width=250).output
