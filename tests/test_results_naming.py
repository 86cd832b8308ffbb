"""Where results files go and the checks a path gets (results/naming.py): names, the
default file name and its collisions, and each refusal's words."""

from __future__ import annotations

import datetime
import errno
import os
from pathlib import Path

import pytest

import reducebench.results.naming as naming
from reducebench.core.errors import ResultsFileError, UsageError
from reducebench.results.naming import (check_new_results, check_results_path,
                                        check_writable, csv_stem, default_path, samples_path)


def test_names():
    assert csv_stem("results/run.csv") == "run" and csv_stem("RUN.CSV") == "RUN"
    assert csv_stem("run.txt") == "run.txt" and csv_stem(Path("a/b.c.csv")) == "b.c"
    assert samples_path("results/run.csv") == Path("results/run.samples.csv")
    assert samples_path("results/run") == Path("results/run.samples.csv")


class _FrozenClock:
    """Stands in for the datetime module: now() is 2026-01-02 03:04:05 in the zone asked."""

    timezone = datetime.timezone

    class datetime:
        @staticmethod
        def now(tz):
            assert tz is datetime.timezone.utc
            return datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=tz)


def test_the_default_name_is_the_utc_time_and_the_gpu_and_never_an_existing_file(
        tmp_path, monkeypatch):
    monkeypatch.setattr(naming, "_dt", _FrozenClock)
    first = default_path(tmp_path, "NVIDIA H100 80GB HBM3")
    assert first == tmp_path / "20260102T030405Z_nvidia-h100-80gb-hbm3.csv"
    first.touch()
    second = default_path(tmp_path, "NVIDIA H100 80GB HBM3")
    assert second == tmp_path / "20260102T030405Z_nvidia-h100-80gb-hbm3_1.csv"
    second.touch()
    assert default_path(tmp_path, "NVIDIA H100 80GB HBM3").name == \
        "20260102T030405Z_nvidia-h100-80gb-hbm3_2.csv"
    assert default_path(tmp_path, " -- ").name == "20260102T030405Z_gpu.csv"
    assert default_path(tmp_path, "").name == "20260102T030405Z_gpu.csv"
    assert default_path(tmp_path, "Tesla v100").name == "20260102T030405Z_tesla-v100.csv"
    assert default_path(tmp_path, "Xavier NX-").name == "20260102T030405Z_xavier-nx.csv"


def test_an_empty_name_is_refused_with_the_option(tmp_path):
    for name in ("", "  "):
        with pytest.raises(UsageError, match="^--html '': give a file name$"):
            check_writable(name, "--html")


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(UsageError, match=f"^--out {tmp_path}: is a folder; give a file name "
                                         "in it$"):
        check_writable(tmp_path)


def test_an_existing_file_is_refused_unless_replaced_and_left_as_it_was(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("kept\n")
    with pytest.raises(UsageError, match=f"^--out {path} already exists; results are never "
                                         "overwritten$"):
        check_writable(path)
    assert check_writable(path, replace=True) == path
    assert path.read_text() == "kept\n"


def test_a_folder_that_is_not_there_or_is_a_file(tmp_path):
    with pytest.raises(UsageError, match=f"^--out {tmp_path}/no/run.csv: folder "
                                         f"{tmp_path}/no does not exist$"):
        check_writable(tmp_path / "no" / "run.csv")
    (tmp_path / "file").touch()
    with pytest.raises(UsageError, match=f"^--out {tmp_path}/file/run.csv: folder "
                                         f"{tmp_path}/file is not a folder$"):
        check_writable(tmp_path / "file" / "run.csv")


def test_a_bare_name_is_checked_in_the_current_folder_and_left_absent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert check_writable("run.csv") == Path("run.csv")
    assert os.listdir(tmp_path) == []


def test_the_trial_file_is_an_ordinary_file_never_an_executable_one(tmp_path, monkeypatch):
    modes = []
    remove = os.unlink

    def noting_the_mode(path):
        modes.append(os.stat(path).st_mode & 0o777)
        remove(path)

    monkeypatch.setattr(naming.os, "unlink", noting_the_mode)
    old = os.umask(0o022)
    try:
        check_writable(tmp_path / "run.csv")
    finally:
        os.umask(old)
    assert modes == [0o644] and not (tmp_path / "run.csv").exists()


def test_a_system_without_nonblocking_opens_checks_all_the_same(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "O_NONBLOCK")
    assert check_writable(tmp_path / "run.csv") == tmp_path / "run.csv"
    (tmp_path / "old.csv").write_text("kept\n")
    assert check_writable(tmp_path / "old.csv", replace=True) == tmp_path / "old.csv"
    assert (tmp_path / "old.csv").read_text() == "kept\n"


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs /proc")
def test_where_no_file_can_be_made_says_so(tmp_path):
    with pytest.raises(UsageError, match=r"^--out /proc/run\.csv: not writable: no file can "
                                         r"be made in /proc \(.+\)$"):
        check_writable("/proc/run.csv")
    # an existing pipe with no reader: opened without waiting, refused, not hung on
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UsageError) as refused:
        check_writable(fifo, replace=True)
    assert str(refused.value) == f"--out {fifo}: not writable ({os.strerror(errno.ENXIO)})"


