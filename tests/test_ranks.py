"""One rank of a launched world without a launcher or a GPU (multigpu/ranks.py): which
processes are ranks, the shared seed, how a rank ends, the last barrier, and the fleet
check driven through stand-ins for the world's collectives."""

from __future__ import annotations

import contextlib
import os
import signal
from types import SimpleNamespace

import pytest

import reducebench.multigpu.ranks as ranks
from reducebench.core.errors import UsageError
from reducebench.core.interrupt import Interrupted
from reducebench.measuring.lifecycle import new_store
from reducebench.measuring.settings import settings_from
from reducebench.multigpu.launch import World
from reducebench.results.naming import RESULTS_DIR
from reducebench.results.schema import Record

LAUNCHERS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_", "SLURM_", "PMI_", "GROUP_",
             "LOCAL_WORLD_SIZE", "MASTER_")


def torchrun_env(monkeypatch, size: int) -> None:
    for name in list(os.environ):
        if name.startswith(LAUNCHERS):
            monkeypatch.delenv(name)
    for name, value in {"RANK": "0", "WORLD_SIZE": str(size), "LOCAL_RANK": "0",
                        "LOCAL_WORLD_SIZE": str(size), "MASTER_ADDR": "127.0.0.1"}.items():
        monkeypatch.setenv(name, value)


def test_only_a_world_of_several_ranks_is_launched(monkeypatch):
    torchrun_env(monkeypatch, 2)
    world = ranks.launched_world()
    assert (world.launcher, world.rank, world.size) == ("torchrun", 0, 2)
    torchrun_env(monkeypatch, 1)
    assert ranks.launched_world() is None  # a world of one: as without a launcher
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        monkeypatch.delenv(name)
    assert ranks.launched_world() is None


def world(rank: int = 0) -> World:
    return World("torchrun", rank, 2, rank, 2, 0, 1)


class Comm:
    """A stand-in for BoundedComm: each collective is kept with what it waits for; a
    broadcast returns `sent` where given (what rank 0 sent), else the object."""

    def __init__(self, sent=None):
        self.calls: list[tuple] = []
        self.sent = sent

    def bcast(self, obj, what):
        self.calls.append(("bcast", obj, what))
        return obj if self.sent is None else self.sent

    def gather(self, obj, what):
        self.calls.append(("gather", what))
        return [obj]

    def barrier(self, what):
        self.calls.append(("barrier", what))

    def close(self):
        self.calls.append(("close",))


def member(comm=None, device=0):
    return SimpleNamespace(comm=comm or Comm(), device=device,
                           info=SimpleNamespace(name="Fake GPU"))


# -- the seed, the last barrier, the labels -------------------------------------------------

def test_rank_0s_given_seed_is_broadcast_and_kept():
    one, settings = member(), SimpleNamespace(seed=5)
    ranks.share_seed(one, settings)
    assert settings.seed == 5 and one.comm.calls == [("bcast", 5, "sharing the seed")]


def test_without_a_seed_rank_0_draws_one(monkeypatch):
    monkeypatch.setattr(ranks, "new_seed", lambda: 42)
    one, settings = member(), SimpleNamespace(seed=None)
    ranks.share_seed(one, settings)
    assert settings.seed == 42 and one.comm.calls == [("bcast", 42, "sharing the seed")]


def test_every_other_rank_takes_rank_0s_seed():
    settings = SimpleNamespace(seed=None)
    ranks.share_seed(member(Comm(sent=9)), settings)
    assert settings.seed == 9


def test_the_ranks_end_at_one_barrier_then_close_what_they_opened():
    comm, closed = Comm(), []
    ranks.end_together(member(comm), SimpleNamespace(close=lambda: closed.append(True)))
    assert comm.calls == [("barrier", "the last barrier"), ("close",)] and closed == [True]


def test_a_fleet_row_is_named_by_its_rank():
    record = Record("shfl", "float32", 1000, 256, meta={"rank": 1})
    assert ranks.rank_label(record) == "rank 1 shfl float32 n=1000"


