"""Reading, appending, upgrading and finding results files (results/files.py), on small
files written by hand: each refusal in its exact words and line, the later row of a
case measured twice, older layouts in today's columns, an upgrade that keeps every
value, and which files `compare` with no arguments picks."""

from __future__ import annotations

from pathlib import Path

import pytest

from reducebench.core.errors import ResultsFileError
from reducebench.results.files import read_results

HEADER = "schema_version,run_id,utc_time,gpu,rung,dtype,n,block,params,status,median_us"


def csv_file(path: Path, header: str, *rows: str) -> Path:
    path.write_bytes(("\r\n".join((header, *rows)) + "\r\n").encode())
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ResultsFileError) as refused:
        read_results(path)
    return str(refused.value)


@pytest.mark.parametrize("column", ["dtype", "n", "block", "median_us"])
def test_a_file_without_a_key_column_is_refused_naming_it(tmp_path, column):
    names = HEADER.split(",")
    row = "5,r,2026-01-01T00:00:00Z,H100,shfl,float32,1024,256,,ok,3.5".split(",")
    at = names.index(column)
    path = csv_file(tmp_path / "run.csv", ",".join(names[:at] + names[at + 1:]),
                    ",".join(row[:at] + row[at + 1:]))
    assert refusal(path) == f"{path}: missing column {column!r}"


ROW = "5,r1,2026-01-01T00:00:00+00:00,H100,shfl,float32,{n},256,,ok,3.5"


def rows(*sizes: int) -> list[str]:
    return [ROW.format(n=n) for n in sizes]


# -- read_results: what is refused, in one line ------------------------------------------------

def test_a_compressed_file_is_named_as_a_results_file(tmp_path):
    path = tmp_path / "run.csv"
    path.write_bytes(b"\x1f\x8b\x08\x00")
    assert refusal(path) == (f"{path}: not a reducebench results file (gzip-compressed: "
                             "gunzip it first)")


def test_a_quote_left_open_to_the_end_is_not_readable_as_csv(tmp_path):
    path = csv_file(tmp_path / "run.csv", HEADER, ROW.format(n=1)[:-3] + '"3.5')
    said = refusal(path)
    assert said.startswith(f"{path}: not a reducebench results file (not readable as CSV: ")
    assert "EOF inside string" in said


