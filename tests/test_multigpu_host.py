"""`multigpu` in one process (multigpu/host.py), without the command line: every GPU of
the host on test_multigpu's host cluster (100 us on one GPU, 60 us on two), its rows in
one file, what a signal leaves, and the names of what failed."""

from __future__ import annotations

import contextlib
import signal

import pytest

from reducebench.core.errors import UsageError
from reducebench.core.interrupt import Interrupted
from reducebench.multigpu.host import run_on_host
from reducebench.results.naming import RESULTS_DIR

from test_multigpu import HostBackend

LABELS = ["timing_floor gpus=1", "timing_floor gpus=2",
          "sharded_sum:pingpong float32 n=1000 gpus=1 block=256",
          "sharded_sum:pingpong float32 n=1000 gpus=2 block=256"]


def on_host(out, backend=None, stop_at=None, **given):
    """run_on_host with every GPU present (--gpus all); the Ending, the backend, the
    totals the watch was given and the cases it was told of. stop_at: a signal comes as
    that case (counted from 1) begins."""
    options = {"size": "1000", "max_time": 0.01, "rounds": 1, "seed": 1,
               "out": None if out is None else str(out), **given}
    backend = backend or HostBackend(present=2)
    totals, told = [], []

    def on_case(case, index, total):
        told.append(case.label)
        if len(told) == stop_at:
            raise Interrupted(signal.SIGINT)

    def watch(total):
        totals.append(total)
        return contextlib.nullcontext(on_case)

    ending = run_on_host(options, lambda: backend, watch)
    return ending, backend, totals, told


def test_every_gpu_present_is_measured_into_the_one_file(tmp_path):
    ending, backend, totals, told = on_host(tmp_path / "m.csv")
    assert ending.path == tmp_path / "m.csv" and ending.exit_code == 0
    assert sorted({r.gpus for r in ending.records}) == [1, 2]
    assert totals == [None] and told == LABELS and backend.closed
    assert ending.written == f"4 case(s) written to {tmp_path / 'm.csv'}"


def test_one_gpu_present_is_measured_alone(tmp_path):
    ending, *_ = on_host(tmp_path / "m.csv", HostBackend(present=1))
    assert {r.gpus for r in ending.records} == {1}


def test_failures_are_named_with_their_gpu_count(tmp_path):
    ending, *_ = on_host(tmp_path / "m.csv", HostBackend(present=2, broken_k=2))
    assert ending.exit_code == 1
    # the floor (n=1) and the sharded sum over both GPUs: the session for 2 fails
    assert ending.failed == ["timing_floor float32 n=1 gpus=2",
                             "sharded_sum:pingpong float32 n=1000 gpus=2"]


def test_without_out_the_file_is_named_after_the_gpu(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ending, *_ = on_host(None)
    assert ending.path.parent == RESULTS_DIR
    assert ending.path.name.endswith("_multigpu-fake-gpu.csv")


def test_a_backend_that_names_no_gpu_gives_a_file_named_gpu(tmp_path, monkeypatch):
    class Nameless(HostBackend):
        def device_info(self):
            return {"sm_count": 4}

    monkeypatch.chdir(tmp_path)
    ending, *_ = on_host(None, Nameless(present=2))
    assert ending.path.name.endswith("_multigpu-gpu.csv")


def test_a_signal_keeps_the_rows_written_and_closes_the_gpus(tmp_path):
    ending, backend, _, told = on_host(tmp_path / "m.csv", stop_at=3)
    assert ending.exit_code == 130 and ending.resumable is False and backend.closed
    assert told == LABELS[:3]
    assert ending.kept == f"2 case(s) saved in {tmp_path / 'm.csv'}"


def test_an_existing_file_is_refused_before_a_gpu_opens(tmp_path):
    (tmp_path / "m.csv").write_text("taken")

    def never():
        raise AssertionError("no GPU is opened for a bad option")

    with pytest.raises(UsageError, match="already exists"):
        run_on_host({"out": str(tmp_path / "m.csv")}, never, None)
