"""The row ladder on the CPU: each rung's row geometry (hand-worked), its plan, and whole
cases run by the host executor through the runner, every row verified exactly; planted
faults (a row's sum in its neighbour's slot, a grid one block short, a read past the
last row, a write past the last slot) fail, naming the row."""

import math

import numpy as np
import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.ladder.case import Case
from reducebench.ladder.geometry import fitted_lanes, rows_per_block, with_fitted_lanes
from reducebench.ladder.plan import RESULT, ROW_SUMS, bound_arguments
from reducebench.ladder.registry import ROW_LADDER
from reducebench.ladder.registry import ROW_RUNGS as EVERY_ROW_RUNG
from reducebench.measuring import hostexec
from reducebench.measuring.runner import run, shape_cases
from reducebench.measuring.settings import settings_from

from fakes import CountingPool, FakeBackend

ROW_RUNGS = [r for r in EVERY_ROW_RUNG if not r.is_library and not r.dispatch]  # our kernels

# (rung, params, block) -> (rows per block, grid for 1000 rows, chain for 33 columns),
# worked out by hand: a thread per row owns `block` rows; a group of 8 lanes block/8; a
# warp block/32; a block one. Chains: 33 columns over 1, 8, 32 or `block` lanes.
GEOMETRY = [
    ("row_thread", {}, 256, 256, 4, 33),
    ("row_thread", {}, 32, 32, 32, 33),
    ("row_group", {"width": 8}, 256, 32, 32, 5),
    ("row_group", {"width": 2}, 64, 32, 32, 17),
    ("row_group", {"width": 16}, 1024, 64, 16, 3),
    ("row_warp", {}, 256, 8, 125, 2),
    ("row_warp", {}, 32, 1, 1000, 2),
    ("row_block", {}, 256, 1, 1000, 1),
    ("row_block", {}, 32, 1, 1000, 2),
]


@pytest.mark.parametrize("name, params, block, per_block, grid, chain", GEOMETRY,
                         ids=[f"{g[0]}-{g[2]}-{g[1]}" for g in GEOMETRY])
def test_each_row_rung_owns_rows_as_worked_out_by_hand(name, params, block, per_block,
                                                       grid, chain):
    rung = ROW_LADDER[name]
    assert rows_per_block(rung.lanes_per_row, block, {**rung.params, **params}) == per_block
    plan = rung.plan(1000 * 33, DTYPES["float32"], block, 132, params, rows=1000)
    (launch,) = plan.launches
    assert (launch.grid, launch.block, launch.rows_per_block) == (grid, block, per_block)
    assert plan.chain == chain
    assert plan.buffers == {RESULT: 1000} and plan.row_outputs == 1000
    assert launch.writes == ROW_SUMS and plan.bytes_read == 1000 * 33 * 4
    assert bound_arguments(launch) == ("input", RESULT, 1000, 33)


def test_one_row_and_one_column_plans():
    assert ROW_LADDER["row_warp"].plan(2**24 + 1, DTYPES["float32"], 256, 132,
                                       rows=1).launches[0].grid == 1
    assert ROW_LADDER["row_thread"].plan(2**20, DTYPES["int32"], 256, 132,
                                         rows=2**20).launches[0].grid == 4096


@pytest.mark.parametrize("width, block", [(3, 256), (6, 256), (12, 256), (64, 32)])
def test_lanes_that_are_not_a_power_of_two_or_exceed_the_block_are_refused(width, block):
    with pytest.raises(UsageError, match=f"width {width}: .* no larger than the block "
                                         f"\\({block}\\)"):
        ROW_LADDER["row_group"].plan(64, DTYPES["float32"], block, 132, {"width": width},
                                     rows=2)


def _settings():
    return settings_from({"size": "2^10", "seed": 77, "rounds": 1})


def _run_rows(shape, dtype="float32", rungs=ROW_RUNGS, block=256, backend=None):
    rows, cols = shape
    cases = [Case(rung, DTYPES[dtype], rows * cols, block, dict(rung.params), rows=rows)
             for rung in rungs]
    written = []
    return run(_settings(), backend or FakeBackend(), written.append, cases=cases)


SHAPES = [(1, 1), (1, 2**12 + 1), (2**12, 1), (3, 1003), (1000, 33), (7, 5)]


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{r}x{c}" for r, c in SHAPES])
def test_every_row_rung_is_verified_row_by_row_on_the_host(shape, dtype):
    records = _run_rows(shape, dtype)
    # row_tile at block 256 x 4 loads holds 4096 floats or ints, 2048 doubles, 8192 halves
    tile = {"float64": 2048, "float16": 8192, "bfloat16": 8192}.get(dtype, 4096)
    expected = ["skipped" if r.name == "row_tile" and shape[1] > tile else "ok"
                for r in ROW_RUNGS]
    assert [(r.rung, r.status) for r in records] == \
        [(rung.name, status) for rung, status in zip(ROW_RUNGS, expected)]
    assert all(r.error == "" for r in records if r.status == "ok")
    rows, cols = shape
    assert {(r.rows, r.cols, r.n) for r in records} == {(rows, cols, rows * cols)}


