"""The row ladder's library references on the CPU: cub_rows (CUB's segmented sum) and
triton_rows (a Triton row reduction) are rungs of the row ladder as data, after its
kernels and after torch_rows; their plans give one value a row from a library; the host
executor runs them through the runner, every row verified; a wrong row from either
fails naming it; CUB's dtypes leave out the half types with one note; Triton's tile is a
power of two on both sides, worked out by hand; `list` and `show` describe them."""

from __future__ import annotations

import numpy as np
import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.case import Case
from reducebench.ladder.geometry import next_power_of_two, triton_row_tile
from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS, display_rank, parse_row_rungs
from reducebench.measuring import hostexec
from reducebench.measuring.runner import run
from reducebench.measuring.settings import settings_from

from cli_runner import invoke
from fakes import FakeBackend

REFERENCES = ("cub_rows", "triton_rows")
SHAPES = [(1, 1), (1, 2**12 + 1), (2**12, 1), (3, 1003), (1000, 33), (7, 5)]


def _run(rung_name: str, shape, dtype: str):
    rows, cols = shape
    rung = ROW_LADDER[rung_name]
    case = Case(rung, DTYPES[dtype], rows * cols, 0, {}, rows=rows)
    settings = settings_from({"size": "2^10", "seed": 41, "rounds": 1})
    return run(settings, FakeBackend(), lambda record: None, cases=[case])


def test_the_references_come_last_in_the_row_ladder_after_torch_rows():
    names = [r.name for r in ROW_RUNGS]
    assert names[-3:] == ["torch_rows", "cub_rows", "triton_rows"]
    kernels = [r.name for r in ROW_RUNGS if not r.is_library]
    assert names[:len(kernels)] == kernels       # every library after every kernel
    assert sorted(names, key=display_rank) == names
    assert [r.name for r in parse_row_rungs("all")] == names


@pytest.mark.parametrize("name", REFERENCES)
def test_a_reference_plan_is_one_library_value_a_row(name):
    rung = ROW_LADDER[name]
    plan = rung.plan(1000 * 33, DTYPES["float32"], 0, 132, rows=1000)
    assert plan.library == name and plan.row_outputs == 1000 and not plan.launches
    assert plan.bytes_read == 1000 * 33 * 4 and not plan.buffers
    assert rung.deterministic and not rung.params and rung.source is None


def test_cub_takes_the_types_its_binding_sums_in_the_accumulator_type():
    # CUB sums in the input type: float32, float64 and int32 are their own accumulators
    assert ROW_LADDER["cub_rows"].dtypes == ("float32", "float64", "int32")
    assert all(DTYPES[d].acc_name == d for d in ROW_LADDER["cub_rows"].dtypes)
    assert ROW_LADDER["triton_rows"].dtypes == tuple(DTYPES)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{r}x{c}" for r, c in SHAPES])
@pytest.mark.parametrize("name", REFERENCES)
def test_each_reference_is_verified_row_by_row_on_the_host(name, shape, dtype):
    (record,) = _run(name, shape, dtype)
    if dtype not in ROW_LADDER[name].dtypes:
        assert (record.status, record.error) == ("skipped", f"{name} does not take {dtype}")
        return
    assert (record.status, record.error) == ("ok", "")
    assert (record.rows, record.cols, record.block) == (shape[0], shape[1], 0)
    assert record.result == record.reference and record.samples == 3


@pytest.mark.parametrize("name", REFERENCES)
def test_a_reference_that_puts_a_rows_sum_in_its_neighbours_slot_fails(name, monkeypatch):
    def shifted(src, rows, cols):
        return np.roll(src.astype(np.int64).reshape(rows, cols).sum(axis=1), 1)

    monkeypatch.setattr(hostexec, "row_sums", shifted)
    (record,) = _run(name, (1000, 33), "int32")
    assert record.status == "FAIL"
    assert "row 0 of 1000: expected " in record.error
    assert "(1000 of 1000 rows wrong)" in record.error


