"""Shape sweeps as data (core/shape_sweeps.py): the shapes a sweep declares, worked out by
hand for small totals; `--shape sweep:NAME[@TOTALS]` wherever a shape is taken, refused
in one line when wrong; the sweep's chain limit, which skips a row case without running
it; and a whole sweep run end to end on the host executor."""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import pytest

from reducebench.core import shape_sweeps
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.core.shape_sweeps import SWEEPS, ShapeSweep, nearest_rows
from reducebench.core.sizes import parse_shape_request, parse_shapes
from reducebench.ladder.case import Case
from reducebench.ladder.registry import ROW_LADDER
from reducebench.measuring.runner import plan_all
from reducebench.measuring.settings import recorded_values, settings_from
from cli_runner import invoke, one_error_line

ROWS = SWEEPS["rows"]


def test_a_small_total_gives_every_power_of_two_cols_and_the_odd_ones_that_fit():
    # 64 elements: COLS 4, 8, 16, 32, 64 (rows 16, 8, 4, 2, 1); 33 fits, 64 / 33 = 1.94
    # rounds to 2 rows; 1000 and 1000003 do not fit
    assert ROWS.shapes([64]) == [(16, 4), (8, 8), (4, 16), (2, 32), (2, 33), (1, 64)]
    # 1024: 1024 / 33 = 31.03 -> 31 rows; 1024 / 1000 = 1.024 -> 1 row
    assert ROWS.shapes([1024]) == [(256, 4), (128, 8), (64, 16), (32, 32), (31, 33),
                                   (16, 64), (8, 128), (4, 256), (2, 512), (1, 1000),
                                   (1, 1024)]


def test_odd_cols_get_the_nearest_whole_number_of_rows():
    assert nearest_rows(2**20, 33) == 31775        # 31775.03
    assert nearest_rows(2**20, 1000) == 1049       # 1048.58
    assert nearest_rows(2**20, 1000003) == 1       # 1.05
    assert nearest_rows(2**21, 1000003) == 2       # 2.10
    assert nearest_rows(6, 4) == 2                 # 1.5: halves up
    assert nearest_rows(3, 1000) == 1              # never no row


def test_the_declared_sweep_spans_2_to_the_20_to_2_to_the_28():
    shapes = ROWS.shapes()
    # per total 2^k: COLS 2^2 .. 2^k (k - 1 shapes) and the three odd COLS (all fit)
    assert len(shapes) == sum(k - 1 + 3 for k in range(20, 29)) == 234
    assert shapes[0] == (2**18, 4) and shapes[-1] == (1, 2**28)
    assert (31775, 33) in shapes and (1, 1000003) in shapes and (268, 1000003) in shapes
    assert ROWS.max_chain == 2**16


@pytest.mark.parametrize("text, shapes", [
    ("sweep:rows@2^6", [(16, 4), (8, 8), (4, 16), (2, 32), (2, 33), (1, 64)]),
    ("sweep:rows@2^2..2^3", [(1, 4), (2, 4), (1, 8)]),
    ("8x8,sweep:rows@2^6", [(8, 8), (16, 4), (4, 16), (2, 32), (2, 33), (1, 64)]),
])
def test_a_sweep_is_a_shape_token_like_any_other(text, shapes):
    assert parse_shapes(text) == shapes
    request = parse_shape_request(text)
    assert request.shapes == shapes and request.max_chain == 2**16


def test_plain_shapes_set_no_chain_limit():
    assert parse_shape_request("1000x33").max_chain is None


@pytest.mark.parametrize("shape, fragment", [
    ("sweep:", "name a sweep after sweep: (declared: rows"),
    ("sweep:rowz", "unknown sweep 'rowz' (did you mean rows?)"),
    ("sweep:rows@", "give the totals after @, e.g. sweep:rows@2^24"),
    ("sweep:rows@2", "no shape of sweep rows fits these totals (COLS start at 4)"),
    ("sweep:rows@2^x", "its totals: invalid size '2^x'"),
    ("sweep:rows@2^3..2^99", "its totals: size"),
])
def test_a_bad_sweep_is_one_line_and_exit_2(shape, fragment):
    with pytest.raises(UsageError, match=None) as caught:
        parse_shapes(shape)
    assert fragment in str(caught.value)
    one_error_line(invoke("run", "--shape", shape), fragment)