@pytest.mark.parametrize("cross, tail", [(True, ": NCCL's traffic crosses hosts"),
                                         (False, "")])
def test_the_world_line_says_how_the_ranks_are_laid_out(cross, tail):
    lay = SimpleNamespace(nodes=2, gpus_per_node=4, hosts={"a": None, "b": None},
                          cross_node=cross)
    one = SimpleNamespace(layout=lay, world=World("srun", 0, 8, 0, 4, 0, 2))
    assert ranks.world_line(one) == ("8 ranks (srun) on 2 node(s), 4 GPU(s) per node, "
                                     "2 host(s)" + tail)


# -- how a rank ends --------------------------------------------------------------------------

def test_a_bad_option_on_a_rank_is_one_line_with_its_rank_and_its_exit_code(capsys):
    assert ranks.ended_by(world(1), UsageError("--size x: no size")) == 2
    assert capsys.readouterr().err == "reducebench: error: rank 1: --size x: no size\n"


def test_rank_0_stopped_before_its_file_opened_says_only_why(capsys):
    def body(box):
        raise UsageError("--size x: no size")

    ending = ranks.as_rank(world(0), body, label=str)
    assert ending.exit_code == 2 and not ending.show
    assert capsys.readouterr().err == "reducebench: error: rank 0: --size x: no size\n"


def test_rank_0s_ending_names_its_file_its_heading_and_its_failures_by_label(tmp_path):
    failed = Record("cub", "int32", 2048, 0, status="FAIL")

    def body(box):
        box["store"] = new_store(tmp_path / "r.csv", "unused")
        box["store"].commit(failed)
        box["records"].append(failed)
        box["heading"] = "2 ranks (torchrun)"

    ending = ranks.as_rank(world(0), body, label=lambda r: f"labelled {r.rung}")
    assert ending.path == tmp_path / "r.csv" and ending.heading == "2 ranks (torchrun)"
    assert ending.failed == ["labelled cub"] and ending.exit_code == 1


def test_rank_0s_ending_without_a_heading_has_none(tmp_path):
    def body(box):
        box["store"] = new_store(tmp_path / "r.csv", "unused")

    assert ranks.as_rank(world(0), body, label=str).heading == ""


# -- the fleet check, driven on the host executor --------------------------------------------

def fleet_settings(out=None, devices="all"):
    settings = settings_from({"size": 1000, "rung": "shfl,cub", "max_time": 0.01,
                              "rounds": 1, "seed": 1})
    settings.out, settings.devices = out, devices
    return settings


def run_fleet(settings, rank=0, backend=None, cases=None, comm=None, device=3):
    """run_fleet on `rank` of two; what join, open_backend and watch were given."""
    from reducebench.measuring.hostexec import HostBackend
    from reducebench.measuring.runner import expand_cases

    seen = {"joined": [], "devices": [], "watched": [], "announced": []}
    comm = comm or Comm()

    def join(w, timeout):
        seen["joined"].append((w.rank, timeout))
        return member(comm, device)

    def open_backend(s):
        seen["devices"].append(s.device)
        return backend or HostBackend()

    def watch(total):
        seen["watched"].append(total)
        return contextlib.nullcontext(
            lambda case, index, count: seen["announced"].append(case.rung.name))

    cases = expand_cases(settings) if cases is None else cases
    ending = ranks.run_fleet(settings, cases, world(rank), 7.5, join, open_backend, watch)
    return ending, seen, comm


def test_the_fleet_check_needs_every_ranks_own_gpu():
    with pytest.raises(UsageError, match="^under torchrun `run` measures each rank's own "
                                         "GPU: give --device all$"):
        ranks.run_fleet(fleet_settings(devices="0"), [], world(0), 5.0, None, None, None)