def test_run_shape_all_runs_every_reference_end_to_end(tmp_path, fake_device):
    import pandas as pd

    out = tmp_path / "rows.csv"
    result = invoke("run", "--shape", "1000x33", "--dtype", "float32,float16",
                    "--rung", "all", "--out", out)
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out).set_index(["rung", "dtype"])
    for name in ("torch_rows", *REFERENCES):
        assert frame.loc[(name, "float32"), "status"] == "ok"
        assert frame.loc[(name, "float32"), "block"] == 0
    assert frame.loc[("triton_rows", "float16"), "status"] == "ok"
    assert frame.loc[("cub_rows", "float16"), "status"] == "skipped"
    assert frame.loc[("cub_rows", "float16"), "error"] == "cub_rows does not take float16"
    # the references' rows come after the row kernels' in the table
    shown = result.output
    assert shown.index("row_block") < shown.index("torch_rows") < shown.index("cub_rows") \
        < shown.index("triton_rows")


# -- Triton's tile ------------------------------------------------------------------------

def test_next_power_of_two():
    assert [next_power_of_two(v) for v in (0, 1, 2, 3, 4, 5, 33, 4096, 4097)] == \
        [1, 1, 2, 4, 4, 8, 64, 4096, 8192]


# (rows, cols) -> (rows a tile, columns a tile) with tiles of 4096 elements, by hand:
# columns rounded up to a power of two, at most 4096; rows fill the rest of the tile,
# never more than the rows rounded up
TILES = [
    ((4096, 4096), (1, 4096)),
    ((1, 2**24 + 1), (1, 4096)),       # one program walks 4097 tiles
    ((2**20, 1), (4096, 1)),           # 256 programs of 4096 one-element rows
    ((3, 1000003), (1, 4096)),
    ((1000, 33), (64, 64)),            # 33 -> 64 columns, 4096 / 64 = 64 rows
    ((2**20, 8), (512, 8)),
    ((1, 1), (1, 1)),
    ((3, 5), (4, 8)),                  # no more rows than 3 rounded up
    ((7, 5000), (1, 4096)),
]


@pytest.mark.parametrize("shape, tile", TILES, ids=[f"{r}x{c}" for (r, c), _ in TILES])
def test_the_triton_tile_as_worked_out_by_hand(shape, tile):
    assert triton_row_tile(*shape, 4096) == tile
    rows_tile, cols_tile = tile
    assert rows_tile * cols_tile <= 4096
    for side in tile:  # Triton's blocks are powers of two
        assert side & (side - 1) == 0


# -- list and show ------------------------------------------------------------------------

def test_list_shows_the_references_after_the_row_kernels():
    listed = invoke("list", "--format", "text").output
    assert listed.index("row_block") < listed.index("torch_rows") \
        < listed.index("cub_rows") < listed.index("triton_rows")
    assert "cub::DeviceSegmentedReduce" in listed


@pytest.mark.parametrize("name, says", [
    ("cub_rows", "cub::DeviceSegmentedReduce::Sum through CuPy's CUB binding"),
    ("triton_rows", "reducebench/device/triton_sum.py"),
    ("torch_rows", "torch.sum(x, dim=1, dtype=Acc)"),
])
def test_show_describes_a_reference_and_its_own_grid(name, says):
    result = invoke("show", name, width=250)
    assert result.exit_code == 0, result.output
    assert says in result.output
    assert "grid: the library's own, one value a row; --shape ROWSxCOLS" in result.output
    assert "a block a row" not in result.output


def test_a_row_tables_vs_cub_divides_by_cubs_segmented_sum():
    from reducebench.render.run_tables import ratios, reference_rung
    from reducebench.results.schema import Record

    def record(rung, median):
        return Record(rung=rung, dtype="float32", n=33000, rows=1000, cols=33, block=0,
                      status="ok", samples=10, median_us=median)

    records = [record("row_warp", 8.0), record("torch_rows", 6.0), record("cub_rows", 4.0),
               record("triton_rows", 5.0)]
    assert reference_rung(records) == "cub_rows"
    rows = ratios(records)
    assert [row.vs_reference for row in rows] == [2.0, 1.5, 1.0, 1.25]
    assert not any(row.reference for row in rows)  # no stand-in to mark
    assert reference_rung(records[:2]) is None
