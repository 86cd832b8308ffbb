"""The CSV files every writer appends to and every reader reads (results/csvfile.py): text
read as written, files that are not text named for what they are, and a record a kill
left half-written cut off, byte for byte."""

from __future__ import annotations

import pytest

from reducebench.core.errors import ResultsFileError
from reducebench.results.csvfile import (complete_records, drop_unfinished_tail,
                                         fsync_folder, not_text_reason, read_csv_text,
                                         read_exact_text)


def test_text_is_read_with_its_line_breaks_and_without_a_spreadsheets_mark(tmp_path):
    path = tmp_path / "run.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b\r\n1,\xff\r")
    assert read_exact_text(path) == "a,b\r\n1,\ufffd\r"
    assert read_csv_text(path, "results file") == "a,b\r\n1,\ufffd\r"


@pytest.mark.parametrize("start, reason", [
    (b"\x1f\x8b\x08", "gzip-compressed: gunzip it first"),
    (b"PK\x03\x04", "a zip archive: unzip it first"),
    (b"BZh91", "bzip2-compressed: bunzip2 it first"),
    (b"\xfd7zXZ\x00", "xz-compressed: unxz it first"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed: unzstd it first"),
    (b"\x7fELF", "a program (ELF), not CSV text"),
    (b"\x89PNG\r\n", "a PNG image, not CSV text"),
    (b"%PDF-1.7", "a PDF document, not CSV text"),
    (b"a,b\r\n\x00\x00", "binary data (NUL bytes), not CSV text")])
def test_a_file_that_is_not_text_is_named_for_what_it_is(tmp_path, start, reason):
    assert not_text_reason(start) == reason
    path = tmp_path / "run.csv"
    path.write_bytes(start + b"a,b\r\n" * 10)
    with pytest.raises(ResultsFileError) as refused:
        read_csv_text(path, "samples file")
    assert str(refused.value) == f"{path}: not a reducebench samples file ({reason})"


def test_control_bytes_beyond_one_percent_of_the_start_are_binary():
    text = b"a" * 98
    # 1 in 100 is a paste gone wrong; 2 in 100 is not text. Tab, CR, LF are text; DEL is not
    assert not_text_reason(text + b"\x01" + b"\t") == ""
    assert not_text_reason(text + b"\x01\x7f") == "binary data (control bytes), not CSV text"
    assert not_text_reason(text + b"\x1b\x02") == "binary data (control bytes), not CSV text"
    assert not_text_reason(b"\t\r\n" * 40) == ""
    assert not_text_reason(b"") == ""


def test_only_the_first_64_kib_are_looked_at(tmp_path):
    path = tmp_path / "run.csv"
    path.write_bytes(b"a" * 65536 + b"\x00")
    assert read_csv_text(path, "results file").endswith("a\x00")
    path.write_bytes(b"a" * 65535 + b"\x00")
    with pytest.raises(ResultsFileError, match="NUL bytes"):
        read_csv_text(path, "results file")


@pytest.mark.parametrize("text, kept", [
    ("", ""),
    ("a,b\r\n", "a,b\r\n"),
    ("a,b\n", "a,b\n"),
    ("a,b\r\nc,d", "a,b\r\n"),
    ("a,b\r\nc,d\r", "a,b\r\n"),                    # cut between its \r and its \n
    ("a,b\r\nc", "a,b\r\n"),
    ('a,"x\r\ny"\r\nc,"p\r\nq', 'a,"x\r\ny"\r\n'),  # a line break inside quotes
    ("a,b", "")])
def test_complete_records_keeps_up_to_the_last_line_break_between_records(text, kept):
    assert complete_records(text) == (kept, kept != text)


def test_an_unfinished_tail_is_cut_off_and_the_rest_kept_byte_for_byte(tmp_path):
    path = tmp_path / "run.csv"
    path.write_bytes(b"a,\xff\r\nb,\xfe")
    assert drop_unfinished_tail(path) is True
    assert path.read_bytes() == b"a,\xff\r\n"
    assert drop_unfinished_tail(path) is False
    assert path.read_bytes() == b"a,\xff\r\n"
    path.write_bytes(b"")
    assert drop_unfinished_tail(path) is False and path.read_bytes() == b""


def test_fsync_of_a_folder_that_is_not_there_is_no_error(tmp_path):
    fsync_folder(tmp_path)
    fsync_folder(tmp_path / "gone")