def test_a_row_sum_written_to_its_neighbours_slot_fails_naming_the_row(monkeypatch):
    def shifted(src, rows, cols):  # row r's sum lands in slot r + 1 (the last in slot 0)
        return np.roll(src.astype(np.int64).reshape(rows, cols).sum(axis=1), 1)

    monkeypatch.setattr(hostexec, "row_sums", shifted)
    (record,) = _run_rows((1000, 33), "int32", [ROW_LADDER["row_warp"]])
    assert record.status == "FAIL"
    assert "row 0 of 1000: expected " in record.error
    assert "(1000 of 1000 rows wrong)" in record.error


def test_two_rows_swapped_fail_naming_the_first(monkeypatch):
    def swapped(src, rows, cols):
        sums = src.astype(np.float64).reshape(rows, cols).sum(axis=1)
        sums[[5, 6]] = sums[[6, 5]]
        return sums

    monkeypatch.setattr(hostexec, "row_sums", swapped)
    (record,) = _run_rows((1000, 33), "float32", [ROW_LADDER["row_group"]])
    assert record.status == "FAIL"
    assert "row 5 of 1000: expected" in record.error and "(2 of 1000 rows wrong)" in record.error


def test_a_grid_one_block_short_leaves_the_last_rows_unwritten(monkeypatch):
    from reducebench.ladder import geometry

    real = geometry.check_grid
    monkeypatch.setattr(geometry, "check_grid", lambda grid: real(grid) - 1)
    (record,) = _run_rows((1000, 33), "float32", [ROW_LADDER["row_warp"]])
    assert record.status == "FAIL"
    # 124 blocks of 8 rows cover rows 0..991: row 992 is the first left poisoned (NaN)
    assert "row 992 of 1000: expected" in record.error and "got nan" in record.error
    assert "(8 of 1000 rows wrong)" in record.error


def test_a_read_past_the_last_row_is_named_as_a_guard_read(monkeypatch):
    real_launch = hostexec.PlanRun.launch

    def read_one_more(self, launch):  # the last row reads the element after the input
        real_launch(self, launch)
        guarded = self.guarded[-1]       # the input's own guards
        past = guarded.whole[guarded.layout.before + launch.n]
        dst = self.buffer(RESULT)
        dst[launch.rows - 1] = dst[launch.rows - 1] + past

    monkeypatch.setattr(hostexec.PlanRun, "launch", read_one_more)
    (record,) = _run_rows((1000, 33), "int32", [ROW_LADDER["row_block"]])
    assert record.status == "FAIL"
    assert "row 999 of 1000" in record.error and "guard value" in record.error


def test_a_write_past_the_last_slot_fails_through_the_guards(monkeypatch):
    real_launch = hostexec.PlanRun.launch

    def write_one_more(self, launch):
        real_launch(self, launch)
        guarded = next(g for g in self.guarded if g.name == RESULT)
        guarded.whole[guarded.layout.before + launch.rows] = 5

    monkeypatch.setattr(hostexec.PlanRun, "launch", write_one_more)
    (record,) = _run_rows((1000, 33), "float32", [ROW_LADDER["row_thread"]])
    assert record.status == "FAIL" and "result" in record.error


def test_a_row_record_keeps_the_total_of_its_rows_beside_the_reference():
    (record,) = _run_rows((7, 5), "int32", [ROW_LADDER["row_thread"]])
    assert record.result == record.reference and record.abs_error == 0
    assert record.grid == 1 and record.launches == 1 and record.bytes_read == 7 * 5 * 4


def test_a_row_cases_total_is_exact_for_int32_rows_and_a_float64_sum_for_float_rows():
    from reducebench.measuring.runner import result_of

    # int32 rows whose total leaves int32: 2 * (2^31 - 1) - 5, not wrapped
    total = result_of(np.array([2**31 - 1, 2**31 - 1, -5], dtype=np.int32))
    assert total == 4_294_967_289 and type(total) is int
    # past float64's 2^53: 2^23 rows of 2^31 - 1 and a row of 1 = 2^54 - 2^23 + 1, odd
    rows = np.full(2**23 + 1, 2**31 - 1, dtype=np.int32)
    rows[-1] = 1
    assert result_of(rows) == 18_014_398_501_093_377
    # float32 rows summed in float64: 2^24 + 1 + 1 + 0.5 (float32 alone stops at 2^24)
    total = result_of(np.array([2**24, 1, 1, 0.5], dtype=np.float32))
    assert total == 16_777_218.5 and type(total) is float
    assert result_of(7) == 7                # a one-value case's result as it came


