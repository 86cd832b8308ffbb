"""tests/conftest.py: the suite does not depend on the terminal it runs from, a plain
`pytest` runs on every core (one process where there is a GPU, or for a named file), and
the skips are summed up: the GPU tests skipped without a GPU in one line, any other skip
one line per reason."""

import os
import subprocess
import types

import pytest

import conftest


def test_no_terminal_width_reaches_the_tests_or_their_children():
    # pytest's readline import exports COLUMNS=80 into the C environment (what xdist's
    # workers and every child inherit); the CLI would draw 80-column tables
    assert "COLUMNS" not in os.environ and "LINES" not in os.environ
    child = subprocess.run(["sh", "-c", 'echo "${COLUMNS-unset} ${LINES-unset}"'],
                           capture_output=True, text=True, env=None, check=True)
    assert child.stdout.split() == ["unset", "unset"]


def fake_config(source, numprocesses=None, worker=False):
    option = types.SimpleNamespace(numprocesses=numprocesses)
    config = types.SimpleNamespace(option=option, args_source=source)
    if worker:
        config.workerinput = {"workerid": "gw0"}
    return config


ARGS = pytest.Config.ArgsSource


@pytest.mark.parametrize("source, numprocesses, worker, gpu, expected", [
    (ARGS.TESTPATHS, None, False, False, "auto"),   # `pytest`: every core
    (ARGS.ARGS, None, False, False, None),          # `pytest tests/test_x.py`: this process
    (ARGS.TESTPATHS, 0, False, False, 0),           # -n 0, or no xdist: as asked
    (ARGS.TESTPATHS, 4, False, False, 4),           # -n 4: as asked
    (ARGS.TESTPATHS, None, True, False, None),      # a worker starts no workers of its own
    (ARGS.TESTPATHS, None, False, True, None),      # a GPU: one process
], ids=["whole suite", "named file", "-n 0", "-n 4", "worker", "a GPU here"])
def test_only_a_plain_pytest_without_a_gpu_runs_on_every_core(
        monkeypatch, source, numprocesses, worker, gpu, expected):
    monkeypatch.setattr(conftest, "_gpu_available", lambda: gpu)
    config = fake_config(source, numprocesses, worker)
    conftest.pytest_cmdline_main(config)
    assert config.option.numprocesses == expected


class Reporter:
    def __init__(self, skipped):
        self.stats = {"skipped": skipped}
        self.startpath = os.getcwd()
        self.lines = []

    def write_line(self, line, **markup):
        self.lines.append(line)


def skip(reason, path="tests/test_x.py", lineno=7, gpu=False):
    keywords = {"test_x": 1, **({"gpu": 1} if gpu else {})}
    return types.SimpleNamespace(longrepr=(os.path.abspath(path), lineno, f"Skipped: {reason}"),
                                 keywords=keywords)


def test_the_skips_are_one_line_for_the_gpu_tests_and_one_per_other_reason(monkeypatch):
    monkeypatch.setattr(conftest, "_gpu_available", lambda: False)
    skipped = ([skip(conftest.GPU_MISSING, gpu=True)] * 400
               + [skip("no mpirun on this machine", gpu=True)]            # a GPU test too
               + [skip(conftest.BROWSER_NOT_ASKED)] * 17
               + [skip("needs mpirun and mpi4py", "tests/test_cluster.py", 400)] * 2
               + [skip("root can write into any folder", "tests/test_r.py", 253)])
    reporter = Reporter(skipped)
    conftest.pytest_terminal_summary(reporter)
    assert reporter.lines == [
        "401 GPU tests skipped: no CUDA GPU and CuPy here "
        "(`pytest -m gpu` runs them on a GPU machine)",
        "17 browser tests skipped: `pytest -m browser` runs them (Playwright and Chromium)",
        "SKIPPED [2] tests/test_cluster.py:400: needs mpirun and mpi4py",
        "SKIPPED [1] tests/test_r.py:253: root can write into any folder"]


def test_where_there_is_a_gpu_a_gpu_test_skipped_for_another_reason_shows(monkeypatch):
    monkeypatch.setattr(conftest, "_gpu_available", lambda: True)
    reporter = Reporter([skip("no mpirun on this machine", gpu=True)])
    conftest.pytest_terminal_summary(reporter)
    assert reporter.lines == ["SKIPPED [1] tests/test_x.py:7: no mpirun on this machine"]
