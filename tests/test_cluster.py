"""Launchers without a GPU: the world each launcher's environment describes, the refusals,
the rank layout, bounded waits, the fleet judgement, and rows of several ranks in one
file (docs/cluster.md). Expected values are worked out by hand in the comments."""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from reducebench.analysis.fleet import judge_fleet
from reducebench.cli import ReducebenchGroup
from reducebench.cli.multigpu import multigpu_command
from reducebench.core.errors import UsageError
from reducebench.core.interrupt import Interrupted, stop_on_signals
from reducebench.multigpu.launch import (MPI, SLURM, TORCHRUN, BoundedComm, LocalComm, RankFacts,
                                         Unreachable, World, bounded, check_distinct_gpus,
                                         device_for, first_host, layout, slurm_port,
                                         tasks_per_node, timeout_from, wait_until,
                                         world_from_env)
from reducebench.multigpu.one_gpu import RankZeroAlone
from reducebench.results.files import read_results
from reducebench.results.samples_file import CaseSamples
from reducebench.results.schema import MULTIGPU, Record
from reducebench.results.store import ResultsStore

TORCHRUN_ENV = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
                "GROUP_RANK": "1", "MASTER_ADDR": "node0", "MASTER_PORT": "1234"}
SLURM_ENV = {"SLURM_PROCID": "5", "SLURM_NTASKS": "6", "SLURM_LOCALID": "1",
             "SLURM_NODEID": "1", "SLURM_NNODES": "2", "SLURM_STEP_ID": "0",
             "SLURM_STEP_NODELIST": "gpu[07-08]", "SLURM_STEP_TASKS_PER_NODE": "4,2",
             "SLURM_JOB_ID": "123456"}
OMPI_ENV = {"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4",
            "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"}


# -- each launcher's environment ---------------------------------------------------------------

def test_torchrun():
    # 8 ranks, 2 per node: 4 nodes; GROUP_RANK is the node
    assert world_from_env(TORCHRUN_ENV) == World(TORCHRUN, 3, 8, 1, 2, 1, 4, "torch",
                                                 "node0", 1234)


def test_srun_reads_the_step_and_reaches_the_first_host():
    # node 1 of "4,2" runs 2 tasks; port 29500 + 123456 mod 10000 = 32956
    world = world_from_env(SLURM_ENV)
    assert world == World(SLURM, 5, 6, 1, 2, 1, 2, "torch", "gpu07", 32956)
    assert world_from_env({**SLURM_ENV, "MASTER_ADDR": "h", "MASTER_PORT": "7"}).master_port == 7
    assert world_from_env({**SLURM_ENV, "REDUCEBENCH_BOOTSTRAP": "mpi"}).bootstrap == "mpi"


def test_open_mpi():
    # 4 ranks, 2 a node, by slot: rank 3 is on node 1 of 2; MPI bootstraps by default
    assert world_from_env(OMPI_ENV) == World(MPI, 3, 4, 1, 2, 1, 2, "mpi")


def test_the_innermost_launcher_wins_and_no_launcher_is_none():
    assert world_from_env({**SLURM_ENV, **TORCHRUN_ENV}).launcher == TORCHRUN  # srun torchrun
    assert world_from_env({**SLURM_ENV, **OMPI_ENV}).launcher == MPI
    assert world_from_env({}) is None
    # an sbatch script itself (no job step) is one process, not rank 0 of SLURM_NTASKS
    batch = {k: v for k, v in SLURM_ENV.items() if k != "SLURM_STEP_ID"}
    assert world_from_env(batch) is None


def test_torchrun_without_group_rank_counts_the_node_from_the_rank():
    # 2 ranks a node, numbered node by node: ranks 2-3 on node 1, ranks 6-7 on node 3
    env = {k: v for k, v in TORCHRUN_ENV.items() if k != "GROUP_RANK"}
    assert world_from_env(env).node == 1
    assert world_from_env({**env, "RANK": "6", "LOCAL_RANK": "0"}).node == 3
    assert world_from_env({**env, "RANK": "0", "LOCAL_RANK": "0"}).node == 0