# -- the inputs ---------------------------------------------------------------------------

def _as_values(host, dtype):
    from reducebench.verify.inputs import bfloat16_bits_to_float32

    data = bfloat16_bits_to_float32(host.data) if dtype == "bfloat16" else host.data
    return data.astype(np.float64)


ROW_INPUT_SHAPES = [(2**12, 1, "bfloat16"), (1000, 33, "float16"), (3, 1003, "int32"),
                    (3, 2**23, "float32"), (1, 2**24 + 1, "float32"), (5, 1, "float64")]


@pytest.mark.parametrize("rows, cols, dtype", ROW_INPUT_SHAPES,
                         ids=[f"{r}x{c}-{d}" for r, c, d in ROW_INPUT_SHAPES])
def test_each_row_sums_to_its_index_modulo_3_and_to_its_reference(rows, cols, dtype):
    from reducebench.verify.row_inputs import row_input

    host = row_input(rows, cols, DTYPES[dtype], 99)
    values = _as_values(host, dtype).reshape(rows, cols)
    sums = values.sum(axis=1)
    assert sums.tolist() == host.row_references.tolist()
    assert (host.row_references % 3 == np.arange(rows) % 3).all()
    assert host.reference == int(host.row_references.sum())
    assert (values != 0).all()
    if DTYPES[dtype].acc_cpp == "float":   # every partial sum exact in float, any order
        assert values.clip(min=0).sum(axis=1).max() <= 2**24
        assert (-values.clip(max=0)).sum(axis=1).max() <= 2**24


def test_rows_of_ones_get_different_sums_and_a_neighbours_slot_fails(monkeypatch):
    """float32 rows of 2^23 elements hold magnitude 1 (each a sum of +1s before the
    residues): without them every row would sum to the same value."""
    from reducebench.verify.row_inputs import row_input

    host = row_input(3, 2**23, DTYPES["float32"], 5)
    assert len(set(host.row_references.tolist())) == 3

    def shifted(src, rows, cols):
        return np.roll(src.astype(np.float64).reshape(rows, cols).sum(axis=1), 1)

    monkeypatch.setattr(hostexec, "row_sums", shifted)
    (record,) = _run_rows((3, 2**23), "float32", [ROW_LADDER["row_block"]])
    assert record.status == "FAIL" and "row 0 of 3: expected" in record.error


@pytest.mark.parametrize("rung", ROW_RUNGS, ids=lambda r: r.name)
def test_each_row_kernel_opens_saying_what_changed_why_faster_and_its_preconditions(rung):
    from reducebench.ladder import sources

    text = sources.source_path(rung.source).read_text()
    opening = text[:text.index("#include")]
    for part in ("Changed from ", "Why faster: ", "Preconditions: "):
        assert f"// {part}" in opening, (rung.source, part)
    assert rung.source.startswith("rows/") and '#include "../common.cuh"' in text


def test_a_row_kernel_is_compiled_with_common_cuh_inlined_once():
    from reducebench.ladder import sources

    text = sources.expanded_source("rows/04_block.cu")
    assert text.count("// ---- common.cuh ----") == 1 and "#include" not in \
        text.replace("#include <cuda_fp16.h>", "").replace("#include <cuda_bf16.h>", "")


def test_the_torch_reference_gives_one_value_a_row_and_its_plan_says_so():
    torch_rows = ROW_LADDER["torch_rows"]
    plan = torch_rows.plan(1000 * 33, DTYPES["float32"], 0, 132, rows=1000)
    assert plan.library == "torch_rows" and plan.row_outputs == 1000 and not plan.launches
    assert plan.bytes_read == 1000 * 33 * 4
    (record,) = _run_rows((1000, 33), "bfloat16", [torch_rows], block=0)
    assert (record.status, record.rows, record.cols) == ("ok", 1000, 33)