def test_the_settings_record_the_sweeps_limit_and_a_resume_keeps_it():
    settings = settings_from({"shape": "sweep:rows@2^6", "rounds": 1})
    assert settings.shapes == ROWS.shapes([64]) and settings.max_chain == 2**16
    options = settings.options()
    assert options["max_chain"] == 2**16
    assert options["shape"] == ["sweep:rows@2^6"]  # the request, not its 6 shapes
    assert settings.shapes == [(16, 4), (8, 8), (4, 16), (2, 32), (2, 33), (1, 64)]
    resumed = settings_from(recorded_values(json.dumps(options)))
    assert resumed.shapes == settings.shapes and resumed.max_chain == 2**16
    assert resumed.options() == options
    assert "max_chain" not in settings_from({"shape": "8x8"}).options()


def test_a_file_that_recorded_every_shape_of_its_sweep_still_resumes():
    """Files whose options list every shape (as they were written before the request was
    recorded) resume to the same shapes."""
    listed = ["2^4x2^2", "2^3x2^3", "2^2x2^4", "2^1x2^5", "2^1x33", "1x2^6", "2^10+25x1000"]
    recorded = {"shape": listed, "rung": ["row_warp"]}
    resumed = settings_from(recorded_values(json.dumps(recorded)))
    assert resumed.shapes == [(16, 4), (8, 8), (4, 16), (2, 32), (2, 33), (1, 64),
                              (1049, 1000)]


def test_a_recorded_sweep_is_a_few_bytes_not_a_list_of_every_shape():
    """A record's options stay small whatever the sweep expands to: the rows sweep over
    2^20..2^28 is hundreds of shapes, its record one short item."""
    settings = settings_from({"shape": "sweep:rows@2^20..2^28,1000x33", "rounds": 1})
    assert len(settings.shapes) > 200
    assert settings.options()["shape"] == ["sweep:rows@2^20..2^28", "1000x33"]
    assert len(json.dumps(settings.options())) < 1000


def _planned(rung, rows, cols, max_chain, block=256):
    case = Case(rung, DTYPES["float32"], rows * cols, block, dict(rung.params), rows=rows)
    (planned,) = plan_all([case], 132, max_chain=max_chain)
    return planned


def test_a_row_case_over_the_chain_limit_is_skipped_without_running():
    # one thread adds a row of 2^17 in sequence: over 2^16
    thread = _planned(ROW_LADDER["row_thread"], 1, 2**17, 2**16)
    assert thread.plan is None
    assert thread.skipped == ("each lane would add 2^17 elements in sequence; a shape sweep "
                              "skips chains over 2^16 (milliseconds a run)")
    # a block of 256 lanes: 512 each; without a limit, anything runs
    assert _planned(ROW_LADDER["row_block"], 1, 2**17, 2**16).plan is not None
    assert _planned(ROW_LADDER["row_thread"], 1, 2**17, None).plan is not None
    # exactly at the limit runs; a library reference is never skipped, even where the
    # sqrt(2^16) = 2^8 elements each of its threads is taken to add are over a limit of 2^7
    assert _planned(ROW_LADDER["row_thread"], 2, 2**16, 2**16).plan is not None
    assert _planned(ROW_LADDER["torch_rows"], 1, 2**16, 2**7, block=0).plan is not None


def test_a_row_case_with_more_lanes_a_row_than_elements_is_skipped_in_a_sweep():
    # a warp a row: 32 lanes; at 32 COLS each has one element, at 31 one has none
    assert _planned(ROW_LADDER["row_warp"], 64, 32, 2**16).plan is not None
    warp = _planned(ROW_LADDER["row_warp"], 64, 31, 2**16)
    assert warp.plan is None and warp.skipped.startswith("32 lanes a row for 31 elements")
    # split rows: block x splits lanes (132 x 8 / 2 = 528 blocks a row, at most the row's
    # 2 tiles of 256 x 4 vectors: 512 lanes for 8192 elements)
    assert _planned(ROW_LADDER["row_split"], 2, 8192, 2**16).plan.row_lanes == 512
    # the same lanes where the parts are partials summed by a second launch
    two_pass = _planned(ROW_LADDER["row_two_pass"], 2, 8192, 2**16).plan
    assert (len(two_pass.launches), two_pass.row_lanes) == (2, 512)
    # without a sweep's limit nothing is skipped; row_auto is never skipped
    assert _planned(ROW_LADDER["row_warp"], 64, 31, None).plan is not None
    auto_block = replace(ROW_LADDER["row_block"], name="row_auto")
    assert _planned(auto_block, 64, 4, 2**16).plan is not None
    assert _planned(ROW_LADDER["row_block"], 64, 4, 2**16).plan is None


