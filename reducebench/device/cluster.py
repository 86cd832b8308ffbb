"""One GPU per process, the processes started by a launcher (torchrun, srun, mpirun):
joining the world, NCCL across the ranks, and the multigpu cases measured that way
(docs/cluster.md has the recipes and the method).

The ranks reach each other through an existing library, never a protocol of our own:
- torch.distributed's TCPStore, from its own rendezvous: under torchrun env:// (the
  agent's store), under srun tcp://MASTER_ADDR:MASTER_PORT (launch.World: the first host
  of the node list, a port from the job id). Small objects (NCCL's unique id, the stop
  decision of each sample, the rows) pass through it as pickled values.
- mpi4py (REDUCEBENCH_BOOTSTRAP=mpi, the default under mpirun): COMM_WORLD's bcast,
  gather and allgather.
NCCL itself is CuPy's binding: rank 0 draws the unique id, the host library broadcasts it,
every rank calls ncclCommInitRank (nccl-tests does the same over MPI).

Every wait for another rank is bounded (launch.bounded, launch.wait_until): a rank that
died or cannot be reached makes the others raise Unreachable within the timeout, and the
command prints one line and exits. The environment is left alone: no NCCL_* variable is
set or changed (NCCL_NVLS_ENABLE=0 stays in force)."""

from __future__ import annotations

import datetime
import pickle
import socket
from dataclasses import dataclass

from reducebench.core.errors import CaseFailed, CaseSkipped, UsageError
from reducebench.core.stats import StopRule
from reducebench.device import import_cupy
from reducebench.device.gpu import GpuInfo, device_info, query
from reducebench.device.nccl_cases import (NcclCases, Rank, describe, load_nccl,
                                           nccl_version)
from reducebench.device.one_process import Session
from reducebench.device.timing import Hooks
from reducebench.multigpu.launch import (MPI4PY, TORCHRUN, BoundedComm, Layout, RankFacts,
                                         Unreachable, World, bounded, check_distinct_gpus,
                                         device_for, layout, wait_until)
from reducebench.multigpu.one_gpu import RankZeroAlone


# -- the host side: torch.distributed or mpi4py -----------------------------------------------

class StoreComm:
    """torch.distributed's key-value store (TCPStore) from its own rendezvous: env:// under
    torchrun (the agent's store), tcp://MASTER_ADDR:MASTER_PORT otherwise (rank 0 hosts
    it). Only small pickled objects pass, each under a key of its own: the n-th call is
    the same call on every rank, so every rank derives the same keys. No process group is
    made: gloo's own connections between every pair of ranks are not needed for this."""

    def __init__(self, world: World, timeout: float) -> None:
        from torch.distributed.rendezvous import rendezvous

        url = "env://" if world.launcher == TORCHRUN else \
            f"tcp://{world.master_addr}:{world.master_port}"
        self.store, self.rank, self.size = next(rendezvous(
            url, world.rank, world.size, timeout=datetime.timedelta(seconds=timeout)))
        self.calls = 0

    def _key(self) -> str:
        self.calls += 1
        return f"reducebench/{self.calls}"

    def _get(self, key: str) -> object:
        return pickle.loads(self.store.get(key))

    def barrier(self) -> None:
        key = self._key()
        self.store.set(f"{key}/{self.rank}", b"1")
        self.store.wait([f"{key}/{r}" for r in range(self.size)])

    def bcast(self, obj: object) -> object:
        key = self._key()
        if self.rank == 0:
            self.store.set(key, pickle.dumps(obj))
            return obj
        return self._get(key)

    def gather(self, obj: object) -> list | None:
        key = self._key()
        if self.rank != 0:
            self.store.set(f"{key}/{self.rank}", pickle.dumps(obj))
            return None
        return [obj] + [self._get(f"{key}/{r}") for r in range(1, self.size)]

    def allgather(self, obj: object) -> list:
        key = self._key()
        self.store.set(f"{key}/{self.rank}", pickle.dumps(obj))
        return [obj if r == self.rank else self._get(f"{key}/{r}") for r in range(self.size)]

    def close(self) -> None:
        """Rank 0 leaves last: under srun it hosts the store, and a peer still reading its
        last key when rank 0's process ends would see a dead rank instead of the end."""
        if self.rank == 0:
            self.store.wait([f"reducebench/closed/{r}" for r in range(1, self.size)])
        else:
            self.store.set(f"reducebench/closed/{self.rank}", b"1")