def test_long_rows_of_few_values_get_a_signed_input_too():
    """float32 rows of 2^23 elements: the positive input holds +1s (and the residues'
    -1s), so a signed input of magnitudes 1..3 with random signs verifies the case too,
    as exact_inputs asks for 2^23 elements in one array."""
    from reducebench.verify.row_inputs import row_inputs

    positive, signed = row_inputs(3, 2**23, DTYPES["float32"], 11)
    assert (positive.name, signed.name) == ("positive", "signed")
    values = signed.data.astype(np.int64).reshape(3, 2**23)
    assert values.sum(axis=1).tolist() == signed.row_references.tolist()
    assert (signed.row_references % 3 == np.arange(3) % 3).all()
    assert set(np.unique(values).tolist()) == {-3, -2, -1, 1, 2, 3}
    assert (values.clip(min=0).sum(axis=1) <= 2**24).all()
    assert (-values.clip(max=0).sum(axis=1) <= 2**24).all()
    assert row_inputs(1000, 33, DTYPES["float32"], 11)[0].name == "positive"
    assert len(row_inputs(1000, 33, DTYPES["float32"], 11)) == 1


def test_an_element_read_in_another_ones_place_fails_on_the_signed_input(monkeypatch):
    def next_for_one(src, rows, cols):  # each row reads element 1001 where 1000 belongs
        values = src.astype(np.float64).reshape(rows, cols).copy()
        values[:, 1000] = values[:, 1001]  # two +1s in the positive input's rows
        return values.sum(axis=1)

    monkeypatch.setattr(hostexec, "row_sums", next_for_one)
    (record,) = _run_rows((3, 2**23), "float32", [ROW_LADDER["row_warp"]])
    assert record.status == "FAIL" and "signed input: row " in record.error


def test_residues_move_the_first_element_the_short_way_and_keep_its_sign():
    """Row first + i must sum to (first + i) mod 3: its first element gains `short` (0, 1
    or 2 to add, modulo 3) where that keeps it on its side (1..magnitude, or -magnitude..
    -1), else short - 3. Worked by hand, magnitude 5, rows starting at index 3."""
    import numpy as np

    from reducebench.verify.row_inputs import _set_residues

    values = np.array([
        [4, 2],      # row 3 wants 0: sum 6, short 0: unchanged
        [5, 1],      # row 4 wants 1: sum 6, short 1; 5 + 1 > 5: 5 - 2 = 3 (sum 4)
        [-2, 1],     # row 5 wants 2: sum -1, short 0: unchanged
        [-2, 2],     # row 6 wants 0: sum 0, short 0: unchanged
        [-2, 3],     # row 7 wants 1: sum 1, short 0: unchanged
        [-2, 5],     # row 8 wants 2: sum 3, short 2; -2 + 2 = 0 leaves the side: -2 - 1 = -3
        [-2, 2],     # row 9 wants 0: sum 0, short 0
        [-2, 4],     # row 10 wants 1: sum 2, short 2; -2 + 2 = 0 no: -3 (sum 1)
        [-3, 4],     # row 11 wants 2: sum 1, short 1; -3 + 1 = -2 keeps the side (sum 2)
        [-2, 1],     # row 12 wants 0: sum -1, short 1; -2 + 1 = -1 keeps the side (sum 0)
    ], dtype=np.int64)
    _set_residues(values, 3, 5)
    assert values[:, 0].tolist() == [4, 3, -2, -2, -2, -3, -2, -3, -2, -1]
    assert values[:, 1].tolist() == [2, 1, 1, 2, 3, 5, 2, 4, 4, 1]
    assert ((values.sum(axis=1) - np.arange(3, 13)) % 3 == 0).all()


def test_residues_of_magnitude_three_move_the_first_element_too():
    """Magnitude 3 is enough room (1..3 and a step of up to 2 back): the +1 -> -1 turns are
    only for rows of +-1 elements (magnitude below 3)."""
    import numpy as np

    from reducebench.verify.row_inputs import _set_residues

    values = np.array([[1, 1, 1], [3, 3, 1]], dtype=np.int64)
    # row 0 wants 0: sum 3, short 0; row 1 wants 1: sum 7, short 0
    values2 = np.array([[1, 1, 2], [1, 1, 1]], dtype=np.int64)
    # row 0 wants 0: sum 4, short 2; 1 + 2 = 3 fits: [3, 1, 2]; row 1 wants 1: sum 3,
    # short 1: 1 + 1 = 2: [2, 1, 1]
    _set_residues(values, 0, 3)
    _set_residues(values2, 0, 3)
    assert values.tolist() == [[1, 1, 1], [3, 3, 1]]
    assert values2.tolist() == [[3, 1, 2], [2, 1, 1]]


