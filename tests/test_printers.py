"""The printers behind --format (render/printers.py): which forms go to stdout, where a
command's other lines go, and JSON rows written out by hand."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
from rich.console import Console

from reducebench.render.printers import (console_for, json_rows, lines, records_view,
                                         to_stdout)
from reducebench.results.schema import Record


@pytest.mark.parametrize("form", ["json", "csv", "markdown", "text"])
def test_text_forms_go_to_stdout_and_the_commands_lines_to_stderr(form):
    assert to_stdout(form) is True
    assert console_for(form).stderr is True


def test_the_table_and_the_commands_lines_share_stdout():
    assert to_stdout("table") is False
    assert console_for("table").stderr is False


def test_text_ends_in_one_newline():
    assert lines("a\nb") == "a\nb\n"


def test_json_rows_are_strict_json_with_each_value_in_its_own_type():
    row = {"n": 1000, "median_us": 12.5, "noise_pct": math.nan, "gbps": math.inf,
           "slowest": -math.inf, "rung": "shfl", "deterministic": True, "note": None,
           "path": Path("r/x.csv")}
    assert json_rows([row]) == (
        '[\n {\n  "n": 1000,\n  "median_us": 12.5,\n  "noise_pct": null,\n'
        '  "gbps": null,\n  "slowest": null,\n  "rung": "shfl",\n  "deterministic": true,\n'
        '  "note": null,\n  "path": "r/x.csv"\n }\n]\n')


def records():
    return [Record("shfl", "float32", 1000, 256, median_us=12.5),
            Record("cub", "int32", 2048, 0, status="FAIL", error="wrong sum")]


def test_records_as_json_are_one_row_each_with_nan_as_null():
    view = records_view(records())
    assert view.formats == ("table", "json")
    rows = json.loads(view.forms["json"]())
    assert [(r["rung"], r["dtype"], r["n"], r["status"]) for r in rows] == [
        ("shfl", "float32", 1000, "ok"), ("cub", "int32", 2048, "FAIL")]
    assert rows[0]["median_us"] == 12.5 and rows[1]["median_us"] is None
    assert rows[1]["error"] == "wrong sum"


def test_records_as_a_table_are_the_run_tables_unless_a_table_is_given():
    out = io.StringIO()
    console = Console(file=out, width=200)
    for item in records_view(records()).forms["table"]():
        console.print(item)
    assert "shfl" in out.getvalue() and "cub" in out.getvalue()
    assert records_view(records(), table=lambda: ["mine"]).forms["table"]() == ["mine"]


def test_numpy_scalars_are_written_as_json_numbers_and_their_nan_as_null():
    import numpy as np

    from reducebench.render.printers import _json_value

    assert _json_value(np.int64(3)) == 3 and type(_json_value(np.int64(3))) is int
    assert _json_value(np.float32(1.5)) == 1.5 and type(_json_value(np.float32(1.5))) is float
    assert _json_value(np.float32("nan")) is None
    assert _json_value(np.bool_(True)) is True
