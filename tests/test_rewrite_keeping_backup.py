"""Rewriting a CSV file atomically with its original kept (results/csvfile.py), the one
path of a results file's and a samples file's upgrade."""

import pytest

from reducebench.core.errors import ResultsFileError
from reducebench.results.csvfile import rewrite_keeping_backup


def test_the_new_text_replaces_the_file_and_the_original_is_kept(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("a\r\n1\r\n")
    backup = rewrite_keeping_backup(path, lambda handle: handle.write("a,b\n1,2\n"))
    assert backup == tmp_path / "run.csv.bak"
    assert path.read_bytes() == b"a,b\n1,2\n"          # newline="": written as given
    assert backup.read_bytes() == b"a\r\n1\r\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv", "run.csv.bak"]


def test_a_backup_in_the_way_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("a\n1\n")
    (tmp_path / "run.csv.bak").write_text("older\n")
    with pytest.raises(ResultsFileError, match="run.csv.bak is in the way of the upgrade"):
        rewrite_keeping_backup(path, lambda handle: handle.write("new\n"))
    assert path.read_text() == "a\n1\n"
    assert (tmp_path / "run.csv.bak").read_text() == "older\n"
    assert not (tmp_path / "run.csv.upgrading").exists()


def test_what_a_killed_rewrite_left_beside_the_file_is_written_over(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("a\n1\n")
    (tmp_path / "run.csv.upgrading").write_text("half a file\n")    # a kill mid-way
    rewrite_keeping_backup(path, lambda handle: handle.write("a,b\n1,2\n"))
    assert path.read_text() == "a,b\n1,2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv", "run.csv.bak"]