class MpiComm:
    """mpi4py's COMM_WORLD. MPI is initialised (on import) and finalised in the main
    thread, as MPI asks; the collectives may run in bounded()'s helper thread (mpi4py
    asks for MPI_THREAD_MULTIPLE)."""

    close_in_main = True

    def __init__(self, world: World) -> None:
        from mpi4py import MPI

        self.mpi, self.comm = MPI, MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        if (self.rank, self.size) != (world.rank, world.size):
            raise UsageError(f"MPI says rank {self.rank} of {self.size}, the launcher's "
                             f"environment rank {world.rank} of {world.size}")

    def barrier(self) -> None:
        self.comm.barrier()

    def bcast(self, obj: object) -> object:
        return self.comm.bcast(obj, root=0)

    def gather(self, obj: object) -> list | None:
        return self.comm.gather(obj, root=0)

    def allgather(self, obj: object) -> list:
        return self.comm.allgather(obj)

    def close(self) -> None:
        if not self.mpi.Is_finalized():
            self.mpi.Finalize()


def connect(world: World, timeout: float) -> BoundedComm:
    """This rank joined to the others (bounded: a rank that never comes is Unreachable)."""
    if world.bootstrap == MPI4PY:
        try:
            comm = MpiComm(world)
        except ImportError as exc:
            raise UsageError(f"{world.launcher}: mpi4py is needed to join the ranks "
                             f"({describe(exc)}); pip install mpi4py, or "
                             "REDUCEBENCH_BOOTSTRAP=torch") from None
        return BoundedComm(comm, timeout)
    try:
        import torch.distributed  # noqa: F401  (a clear line if torch is missing)
    except ImportError as exc:
        raise UsageError(f"{world.launcher}: torch.distributed is needed to join the ranks "
                         f"({describe(exc)}); pip install torch, or "
                         "REDUCEBENCH_BOOTSTRAP=mpi with mpi4py") from None
    where = "env://" if world.launcher == TORCHRUN else \
        f"{world.master_addr}:{world.master_port}"
    comm = bounded(lambda: StoreComm(world, timeout), f"joining the {world.size} ranks at "
                   f"{where}", timeout)
    return BoundedComm(comm, timeout)


# -- joining: which GPU, who is where, refusals ------------------------------------------------

@dataclass
class Member:
    """This rank, joined: its GPU and what every rank reported."""

    world: World
    comm: BoundedComm
    cupy: object
    device: int
    info: GpuInfo
    host: str
    facts: list[RankFacts]
    layout: Layout

    @property
    def names(self) -> dict[int, str]:
        """rank -> host:device, for tables."""
        return {f.rank: f"{f.host}:{f.device}" for f in self.facts}


def join(world: World, timeout: float) -> Member:
    """Connect, pick this rank's GPU, and gather every rank's facts. A refusal on any rank
    (more ranks on a node than GPUs, two ranks on one GPU) is raised on every rank, in
    one line, before anything is measured."""
    comm = connect(world, timeout)
    cupy = import_cupy()
    host = socket.gethostname()
    reason, device, info = "", 0, None
    try:
        device = device_for(world, int(cupy.cuda.runtime.getDeviceCount()), host)
        cupy.cuda.Device(device).use()
        info = query(cupy, device)
    except UsageError as exc:
        reason = f"rank {world.rank}: {exc}"
    mine = RankFacts(world.rank, host, world.local_rank, device,
                     info.uuid if info else "", info.name if info else "", world.node)
    gathered = comm.allgather((reason, mine), "gathering every rank's GPU")
    reasons = [r for r, _ in gathered if r]
    facts = [f for _, f in gathered]
    try:
        if reasons:
            raise UsageError(reasons[0])
        check_distinct_gpus(facts)
    except UsageError:
        comm.close()  # every rank refuses; rank 0, last out, keeps the store up till then
        raise
    return Member(world, comm, cupy, device, info, host, facts, layout(facts))


# -- the multigpu cases, one GPU per rank -------------------------------------------------------

