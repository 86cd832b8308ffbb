"""Result records and their CSV files; TOML configs and the run settings built from them."""

import csv
import datetime
import os
import types
from pathlib import Path

import pytest

from reducebench.results import naming
from reducebench.measuring.settings import (RunSettings, load_config, parse_blocks, parse_params,
                                settings_from)
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import ResultsFileError, UsageError
from reducebench.ladder.registry import DEFAULT_BLOCK, LADDER, RUNGS
from reducebench.results.schema import COLUMNS, SCHEMA_VERSION, Record
from reducebench.results.files import ResultsWarning, RowWriter, read_results
from reducebench.results.naming import check_writable, default_path
from reducebench.core.stats import StopRule

REPO = Path(__file__).resolve().parent.parent
META = {"schema_version": SCHEMA_VERSION, "run_id": "abc123", "gpu": "Fake GPU",
        "sm_count": 132, "peak_gbps": 3352.3, "mode": "cold", "seed": 42}


def _record(rung="shfl", n=2**20, **changes):
    fields = dict(rung=rung, dtype="float32", n=n, block=256, finish="relaunch", grid=4096,
                  launches=2, result=12.5, reference=12.5, abs_error=0.0, tolerance=0.01,
                  samples=10, median_us=11.0, min_us=10.0, max_us=12.0, mean_us=11.0,
                  noise_pct=1.5, bytes_read=4 * n, gbps=381.3, pct_peak=11.4,
                  meta=dict(META))
    fields.update(changes)
    return Record(**fields)


# -- records ----------------------------------------------------------------------------

def test_record_row_has_every_column_in_order():
    row = _record().as_row()
    assert list(row) == list(COLUMNS)
    assert row["gpu"] == "Fake GPU" and row["seed"] == 42 and row["verified"] is True
    assert "meta" not in row


def test_record_row_leaves_missing_metadata_empty():
    row = Record("shfl", "float32", 1024, 256).as_row()
    assert set(row) == set(COLUMNS)
    assert row["gpu"] == "" and row["schema_version"] == ""


def test_only_ok_records_are_verified():
    assert _record().verified
    for status in ("FAIL", "error", "skipped"):
        assert not _record(status=status).verified
        assert _record(status=status).as_row()["verified"] is False


# -- writing ----------------------------------------------------------------------------

def _data_lines(path):
    return list(csv.reader(path.read_text().splitlines()))


def test_writer_writes_the_header_once_then_appends_a_row_per_record(tmp_path):
    path = tmp_path / "sub" / "run.csv"
    writer = RowWriter(path)
    writer.write(_record(n=1024))
    rows = _data_lines(path)                 # on disk already: flushed per record
    assert rows[0] == list(COLUMNS) and len(rows) == 2
    writer.write(_record(n=2048))
    writer.write(_record(n=4096, status="FAIL", error="result 1 vs reference 2"))
    rows = _data_lines(path)
    assert len(rows) == 4 and rows.count(list(COLUMNS)) == 1
    assert [r[COLUMNS.index("n")] for r in rows[1:]] == ["1024", "2048", "4096"]
    assert writer.rows == 3


def test_writer_appending_to_an_existing_file_adds_no_second_header(tmp_path):
    path = tmp_path / "run.csv"
    RowWriter(path).write(_record(n=1024))
    again = RowWriter(path)
    again.write(_record(n=2048))
    rows = _data_lines(path)
    assert rows.count(list(COLUMNS)) == 1 and len(rows) == 3


