"""Every row of a results file says which schema version wrote it: a row whose
schema_version cell is empty is no results row, and the file is refused in one line
naming it (a version nobody wrote could otherwise pass as any)."""

import csv
from pathlib import Path

import pytest

from reducebench.core.errors import ResultsFileError
from reducebench.results.files import RowWriter, read_results
from reducebench.results.schema import SCHEMA_VERSION, Record


def _results(path: Path, rows: int = 3) -> Path:
    writer = RowWriter(path)
    for n in (1024 * 2**i for i in range(rows)):
        writer.write(Record("shfl", "float32", n, 256, status="ok", median_us=10.0,
                            meta={"schema_version": SCHEMA_VERSION, "kind": "single"}))
    return path


def _empty_version(path: Path, data_rows: list[int]) -> None:
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    for row in data_rows:
        rows[1 + row][rows[0].index("schema_version")] = ""
    with open(path, "w", newline="") as handle:
        csv.writer(handle, lineterminator="\r\n").writerows(rows)


@pytest.mark.parametrize("data_rows, line", [([1], 3), ([0, 1, 2], 2)])
def test_an_empty_schema_version_is_refused_naming_its_line(tmp_path, data_rows, line):
    # one row without a version among rows of version SCHEMA_VERSION, and a whole column
    # left empty: the first empty cell's line (the header is line 1)
    path = _results(tmp_path / "run.csv")
    _empty_version(path, data_rows)
    with pytest.raises(ResultsFileError) as caught:
        read_results(path)
    assert str(caught.value) == f"{path}, line {line}: schema_version: an empty cell is " \
                                "not a number"


def test_every_row_with_its_version_is_read(tmp_path):
    frame = read_results(_results(tmp_path / "run.csv"))
    assert frame["schema_version"].tolist() == [SCHEMA_VERSION] * 3