def test_a_split_rung_that_gives_each_row_one_block_is_skipped_in_a_sweep():
    # 132 SMs x 16 (row_split) or 8 (row_two_pass) blocks = 2112 or 1056 blocks wanted:
    # 4096 rows fill the GPU alone (one block a row), 16 rows do not (132 or 66 a row)
    for name, shared in (("row_split", 132), ("row_two_pass", 66)):
        many = _planned(ROW_LADDER[name], 4096, 4096, 2**16)
        assert many.plan is None and many.skipped.startswith("one block a row (the rows "
                                                             "alone fill the GPU)")
        assert _planned(ROW_LADDER[name], 16, 2**20, 2**16).plan.launches[0].splits == shared
        assert _planned(ROW_LADDER[name], 4096, 4096, None).plan is not None
    # a cluster always shares its row; a block-a-row rung is what the skipped ones are
    assert _planned(ROW_LADDER["row_cluster"], 4096, 4096, 2**16).plan is not None
    assert _planned(ROW_LADDER["row_vec_block"], 4096, 4096, 2**16).plan is not None


@pytest.fixture
def tiny_sweep(monkeypatch):
    """A sweep at 64 elements whose chain limit is 8, so that the host executor meets it."""
    sweep = ShapeSweep("tiny", "64 elements, chains up to 8", totals=(64,), max_chain=8)
    monkeypatch.setitem(shape_sweeps.SWEEPS, "tiny", sweep)
    return sweep


def test_a_sweep_runs_end_to_end_with_its_limit(tmp_path, fake_device, tiny_sweep,
                                                 monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    out = tmp_path / "sweep.csv"
    # the rungs of one element a load, row_auto and a library
    rungs = "row_thread,row_group,row_warp,row_block,row_auto,torch_rows"
    result = invoke("run", "--shape", "sweep:tiny", "--rung", rungs, "--rounds", "1",
                    "--out", out)
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert len(frame) == 6 * 6       # six shapes, six rungs
    assert sorted(set(zip(frame["rows"], frame["cols"]))) == sorted(tiny_sweep.shapes())
    skipped = frame[frame["status"] == "skipped"]
    # over a chain of 8: a thread per row at COLS 16, 32, 33 and 64 (chains 16..64); more
    # lanes a row than elements: a block of 256 at every COLS, a warp below 32, a group
    # of 8 at 4. row_auto runs whatever it chose (at 16 a thread a row, chain 16)
    assert sorted(zip(skipped["rung"], skipped["cols"])) == [
        ("row_block", 4), ("row_block", 8), ("row_block", 16), ("row_block", 32),
        ("row_block", 33), ("row_block", 64), ("row_group", 4),
        ("row_thread", 16), ("row_thread", 32), ("row_thread", 33), ("row_thread", 64),
        ("row_warp", 4), ("row_warp", 8), ("row_warp", 16)]
    reasons = dict(zip(zip(skipped["rung"], skipped["cols"]), skipped["error"]))
    assert reasons[("row_warp", 16)] == ("32 lanes a row for 16 elements: a shape sweep "
                                         "skips cases with lanes that have nothing to add")
    assert set(frame.loc[frame["status"] != "skipped", "status"]) == {"ok"}
    assert json.loads(frame["options"].iloc[0])["max_chain"] == 8


def test_shapes_given_without_a_request_are_recorded_one_by_one():
    """Settings made with shapes and no --shape text (as a caller of the package may make
    them) record each shape as format_shape writes it, ROWS first."""
    settings = settings_from({"shape": "8x8", "rounds": 1})
    settings.shapes, settings.shape_request = [(1048576, 8), (1000, 33)], []
    assert settings.options()["shape"] == ["2^20x2^3", "1000x33"]