def test_a_seed_makes_the_same_row_inputs_and_another_seed_others():
    """`--seed` makes a run's inputs again: every input of a shape, exact (positive and
    signed) and random, is the same for a seed, and another seed's differ."""
    import numpy as np

    from reducebench.verify.inputs import RANDOM
    from reducebench.verify.row_inputs import random_row_input, row_inputs

    dtype = DTYPES["float32"]
    for rows, cols in ((5, 3), (2, 2**20)):          # short rows; long rows: two inputs
        first, again, other = (row_inputs(rows, cols, dtype, seed) for seed in (7, 7, 8))
        assert [i.name for i in first] == [i.name for i in other]
        for a, b, c in zip(first, again, other):
            assert np.array_equal(a.data, b.data) and not np.array_equal(a.data, c.data)
    a, b, c = (random_row_input(5, 3, dtype, seed) for seed in (7, 7, 8))
    assert np.array_equal(a.data, b.data) and not np.array_equal(a.data, c.data)
    (d,), (e,) = (row_inputs(5, 3, dtype, seed, RANDOM) for seed in (7, 8))
    assert np.array_equal(d.data, a.data) and np.array_equal(e.data, c.data)


def test_rows_made_a_few_at_a_time_are_whole_and_summed_row_by_row(monkeypatch):
    """With room for two rows of 3 at a time (CHUNK 8), 11 rows are made in six pieces,
    the last of one row: every element is written, and each row's reference is that
    row's own sum."""
    import numpy as np

    from reducebench.verify import row_inputs as module
    from reducebench.verify.inputs import _stored_values

    monkeypatch.setattr(module, "CHUNK", 8)
    for dtype_name in ("float32", "int32"):
        dtype = DTYPES[dtype_name]
        for host in (module.row_input(11, 3, dtype, 5), module.random_row_input(11, 3, dtype, 5)):
            values = _stored_values(host.data, dtype, host.exact).reshape(11, 3)
            assert host.data.size == 33
            assert np.allclose(host.row_references, values.sum(axis=1), rtol=0, atol=1e-6)
        exact = module.row_input(11, 3, dtype, 5)
        sums = _stored_values(exact.data, dtype, True).reshape(11, 3).sum(axis=1)
        assert ((sums - np.arange(11)) % 3 == 0).all()
        assert exact.abs_sum == float(np.abs(sums).sum())   # every element positive here



@pytest.mark.parametrize("cols", [3, 2**12 + 1])
def test_rows_made_on_several_threads_are_the_rows_made_on_one(monkeypatch, cols):
    """Each piece of rows has its own random stream, so the threads that make them
    change nothing: the same elements, row sums and magnitudes, for each input."""
    import numpy as np

    from reducebench.verify import row_inputs as module

    monkeypatch.setattr(module, "CHUNK", 3 * cols)     # three rows a piece: four pieces
    one = module.row_inputs(11, cols, DTYPES["float16"], 9, workers=1)
    four = module.row_inputs(11, cols, DTYPES["float16"], 9, workers=4)
    assert [h.name for h in four] == [h.name for h in one]
    for a, b in zip(one, four):
        assert np.array_equal(a.data, b.data) and np.array_equal(a.row_references,
                                                                 b.row_references)
        assert (a.reference, a.abs_sum) == (b.reference, b.abs_sum)


def test_threads_make_rows_of_several_pieces_only_when_asked(monkeypatch):
    """Three rows of 3 a piece (CHUNK 9): 11 rows are four pieces, 6 rows two, 3 rows
    one. A pool is made only for two threads or more and two pieces or more, with no
    more threads than pieces; row_inputs passes its threads on."""
    from reducebench.verify import row_inputs as module

    monkeypatch.setattr(module, "ThreadPoolExecutor", CountingPool)
    monkeypatch.setattr(CountingPool, "made", [])
    monkeypatch.setattr(module, "CHUNK", 9)
    f32 = DTYPES["float32"]
    module.row_input(11, 3, f32, 9)                   # one thread unless asked
    module.row_inputs(11, 3, f32, 9)
    module.row_input(11, 3, f32, 9, workers=1)
    module.row_input(3, 3, f32, 9, workers=3)         # one piece: no pool
    assert CountingPool.made == []
    module.row_input(6, 3, f32, 9, workers=2)         # two threads, two pieces
    module.row_input(11, 3, f32, 9, workers=8)        # four pieces: four threads
    (host,) = module.row_inputs(11, 3, f32, 9, workers=3)   # 3 columns: positive only
    assert CountingPool.made == [2, 4, 3] and host.name == "positive"


def test_a_run_makes_row_inputs_of_its_kind_on_its_threads(monkeypatch):
    """The runner asks row_inputs for the run's kind of input (one random input, or the
    exact ones) made on INPUT_THREADS threads (5 here, whatever this machine's cores)."""
    from reducebench.measuring import runner

    asked, made = [], runner.row_inputs

    def recording(rows, cols, dtype, seed, kind="exact", workers=1):
        asked.append((rows, cols, kind, workers))
        return made(rows, cols, dtype, seed, kind, workers)

    monkeypatch.setattr(runner, "row_inputs", recording)
    monkeypatch.setattr(runner, "INPUT_THREADS", 5)
    rung = ROW_LADDER["row_warp"]
    case = Case(rung, DTYPES["float32"], 4 * 64, 256, dict(rung.params), rows=4)
    for kind in ("exact", "random"):
        runner.InputCache(FakeBackend(), 7, kind).hosts(case, 0)
    assert asked == [(4, 64, "exact", 5), (4, 64, "random", 5)]