def test_an_empty_file_and_a_header_alone(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text(" \r\n\r\n")
    assert refusal(empty) == f"{empty}: the file is empty"
    header = csv_file(tmp_path / "header.csv", HEADER)
    assert refusal(header) == f"{header}: the file holds a header but no results"


def test_a_csv_that_is_not_results(tmp_path):
    for header in ("a,b,c", "schema_version,b", "rung,b"):
        path = csv_file(tmp_path / "other.csv", header, "1,2")
        assert refusal(path) == (f"{path}: not a reducebench results file (no "
                                 "schema_version and rung columns)")


def test_a_row_of_another_width_names_its_line_after_a_field_with_line_breaks(tmp_path):
    good = ROW.format(n=1024).replace(",ok,", ',"ok",')
    path = csv_file(tmp_path / "run.csv", HEADER + ",note", good + ',"two\r\nlines"',
                    good + ",x,extra")
    assert refusal(path) == f"{path}, line 4: 13 fields where the header has 12 (malformed)"


def test_text_the_csv_module_cannot_read(tmp_path):
    import csv

    path = csv_file(tmp_path / "long.csv", HEADER, ROW.format(n=1) + "," + "x" * 200_000)
    assert refusal(path) == (f"{path}, line 2: not a reducebench results file (a field "
                             f"longer than {csv.field_size_limit():,} characters)")
    stray = csv_file(tmp_path / "stray.csv", HEADER, ROW.format(n=1), 'a"b\rc')
    assert refusal(stray).startswith(f"{stray}, line 3: not a reducebench results file (not "
                                     "readable as CSV: ")


@pytest.mark.parametrize("cell, shown, line", [("", "an empty cell", 3), ("v5", "'v5'", 3)])
def test_a_schema_version_that_is_not_a_number(tmp_path, cell, shown, line):
    path = csv_file(tmp_path / "run.csv", HEADER, ROW.format(n=1),
                    cell + ROW.format(n=2)[1:])
    assert refusal(path) == f"{path}, line {line}: schema_version: {shown} is not a number"


def test_versions_this_reducebench_does_not_read_are_all_named(tmp_path):
    path = csv_file(tmp_path / "run.csv", HEADER, "9" + ROW.format(n=1)[1:],
                    "7" + ROW.format(n=2)[1:], ROW.format(n=4))
    assert refusal(path) == (f"{path}: results schema version 5, 7, 9; this reducebench "
                             "reads versions 1, 2, 3, 4, 5, 6")


# column -> (what its cells must be, [(an unusable cell, how the refusal shows it)])
UNUSABLE_CELLS = {
    "n": ("a whole number of at least 1",
          [("abc", "'abc'"), ("0", "0"), ("1.5", "1.5"), ("", "an empty cell")]),
    "block": ("a whole number of at least 0", [("-1", "-1"), ("2.5", "2.5")]),
    "median_us": ("a number of microseconds", [("fast", "'fast'")]),
    "status": ("one of ok, suspect, FAIL, error, skipped", [("weird", "'weird'")]),
}


@pytest.mark.parametrize("column, cell, shown, what", [
    pytest.param(column, cell, shown, what, id=f"{column}={cell or '(empty)'}")
    for column, (what, cells) in UNUSABLE_CELLS.items() for cell, shown in cells])
def test_a_cell_no_reader_can_use_names_its_line(tmp_path, column, cell, shown, what):
    names = HEADER.split(",")
    bad = ROW.format(n=2).split(",")
    bad[names.index(column)] = cell
    path = csv_file(tmp_path / "run.csv", HEADER, ROW.format(n=1), ",".join(bad))
    assert refusal(path) == f"{path}, line 3: {column}: {shown} is not {what}"


def test_an_untimed_row_and_a_block_of_zero_are_read(tmp_path):
    untimed = ROW.format(n=2).replace(",256,", ",0,").replace(",ok,3.5", ",skipped,")
    frame = read_results(csv_file(tmp_path / "run.csv", HEADER, ROW.format(n=1), untimed))
    assert frame["block"].tolist() == [256, 0] and frame["status"].tolist() == ["ok", "skipped"]


# -- read_results: what is read ----------------------------------------------------------------

def test_a_row_a_killed_run_left_unfinished_is_ignored_with_a_warning(tmp_path):
    from reducebench.results.files import ResultsWarning

    path = csv_file(tmp_path / "run.csv", HEADER, *rows(1, 2))
    with open(path, "ab") as handle:
        handle.write(b"5,r1,2026")
    with pytest.warns(ResultsWarning) as caught:
        frame = read_results(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: its last row was left unfinished by a killed run; ignored"]
    assert frame["n"].tolist() == [1, 2]


def test_a_case_measured_twice_is_its_later_row(tmp_path):
    from reducebench.results.files import ResultsWarning

    later = ROW.format(n=1).replace(",3.5", ",2.5")
    path = csv_file(tmp_path / "run.csv", HEADER, *rows(1, 2, 1), later)
    with pytest.warns(ResultsWarning) as caught:
        frame = read_results(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: 1 case(s) were measured more than once; the latest row of each is used "
        "(2 earlier row(s) left out)"]
    assert frame["n"].tolist() == [2, 1] and frame["median_us"].tolist() == [3.5, 2.5]
    assert list(frame.index) == [0, 1] and "index" not in frame


def test_a_fleet_file_keeps_a_row_per_rank(tmp_path):
    import warnings

    header = HEADER + ",rank"
    path = csv_file(tmp_path / "fleet.csv", header, ROW.format(n=1) + ",0",
                    ROW.format(n=1) + ",1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_results(path)["rank"].tolist() == [0, 1]


def test_an_older_layout_is_read_in_todays_columns(tmp_path):
    from reducebench.results.schema import COLUMNS

    frame = read_results(csv_file(tmp_path / "v1.csv", HEADER, *rows(1)))
    assert set(COLUMNS) <= set(frame.columns) and frame["kind"].tolist() == ["single"]
    assert frame["note"].isna().all() and frame["n"].tolist() == [1]
    # a column the file lacks is read as an empty column of the file is: float NaN
    assert frame["read_us"].dtype == float and frame["round_medians_us"].dtype == float
    multi = read_results(csv_file(tmp_path / "multi.csv", HEADER + ",gpus", ROW.format(n=1)
                                  + ",2"))
    assert multi["kind"].tolist() == ["multigpu"] and "spread_us" in multi


def test_a_kind_recorded_is_kept(tmp_path):
    path = csv_file(tmp_path / "run.csv", HEADER + ",kind", ROW.format(n=1) + ",multigpu")
    assert read_results(path)["kind"].tolist() == ["multigpu"]


def test_a_file_in_todays_layout_is_read_as_written(tmp_path):
    from reducebench.results.files import RowWriter
    from reducebench.results.schema import COLUMNS, Record

    path = tmp_path / "run.csv"
    RowWriter(path).write(Record("shfl", "float32", 1024, 256, median_us=3.5,
                                 meta={"schema_version": 5, "kind": "single"}))
    frame = read_results(path)
    assert list(frame.columns) == list(COLUMNS)


def test_row_keys_and_completed_keys(tmp_path):
    from reducebench.results.files import completed_keys, row_keys

    path = csv_file(tmp_path / "run.csv", HEADER, ROW.format(n=1),
                    ROW.format(n=2).replace(",256,,", ",256,unroll=4,"))
    frame = read_results(path)
    assert row_keys(frame).tolist() == [("shfl", "float32", 1, 256, ""),
                                        ("shfl", "float32", 2, 256, "unroll=4")]
    assert list(row_keys(frame.iloc[[1]]).index) == [1]
    assert completed_keys(frame.drop(columns="params")) == {("shfl", "float32", 1, 256, ""),
                                                            ("shfl", "float32", 2, 256, "")}


# -- RowWriter ------------------------------------------------------------------------------

def test_a_writer_makes_its_folder_writes_one_header_and_counts_rows(tmp_path):
    from reducebench.results.files import RowWriter
    from reducebench.results.schema import COLUMNS, Record

    path = tmp_path / "a" / "b" / "run.csv"
    writer = RowWriter(path)
    for n in (1, 2):
        writer.write(Record("shfl", "float32", n, 256, meta={"schema_version": 5}))
    assert writer.rows == 2
    lines = path.read_bytes().split(b"\r\n")
    assert lines[0].decode() == ",".join(COLUMNS) and len(lines) == 4 and lines[3] == b""
    again = RowWriter(path)
    again.write(Record("shfl", "float32", 4, 256, meta={"schema_version": 5}))
    assert again.rows == 1 and path.read_text().count("schema_version") == 1


def test_a_writer_appends_to_a_file_a_spreadsheet_marked_and_cuts_a_half_row(tmp_path):
    from reducebench.results.files import RowWriter
    from reducebench.results.schema import COLUMNS, Record

    path = tmp_path / "run.csv"
    path.write_bytes(b"\xef\xbb\xbf" + ",".join(COLUMNS).encode() + b"\r\n5,single,r1,20")
    RowWriter(path).write(Record("shfl", "float32", 1, 256, meta={"schema_version": 5}))
    assert read_results(path)["n"].tolist() == [1]
    # a byte that is not UTF-8 in the file does not stop its header being read
    odd = tmp_path / "odd.csv"
    odd.write_bytes(",".join(COLUMNS).encode() + b"\r\n5,single,r\xff" + b"," * (len(COLUMNS) - 3)
                    + b"\r\n")
    RowWriter(odd).write(Record("shfl", "float32", 1, 256, meta={"schema_version": 5}))
    assert odd.read_bytes().count(b"\r\n") == 3
    empty = tmp_path / "empty.csv"
    empty.touch()
    RowWriter(empty).write(Record("shfl", "float32", 1, 256, meta={"schema_version": 5}))
    assert empty.read_text().splitlines()[0] == ",".join(COLUMNS)


def test_a_file_of_another_layout_is_refused_and_left_as_it_is(tmp_path):
    from reducebench.results.files import RowWriter
    from reducebench.results.schema import COLUMNS

    path = csv_file(tmp_path / "old.csv", HEADER, "4" + ROW.format(n=1)[1:])
    with pytest.raises(ResultsFileError) as refused:
        RowWriter(path)
    assert str(refused.value) == (
        f"{path}: written by another version of reducebench (results schema 4, 11 columns; "
        f"this one appends schema 6, {len(COLUMNS)} columns); it is left as it is")
    # the old file's header and first row read whatever its bytes (a spreadsheet's mark,
    # a byte that is not UTF-8)
    marked = tmp_path / "marked.csv"
    marked.write_bytes(b"\xef\xbb\xbf" + (HEADER + "\r\n4" + ROW.format(n=1)[1:]).encode()
                       .replace(b"shfl", b"shfl\xff") + b"\r\n")
    with pytest.raises(ResultsFileError, match=r"\(results schema 4, 11 columns"):
        RowWriter(marked)
    header_only = csv_file(tmp_path / "header.csv", HEADER)
    with pytest.raises(ResultsFileError, match=r"\(results schema \?, 11 columns"):
        RowWriter(header_only)
    assert header_only.read_text() == HEADER + "\n"


# -- versions and upgrades -------------------------------------------------------------------

def test_file_version_is_its_first_rows(tmp_path):
    from reducebench.results.files import file_version

    assert file_version(csv_file(tmp_path / "a.csv", HEADER, "3" + ROW.format(n=1)[1:])) == 3
    assert file_version(csv_file(tmp_path / "b.csv", HEADER)) == 0
    assert file_version(csv_file(tmp_path / "c.csv", HEADER, "x" + ROW.format(n=1)[1:])) == 0


def test_an_upgrade_keeps_every_value_and_says_so_in_each_note(tmp_path):
    import csv

    from reducebench.results.files import upgrade_file
    from reducebench.results.schema import COLUMNS

    header = HEADER + ",note"
    original = csv_file(tmp_path / "run.csv", header, "4" + ROW.format(n=1)[1:] + ",",
                        "4" + ROW.format(n=2)[1:] + ",Xenon lamp; slow clock")
    before = original.read_bytes()
    backup = upgrade_file(original)
    assert backup == tmp_path / "run.csv.bak" and backup.read_bytes() == before
    raw = original.read_bytes()
    assert raw.count(b"\r\n") == 3 and raw.endswith(b"\r\n")
    with open(original, newline="") as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0]) == list(COLUMNS)
    assert [r["note"] for r in table] == ["upgraded from results schema 4",
                                          "Xenon lamp; slow clock; upgraded from results "
                                          "schema 4"]
    assert [r["schema_version"] for r in table] == ["6", "6"]
    assert [(r["n"], r["median_us"], r["gpu"]) for r in table] == [("1", "3.5", "H100"),
                                                                   ("2", "3.5", "H100")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv", "run.csv.bak"]


def test_a_multigpu_file_is_upgraded_in_its_own_columns(tmp_path):
    from reducebench.results.files import upgrade_file
    from reducebench.results.schema import MULTIGPU_COLUMNS

    path = csv_file(tmp_path / "multi.csv", HEADER + ",gpus", "4" + ROW.format(n=1)[1:] + ",2")
    upgrade_file(path)
    assert path.read_text().splitlines()[0] == ",".join(MULTIGPU_COLUMNS)


def test_an_upgrade_with_a_backup_in_the_way_changes_nothing(tmp_path):
    from reducebench.results.files import upgrade_file

    path = csv_file(tmp_path / "run.csv", HEADER, "4" + ROW.format(n=1)[1:])
    before = path.read_bytes()
    (tmp_path / "run.csv.bak").write_text("mine")
    with pytest.raises(ResultsFileError) as refused:
        upgrade_file(path)
    assert str(refused.value) == f"{path}: run.csv.bak is in the way of the upgrade; move it"
    assert path.read_bytes() == before and (tmp_path / "run.csv.bak").read_text() == "mine"


# -- newest_results: which files `compare` with no arguments picks ------------------------------

RUN_HEADER = "schema_version,utc_time,gpu,mode,timing,inputs,options,rung,dtype,n,block,median_us"


def run_file(path: Path, when: str, sizes=(1, 2), gpu="H100", options="", dtype="float32",
             rung="shfl", extra_times=()) -> Path:
    quoted = '"' + options.replace('"', '""') + '"' if options else ""
    lines = [f"5,{when},{gpu},cold,single,exact,{quoted},{rung},{dtype},{n},256,3.5"
             for n in sizes]
    lines += [f"5,{t},{gpu},cold,single,exact,{quoted},{rung},{dtype},999,256,3.5"
              for t in extra_times]
    path.parent.mkdir(parents=True, exist_ok=True)
    return csv_file(path, RUN_HEADER, *lines)


def test_newest_is_by_the_latest_time_recorded_in_any_folder(tmp_path):
    from reducebench.results.files import newest_results

    run_file(tmp_path / "z.csv", "2026-01-01T00:00:00+00:00",
             extra_times=["2026-01-05T00:00:00+00:00"])     # its latest row is the newest
    run_file(tmp_path / "sub" / "a.csv", "2026-01-03T00:00:00+00:00")
    run_file(tmp_path / "b.csv", "2026-01-02T00:00:00+00:00")
    (tmp_path / "z.samples.csv").write_text("not results")
    # newer, but a multi-GPU run, and a file that is no results at all: passed over
    csv_file(tmp_path / "multi.csv", RUN_HEADER + ",gpus",
             "5,2026-02-01T00:00:00+00:00,H100,cold,single,exact,,shfl,float32,1,256,3.5,2")
    (tmp_path / "zz.csv").write_bytes(b"\x1f\x8b\x08")
    assert newest_results(tmp_path, 1) == [tmp_path / "z.csv"]
    assert newest_results(tmp_path, 2) == [tmp_path / "sub" / "a.csv", tmp_path / "z.csv"]


def test_the_same_time_goes_by_name_and_files_without_times_are_oldest(tmp_path):
    from reducebench.results.files import newest_results

    run_file(tmp_path / "b.csv", "2026-01-01T00:00:00+00:00")
    run_file(tmp_path / "a.csv", "2026-01-01T00:00:00+00:00")
    run_file(tmp_path / "c.csv", "")
    assert newest_results(tmp_path, 2) == [tmp_path / "a.csv", tmp_path / "b.csv"]


def test_a_pair_needs_a_case_in_common_and_the_same_kind(tmp_path):
    from reducebench.results.files import newest_results

    run_file(tmp_path / "old.csv", "2026-01-01T00:00:00+00:00")
    run_file(tmp_path / "apart.csv", "2026-01-02T00:00:00+00:00", sizes=(4, 8))
    run_file(tmp_path / "h200.csv", "2026-01-03T00:00:00+00:00", gpu="H200")
    run_file(tmp_path / "new.csv", "2026-01-04T00:00:00+00:00", sizes=(2, 4))
    # h200.csv is newer but of another GPU; apart.csv shares n=4 with new.csv
    assert newest_results(tmp_path, 2) == [tmp_path / "apart.csv", tmp_path / "new.csv"]
    (tmp_path / "apart.csv").unlink()
    assert newest_results(tmp_path, 2) == [tmp_path / "old.csv", tmp_path / "new.csv"]


def test_the_rungs_and_dtypes_the_options_asked_for_make_the_kind(tmp_path):
    import json

    from reducebench.results.files import newest_results

    asked = json.dumps({"rung": ["shfl"], "kernel": "k.cu", "dtype": ["float32"]})
    run_file(tmp_path / "base.csv", "2026-01-01T00:00:00+00:00", options=asked)
    other = json.dumps({"rung": ["shfl", "cub"], "kernel": "k.cu", "dtype": ["float32"]})
    run_file(tmp_path / "other.csv", "2026-01-02T00:00:00+00:00", options=other)
    run_file(tmp_path / "new.csv", "2026-01-03T00:00:00+00:00",
             options=json.dumps({"kernel": ["k.cu"], "rung": "shfl", "dtype": "float32"}))
    assert newest_results(tmp_path, 2) == [tmp_path / "base.csv", tmp_path / "new.csv"]


def test_options_that_are_not_an_object_record_no_rungs(tmp_path):
    from reducebench.results.files import newest_results

    run_file(tmp_path / "base.csv", "2026-01-01T00:00:00+00:00", options="[1, 2]")
    run_file(tmp_path / "new.csv", "2026-01-02T00:00:00+00:00", options="{not json")
    assert newest_results(tmp_path, 2) == [tmp_path / "base.csv", tmp_path / "new.csv"]


def test_no_pair_names_the_newest_file_its_kind_and_the_files_there(tmp_path):
    import json

    from reducebench.results.files import newest_results

    for day in range(1, 10):
        run_file(tmp_path / f"f{day}.csv", f"2026-01-0{day}T00:00:00+00:00", gpu=f"G{day}")
    with pytest.raises(ResultsFileError) as refused:
        newest_results(tmp_path, 2)
    assert str(refused.value) == (
        f"the newest results file {tmp_path / 'f9.csv'} (G9, cold L2, single timing, exact "
        "inputs, float32, rungs not recorded) has no earlier run of the same GPU, L2 mode, "
        f"timing, inputs, dtypes and rungs with a case in common under {tmp_path}/; give "
        "BASE and NEW (files there: f2.csv, f3.csv, f4.csv, f5.csv, f6.csv, f7.csv, f8.csv, "
        "f9.csv and 1 more)")
    run_file(tmp_path / "g.csv", "2026-02-01T00:00:00+00:00", gpu="H100", dtype="float64",
             options=json.dumps({"rung": ["shfl", "cub"]}))
    with pytest.raises(ResultsFileError, match=r"\(H100, cold L2, single timing, exact "
                                               r"inputs, float64, 2 rung\(s\)\)"):
        newest_results(tmp_path, 2)


def test_no_results_at_all_and_a_count_other_than_one_or_two(tmp_path):
    from reducebench.results.files import newest_results

    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ResultsFileError) as refused:
        newest_results(tmp_path, 1)
    assert str(refused.value) == (f"no single-GPU results files under {tmp_path}/ or its "
                                  "folders (found 0); run `reducebench run` or give the files")
    with pytest.raises(ValueError, match="^newest_results finds one file or a pair$"):
        newest_results(tmp_path, 3)


def test_an_earlier_run_of_the_same_kind_with_no_case_in_common_is_no_pair(tmp_path):
    from reducebench.results.files import newest_results

    run_file(tmp_path / "old.csv", "2026-01-01T00:00:00+00:00", sizes=(1,))
    run_file(tmp_path / "new.csv", "2026-01-02T00:00:00+00:00", sizes=(2,))
    with pytest.raises(ResultsFileError) as refused:
        newest_results(tmp_path, 2)
    assert str(refused.value).endswith("(files there: old.csv, new.csv)")     # 2: no "more"
    for day in range(3, 9):                      # 8 files: every one named, none "more"
        run_file(tmp_path / f"d{day}.csv", f"2026-01-0{day}T00:00:00+00:00", gpu=f"G{day}")
    with pytest.raises(ResultsFileError) as refused:
        newest_results(tmp_path, 2)
    assert str(refused.value).endswith("(files there: old.csv, new.csv, d3.csv, d4.csv, "
                                       "d5.csv, d6.csv, d7.csv, d8.csv)")


@pytest.mark.filterwarnings("ignore:Could not infer format")
def test_times_in_other_zones_are_compared_in_utc_and_unreadable_ones_are_oldest(tmp_path):
    from reducebench.results.files import newest_results

    run_file(tmp_path / "east.csv", "2026-01-01T05:00:00+05:00")    # 00:00 UTC
    run_file(tmp_path / "utc.csv", "2026-01-01T01:00:00+00:00")     # 01:00 UTC: newer
    run_file(tmp_path / "bad.csv", "yesterday")
    assert newest_results(tmp_path, 2) == [tmp_path / "east.csv", tmp_path / "utc.csv"]


def test_a_run_with_empty_metadata_is_of_an_unknown_kind(tmp_path):
    from reducebench.results.files import newest_results

    csv_file(tmp_path / "run.csv", RUN_HEADER, ",,,,,,,shfl,float32,1,256,3.5".replace(
        ",,,,,,,", "5,2026-01-01T00:00:00+00:00, ,,,,,"))
    with pytest.raises(ResultsFileError, match=r"run.csv \(unknown GPU, unknown L2, single "
                                               r"timing, exact inputs, float32, rungs not "
                                               r"recorded\)"):
        newest_results(tmp_path, 2)


def test_two_gpus_in_one_file_and_dtypes_the_options_asked_for_are_named(tmp_path):
    import json

    from reducebench.results.files import newest_results

    path = run_file(tmp_path / "run.csv", "2026-01-01T00:00:00+00:00",
                    options=json.dumps({"dtype": ["float32", "float64"]}))
    path.write_text(path.read_text().replace("H100", "A100", 1))
    with pytest.raises(ResultsFileError, match=r"run.csv \(A100 / H100, cold L2, single "
                                               r"timing, exact inputs, float32, float64, "
                                               r"rungs not recorded\)"):
        newest_results(tmp_path, 2)


@pytest.mark.parametrize("option", ["dtype", "kernel", "callable"])
def test_runs_that_asked_for_other_kernels_callables_or_dtypes_are_not_paired(tmp_path, option):
    import json

    from reducebench.results.files import newest_results

    base = {"rung": ["shfl"], "kernel": ["k.cu"], "callable": ["m.py:f"], "dtype": ["float32"]}
    other = {**base, option: base[option] + ["other"]}
    run_file(tmp_path / "base.csv", "2026-01-01T00:00:00+00:00", options=json.dumps(base))
    run_file(tmp_path / "other.csv", "2026-01-02T00:00:00+00:00", options=json.dumps(other))
    run_file(tmp_path / "new.csv", "2026-01-03T00:00:00+00:00", options=json.dumps(base))
    assert newest_results(tmp_path, 2) == [tmp_path / "base.csv", tmp_path / "new.csv"]


def test_the_first_options_cell_that_holds_text_is_the_runs(tmp_path):
    import json

    from reducebench.results.files import newest_results

    for name, day in (("base.csv", 1), ("other.csv", 2), ("new.csv", 3)):
        rungs = ["shfl", "cub"] if name == "other.csv" else ["shfl"]
        path = run_file(tmp_path / name, f"2026-01-0{day}T00:00:00+00:00",
                        options=json.dumps({"rung": rungs}))
        lines = path.read_text().splitlines()
        first = lines[1].split(",")
        lines[1] = ",".join(first[:6] + ['" "'] + first[-5:])      # a blank cell first
        path.write_text("\n".join(lines) + "\n")
    assert newest_results(tmp_path, 2) == [tmp_path / "base.csv", tmp_path / "new.csv"]


def test_a_blank_cell_beside_a_gpus_name_is_not_a_second_gpu(tmp_path):
    from reducebench.results.files import newest_results

    path = run_file(tmp_path / "run.csv", "2026-01-01T00:00:00+00:00")
    path.write_text(path.read_text().replace("H100", " ", 1))   # one row's gpu left blank
    with pytest.raises(ResultsFileError, match=r"run.csv \(H100, cold L2, single timing"):
        newest_results(tmp_path, 2)


def test_a_file_of_one_blank_line_is_not_appended_to(tmp_path):
    from reducebench.results.files import RowWriter

    path = tmp_path / "run.csv"
    path.write_bytes(b"\n")
    with pytest.raises(ResultsFileError, match=r"\(results schema \?, 0 columns"):
        RowWriter(path)
    assert path.read_bytes() == b"\n"


def test_rows_without_a_rank_in_a_file_that_has_ranks_are_one_case_each(tmp_path):
    from reducebench.results.files import ResultsWarning

    # a launched run's rows, resumed without the launcher: the same case twice, no rank
    path = csv_file(tmp_path / "fleet.csv", HEADER + ",rank", ROW.format(n=1) + ",0",
                    ROW.format(n=2) + ",", ROW.format(n=2).replace(",3.5", ",2.5") + ",")
    with pytest.warns(ResultsWarning, match="1 case"):
        frame = read_results(path)
    assert frame["n"].tolist() == [1, 2] and frame["median_us"].tolist() == [3.5, 2.5]