def test_torchrun_without_local_world_size_splits_the_world_over_its_nodes():
    # 8 ranks on GROUP_WORLD_SIZE = 4 nodes are 2 a node: rank 3 is on node 1, and a
    # node with 2 GPUs is enough for it (not "8 ranks on a node")
    env = {k: v for k, v in TORCHRUN_ENV.items() if k not in ("GROUP_RANK", "LOCAL_WORLD_SIZE")}
    world = world_from_env({**env, "GROUP_WORLD_SIZE": "4"})
    assert (world.local_size, world.node, world.nodes) == (2, 1, 4)
    assert device_for(world, visible=2) == 1
    # no node count at all: one node holds the world
    world = world_from_env(env)
    assert (world.local_size, world.node, world.nodes) == (8, 0, 1)


@pytest.mark.parametrize("env, fragment", [
    ({**TORCHRUN_ENV, "GROUP_RANK": "4", "GROUP_WORLD_SIZE": "4"}, "node 4 of 4 nodes"),
    ({**SLURM_ENV, "SLURM_NODEID": "2"}, "node 2 of 2 nodes"),
    ({**TORCHRUN_ENV, "RANK": "8"}, "rank 8 of a world of 8"),
    ({**TORCHRUN_ENV, "RANK": "x"}, "not a whole number"),
    ({**TORCHRUN_ENV, "LOCAL_RANK": "2"}, "local rank 2 of 2"),
    ({k: v for k, v in TORCHRUN_ENV.items() if k != "MASTER_ADDR"}, "MASTER_ADDR"),
    ({**SLURM_ENV, "REDUCEBENCH_BOOTSTRAP": "zmq"}, "torch or mpi"),
    ({**SLURM_ENV, "SLURM_STEP_TASKS_PER_NODE": "4;2"}, "cannot read"),
])
def test_inconsistent_environments_are_one_line(env, fragment):
    with pytest.raises(UsageError, match=fragment):
        world_from_env(env)


@pytest.mark.parametrize("text, first", [("gpu[07-09,12],login1", "gpu07"),
                                         ("node1,node2", "node1"), ("a-b[001-004]", "a-b001"),
                                         ("solo", "solo"), ("", "")])
def test_first_host_of_a_slurm_hostlist(text, first):
    assert first_host(text) == first


def test_tasks_per_node_and_port():
    assert tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    assert tasks_per_node("") == []
    assert slurm_port({"SLURM_JOB_ID": "7"}) == 29507
    assert slurm_port({"REDUCEBENCH_MASTER_PORT": "4000", "MASTER_PORT": "5"}) == 4000


def test_timeout_from_option_env_default():
    assert timeout_from({}, None) == 60.0
    assert timeout_from({"REDUCEBENCH_TIMEOUT": "5"}, None) == 5.0
    assert timeout_from({"REDUCEBENCH_TIMEOUT": "5"}, 2.5) == 2.5
    for env, option in (({"REDUCEBENCH_TIMEOUT": "soon"}, None), ({}, 0.0), ({}, -1.0)):
        with pytest.raises(UsageError):
            timeout_from(env, option)


# -- one GPU per rank: refusals and the layout ---------------------------------------------------

def world(local_rank=1, local_size=2) -> World:
    return World(TORCHRUN, 1, 4, local_rank, local_size, 0, 2, "torch", "h", 1)


def test_device_for_each_rank():
    assert device_for(world(1, 2), visible=2) == 1
    assert device_for(world(1, 2), visible=8) == 1
    assert device_for(world(1, 2), visible=1) == 0   # each rank sees only its own GPU
    with pytest.raises(UsageError, match="4 ranks on h1 but it has 2 GPU"):
        device_for(world(3, 4), visible=2, host="h1")
    with pytest.raises(UsageError, match="no CUDA GPU"):
        device_for(world(), visible=0)