# row_multi: (params, block, rows, cols) -> (rows a block, grid, chain), by hand: a block
# has block / lanes groups, each owning group_rows rows; a lane adds ceil(cols / lanes).
MULTI_GEOMETRY = [
    ({"lanes": 4, "group_rows": 4, "loads": 1}, 256, 1000, 33, 256, 4, 9),
    ({"lanes": 1, "group_rows": 8, "loads": 1}, 256, 2**20, 4, 2048, 512, 4),
    ({"lanes": 32, "group_rows": 2, "loads": 4}, 128, 1000, 1000, 8, 125, 32),
    ({"lanes": 16, "group_rows": 16, "loads": 1}, 1024, 1000, 64, 1024, 1, 4),
    ({"lanes": 2, "group_rows": 3, "loads": 2}, 32, 100, 8, 48, 3, 4),
]


@pytest.mark.parametrize("params, block, rows, cols, per_block, grid, chain", MULTI_GEOMETRY)
def test_row_multi_gives_each_group_of_lanes_several_rows(params, block, rows, cols,
                                                          per_block, grid, chain):
    plan = ROW_LADDER["row_multi"].plan(rows * cols, DTYPES["float32"], block, 132, params,
                                       rows=rows)
    (launch,) = plan.launches
    assert (launch.grid, launch.rows_per_block, plan.chain) == (grid, per_block, chain)
    assert plan.row_lanes == params["lanes"] and launch.writes == ROW_SUMS
    assert launch.element_type == "input"     # compiled for the input's element type
    assert bound_arguments(launch) == ("input", RESULT, rows, cols)


def test_row_multi_instantiates_its_lanes_rows_loads_and_hints_in_that_order():
    rung = ROW_LADDER["row_multi"]
    assert rung.name_expression("float", "float", 256, {"lanes": 8, "group_rows": 2,
                                                        "loads": 4, "l2_prefetch": 1,
                                                        "evict_first": 1}) == \
        "reduce_rows_multi<float, float, 256, 8, 2, 4, 1, 1>"
    assert rung.name_expression("float", "float", 256, {"lanes": 8}) == \
        "reduce_rows_multi<float, float, 256, 8, 1, 1, 1, 0>"


def test_row_split_and_row_multi_ask_l2_for_256_bytes_by_default_and_row_tile_does_not():
    """A run without --param measures these instantiations, and its results carry their
    parameters: row_split 4 loads with the hint; row_tile 4 loads without it; row_multi
    groups of 4 lanes owning one row each, one load of it in flight, with the hint; none
    of them streams (evict_first 0: the kernels older files measured)."""
    def default(name):
        return ROW_LADDER[name].name_expression("float", "float", 256, {})

    assert default("row_split") == "reduce_rows_split<float, float, 256, 4, 1, 0>"
    assert default("row_tile") == "reduce_rows_tile<float, float, 256, 4, 0, 0>"
    assert default("row_multi") == "reduce_rows_multi<float, float, 256, 4, 1, 1, 1, 0>"
    assert default("row_vec_block") == "reduce_rows_vec_block<float, float, 256, 4, 0>"


# row_tile: (block, loads, dtype) -> (tile elements, rows a block for 33 columns, grid for
# 1000 rows, chain), by hand: a tile is block x min(loads, 2048 / block) vectors of 16
# bytes; a block owns tile // 33 rows; each row is summed by the most lanes (a power of
# two up to 32) that give every row of the block a group at once (lanes x rows <= block),
# so the chain is ceil(33 / lanes).
TILE_GEOMETRY = [
    (256, 4, "float32", 4096, 124, 9, 17),     # 256 x 4 x 4; 2 lanes for 124 rows
    (1024, 16, "float32", 8192, 248, 5, 9),    # capped: 1024 x 2 x 4; 4 lanes for 248
    (32, 1, "float32", 128, 3, 334, 5),        # 32 x 1 x 4; 8 lanes for 3 rows
    (128, 2, "float16", 2048, 62, 17, 17),     # 128 x 2 x 8; 2 lanes for 62 rows
    (256, 1, "float64", 512, 15, 67, 3),       # 256 x 1 x 2; 16 lanes for 15 rows
]