def test_a_new_results_file_needs_its_samples_file_absent_too(tmp_path):
    path = tmp_path / "run.csv"
    assert check_new_results(path, "--save") == path
    (tmp_path / "run.samples.csv").touch()
    with pytest.raises(UsageError, match=f"^--save {path}: run.samples.csv is already there; "
                                         "results are never overwritten$"):
        check_new_results(path, "--save")
    # the option is named in every refusal, --out unless told
    with pytest.raises(UsageError, match=f"^--out {path}: run.samples.csv is already there"):
        check_new_results(path)
    with pytest.raises(UsageError, match=f"^--save {tmp_path}: is a folder"):
        check_new_results(tmp_path, "--save")
    path.touch()
    with pytest.raises(UsageError, match=f"^--out {path} already exists"):
        check_new_results(path)


def test_a_results_path_must_be_a_regular_file(tmp_path):
    with pytest.raises(ResultsFileError, match=f"^{tmp_path}: is a folder, not a samples file "
                                               r"\(give a \.csv file in it\)$"):
        check_results_path(tmp_path, "samples file")
    with pytest.raises(ResultsFileError, match=f"^{tmp_path}/x.csv: no such file$"):
        check_results_path(tmp_path / "x.csv")
    with pytest.raises(ResultsFileError, match=r"^/dev/null: not a reducebench results file "
                                               r"\(not a regular file: a device, a pipe or a "
                                               r"socket\)$"):
        check_results_path("/dev/null")
    (tmp_path / "x.csv").touch()
    assert check_results_path(str(tmp_path / "x.csv")) == tmp_path / "x.csv"


def test_a_name_must_end_in_one_of_the_suffixes_given_in_any_case(tmp_path):
    said = "give a name ending in .png or .svg"
    for name in ("a.png", "b.SVG", "c.Png"):
        assert check_writable(tmp_path / name, suffixes=(".png", ".svg"),
                              wrong_suffix=said) == tmp_path / name
    for name in ("d.pdf", "e"):
        with pytest.raises(UsageError) as refused:
            check_writable(tmp_path / name, "-o", suffixes=(".png", ".svg"), wrong_suffix=said)
        assert str(refused.value) == f"-o {tmp_path / name}: {said}"
    assert check_writable(tmp_path / "f.pdf") == tmp_path / "f.pdf"     # no suffixes asked


def test_a_samples_file_given_for_its_results_csv_is_named_as_one(tmp_path):
    from reducebench.results.naming import check_results_csv

    results = tmp_path / "run.csv"
    results.write_text("x\n")
    assert check_results_csv(results) == results
    for name in ("run.samples.csv", "RUN.SAMPLES.CSV"):
        samples = tmp_path / name
        samples.write_text("x\n")
        with pytest.raises(ResultsFileError) as refused:
            check_results_csv(samples)
        stem = name[:-len(".samples.csv")]
        assert str(refused.value) == (f"{samples}: is a samples file; give its results CSV "
                                      f"({stem}.csv): the report reads the samples from "
                                      "beside it")
    with pytest.raises(ResultsFileError, match="no such file"):
        check_results_csv(tmp_path / "gone.csv")
