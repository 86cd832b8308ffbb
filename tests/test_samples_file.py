"""The samples file in detail (results/samples_file.py): what the writer puts in each column
and when it writes the header, each refusal of the reader in its exact words, version 1
files read and upgraded, the types of what is read, and what load_samples says for each
way a samples file can be missing or unusable."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from reducebench.core.errors import ResultsFileError
from reducebench.results.samples_file import (COLUMNS, CaseSamples, SamplesWriter, all_case_samples,
                                         case_samples, load_samples, read_samples,
                                         upgrade_samples)

VECTOR = ("vector_load", "float32", 2**20, 256, "loads=4")
CUB = ("cub", "float32", 2**20, 0, "")
HEADER_V1 = ("schema_version,run_id,rung,dtype,n,block,params,phase,index,time_us,"
             "sm_clock_mhz,mem_clock_mhz,kept")


def write_two_cases(path: Path) -> None:
    writer = SamplesWriter(path)
    writer.write_case("run1", VECTOR, CaseSamples(
        times_us=[6.25, 6.5, 9.0, 6.0], sm_clock_mhz=[1980, math.nan, 1700, None],
        mem_clock_mhz=[2619, 2619, 2619, 2619], kept=[True, True, False, True],
        rounds=[0, 0, 1, 1]))
    writer.write_case("run1", CUB, CaseSamples(times_us=[8.0, 8.1, 7.9, 7.0, 7.1, 6.9],
                                               phases=[0, 0, 0, 1, 1, 1]))


# -- the writer ------------------------------------------------------------------------------

def test_each_column_as_written(tmp_path):
    path = tmp_path / "deep" / "er" / "run.samples.csv"     # folders made as needed
    write_two_cases(path)
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(COLUMNS)
    assert lines[1:5] == [
        "2,run1,vector_load,float32,1048576,256,loads=4,0,0,0,6.25,1980,2619,True",
        "2,run1,vector_load,float32,1048576,256,loads=4,0,0,1,6.5,,2619,True",
        "2,run1,vector_load,float32,1048576,256,loads=4,1,0,2,9,1700,2619,False",
        "2,run1,vector_load,float32,1048576,256,loads=4,1,0,3,6,,2619,True"]
    assert lines[5] == "2,run1,cub,float32,1048576,0,,0,0,0,8,,,True"
    assert lines[10] == "2,run1,cub,float32,1048576,0,,0,1,5,6.9,,,True"


@pytest.mark.parametrize("existing", [None, b"", b"schema_version,run_id\r\n1,r,cu"])
def test_a_resumed_writer_writes_a_header_where_the_file_has_none(tmp_path, existing):
    path = tmp_path / "run.samples.csv"
    if existing is not None:
        path.write_bytes(existing)
    SamplesWriter(path, append=True).write_case("r", CUB, CaseSamples(times_us=[5.0]))
    lines = path.read_text().splitlines()
    if existing and existing.startswith(b"schema"):      # its half row cut off first
        assert lines == ["schema_version,run_id", "2,r,cub,float32,1048576,0,,0,0,0,5,,,True"]
    else:
        assert lines == [",".join(COLUMNS), "2,r,cub,float32,1048576,0,,0,0,0,5,,,True"]


# -- the reader ------------------------------------------------------------------------------

def test_what_is_read_has_its_types(tmp_path):
    path = tmp_path / "run.samples.csv"
    key = ("123", "16", 1024, 0, "8")                    # names that look like numbers
    SamplesWriter(path).write_case("42", key, CaseSamples(times_us=[5.0, 6.0],
                                                          sm_clock_mhz=[1980, None]))
    with open(path, "a") as handle:
        handle.write("2,,cub,float32,1024,0,,0,0,0,7,x,,True\n")     # no run id, a bad clock
    frame = read_samples(path)
    assert list(frame.columns) == list(COLUMNS)
    assert list(frame["run_id"]) == ["42", "42", ""] and list(frame["params"]) == ["8", "8", ""]
    assert list(frame["rung"]) == ["123", "123", "cub"] and frame["dtype"][0] == "16"
    for column in ("n", "block", "round", "phase", "index"):
        assert frame[column].dtype.kind == "i", column
    assert frame["time_us"].dtype == float and frame["kept"].dtype == bool
    assert frame["sm_clock_mhz"].tolist()[0] == 1980.0
    assert math.isnan(frame["sm_clock_mhz"][1]) and math.isnan(frame["sm_clock_mhz"][2])
    assert frame["mem_clock_mhz"].dtype == float
    assert case_samples(frame, key).tolist() == [5.0, 6.0]
    # and a file holding only such a case: read as text still
    alone = tmp_path / "alone.samples.csv"
    SamplesWriter(alone).write_case("42", key, CaseSamples(times_us=[5.0]))
    frame = read_samples(alone)
    assert (frame["rung"][0], frame["dtype"][0], frame["params"][0]) == ("123", "16", "8")
    assert case_samples(frame, key).tolist() == [5.0]


def test_a_folder_or_binary_file_is_named_as_a_samples_file(tmp_path):
    with pytest.raises(ResultsFileError, match=f"^{tmp_path}: is a folder, not a samples file"):
        read_samples(tmp_path)
    binary = tmp_path / "run.samples.csv"
    binary.write_bytes(b"\x1f\x8b\x08\x00")
    with pytest.raises(ResultsFileError, match=r"not a reducebench samples file \(gzip"):
        read_samples(binary)


def test_a_header_that_is_not_csv_is_one_line(tmp_path):
    path = tmp_path / "run.samples.csv"
    path.write_text("schema\rversion,run_id\n1,r\n")
    with pytest.raises(ResultsFileError, match=f"^{path}: not a reducebench samples file "
                                               r"\(new-line character seen"):
        read_samples(path)


def test_missing_columns_are_each_named(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("a,b,time_us\n1,2,3\n")
    with pytest.raises(ResultsFileError) as refused:
        read_samples(path)
    assert str(refused.value) == (
        f"{path}: not a reducebench samples file (no schema_version, run_id, rung, dtype, n, "
        "block, params, phase, index, sm_clock_mhz, mem_clock_mhz, kept column(s))")


def test_a_results_csv_without_samples_beside_it_says_why(tmp_path):
    results = tmp_path / "run.csv"
    results.write_text("schema_version,rung,median_us\n1,cub,5.0\n")
    with pytest.raises(ResultsFileError) as refused:
        read_samples(results)
    assert str(refused.value).endswith(
        " column(s)) (this is a results CSV, and no samples file is beside it: it was "
        "written before samples were kept, or without timing)")


def test_a_row_too_long_is_malformed_with_the_parsers_words(tmp_path):
    path = tmp_path / "run.samples.csv"
    write_two_cases(path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:2] + [lines[2] + ",extra"]) + "\n")
    with pytest.raises(ResultsFileError, match=f"^{path}: malformed: Error tokenizing data"):
        read_samples(path)


@pytest.mark.parametrize("spoil, reason", [
    pytest.param(lambda lines: lines[:3] + [lines[3][:-2]],
                 "a number or the kept flag is missing or unreadable", id="truncated-row"),
    pytest.param(lambda lines: lines[:3] + [lines[3].replace(",loads=4,1,", ",loads=4,x,")]
                 + lines[4:], "the round is missing or unreadable", id="bad-round"),
])
def test_a_malformed_row_names_its_line(tmp_path, spoil, reason):
    path = tmp_path / "run.samples.csv"
    write_two_cases(path)
    path.write_text("\n".join(spoil(path.read_text().splitlines())) + "\n")
    with pytest.raises(ResultsFileError) as refused:
        read_samples(path)
    assert str(refused.value) == f"{path}, line 4: truncated or malformed ({reason})"


def test_other_versions_are_all_named(tmp_path):
    path = tmp_path / "run.samples.csv"
    write_two_cases(path)
    lines = path.read_text().splitlines()
    lines[1] = "4" + lines[1][1:]
    lines[2] = "3" + lines[2][1:]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ResultsFileError) as refused:
        read_samples(path)
    assert str(refused.value) == (f"{path}: samples schema version 2, 3, 4; this reducebench "
                                  "reads versions 1, 2")


def write_v1(path: Path) -> str:
    text = (HEADER_V1 + "\r\n" + "1,r,cub,float32,1024,0,,0,0,5.5,,,True\r\n"
            "1,r,cub,float32,1024,0,,1,1,4.5,,,True\r\n")
    path.write_text(text, newline="")
    return text


def test_a_version_1_file_reads_as_one_round(tmp_path):
    path = tmp_path / "old.samples.csv"
    write_v1(path)
    frame = read_samples(path)
    assert list(frame.columns) == list(COLUMNS)
    assert frame["round"].tolist() == [0, 0] and frame["phase"].tolist() == [0, 1]


# -- upgrading a version 1 file ---------------------------------------------------------------

def test_a_version_1_file_is_upgraded_in_place_keeping_the_original(tmp_path):
    path = tmp_path / "old.samples.csv"
    original = write_v1(path)
    backup = upgrade_samples(path)
    assert backup == tmp_path / "old.samples.csv.bak"
    assert backup.read_bytes().decode() == original
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(COLUMNS)
    assert lines[1:] == ["2,r,cub,float32,1024,0,,0,0,0,5.5,,,True",
                         "2,r,cub,float32,1024,0,,0,1,1,4.5,,,True"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.samples.csv",
                                                          "old.samples.csv.bak"]
    assert upgrade_samples(path) is None               # now of this version


def test_a_version_1_file_with_bytes_that_are_not_utf8_or_columns_reordered_is_upgraded(
        tmp_path):
    path = tmp_path / "old.samples.csv"
    path.write_bytes((HEADER_V1 + "\r\n").encode()
                     + b"1,r,cub,float32,1024,0,k=\xff,0,0,5.5,,,True\r\n")
    assert upgrade_samples(path) is not None
    assert read_samples(path)["params"].tolist() == ["k=\ufffd"]
    # the columns in another order (read by name): upgraded in the file's order
    columns = HEADER_V1.split(",")
    row = "1,r,cub,float32,1024,0,,0,0,5.5,,,True".split(",")
    other = tmp_path / "other.samples.csv"
    other.write_text(",".join(reversed(columns)) + "\n" + ",".join(reversed(row)) + "\n")
    upgrade_samples(other)
    assert other.read_text().splitlines() == [",".join(COLUMNS),
                                              "2,r,cub,float32,1024,0,,0,0,0,5.5,,,True"]


def test_nothing_to_upgrade_and_a_backup_in_the_way(tmp_path):
    assert upgrade_samples(tmp_path / "none.samples.csv") is None
    (tmp_path / "empty.samples.csv").touch()
    assert upgrade_samples(tmp_path / "empty.samples.csv") is None
    path = tmp_path / "old.samples.csv"
    original = write_v1(path)
    (tmp_path / "old.samples.csv.bak").write_text("mine\n")
    with pytest.raises(ResultsFileError) as refused:
        upgrade_samples(path)
    assert str(refused.value) == (f"{path}: old.samples.csv.bak is in the way of the upgrade; "
                                  "move it")
    assert path.read_bytes().decode() == original
    assert (tmp_path / "old.samples.csv.bak").read_text() == "mine\n"


def test_a_version_1_file_saved_by_a_spreadsheet_is_upgraded(tmp_path):
    path = tmp_path / "old.samples.csv"
    path.write_bytes(b"\xef\xbb\xbf" + write_v1(path).encode())
    assert upgrade_samples(path) is not None
    assert read_samples(path)["round"].tolist() == [0, 0]


# -- choosing samples ------------------------------------------------------------------------------

def test_every_case_in_the_files_order_and_a_block_without_a_start(tmp_path):
    path = tmp_path / "run.samples.csv"
    write_two_cases(path)
    frame = read_samples(path)
    assert list(all_case_samples(frame)) == [VECTOR, CUB]     # not sorted: vector_load first
    # rows of a case with no index 0 (a file cut at the front) are all its rows
    tail = frame[frame["index"] > 0]
    assert case_samples(tail, VECTOR, kept_only=False).tolist() == [6.5, 9.0, 6.0]


# -- load_samples: the one loader of every reader ------------------------------------------------

def test_load_samples_from_a_results_csv_or_the_samples_file_itself(tmp_path):
    write_two_cases(tmp_path / "run.samples.csv")
    for given in (tmp_path / "run.csv", tmp_path / "run.samples.csv"):
        loaded = load_samples(given)
        assert loaded.path == tmp_path / "run.samples.csv" and loaded.note == ""
        assert not loaded.missing
        assert loaded.by_case()[CUB].tolist() == [7.0, 7.1, 6.9]     # the fastest phase
        assert loaded.by_case(phase=0)[CUB].tolist() == [8.0, 8.1, 7.9]
    (tmp_path / "run.samples.csv").rename(tmp_path / "RUN.SAMPLES.CSV")
    assert load_samples(tmp_path / "RUN.SAMPLES.CSV").path == tmp_path / "RUN.SAMPLES.CSV"


def test_load_samples_says_why_there_are_none(tmp_path):
    missing = load_samples(tmp_path / "run.csv")
    assert missing == type(missing)(
        tmp_path / "run.samples.csv", missing=True,
        note="no samples file (run.samples.csv is not beside run.csv: the run was made "
             "before samples were kept, or without timing)")
    assert missing.by_case() is None
    given = load_samples(tmp_path / "gone.samples.csv")
    assert given == type(given)(tmp_path / "gone.samples.csv", missing=True,
                                note=f"{tmp_path / 'gone.samples.csv'}: no such file")
    (tmp_path / "bad.samples.csv").write_text("a,b\n1,2\n")
    bad = load_samples(tmp_path / "bad.samples.csv")
    assert bad.path == tmp_path / "bad.samples.csv" and bad.frame is None
    assert not bad.missing and bad.note.startswith(f"{tmp_path / 'bad.samples.csv'}: not a "
                                                   "reducebench samples file (no ")
    (tmp_path / "header.samples.csv").write_text(",".join(COLUMNS) + "\n")
    header = load_samples(tmp_path / "header.samples.csv")
    assert header == type(header)(tmp_path / "header.samples.csv", note=(
        f"{tmp_path / 'header.samples.csv'}: no samples in the file (a header only)"))