@pytest.mark.parametrize("block, loads, dtype, tile, per_block, grid, chain", TILE_GEOMETRY)
def test_row_tile_owns_the_rows_that_fit_its_tile(block, loads, dtype, tile, per_block,
                                                  grid, chain):
    from reducebench.ladder.geometry import tile_elements

    assert tile_elements(block, loads, DTYPES[dtype].itemsize) == tile
    plan = ROW_LADDER["row_tile"].plan(1000 * 33, DTYPES[dtype], block, 132,
                                      {"loads": loads}, rows=1000)
    (launch,) = plan.launches
    assert (launch.grid, launch.rows_per_block, plan.chain) == (grid, per_block, chain)
    # the block asked for, and the kernel instantiated for the input's element type
    assert (launch.block, launch.element_type) == (block, "input")
    assert launch.writes == ROW_SUMS and bound_arguments(launch) == ("input", RESULT, 1000, 33)


@pytest.mark.parametrize("rows, cols, chain", [
    (1000, 1, 1), (1000, 4, 4),      # 4096 and 1024 rows a tile (1000 here): one lane a row
    (1000, 33, 17),                  # 124 rows a block: 2 lanes a row
    (1000, 300, 19),                 # 13 rows a block: 16 lanes (16 x 13 = 208 threads)
    (1000, 4096, 128),               # one row a block: a warp
    (8, 4, 1)])                      # 8 rows in all: a warp a row
def test_row_tile_sums_each_row_with_as_many_lanes_as_leave_none_without_a_row(rows, cols,
                                                                              chain):
    """At block 256 and 4 loads (4096 floats a tile). The read is the whole block's, so
    no lane is left without elements to read: a sweep's idle-lanes rule does not apply
    (row_lanes 0)."""
    plan = ROW_LADDER["row_tile"].plan(rows * cols, DTYPES["float32"], 256, 132, rows=rows)
    assert (plan.chain, plan.row_lanes) == (chain, 0)


def test_row_tile_refuses_a_row_wider_than_its_tile_in_one_line():
    rung = ROW_LADDER["row_tile"]
    assert rung.plan(2 * 4096, DTYPES["float32"], 256, 132, rows=2).launches[0].grid == 2
    with pytest.raises(UsageError, match="a row of 4097 elements does not fit row_tile's "
                                         "tile of 4096"):
        rung.plan(2 * 4097, DTYPES["float32"], 256, 132, rows=2)


def test_row_tile_refusal_names_the_whole_tile_and_what_to_take_instead():
    """Block 1024 x loads 16 is capped at 2048 vectors of 4 floats: a tile of 8192, said
    as a whole number."""
    with pytest.raises(UsageError) as refused:
        ROW_LADDER["row_tile"].plan(2 * 8193, DTYPES["float32"], 1024, 132, {"loads": 16},
                                    rows=2)
    assert str(refused.value) == ("a row of 8193 elements does not fit row_tile's tile of "
                                  "8192 (block 1024 x loads 16); wider rows take "
                                  "row_vec_block or row_split")


def _plan_rows_by(planner, rows, cols):
    from reducebench.ladder import geometry

    params = {"loads": 4, "blocks_per_sm": 8}
    if planner == "rows":
        return geometry.plan_rows(rows, cols, 256, 32, params)
    if planner == "tiled":
        return geometry.plan_tiled_rows(rows, cols, 256, params, itemsize=4)
    return geometry.plan_split_rows(rows, cols, 256, 132, "atomic", params, itemsize=4,
                                    acc_itemsize=4)


@pytest.mark.parametrize("planner", ["rows", "tiled", "split"])
@pytest.mark.parametrize("rows, cols", [(0, 33), (2, 0)])
def test_a_row_plan_of_no_rows_or_no_columns_is_refused(planner, rows, cols):
    with pytest.raises(ValueError, match="^a row plan needs at least one row of at least "
                                         "one element$"):
        _plan_rows_by(planner, rows, cols)


# lanes=0 (fitted): (cols, bytes an element, loads) -> lanes, by hand: a row of cols x size
# bytes is cols x size / 16 vectors; lanes = vectors / loads where that is a power of two
# from 1 to 32, else 0 (no lane count reads the row in one round of loads).
FITTED_LANES = [
    (4, 4, 1, 1),       # 16 bytes: one vector, one lane
    (32, 4, 1, 8),      # 128 bytes: 8 vectors
    (32, 4, 2, 4),
    (32, 4, 4, 2),
    (64, 4, 4, 4),      # 256 bytes: 16 vectors
    (128, 4, 1, 32),    # 512 bytes: a warp a row
    (256, 4, 1, 0),     # 64 vectors: more than a warp
    (256, 4, 2, 32),
    (8, 2, 1, 1),       # 8 halves: one vector
    (256, 2, 2, 16),    # 512 bytes of halves
    (4, 8, 1, 2),       # 4 doubles: 2 vectors
    (4, 4, 2, 0),       # one vector, two loads: half a lane
    (33, 4, 1, 0),      # 132 bytes: not whole vectors
    (24, 4, 1, 0),      # 6 vectors: no power of two
    (20, 4, 4, 0),      # 5 vectors, 4 loads: no whole number of lanes
    (2, 4, 1, 0),       # 8 bytes: half a vector
]