def test_rank_0_refuses_an_existing_file_before_joining(tmp_path):
    (tmp_path / "r.csv").write_text("taken")
    with pytest.raises(UsageError, match="already exists"):
        run_fleet(fleet_settings(tmp_path / "r.csv"))


def test_another_rank_writes_no_file_so_checks_none(tmp_path):
    (tmp_path / "r.csv").write_text("taken")
    ending, seen, _ = run_fleet(fleet_settings(tmp_path / "r.csv"), rank=1)
    assert ending.exit_code == 0 and seen["watched"] == []  # only rank 0 shows progress


def test_rank_0_measures_on_its_own_gpu_and_commits_every_gathered_row(tmp_path):
    settings = fleet_settings(tmp_path / "r.csv")
    ending, seen, comm = run_fleet(settings)
    assert seen["joined"] == [(0, 7.5)] and seen["devices"] == [3]
    assert seen["watched"] == [2] and seen["announced"] == ["shfl", "cub"]
    assert ending.path == tmp_path / "r.csv" and ending.exit_code == 0
    assert [(r.rung, r.meta["rank"]) for r in ending.records] == [("shfl", 0), ("cub", 0)]
    assert comm.calls[1:] == [("gather", "shfl n=1000: gathering the rows"),
                              ("gather", "cub n=1000: gathering the rows"),
                              ("barrier", "the last barrier"), ("close",)]


def test_rank_0s_fleet_file_is_named_after_the_fleet_without_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ending, _, _ = run_fleet(fleet_settings())
    assert ending.path.parent == RESULTS_DIR
    assert ending.path.name.endswith("_fleet-fake-gpu.csv")


def test_only_the_cases_given_are_measured(tmp_path):
    from reducebench.measuring.runner import expand_cases

    settings = fleet_settings(tmp_path / "r.csv")
    ending, seen, _ = run_fleet(settings, cases=expand_cases(settings)[1:])
    assert [r.rung for r in ending.records] == ["cub"] and seen["watched"] == [1]


def test_a_failed_fleet_case_is_named_by_its_rank(tmp_path):
    from fakes import FakeBackend

    ending, _, _ = run_fleet(fleet_settings(tmp_path / "r.csv"),
                             backend=FakeBackend(wrong={"cub": 0.0}))
    assert ending.failed == ["rank 0 cub float32 n=1000"] and ending.exit_code == 1


def test_a_lost_context_ends_the_rank_as_unreachable_keeping_rank_0s_rows(tmp_path, capsys):
    from fakes import FakeBackend

    ending, _, comm = run_fleet(fleet_settings(tmp_path / "r.csv"),
                                backend=FakeBackend(lose={"cub"}))
    assert ending.exit_code == 3 and not ending.show
    err = capsys.readouterr().err
    assert ("reducebench: rank 0 of 2: the CUDA context of rank 0's GPU was lost in cub "
            "float32") in err
    # shfl, then cub's own row, written before the run stops
    assert f"reducebench: rank 0 kept 2 case(s) saved in {tmp_path / 'r.csv'}" in err
    assert ("barrier", "the last barrier") not in comm.calls


def test_a_signal_during_the_fleet_closes_the_ranks_connection(tmp_path):
    class Stopping(Comm):
        def gather(self, obj, what):
            raise Interrupted(signal.SIGTERM)

    ending, _, comm = run_fleet(fleet_settings(tmp_path / "r.csv"), comm=Stopping())
    assert ending.exit_code == 130 and comm.calls[-1] == ("close",)


# -- `multigpu` under a launcher, on test_multigpu's host cluster ----------------------------

def launched_member(comm=None):
    one = member(comm)
    one.world = world(0)
    one.layout = SimpleNamespace(nodes=1, gpus_per_node=2, hosts={"h": None},
                                 cross_node=False)
    return one