def test_read_results_round_trip(tmp_path):
    path = tmp_path / "run.csv"
    writer = RowWriter(path)
    writer.write(_record(n=1024))
    writer.write(_record(rung="cub", n=1024, block=0, finish="library", median_us=7.5))
    writer.write(_record(rung="gmem", n=1024, status="error",
                         error="compile error: line 1\nline 2, with a comma", samples=0,
                         median_us=float("nan")))
    frame = read_results(path)
    assert len(frame) == 3
    assert list(frame.columns) == list(COLUMNS)
    assert frame["rung"].tolist() == ["shfl", "cub", "gmem"]
    assert frame["n"].tolist() == [1024] * 3
    assert frame["block"].tolist() == [256, 0, 256]
    assert frame["median_us"].iloc[:2].tolist() == [11.0, 7.5]
    assert frame["median_us"].isna().iloc[2]
    assert frame["verified"].tolist() == [True, True, False]
    assert frame["error"].iloc[2] == "compile error: line 1\nline 2, with a comma"
    assert (frame["schema_version"] == SCHEMA_VERSION).all()
    assert (frame["gpu"] == "Fake GPU").all()


def _write_a_newer_schema_version(path):
    record = _record()
    record.meta["schema_version"] = SCHEMA_VERSION + 1
    RowWriter(path).write(record)


@pytest.mark.parametrize("write, refusal", [
    pytest.param(None, "no such file", id="missing-file"),
    pytest.param(lambda path: path.write_text("\n  \n"), "empty", id="empty-file"),
    pytest.param(lambda path: path.write_text("name,time_ms\nfoo,1.5\n"),
                 "not a reducebench results file", id="another-tools-csv"),
    pytest.param(_write_a_newer_schema_version, f"version {SCHEMA_VERSION + 1}",
                 id="another-schema-version"),
])
def test_read_results_refuses_a_file_it_cannot_read_naming_it(tmp_path, write, refusal):
    path = tmp_path / "results.csv"
    if write is not None:
        write(path)
    with pytest.raises(ResultsFileError, match=refusal) as info:
        read_results(path)
    assert str(path) in str(info.value)


def test_read_results_ignores_the_row_a_kill_left_unfinished_and_says_so(tmp_path):
    path = tmp_path / "cut.csv"
    writer = RowWriter(path)
    for n in (1024, 2048, 4096):
        writer.write(_record(n=n))
    text = path.read_text()
    path.write_text(text[: len(text) - 60])   # a crash in the middle of the last row
    with pytest.warns(ResultsWarning, match="unfinished"):
        frame = read_results(path)
    assert frame["n"].tolist() == [1024, 2048]


def test_an_unfinished_last_row_after_multi_line_fields_leaves_them_whole(tmp_path):
    path = tmp_path / "cut.csv"
    writer = RowWriter(path)
    writer.write(_record(n=1024, status="error", error="compile error:\nline a\nline b"))
    writer.write(_record(n=2048))
    text = path.read_text()
    assert text.count("\n") == 5              # header, a row over 3 lines, a row
    path.write_text(text[: len(text) - 60])
    with pytest.warns(ResultsWarning):
        frame = read_results(path)
    assert frame["n"].tolist() == [1024]
    assert frame["error"].iloc[0] == "compile error:\nline a\nline b"


def test_read_results_names_the_file_and_line_of_a_malformed_row(tmp_path):
    path = tmp_path / "bad.csv"
    writer = RowWriter(path)
    writer.write(_record(n=1024, status="error", error="compile error:\nline a\nline b"))
    for n in (2048, 4096):
        writer.write(_record(n=n))
    lines = path.read_bytes().split(b"\r\n")
    lines[2] = lines[2][:40]                  # the 2048 row cut short, more rows after it
    path.write_bytes(b"\r\n".join(lines))
    with pytest.raises(ResultsFileError) as info:
        read_results(path)
    message = str(info.value)
    assert str(path) in message and "line 5" in message and "malformed" in message


def _with_cell(path: Path, data_row: int, column: str, value: str) -> None:
    """The results file with one cell of one data row (0: the first) replaced."""
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    rows[1 + data_row][rows[0].index(column)] = value
    with open(path, "w", newline="") as handle:
        csv.writer(handle, lineterminator="\r\n").writerows(rows)