@pytest.mark.parametrize("cols, itemsize, loads, lanes", FITTED_LANES)
def test_lanes_zero_fits_a_row_to_one_round_of_loads(cols, itemsize, loads, lanes):
    assert fitted_lanes(cols, itemsize, loads) == lanes
    fitted = with_fitted_lanes({"lanes": 0, "loads": loads, "group_rows": 2}, cols, itemsize)
    assert fitted == {"lanes": lanes, "loads": loads, "group_rows": 2}


def test_lanes_other_than_zero_and_rungs_without_loads_are_left_as_given():
    assert with_fitted_lanes({"lanes": 4, "loads": 1}, 32, 4) == {"lanes": 4, "loads": 1}
    assert with_fitted_lanes({"width": 8}, 32, 4) == {"width": 8}
    assert with_fitted_lanes({"lanes": 0}, 32, 4) == {"lanes": 0}  # no loads: nothing to fit


def test_a_sweep_with_lanes_zero_runs_each_shape_at_its_fitted_lanes():
    settings = settings_from({"shape": "1000x32,1000x64,1000x33", "rung": "row_multi",
                              "params": ["lanes=0", "loads=1,2"], "seed": 1})
    got = [(c.cols, c.params["loads"], c.params["lanes"]) for c in shape_cases(settings)]
    assert got == [(32, 1, 8), (32, 2, 4), (64, 1, 16), (64, 2, 8), (33, 1, 0), (33, 2, 0)]
    halves = settings_from({"shape": "1000x32", "rung": "row_multi", "dtype": "float16",
                            "params": ["lanes=0", "loads=1"], "seed": 1})
    assert [c.params["lanes"] for c in shape_cases(halves)] == [4]


def test_lanes_zero_fitted_to_lanes_also_given_runs_that_case_once():
    settings = settings_from({"shape": "1000x32", "rung": "row_multi",
                              "params": ["lanes=0,8,4", "loads=1"], "seed": 1})
    assert [c.params["lanes"] for c in shape_cases(settings)] == [8, 4]


def test_a_shape_no_lane_count_fits_is_refused_by_its_plan_in_one_line():
    with pytest.raises(UsageError, match=r"lanes=0 fits no lane count to rows of 33 "
                                         r"elements.*loads \(1\)"):
        ROW_LADDER["row_multi"].plan(33000, DTYPES["float32"], 256, 132,
                                     {"lanes": 0, "group_rows": 1, "loads": 1,
                                      "l2_prefetch": 0}, rows=1000)


def test_lanes_zero_is_taken_only_for_lanes():
    assert settings_from({"shape": "4x4", "params": ["lanes=0,4"]}).params["lanes"] == [0, 4]
    with pytest.raises(UsageError, match="parameter width: values must be from 2 to 16$"):
        settings_from({"shape": "4x4", "params": ["width=0"]})
    with pytest.raises(UsageError, match=r"lanes: values must be powers of two from 1 to 32 "
                                         r"\(or 0: fitted to each shape\)"):
        settings_from({"shape": "4x4", "params": ["lanes=0,3"]})


@pytest.mark.parametrize("name", ["row_vec_block", "row_split", "row_tile", "row_multi"])
def test_a_case_that_does_not_stream_keeps_the_key_of_a_file_from_before_evict_first(name):
    """`--resume` of a file written before the row rungs took evict_first skips its cases
    (they ran what evict_first=0 runs); a streaming case is a case of its own."""
    import pandas as pd

    from reducebench.results.files import row_keys

    rung = ROW_LADDER[name]
    plain = Case(rung, DTYPES["float32"], 4096 * 1024, 256, dict(rung.params), rows=4096)
    streaming = Case(rung, DTYPES["float32"], 4096 * 1024, 256,
                     {**rung.params, "evict_first": 1}, rows=4096)
    older_params = ";".join(f"{k}={v}" for k, v in sorted(rung.params.items())
                            if k != "evict_first")
    older = pd.DataFrame({"rung": [name], "dtype": ["float32"], "n": [4096 * 1024],
                          "block": [256], "params": [older_params], "rows": [4096]})
    assert "evict_first=0" in plain.params_text()
    assert row_keys(older).iloc[0] == plain.key
    assert streaming.key != plain.key