def run_launched(tmp_path, rank=0, backend=None, **given):
    """run_launched on `rank` of two; the Ending, what join and open_cluster were given,
    the member and the backend."""
    from test_multigpu import HostBackend

    options = {"size": "1000", "max_time": 0.01, "rounds": 1, "seed": 1,
               "out": str(tmp_path / "m.csv"), **given}
    seen = {"joined": [], "opened": []}
    one, backend = launched_member(), backend or HostBackend(present=2)

    def join(w, timeout):
        seen["joined"].append((w.rank, timeout))
        return one

    def open_cluster(m, timeout):
        seen["opened"].append((m, timeout))
        return backend

    ending = ranks.run_launched(options, world(rank), 6.0, join, open_cluster)
    return ending, seen, options, one, backend


def test_a_launched_run_measures_rank_0_alone_then_the_world(tmp_path, capsys):
    ending, seen, options, one, backend = run_launched(tmp_path)
    assert options["gpus"] == "1,2"  # all: rank 0 alone, then the world
    assert seen["joined"] == [(0, 6.0)] and seen["opened"] == [(one, 6.0)]
    assert sorted({r.gpus for r in ending.records}) == [1, 2]
    assert ending.path == tmp_path / "m.csv" and ending.exit_code == 0
    assert ending.heading == "2 ranks (torchrun) on 1 node(s), 2 GPU(s) per node, 1 host(s)"
    assert one.comm.calls[-2:] == [("barrier", "the last barrier"), ("close",)]
    assert backend.closed
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "[1/4] timing_floor gpus=1", "[2/4] timing_floor gpus=2",
        "[3/4] sharded_sum:pingpong float32 n=1000 gpus=1 block=256",
        "[4/4] sharded_sum:pingpong float32 n=1000 gpus=2 block=256"]


def test_a_launched_run_without_out_names_its_file_after_the_gpu_and_world(tmp_path,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    ending, *_ = run_launched(tmp_path, out=None)
    assert ending.path.parent == RESULTS_DIR
    assert ending.path.name.endswith("_multigpu-fake-gpu-x2.csv")


def test_a_launched_runs_failures_are_named_with_their_gpu_count(tmp_path):
    from test_multigpu import HostBackend

    ending, *_ = run_launched(tmp_path, backend=HostBackend(present=2, broken_k=2))
    assert ending.exit_code == 1
    # the floor (n=1) and the sharded sum over both GPUs: the session for 2 fails
    assert ending.failed == ["timing_floor float32 n=1 gpus=2",
                             "sharded_sum:pingpong float32 n=1000 gpus=2"]


def test_a_count_other_than_one_rank_or_the_world_names_the_launcher(tmp_path):
    with pytest.raises(UsageError, match="^--gpus 1: under torchrun every case spans"):
        run_launched(tmp_path, gpus="1")


def test_rank_0_refuses_an_existing_multigpu_file_before_joining(tmp_path):
    (tmp_path / "m.csv").write_text("taken")
    with pytest.raises(UsageError, match="already exists"):
        run_launched(tmp_path)


def test_another_rank_writes_no_multigpu_file_so_checks_none(tmp_path, capsys):
    (tmp_path / "m.csv").write_text("taken")
    ending, seen, *_ = run_launched(tmp_path, rank=1)
    assert ending.exit_code == 0 and seen["joined"] == [(1, 6.0)]
    assert capsys.readouterr().err == ""  # only rank 0 shows progress


def test_a_signal_while_the_cluster_opens_closes_the_ranks_connection(tmp_path):
    one = launched_member()

    def open_cluster(m, timeout):
        raise Interrupted(signal.SIGINT)

    options = {"size": "1000", "out": str(tmp_path / "m.csv")}
    ending = ranks.run_launched(options, world(0), 6.0, lambda w, t: one, open_cluster)
    assert ending.exit_code == 130 and one.comm.calls == [("close",)]


def test_a_rank_ends_with_its_own_exit_code(monkeypatch):
    ended = []
    monkeypatch.setattr(ranks.os, "_exit", ended.append)
    ranks.finish(3)
    assert ended == [3]