def test_two_ranks_on_one_gpu_are_refused_naming_both():
    facts = [RankFacts(0, "a", 0, 0, "GPU-1"), RankFacts(1, "a", 1, 0, "GPU-1")]
    with pytest.raises(UsageError, match="ranks 0 and 1 are both on GPU GPU-1 of a"):
        check_distinct_gpus(facts)
    check_distinct_gpus([RankFacts(0, "a", 0, 0, "GPU-1"), RankFacts(1, "a", 1, 1, "GPU-2")])
    # without a UUID, the device index on the host decides
    with pytest.raises(UsageError):
        check_distinct_gpus([RankFacts(0, "a", 0, 3), RankFacts(1, "a", 1, 3)])
    check_distinct_gpus([RankFacts(0, "a", 0, 3), RankFacts(1, "b", 0, 3)])


def test_ranks_pinned_by_cuda_visible_devices_are_told_apart_by_uuid():
    # CUDA_VISIBLE_DEVICES=0 for rank 0 and =1 for rank 1: each sees one GPU, index 0
    assert device_for(world(0, 2), visible=1) == device_for(world(1, 2), visible=1) == 0
    check_distinct_gpus([RankFacts(0, "a", 0, 0, "GPU-aaaa"), RankFacts(1, "a", 1, 0, "GPU-bbbb")])
    # one GPU seen under two indices (one rank pinned to it, one seeing all) is one GPU
    with pytest.raises(UsageError, match="ranks 0 and 1 are both on GPU GPU-aaaa of a"):
        check_distinct_gpus([RankFacts(0, "a", 0, 0, "GPU-aaaa"),
                             RankFacts(1, "a", 1, 1, "GPU-aaaa")])


