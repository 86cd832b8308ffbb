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
import statistics
from dataclasses import dataclass
from typing import Callable

import numpy as np

from reducebench.core.errors import CaseFailed, CaseSkipped, UsageError
from reducebench.core.stats import StopRule
from reducebench.device import import_cupy
from reducebench.device.gpu import GpuInfo, device_info, query
from reducebench.device.multigpu import (FLOOR_WARMUP_SAMPLES, MEMORY_MARGIN, nccl_type,
                                         nccl_version,
                                         VERIFY_CHUNK, WARMUP_RUNS, EmptyShard, ShardReduction,
                                         describe, load_nccl, pattern, poison_value,
                                         wrong_elements)
from reducebench.device.nvtx import nvtx_range
from reducebench.device.timing import HOLD_TIMEOUT_NS, Hooks, HoldTimedOut, Lane, Sampler
from reducebench.multigpu.cases import NCCL_ROOT, MultiGpuCase, combined_shape
from reducebench.multigpu.launch import (MPI4PY, TORCHRUN, BoundedComm, Layout, RankFacts,
                                         Unreachable, World, bounded, check_distinct_gpus,
                                         device_for, layout, wait_until)
from reducebench.multigpu.loop import MultiMeasurement
from reducebench.multigpu.shards import ALLREDUCE, shard_alignment, shard_bounds
from reducebench.verify.inputs import HostInput, storage_dtype


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