@pytest.mark.parametrize("column, value, refusal", [
    ("n", "abc", "n: 'abc' is not a whole number of at least 1"),
    ("n", "", "n: an empty cell is not a whole number of at least 1"),
    ("n", "-5", "n: -5 is not a whole number of at least 1"),
    ("n", "1024.5", "n: 1024.5 is not a whole number of at least 1"),
    ("block", "big", "block: 'big' is not a whole number of at least 0"),
    ("block", "", "block: an empty cell is not a whole number of at least 0"),
    ("median_us", "fast", "median_us: 'fast' is not a number of microseconds"),
    ("status", "weird", "status: 'weird' is not one of ok, suspect, FAIL, error, skipped"),
    ("schema_version", "two", "schema_version: 'two' is not a number"),
])
def test_read_results_names_the_line_of_a_cell_no_reader_could_use(tmp_path, column, value,
                                                                    refusal):
    # n and block are a case's key: a word there crashed compare, plot, report and
    # explain with a traceback. The first row spans three lines, so the bad third row
    # (n=4096) is on the file's line 6.
    path = tmp_path / "bad_cell.csv"
    writer = RowWriter(path)
    writer.write(_record(n=1024, status="error", error="compile error:\nline a\nline b"))
    for n in (2048, 4096):
        writer.write(_record(n=n))
    _with_cell(path, 2, column, value)
    with pytest.raises(ResultsFileError) as info:
        read_results(path)
    assert str(info.value) == f"{path}, line 6: {refusal}"


def test_a_file_a_spreadsheet_saved_with_a_byte_order_mark_still_reads(tmp_path):
    path = tmp_path / "from_excel.csv"
    writer = RowWriter(path)
    for n in (1024, 2048):
        writer.write(_record(n=n))
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    frame = read_results(path)
    assert frame["n"].tolist() == [1024, 2048]
    assert frame["schema_version"].tolist() == [SCHEMA_VERSION] * 2


def test_an_untimed_case_with_an_empty_median_is_still_read(tmp_path):
    path = tmp_path / "skipped.csv"
    writer = RowWriter(path)
    writer.write(_record(n=1024))
    writer.write(_record(n=2048, status="skipped", error="does not take float32",
                         median_us=float("nan")))
    frame = read_results(path)
    assert frame["status"].tolist() == ["ok", "skipped"]