class ClusterSession(NcclCases):
    """This rank's GPU, stream and NCCL communicator over the whole world: the launch
    adapter of device/nccl_cases.py for one rank a process.

    One sample on every rank: hold the stream (the spin kernel on a flag in this rank's
    pinned memory), flush L2 (cold), a one-float all-reduce (the starting gun: every rank
    leaves it within NCCL's latency, however far apart the host processes are), the start
    event, the case, the stop event; then release the hold. Rank 0 decides after each
    sample whether to go on (the stop rule on its own times) and broadcasts it, so every
    rank takes the same samples. A sample's time is the slowest rank's interval, its
    spread slowest - fastest, as with one process driving every GPU."""

    def __init__(self, member: Member, nccl, timeout: float) -> None:
        cupy = member.cupy
        self.comm, self.timeout = member.comm, timeout
        rank, k = member.world.rank, member.world.size
        self.lead = rank == 0
        cupy.cuda.Device(member.device).use()
        unique_id = self.comm.bcast(nccl.get_unique_id() if rank == 0 else None,
                                    "sharing NCCL's unique id")

        def init():
            cupy.cuda.Device(member.device).use()  # this helper thread's current device
            return nccl.NcclCommunicator(k, unique_id, rank)

        comm = bounded(init, f"setting up NCCL over {k} ranks", timeout)
        self.done = cupy.cuda.Event(disable_timing=True)
        self.gun_send = cupy.ones(1, dtype=cupy.float32)
        self.gun_recv = cupy.zeros(1, dtype=cupy.float32)
        # what a world of processes adds to the one timed sample (device/timing.py): the
        # starting gun, bounded waits, rank 0's stop decision, every rank's times
        hooks = Hooks(after_flush=self._starting_gun,
                      wait=lambda _, what: self._wait(self.ranks[0], what),
                      decide=self._decide, gather=self._gather)
        super().__init__(cupy, nccl, k, [Rank(cupy, rank, member.info, comm)], hooks)

    def _wait(self, r: Rank, what: str) -> None:
        """Everything enqueued on this rank's stream done, at most `timeout` seconds: a
        collective whose peer died never completes."""
        self.done.record(r.stream)
        wait_until(lambda: self.done.done, what, self.timeout)

    def _allgather(self, values: list, what: str) -> list:
        return [value for every in self.comm.allgather(values, what) for value in every]

    def _starting_gun(self, lane) -> None:
        """A one-float all-reduce after the flush: every rank leaves it within NCCL's
        latency, however far apart the host processes are, and starts its clock then."""
        self.ranks[0].comm.allReduce(self.gun_send.data.ptr, self.gun_recv.data.ptr, 1,
                                     self._nccl_type("float32"), self.nccl.NCCL_SUM,
                                     lane.stream.ptr)

    def _decide(self, times: list[float], elapsed: float, stop: StopRule, label: str) -> bool:
        verdict = stop.done(times, elapsed) if self.lead else None
        return bool(self.comm.bcast(verdict, f"{label}: rank 0's stop decision"))

    def _gather(self, samples: list[list[float]], timed_out: list[int], label: str):
        """Every rank's times, sample by sample, and each rank's timed-out flag."""
        every = self.comm.allgather(([s[0] for s in samples], timed_out[0]),
                                    f"{label}: the samples")
        per_sample = [list(s) for s in zip(*(times for times, _ in every))]
        return per_sample, [flag for _, flag in every]


class DeviceCluster:
    """The loop's MultiGpuBackend over a launcher's world: one case over every rank, or
    (k = 1, for the speed-up) over rank 0 alone (multigpu/one_gpu.py)."""

    def __init__(self, member: Member, timeout: float) -> None:
        self.member, self.timeout = member, timeout
        self.nccl, reason = load_nccl()
        reasons = [r for r in member.comm.allgather(reason or "", "checking NCCL") if r]
        self._reason = reasons[0] if reasons else None
        mine = {**device_info(member.info), "host": member.host}
        self._infos = member.comm.allgather(mine, "gathering the GPUs' facts")
        self._session: ClusterSession | None = None
        self._alone: RankZeroAlone | None = None

    def present(self) -> int:
        return self.member.world.size

    def unavailable_reason(self) -> str | None:
        return self._reason

    def device_info(self) -> dict:
        return self._infos[self.member.world.rank]

    def devices(self, k: int) -> str:
        """host:device:GPU UUID of each rank, in rank order."""
        return ";".join(f"{f.host}:{f.device}:{f.uuid or f.gpu}"
                        for f in sorted(self.member.facts, key=lambda f: f.rank)[:k])

    def nccl_version(self) -> str:
        return nccl_version(self.nccl)

    def layout(self, k: int) -> tuple[int, int, bool]:
        """(nodes, GPUs per node, cross_node) of a case over k ranks: rank 0 alone, or
        the whole world."""
        if k == 1:
            return 1, 1, False
        lay = self.member.layout
        return lay.nodes, lay.gpus_per_node, lay.cross_node

    def rank_fields(self) -> dict:
        return self.member.world.rank_fields()

    def session(self, k: int) -> ClusterSession | RankZeroAlone:
        if k == 1:
            if self._alone is None:
                self._alone = RankZeroAlone(self.member.comm, self._rank_zero_session)
            return self._alone
        if k != self.member.world.size:
            raise CaseSkipped(f"under a launcher every case spans the world's "
                              f"{self.member.world.size} ranks, not {k}")
        if self._session is None:
            try:
                self._session = ClusterSession(self.member, self.nccl, self.timeout)
            except (Unreachable, UsageError):
                raise
            except Exception as exc:
                raise CaseFailed(f"setting up NCCL over {k} ranks failed: "
                                 f"{describe(exc)}") from None
        return self._session

    def _rank_zero_session(self) -> Session:
        """Rank 0's GPU as one process drives one GPU (device/one_process.py)."""
        try:
            return Session(self.member.cupy, self.nccl, [self.member.info])
        except Exception as exc:
            raise CaseFailed(f"setting up NCCL on rank 0's GPU alone failed: "
                             f"{describe(exc)}") from None

    def close(self) -> None:
        if self._alone is not None:
            self._alone.close()
            self._alone = None
        if self._session is not None:
            self._session.close()
            self._session = None


def open_cluster(member: Member, timeout: float) -> DeviceCluster:
    return DeviceCluster(member, timeout)