class ClusterSession:
    """This rank's GPU, stream and NCCL communicator over the whole world.

    One sample on every rank: hold the stream (the spin kernel on a flag in this rank's
    pinned memory), flush L2 (cold), a one-float all-reduce (the starting gun: every rank
    leaves it within NCCL's latency, however far apart the host processes are), the start
    event, the case, the stop event; then release the hold. Rank 0 decides after each
    sample whether to go on (the stop rule on its own times) and broadcasts it, so every
    rank takes the same samples. A sample's time is the slowest rank's interval, its
    spread slowest - fastest, as with one process driving every GPU."""

    def __init__(self, member: Member, nccl, timeout: float) -> None:
        cupy = member.cupy
        self.cupy, self.nccl, self.comm, self.timeout = cupy, nccl, member.comm, timeout
        self.rank, self.k, self.info = member.world.rank, member.world.size, member.info
        cupy.cuda.Device(member.device).use()
        unique_id = self.comm.bcast(nccl.get_unique_id() if self.rank == 0 else None,
                                    "sharing NCCL's unique id")

        def init():
            cupy.cuda.Device(member.device).use()  # this helper thread's current device
            return nccl.NcclCommunicator(self.k, unique_id, self.rank)

        self.nccl_comm = bounded(init, f"setting up NCCL over {self.k} ranks", timeout)
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.done = cupy.cuda.Event(disable_timing=True)
        self.gun_send = cupy.ones(1, dtype=cupy.float32)
        self.gun_recv = cupy.zeros(1, dtype=cupy.float32)
        # the one timed sample (device/timing.py) on this rank's GPU, with what a world
        # of processes adds: the starting gun, bounded waits, rank 0's stop decision,
        # every rank's times
        lane = Lane(cupy, member.device, self.stream, self.info.l2_bytes, self.info.sm_count)
        self.sampler = Sampler(cupy, [lane], Hooks(
            after_flush=self._starting_gun, wait=lambda _, what: self._wait(what),
            decide=self._decide, gather=self._gather))
        self.empty_kernel = self.sampler.empty_kernel
        self._buffers: tuple = ()
        self._buffers_key: tuple | None = None
        self.sampler.load_harness()

    # -- the loop's Session protocol ---------------------------------------------------------
    def floor_us(self, stop: StopRule, cold: bool) -> float:
        return self._guarded(lambda: self._floor(stop, cold))

    def sharded_sum(self, case: MultiGpuCase, host: HostInput, stop: StopRule,
                    cold: bool) -> MultiMeasurement:
        try:
            return self._guarded(lambda: self._sharded_sum(case, host, stop, cold))
        finally:
            self.cupy.get_default_memory_pool().free_all_blocks()

    def collective(self, case: MultiGpuCase, stop: StopRule, cold: bool) -> MultiMeasurement:
        return self._guarded(lambda: self._collective(case, stop, cold))

    def close(self) -> None:
        self._wait("finishing")
        self._buffers = ()
        self.nccl_comm.destroy()
        self.sampler.close()

    def new_round(self) -> None:
        """Before each later round: a fresh flush buffer."""
        self.sampler.renew_flush_buffers()

    def _guarded(self, call):
        try:
            return call()
        except (CaseSkipped, CaseFailed, Unreachable):
            raise
        except UsageError as exc:  # e.g. a rung's size limit
            raise CaseSkipped(str(exc)) from None
        except Exception as exc:
            raise CaseFailed(describe(exc)) from None

    # -- cases ---------------------------------------------------------------------------------
    def _floor(self, stop: StopRule, cold: bool) -> float:
        send = self.cupy.ones(1, dtype=self.cupy.float32)
        recv = self.cupy.zeros(1, dtype=self.cupy.float32)
        float32 = self._nccl_type("float32")

        def enqueue() -> None:
            self.empty_kernel((1,), (32,), ())
            self.nccl_comm.allReduce(send.data.ptr, recv.data.ptr, 1, float32,
                                     self.nccl.NCCL_SUM, self.stream.ptr)

        label = f"timing floor gpus={self.k}"
        for _ in range(WARMUP_RUNS):
            self._unheld(enqueue)
        for _ in range(FLOOR_WARMUP_SAMPLES):
            self._sample(enqueue, cold, label)
        times, _ = self._sample_until(enqueue, None, stop, cold, label)
        return statistics.median(times)

    def _sharded_sum(self, case: MultiGpuCase, host: HostInput, stop: StopRule,
                     cold: bool) -> MultiMeasurement:
        cupy = self.cupy
        bounds = shard_bounds(case.n, self.k, shard_alignment(case.dtype))
        start, end = bounds[self.rank]
        acc_bytes = np.dtype(case.dtype.acc_name).itemsize
        scratch = case.rung is not None and case.rung.in_place
        need = (end - start) * (case.dtype.itemsize + (acc_bytes if scratch else 0)) \
            + MEMORY_MARGIN
        self._agree_fits(need, f"its shard of {case.label}")
        acc = cupy.dtype(case.dtype.acc_name)
        with nvtx_range(f"upload {case.label}", color="grey"), self.stream:
            if end > start:
                shard = ShardReduction(cupy, case, cupy.asarray(host.data[start:end]),
                                       self.info.sm_count)
            else:
                shard = EmptyShard(cupy, acc)
            total = cupy.empty(1, dtype=acc)
        self._wait(f"uploading {case.label}")
        acc_type = self._nccl_type(case.dtype.acc_name)

        def prepare() -> None:
            with self.stream:
                shard.prepare()

        def enqueue() -> None:
            partial = shard.enqueue()
            self.nccl_comm.allReduce(partial, total.data.ptr, 1, acc_type, self.nccl.NCCL_SUM,
                                     self.stream.ptr)

        with nvtx_range(f"verify {case.label}", color="green"):
            for _ in range(WARMUP_RUNS):
                prepare()
                self._unheld(enqueue)
            prepare()
            with self.stream:
                shard.poison()
                total.fill(poison_value(acc))
            self._unheld(enqueue)
            results = self.comm.allgather(self._value(total), f"{case.label}: the totals")
        times, spreads = self._sample_until(enqueue, prepare, stop, cold, case.label)
        self._wait(case.label)
        checks = self.comm.allgather(self._value(total), f"{case.label}: the totals")
        shapes = self.comm.allgather((end - start, shard.chain, shard.atomics),
                                     f"{case.label}: the shards' shapes")
        used = [(c, a) for size, c, a in shapes if size]
        chain, atomics = combined_shape([c for c, _ in used], [a for _, a in used], self.k)
        sizes = tuple(e - s for s, e in bounds)
        return MultiMeasurement(times, spreads, results, checks, chain, atomics, sizes)

    def _collective(self, case: MultiGpuCase, stop: StopRule, cold: bool) -> MultiMeasurement:
        send, recv = self._collective_buffers(case)
        if case.in_place:
            recv = send
        kind, total = self._nccl_type(case.dtype.name), self.nccl.NCCL_SUM

        def enqueue() -> None:
            if case.kind == ALLREDUCE:
                self.nccl_comm.allReduce(send.data.ptr, recv.data.ptr, case.n, kind, total,
                                         self.stream.ptr)
            else:
                self.nccl_comm.reduce(send.data.ptr, recv.data.ptr, case.n, kind, total,
                                      NCCL_ROOT, self.stream.ptr)

        holder = case.kind == ALLREDUCE or self.rank == NCCL_ROOT
        with nvtx_range(f"verify {case.label}", color="green"):
            for _ in range(WARMUP_RUNS):
                self._unheld(enqueue)
            with self.stream:
                for first in range(0, case.n, VERIFY_CHUNK):
                    last = min(first + VERIFY_CHUNK, case.n)
                    send[first:last] = pattern(self.cupy, self.rank, first, last, case.dtype)
                if not case.in_place:
                    recv.fill(0)  # every expected element is at least k
            self._unheld(enqueue)
            wrong = self._wrong(recv, case) if holder else 0
        times, spreads = self._sample_until(enqueue, None, stop, cold, case.label)
        checks = 1
        if not case.in_place:  # inputs intact: the last sample's output must be right too
            self._wait(case.label)
            wrong += self._wrong(recv, case) if holder else 0
            checks = 2
        counts = self.comm.allgather((wrong, case.n * checks if holder else 0),
                                     f"{case.label}: the checks")
        return MultiMeasurement(times, spreads, wrong=sum(w for w, _ in counts),
                                checked_elements=sum(c for _, c in counts))

    def _collective_buffers(self, case: MultiGpuCase) -> tuple:
        key = (case.n, case.dtype.name)
        if self._buffers_key != key:
            self._buffers, self._buffers_key = (), None
            self.cupy.get_default_memory_pool().free_all_blocks()
            self._agree_fits(2 * case.nbytes + MEMORY_MARGIN, f"{case.label}'s two buffers")
            with self.stream:
                self._buffers = (self.cupy.empty(case.n, dtype=storage_dtype(case.dtype)),
                                 self.cupy.empty(case.n, dtype=storage_dtype(case.dtype)))
            self._buffers_key = key
        return self._buffers

    def _wrong(self, output, case: MultiGpuCase) -> int:
        self._wait(case.label)
        with self.stream:
            return wrong_elements(self.cupy, output, self.k, case)

    def _agree_fits(self, need: int, what: str) -> None:
        """A skip must be taken by every rank, or the others would wait in the case's
        collectives: each rank's verdict is gathered and the first refusal applies to all."""
        self.cupy.get_default_memory_pool().free_all_blocks()
        free = int(self.cupy.cuda.runtime.memGetInfo()[0])
        reason = "" if need <= free else \
            f"rank {self.rank}'s {what} needs {need / 2**30:.2f} GiB; {free / 2**30:.2f} GiB " \
            f"is free on its GPU"
        reasons = [r for r in self.comm.allgather(reason, "checking memory") if r]
        if reasons:
            raise CaseSkipped(reasons[0])

    # -- timing ----------------------------------------------------------------------------------
    def _sample(self, enqueue: Callable[[], None], cold: bool, label: str) -> float:
        return self.sampler.sample_lanes(self._on_stream(enqueue), cold, label)[0]

    def _sample_until(self, enqueue: Callable[[], None], prepare: Callable[[], None] | None,
                      stop: StopRule, cold: bool, label: str) -> tuple[list[float], list[float]]:
        """Every rank's samples (the same count: rank 0 decides when to stop), each
        sample's slowest rank and slowest - fastest."""
        try:
            per_sample = self.sampler.sample_lanes_until(self._on_stream(enqueue), stop, cold,
                                                         label, prepare)
        except HoldTimedOut as exc:
            raise CaseFailed(f"the stream hold of rank {exc.lane} timed out: enqueueing one "
                             f"sample took over {HOLD_TIMEOUT_NS / 1e9:.0f} s") from None
        return [max(s) for s in per_sample], [max(s) - min(s) for s in per_sample]

    def _on_stream(self, enqueue: Callable[[], None]) -> Callable[[], None]:
        def on_stream() -> None:
            with self.stream:
                enqueue()
        return on_stream

    def _starting_gun(self, lane) -> None:
        """A one-float all-reduce after the flush: every rank leaves it within NCCL's
        latency, however far apart the host processes are, and starts its clock then."""
        self.nccl_comm.allReduce(self.gun_send.data.ptr, self.gun_recv.data.ptr, 1,
                                 self._nccl_type("float32"), self.nccl.NCCL_SUM,
                                 lane.stream.ptr)

    def _decide(self, times: list[float], elapsed: float, stop: StopRule, label: str) -> bool:
        verdict = stop.done(times, elapsed) if self.rank == 0 else None
        return bool(self.comm.bcast(verdict, f"{label}: rank 0's stop decision"))

    def _gather(self, samples: list[list[float]], timed_out: list[int], label: str):
        """Every rank's times, sample by sample, and each rank's timed-out flag."""
        every = self.comm.allgather(([s[0] for s in samples], timed_out[0]),
                                    f"{label}: the samples")
        per_sample = [list(s) for s in zip(*(times for times, _ in every))]
        return per_sample, [flag for _, flag in every]

    def _unheld(self, enqueue: Callable[[], None]) -> None:
        with self.stream:
            enqueue()
        self._wait("an unheld run")

    def _wait(self, what: str) -> None:
        """Everything enqueued on this rank's stream done, at most `timeout` seconds: a
        collective whose peer died never completes."""
        self.done.record(self.stream)
        wait_until(lambda: self.done.done, what, self.timeout)

    def _value(self, array) -> float | int:
        self._wait("reading a result back")
        with self.stream:
            return array[:1].get()[0].item()

    def _nccl_type(self, dtype_name: str) -> int:
        return nccl_type(self.nccl, dtype_name)


class DeviceCluster:
    """The loop's MultiGpuBackend over a launcher's world: one case over every rank."""

    def __init__(self, member: Member, timeout: float) -> None:
        self.member, self.timeout = member, timeout
        self.nccl, reason = load_nccl()
        reasons = [r for r in member.comm.allgather(reason or "", "checking NCCL") if r]
        self._reason = reasons[0] if reasons else None
        mine = {**device_info(member.info), "host": member.host}
        self._infos = member.comm.allgather(mine, "gathering the GPUs' facts")
        self._session: ClusterSession | None = None

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
        lay = self.member.layout
        return lay.nodes, lay.gpus_per_node, lay.cross_node

    def rank_fields(self) -> dict:
        return self.member.world.rank_fields()

    def session(self, k: int) -> ClusterSession:
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

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


def open_cluster(member: Member, timeout: float) -> DeviceCluster:
    return DeviceCluster(member, timeout)