def test_check_writable_refuses_an_existing_file(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text("keep me")
    with pytest.raises(UsageError, match="already exists"):
        check_writable(path)
    check_writable(path, replace=True)
    assert path.read_text() == "keep me"


def test_check_writable_refuses_a_missing_folder(tmp_path):
    with pytest.raises(UsageError, match="does not exist") as info:
        check_writable(tmp_path / "missing" / "run.csv")
    assert str(tmp_path / "missing") in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into any folder")
def test_check_writable_refuses_an_unwritable_folder(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(UsageError, match="not writable"):
            check_writable(folder / "run.csv")
    finally:
        folder.chmod(0o700)


def test_check_writable_accepts_a_new_file_in_an_existing_folder(tmp_path):
    check_writable(tmp_path / "new.csv")
    assert not (tmp_path / "new.csv").exists()


def test_default_path_never_returns_an_existing_path(tmp_path, monkeypatch):
    frozen = datetime.datetime(2024, 6, 7, 12, 30, 45, tzinfo=datetime.timezone.utc)

    class Frozen(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return frozen

    monkeypatch.setattr(naming, "_dt",
                        types.SimpleNamespace(datetime=Frozen, timezone=datetime.timezone))
    first = default_path(tmp_path, "NVIDIA H100 80GB HBM3")
    assert first.name == "20240607T123045Z_nvidia-h100-80gb-hbm3.csv"
    seen = {first}
    first.write_text("")
    for _ in range(3):
        path = default_path(tmp_path, "NVIDIA H100 80GB HBM3")
        assert not path.exists() and path not in seen
        seen.add(path)
        path.write_text("")
    assert default_path(tmp_path, "???").name == "20240607T123045Z_gpu.csv"


# -- configs ----------------------------------------------------------------------------

def _toml(tmp_path, text, name="sweep.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_load_config_reads_a_valid_file(tmp_path):
    path = _toml(tmp_path, 'description = "x"\nsize = "2^20..2^22"\ndtype = ["float32", '
                           '"int32"]\nrung = "all"\nblock = [128, 256]\nmode = "warm"\n'
                           'seed = 7\nparams = { unroll = [2, 4] }\nmax_noise_pct = 1.5\n'
                           'max_time = 1\nmin_samples = 5\n')
    values = load_config(path)
    assert values["size"] == "2^20..2^22" and values["block"] == [128, 256]
    assert values["params"] == {"unroll": [2, 4]} and values["max_time"] == 1
    assert values["max_noise_pct"] == 1.5 and "description" not in values


def test_the_old_max_noise_key_says_what_replaced_it(tmp_path):
    path = _toml(tmp_path, "max_noise = 0.01\n")
    with pytest.raises(UsageError, match="max_noise_pct .*percent"):
        load_config(path)


@pytest.mark.parametrize("name", ["harris.toml", "seed004.toml"])
def test_shipped_configs_load_and_make_settings(name):
    values = load_config(REPO / "configs" / name)
    settings = settings_from(values)
    assert settings.sizes and settings.dtypes and settings.rungs and settings.blocks


def test_load_config_refuses_an_unknown_key_naming_file_and_key(tmp_path):
    path = _toml(tmp_path, 'size = "2^20"\nblocks = 256\n')
    with pytest.raises(UsageError) as info:
        load_config(path)
    assert str(path) in str(info.value) and "'blocks'" in str(info.value)


@pytest.mark.parametrize("line, key", [("block = true", "block"), ("size = 1.5", "size"),
                                       ("seed = \"seven\"", "seed"), ("dtype = 3", "dtype"),
                                       ("max_noise = \"low\"", "max_noise"),
                                       ("min_samples = 2.5", "min_samples"),
                                       ("params = [2, 4]", "params"),
                                       ("device = false", "device"),
                                       ("mode = \"hot\"", "mode")])
def test_load_config_refuses_a_wrong_value_type(tmp_path, line, key):
    path = _toml(tmp_path, line + "\n")
    with pytest.raises(UsageError) as info:
        load_config(path)
    assert str(path) in str(info.value) and key in str(info.value)


def test_load_config_refuses_broken_toml_naming_the_file(tmp_path):
    path = _toml(tmp_path, 'size = "2^20\nblock = 256\n')
    with pytest.raises(UsageError, match="invalid TOML") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_load_config_refuses_a_file_that_is_not_text(tmp_path):
    path = tmp_path / "binary.toml"
    path.write_bytes(b'size = "2^20"\n\xff\xfe = 1\n')
    with pytest.raises(UsageError, match="invalid TOML") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_load_config_refuses_a_folder(tmp_path):
    with pytest.raises(UsageError) as info:
        load_config(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_load_config_refuses_a_missing_file(tmp_path):
    with pytest.raises(UsageError, match="no such file") as info:
        load_config(tmp_path / "nope.toml")
    assert "nope.toml" in str(info.value)


def test_settings_from_nothing_are_the_defaults():
    s = settings_from({})
    assert s.sizes == [2**24] and [d.name for d in s.dtypes] == ["float32"]
    assert s.rungs == [r for r in RUNGS if r.name != "cupy"] and s.blocks == [DEFAULT_BLOCK]
    assert s.cold and s.mode == "cold" and s.out is None and s.seed is None
    assert s.params == {} and s.stop == StopRule() and not s.profile


def test_settings_from_lists_and_params():
    s = settings_from({"size": ["2^10", 2048], "dtype": ["float16", "bf16"],
                       "rung": ["shfl_unroll", "cub"], "block": [128, "256"],
                       "mode": "warm", "out": "x.csv", "seed": 5, "device": 1,
                       "params": {"unroll": [2, 8]}, "min_samples": 3, "max_noise_pct": 2,
                       "max_time": 2})
    assert s.sizes == [1024, 2048]
    assert [d.name for d in s.dtypes] == ["float16", "bfloat16"]
    assert [r.name for r in s.rungs] == ["shfl_unroll", "cub"]
    assert s.blocks == [128, 256] and not s.cold and s.mode == "warm"
    assert s.out == Path("x.csv") and s.seed == 5 and s.device == 1
    assert s.params == {"unroll": [2, 8]}
    assert s.stop == StopRule(min_samples=3, max_noise=0.02, max_time=2.0)


def test_settings_from_command_line_strings():
    s = settings_from({"size": "2^10,2^12", "dtype": "int32,float64",
                       "rung": "shfl_unroll,vector_load", "block": "64,1024",
                       "params": ["unroll=2,4", "loads=1"]})
    assert s.sizes == [1024, 4096] and [d.name for d in s.dtypes] == ["int32", "float64"]
    assert s.blocks == [64, 1024] and s.params == {"unroll": [2, 4], "loads": [1]}


def test_settings_from_refuses_a_parameter_no_rung_takes():
    with pytest.raises(UsageError, match="'nosuch'"):
        settings_from({"params": ["nosuch=2"]})


@pytest.mark.parametrize("items, match", [(["unroll"], "NAME=V"), (["=2"], "NAME=V"),
                                          (["unroll=x"], "whole numbers"),
                                          (["unroll=0"], "from 1 to 64"),
                                          ({"unroll": [2.5]}, "whole numbers")])
def test_parse_params_errors(items, match):
    with pytest.raises(UsageError, match=match):
        parse_params(items)


def test_parse_blocks_accepts_powers_of_two_without_repeats():
    assert parse_blocks("256") == [256]
    assert parse_blocks(" 32, 1024,32") == [32, 1024]
    assert parse_blocks(512) == [512]
    assert parse_blocks([64, "128"]) == [64, 128]


@pytest.mark.parametrize("bad, named", [("48", "48;"), ("2048", "2048;"),
                                        ("0", "0;"), ("16", "16;"),
                                        ("-1", "'-1'"), ("abc", "'abc'"),
                                        ("2.5", "'2.5'"), ("True", "'True'")])
def test_parse_blocks_rejects_bad_sizes_naming_them(bad, named):
    with pytest.raises(UsageError) as info:
        parse_blocks(bad)
    assert f"invalid block size {named}" in str(info.value)


def test_param_sets_cross_the_values_given():
    s = RunSettings(params={"blocks_per_sm": [2, 4], "loads": [1, 2, 8]})
    sets = s.param_sets(LADDER["vector_load"])
    assert len(sets) == 6
    assert {(p["blocks_per_sm"], p["loads"]) for p in sets} == \
        {(b, l) for b in (2, 4) for l in (1, 2, 8)}
    # a rung with only one of the parameters keeps its own value of the others
    assert s.param_sets(LADDER["gridstride_atomic"]) == [{"blocks_per_sm": 2},
                                                         {"blocks_per_sm": 4}]


def test_param_sets_default_to_the_rungs_own_values():
    s = RunSettings(params={"unroll": [2, 8]})
    assert s.param_sets(LADDER["vector_load"]) == [{"blocks_per_sm": 8, "loads": 4,
                                                     "l2_prefetch": 0}]
    assert s.param_sets(LADDER["shfl"]) == [{}]
    assert s.param_sets(LADDER["shfl_unroll"]) == [{"unroll": 2}, {"unroll": 8}]


def test_settings_dtype_aliases():
    assert [d.name for d in settings_from({"dtype": "half,fp64,int"}).dtypes] == \
        ["float16", "float64", "int32"]
    assert DTYPES["bfloat16"].itemsize == 2