def test_layout_counts_nodes_and_whether_traffic_leaves_a_host():
    two_hosts = [RankFacts(r, "ab"[r // 2], r % 2, r % 2, node=r // 2) for r in range(4)]
    lay = layout(two_hosts)
    assert (lay.nodes, lay.gpus_per_node, lay.cross_node) == (2, 2, True)
    # two torchrun "nodes" on one host: 2 nodes of one GPU, traffic stays on the host
    emulated = [RankFacts(0, "a", 0, 0, node=0), RankFacts(1, "a", 0, 0, node=1)]
    lay = layout(emulated)
    assert (lay.nodes, lay.gpus_per_node, lay.cross_node) == (2, 1, False)
    # Open MPI gives no node index: hosts count
    mpi = [RankFacts(r, "ab"[r % 2], 0, 0, node=0) for r in range(4)]
    assert layout(mpi).nodes == 2 and layout(mpi).gpus_per_node == 2


# -- bounded waits ------------------------------------------------------------------------------

def test_bounded_returns_the_value_and_passes_errors_on():
    assert bounded(lambda: 42, "x", 1.0) == 42

    def fail():
        raise KeyError("k")

    with pytest.raises(KeyError):
        bounded(fail, "x", 1.0)


def test_bounded_gives_up_after_the_timeout_with_what_it_waited_for():
    never = threading.Event()
    began = time.monotonic()
    with pytest.raises(Unreachable, match="gathering the rows did not complete within 0.3 s"):
        bounded(never.wait, "gathering the rows", 0.3)
    assert time.monotonic() - began < 2.0


def test_a_signal_stops_a_blocked_wait_at_once():
    never = threading.Event()
    threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
    began = time.monotonic()
    with pytest.raises(Interrupted), stop_on_signals():
        bounded(never.wait, "a barrier", 30.0)
    assert time.monotonic() - began < 5.0


def test_wait_until_polls_a_gpu_event_within_the_bound():
    ticks = iter(range(100))
    with pytest.raises(Unreachable, match="a sample did not complete within 3 s"):
        wait_until(lambda: False, "a sample", 3, clock=lambda: next(ticks), pause=0)
    done = iter([False, False, True])
    wait_until(lambda: next(done), "a sample", 3, pause=0)


class Blocking(LocalComm):
    def gather(self, obj):
        threading.Event().wait()


class Broken(LocalComm):
    def bcast(self, obj):
        raise RuntimeError("Connection reset by peer\n(a long gloo trace)")


def test_a_bounded_comm_names_the_collective_that_hung_or_broke():
    comm = BoundedComm(Blocking(), 0.2)
    assert comm.bcast(5) == 5 and comm.allgather(1) == [1]
    with pytest.raises(Unreachable, match="rung x: gathering the rows did not complete"):
        comm.gather(1, "rung x: gathering the rows")
    with pytest.raises(Unreachable, match=r"the seed failed \(RuntimeError: Connection reset "
                                          r"by peer\): a rank died"):
        BoundedComm(Broken(), 5).bcast(1, "the seed")


# -- the fleet judgement ------------------------------------------------------------------------

def tenths(start: float) -> list[float]:
    return [round(start + i / 10, 2) for i in range(10)]


def test_the_one_slow_gpu_is_flagged_with_its_test():
    # medians 10.45, 10.5, 11.45: fleet median 10.5; GPU 2 is 11.45 / 10.5 = 1.0905 of it
    # and all 10 of its samples are above all 20 others: U = 200, mean 100, variance
    # 10 * 20 * 31 / 12 = 516.67, z = 99.5 / 22.73 = 4.377, p = erfc(4.377 / sqrt 2) = 1.2e-5
    samples = {"c": {0: tenths(10.0), 1: tenths(10.05), 2: tenths(11.0)}}
    report = judge_fleet(samples)
    assert report.flagged == [2] and report.cases == 1
    worst = report.gpus[2].worst
    assert worst.ratio == pytest.approx(11.45 / 10.5)
    assert worst.p_value == pytest.approx(math.erfc(99.5 / math.sqrt(516.6667) / math.sqrt(2)),
                                          rel=1e-3)
    assert not report.gpus[0].flagged and not report.gpus[1].flagged
    assert "Mann-Whitney" in report.rule() and "x 1.02" in report.rule()


def test_a_real_but_small_gap_is_not_flagged():
    # GPU 2 is 1.5% slower in every sample (p tiny) but under the 2% threshold
    base = [100 + i / 100 for i in range(10)]
    samples = {"c": {0: base, 1: base, 2: [b * 1.015 for b in base]}}
    assert judge_fleet(samples).flagged == []
    assert judge_fleet(samples, threshold_pct=1.0).flagged == [2]


def test_a_higher_median_without_evidence_is_not_flagged():
    # GPU 2: four samples below and six above all 20 others: U = 6 * 20 = 120 (mean 100, so
    # P(slower) = 0.6), its median (120 + 121) / 2 = 120.5 is 15% above the fleet's 104.5;
    # ties (GPUs 0 and 1 equal): 10 pairs, sum(t^3 - t) = 60, variance
    # 200 / 12 * (31 - 60 / 870) = 515.52, z = 19.5 / 22.705 = 0.859, p = 0.390: no evidence
    others = [100.0 + i for i in range(10)]
    samples = {"c": {0: others, 1: others, 2: [90, 91, 92, 93, 120, 121, 122, 123, 124, 125]}}
    report = judge_fleet(samples)
    assert report.flagged == []
    assert report.gpus[2].cases[0].ratio == pytest.approx(120.5 / 104.5)
    assert report.gpus[2].cases[0].p_value == pytest.approx(0.3904, abs=1e-3)


def test_too_few_samples_or_gpus_are_not_judged():
    few = judge_fleet({"c": {0: [1.0] * 5, 1: [2.0] * 5}})
    assert few.flagged == [] and few.gpus[1].cases[0].reason.startswith("fewer than")
    alone = judge_fleet({"c": {0: tenths(1.0)}})
    assert alone.cases == 0 and alone.gpus[0].cases == []


# -- rows of every rank in one file -------------------------------------------------------------

def fleet_record(rank: int, median: float) -> Record:
    times = [median] * 10
    meta = {"schema_version": 4, "kind": "single", "run_id": f"run{rank}", "host": "h",
            "device": rank, "gpu_uuid": f"GPU-{rank}", "rank": rank, "local_rank": rank,
            "world_size": 2, "gpu": "Fake", "mode": "cold", "timing": "single",
            "inputs": "exact", "seed": 1, "options": "{}"}
    return Record("vector_load", "float32", 1024, 256, median_us=median, samples=10,
                  meta=meta, raw_samples=CaseSamples(times))


def test_one_file_keeps_a_row_per_case_per_rank(tmp_path):
    from reducebench.analysis.fleet import fleet_samples

    path = tmp_path / "fleet.csv"
    store = ResultsStore(path)
    records = [fleet_record(0, 10.0), fleet_record(1, 12.0)]
    for record in records:  # what rank 0 commits after each gather
        store.commit(record)
    frame = read_results(path)
    assert sorted(frame["rank"].astype(int)) == [0, 1]
    assert list(frame["gpu_uuid"]) == ["GPU-0", "GPU-1"]
    assert fleet_samples(records) == {"vector_load float32 n=1024 block=256": {
        0: [10.0] * 10, 1: [12.0] * 10}}


# -- the command under a launcher, with the device layer faked -----------------------------------

class FakeMember:
    def __init__(self, w: World):
        from types import SimpleNamespace

        self.world, self.comm = w, BoundedComm(LocalComm(), 5.0)
        self.layout = layout([RankFacts(0, "h", 0, 0, node=0), RankFacts(1, "h", 0, 0, node=1)])
        self.info = SimpleNamespace(name="Fake GPU")


def launched(monkeypatch, tmp_path, backend_factory, *args):
    import reducebench.multigpu.ranks as cluster_cli
    import reducebench.device.cluster as device_cluster

    from test_multigpu import HostBackend

    class LaunchedBackend(HostBackend):
        """As device/cluster.DeviceCluster: k = 1 is rank 0 alone (one_gpu.py), here
        rank 0 of a world whose broadcasts come back to it."""

        def layout(self, k):
            return (1, 1, False) if k == 1 else (2, 1, False)

        def rank_fields(self):
            return {"rank": 0, "local_rank": 0, "world_size": 2}

        def session(self, k):
            if k != 1:
                return super().session(k)
            if not hasattr(self, "alone"):
                self.alone = RankZeroAlone(BoundedComm(LocalComm(), 5.0),
                                           lambda: HostBackend.session(self, 1))
            return self.alone

    env = {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
           "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(device_cluster, "join", lambda w, t: FakeMember(w))
    monkeypatch.setattr(device_cluster, "open_cluster",
                        lambda m, t: backend_factory(LaunchedBackend))

    def finish(code):
        raise SystemExit(code)

    monkeypatch.setattr(cluster_cli, "finish", finish)
    group = ReducebenchGroup(commands={"multigpu": multigpu_command})
    return CliRunner().invoke(group, ["multigpu", *args])


def test_under_a_launcher_rank_0_writes_every_row_with_the_layout(monkeypatch, tmp_path):
    out = tmp_path / "m.csv"
    result = launched(monkeypatch, tmp_path, lambda cls: cls(present=2), "--size", "1000",
                      "--nccl", "--bytes", "4096", "--max-time", "0.01", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "2 ranks (torchrun) on 2 node(s), 1 GPU(s) per node, 1 host(s)" in result.output
    frame = read_results(out)
    world, alone = frame[frame["gpus"] == 2], frame[frame["gpus"] == 1]
    assert set(world["nodes"]) == {2} and set(world["gpus_per_node"]) == {1}
    # rank 0 alone: the timing floor and the sharded sum on one GPU, no collective
    assert sorted(alone["case"]) == ["sharded_sum", "timing_floor"]
    assert set(alone["nodes"]) == {1} and set(alone["gpus_per_node"]) == {1}
    assert not frame["cross_node"].any()
    assert set(frame["world_size"]) == {2} and set(frame["rank"]) == {0}
    assert set(frame["kind"]) == {MULTIGPU}


def test_under_a_launcher_gpus_is_the_world(monkeypatch, tmp_path):
    result = launched(monkeypatch, tmp_path, lambda cls: cls(), "--gpus", "1")
    assert result.exit_code == 2
    assert "every case spans the world's 2 ranks" in result.output


def test_a_lost_peer_ends_the_rank_with_one_line_and_keeps_the_rows(monkeypatch, tmp_path):
    out = tmp_path / "m.csv"

    def factory(cls):
        class Lost(cls):
            def session(self, k):
                session = super().session(k)

                def collective(case, stop, cold):
                    raise Unreachable("an all-reduce did not complete within 5 s: a rank died")
                session.collective = collective
                return session
        return Lost(present=2)

    # one round: each case is written as it completes (in rounds, after its last)
    result = launched(monkeypatch, tmp_path, factory, "--size", "1000", "--nccl", "--bytes",
                      "4096", "--max-time", "0.01", "--rounds", "1", "--out", str(out))
    assert result.exit_code == 3, result.output
    assert "reducebench: rank 0 of 2: an all-reduce did not complete within 5 s" in result.output
    assert "rank 0 kept" in result.output
    assert len(read_results(out)) >= 2  # the floor and the sharded sum before it



# -- an interrupted rank 0: every saved row shown, no table over nothing (issue 40) ---------------

BORDER = "\u2503"  # the heavy vertical line of a rich table's header


def sigterm_while_committing(monkeypatch, wanted) -> None:
    """SIGTERM arrives while rank 0 commits the first row for which wanted(row) holds, as
    when torchrun stops the ranks after one of them was killed."""
    from reducebench.core.interrupt import deferred

    commit = ResultsStore.commit
    sent = []

    def commit_then_signal(self, record):
        with deferred():  # as a signal during the write: held until the row is down
            commit(self, record)
            if wanted(record) and not sent:
                sent.append(record)
                os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(ResultsStore, "commit", commit_then_signal)


def test_a_row_saved_as_the_signal_came_is_in_the_table_and_the_count(monkeypatch, tmp_path):
    from reducebench.multigpu.cases import SHARDED

    out = tmp_path / "m.csv"
    sigterm_while_committing(monkeypatch, lambda row: row.case == SHARDED)
    result = launched(monkeypatch, tmp_path, lambda cls: cls(present=2), "--size", "1000",
                      "--nccl", "--bytes", "4096", "--max-time", "0.01", "--out", str(out))
    assert result.exit_code == 130, result.output
    # the floors of 1 and 2 GPUs, then the first sharded sum: rank 0 alone
    assert len(read_results(out)) == 3
    assert "interrupted (SIGTERM): 3 case(s) saved in" in result.output
    assert "sharded sum" in result.output and "\u2502 1000 \u2502" in result.output


def test_stopped_before_any_sharded_row_prints_no_sharded_table(monkeypatch, tmp_path):
    from reducebench.multigpu.cases import FLOOR

    out = tmp_path / "m.csv"
    sigterm_while_committing(monkeypatch, lambda row: row.case == FLOOR)
    result = launched(monkeypatch, tmp_path, lambda cls: cls(present=2), "--size", "1000",
                      "--max-time", "0.01", "--out", str(out))
    assert result.exit_code == 130, result.output
    assert "timing floor" in result.output and BORDER not in result.output
    last = " ".join(result.output.split()).rsplit("interrupted (SIGTERM): ", 1)[-1]
    # the floor written in its last round, before the later cases' last rounds
    assert last.startswith("1 case(s) saved in") and "case(s) had only some" in last


def fleet(monkeypatch, tmp_path):
    """`run --device all` as rank 0 of two under torchrun, the other rank a world of one
    (LocalComm), every case run by the host executor."""
    import reducebench.multigpu.ranks as cluster_cli
    import reducebench.device
    import reducebench.device.cluster as device_cluster
    from fakes import FakeCliBackend
    from reducebench.cli import cli

    env = {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
           "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)

    class Member(FakeMember):
        device = 0

    def finish(code):
        raise SystemExit(code)

    monkeypatch.setattr(device_cluster, "join", lambda w, t: Member(w))
    monkeypatch.setattr(reducebench.device, "open_backend",
                        lambda device=0: FakeCliBackend())
    monkeypatch.setattr(cluster_cli, "finish", finish)
    return CliRunner().invoke(cli, ["run", "--device", "all", "--size", "1000", "--rung",
                                    "shfl,cub,vector_load", "--max-time", "0.01", "--out",
                                    str(tmp_path / "fleet.csv")], env={"COLUMNS": "150"})


def test_an_interrupted_fleet_with_nothing_judged_prints_a_line_not_a_table(monkeypatch,
                                                                            tmp_path):
    sigterm_while_committing(monkeypatch, lambda row: True)   # the first row is saved
    result = fleet(monkeypatch, tmp_path)
    assert result.exit_code == 130, result.output
    assert "the fleet check: no case was timed on enough GPUs to be judged" in result.output
    assert BORDER not in result.output and "not judged" not in result.output
    assert "interrupted (SIGTERM): 1 case(s) saved in" in result.output


def test_flex_and_fitted_tables_without_rows_print_nothing():
    from rich.console import Console

    from reducebench.render.flex import FlexColumn, FlexTable
    from reducebench.render.run_tables import devices_table

    console = Console(width=120, record=True, force_terminal=False)
    console.print(FlexTable("sharded sum", [FlexColumn("n"), FlexColumn("median us")], []))
    console.print(devices_table([], {0: "GPU", 1: "GPU"}))
    assert console.export_text() == ""

# -- real MPI on the CPU, where mpirun and mpi4py are present -------------------------------------

MPIRUN = shutil.which("mpirun")


def mpi_available() -> bool:
    if MPIRUN is None:
        return False
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


MPI_SCRIPT = """
import os, sys, time
from reducebench.multigpu.launch import world_from_env, Unreachable
from reducebench.device.cluster import connect
world = world_from_env(os.environ)
comm = connect(world, 3.0)
print("gathered", comm.allgather(world.rank), comm.bcast(world.rank * 10), flush=True)
if sys.argv[1] == "die" and world.rank == 1:
    os._exit(9)
try:
    comm.gather(world.rank, "gathering the rows")
except Unreachable as exc:
    print("unreachable:", exc, flush=True)
    os._exit(3)
comm.close()
"""


@pytest.mark.skipif(not mpi_available(), reason="needs mpirun and mpi4py")
@pytest.mark.parametrize("mode", ["ok", "die"])
def test_mpi4py_joins_the_ranks_and_a_dead_rank_ends_the_job(tmp_path, mode):
    script = tmp_path / "mpi_world.py"
    script.write_text(MPI_SCRIPT)
    argv = [MPIRUN, "-n", "2", "--oversubscribe"]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    began = time.monotonic()
    done = subprocess.run([*argv, sys.executable, str(script), mode], capture_output=True,
                          text=True, timeout=60, env=env)
    took = time.monotonic() - began
    assert "gathered [0, 1] 0" in done.stdout, done.stdout + done.stderr
    if mode == "ok":
        assert done.stdout.count("gathered [0, 1] 0") == 2
        assert done.returncode == 0, done.stderr
    else:  # mpirun ends the job when a rank dies; rank 0 never waits past the bound
        assert done.returncode != 0 and took < 30


# -- torch's store, faked: every rank derives the same keys ---------------------------------------

class FakeStore:
    """A TCPStore's set/get/wait: get and wait block until the key is set."""

    def __init__(self):
        self.data, self.cond = {}, threading.Condition()

    def set(self, key, value):
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def get(self, key):
        with self.cond:
            assert self.cond.wait_for(lambda: key in self.data, timeout=5), key
            return self.data[key]

    def wait(self, keys):
        for key in keys:
            self.get(key)


def test_store_comm_collectives_over_three_ranks():
    from reducebench.device.cluster import StoreComm

    store, results = FakeStore(), {}

    def rank_main(rank):
        comm = StoreComm.__new__(StoreComm)
        comm.store, comm.rank, comm.size, comm.calls = store, rank, 3, 0
        seed = comm.bcast(42 if rank == 0 else None)
        rows = comm.gather({"rank": rank, "seed": seed})
        comm.barrier()
        every = comm.allgather(rank * 10)
        stop = [comm.bcast(i == 2 if rank == 0 else None) for i in range(3)]
        results[rank] = (seed, rows, every, stop)

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results[0] == (42, [{"rank": r, "seed": 42} for r in range(3)], [0, 10, 20],
                          [False, False, True])
    assert results[2] == (42, None, [0, 10, 20], [False, False, True])
