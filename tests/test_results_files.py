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
