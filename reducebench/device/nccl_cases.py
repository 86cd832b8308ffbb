"""The multigpu cases over NCCL ranks, written once for both ways of driving them
(docs/multi-gpu.md and docs/cluster.md have the method): the timing floor, the sharded
sum and the reference collectives (all-reduce, reduce).

NcclCases holds the ranks this process drives: every GPU of the host when one process
drives them all (device/one_process.py), or its own one GPU when a launcher started one
process per GPU (device/cluster.py). A launch adapter says only what differs:
- how a collective is issued for the ranks of this process (one thread driving several
  devices must group the calls between ncclGroupStart and ncclGroupEnd);
- how to wait for a rank's stream (a launched rank bounds every wait: a collective whose
  peer died never completes);
- how values of every rank come together (one process has them all; launched ranks
  all-gather them through the host library);
- the hooks its sampler needs (device/timing.Hooks: none on one host).

One sample is device/timing.Sampler's over every lane of this process; its time is the
slowest rank's interval, its spread slowest - fastest.

The environment is left alone: nothing here sets, reads for decisions, or removes an
NCCL_* variable (a host's NCCL_NVLS_ENABLE=0 stays in force), and no multicast API is
used; NCCL picks its own transport."""

from __future__ import annotations

import contextlib
import statistics
from typing import Callable

import numpy as np

from reducebench.core.dtypes import DType
from reducebench.core.errors import CaseFailed, CaseSkipped, UsageError
from reducebench.core.numbers import number
from reducebench.core.stats import StopRule
from reducebench.device.nvtx import nvtx_range
from reducebench.device.timing import HOLD_TIMEOUT_NS, Hooks, HoldTimedOut, Lane, Sampler
from reducebench.ladder.plan import poison_value
from reducebench.ladder.registry import Rung
from reducebench.multigpu.cases import NCCL_ROOT, MultiGpuCase, combined_shape
from reducebench.multigpu.launch import Unreachable
from reducebench.multigpu.loop import MultiMeasurement
from reducebench.multigpu.shards import ALLREDUCE, shard_alignment, shard_bounds
from reducebench.verify.inputs import HostInput, storage_dtype

WARMUP_RUNS = 2           # untimed and unheld: NCCL connects its peers on first use
FLOOR_WARMUP_SAMPLES = 3
VERIFY_CHUNK = 1 << 26    # elements compared at once when checking a collective
MEMORY_MARGIN = 256 << 20  # bytes kept free on each GPU beyond a case's buffers
NCCL_TYPES = {"float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64", "int32": "NCCL_INT32",
              "float16": "NCCL_FLOAT16", "bfloat16": "NCCL_BFLOAT16"}


# -- one rank's shard ------------------------------------------------------------------------

def local_reduction(cupy, rung: Rung, dtype: DType, n: int, block: int,
                    params: dict[str, int], x, sm_count: int):
    """The one place that uses the single-GPU execution API (with partial_address): a
    rung's plan for n elements bound to its kernels and buffers on the current device.
    Returns (execution, plan); the execution has prepare(), poison() and enqueue() (on
    the current stream)."""
    from reducebench.device.cupy_backend import PlanExecution
    from reducebench.ladder.case import Case

    plan = rung.plan(n, dtype, block, sm_count, params)
    return PlanExecution(cupy, Case(rung, dtype, n, block, dict(params)), plan, x), plan


def partial_address(execution) -> int:
    """The device address of the one-element result the last enqueue() wrote (ping-pong
    plans alternate between two accumulators)."""
    return execution.buffers[execution.written].data.ptr


class ShardReduction:
    """One rank's shard reduced by the local rung; enqueue() returns the device address
    of the partial sum it wrote."""

    def __init__(self, cupy, case: MultiGpuCase, x, sm_count: int) -> None:
        assert case.rung is not None
        self.execution, plan = local_reduction(cupy, case.rung, case.dtype, int(x.size),
                                               case.block, case.params, x, sm_count)
        self.chain, self.atomics = plan.chain, plan.atomics

    def prepare(self) -> None:
        self.execution.prepare()

    def poison(self) -> None:
        self.execution.poison()

    def enqueue(self) -> int:
        self.execution.enqueue()
        return partial_address(self.execution)


class EmptyShard:
    """A rank without elements (n < k x 16 bytes) contributes a zero, written by a memset
    inside the measured interval like any rank's partial."""

    chain, atomics = 1, 0

    def __init__(self, cupy, acc) -> None:
        self.cupy = cupy
        self.partial = cupy.zeros(1, dtype=acc)

    def prepare(self) -> None:
        pass

    def poison(self) -> None:
        self.partial.fill(poison_value(self.partial.dtype.kind == "f"))

    def enqueue(self) -> int:
        stream = self.cupy.cuda.get_current_stream().ptr
        self.cupy.cuda.runtime.memsetAsync(self.partial.data.ptr, 0, self.partial.nbytes,
                                           stream)
        return self.partial.data.ptr


# -- the collectives' inputs and their check ---------------------------------------------------

def pattern(cupy, rank: int, start: int, end: int, dtype: DType):
    """Rank r's element j: (5j + 3r) mod 15 + 1, small whole numbers whose sum over up
    to 8 ranks is exact in every dtype (bfloat16 holds whole numbers up to 256)."""
    j = cupy.arange(start, end, dtype=cupy.int64)
    values = (j * 5 + rank * 3) % 15 + 1
    if dtype.name == "bfloat16":  # whole numbers this small have no low 16 bits
        return (values.astype(cupy.float32).view(cupy.uint32) >> 16).astype(cupy.uint16)
    return values.astype(storage_dtype(dtype))


def wrong_elements(cupy, output, k: int, case: MultiGpuCase) -> int:
    """Elements of one rank's output (on the current device) that differ from the
    elementwise sum of pattern() over k ranks (nccl-tests' #wrong)."""
    wrong = 0
    for start in range(0, case.n, VERIFY_CHUNK):
        end = min(start + VERIFY_CHUNK, case.n)
        j = cupy.arange(start, end, dtype=cupy.int64)
        expected = sum((j * 5 + r * 3) % 15 + 1 for r in range(k))
        got = output[start:end]
        if case.dtype.name == "bfloat16":
            got = (got.astype(cupy.uint32) << 16).view(cupy.float32)
        wrong += int(cupy.count_nonzero(got.astype(cupy.float64)
                                        != expected.astype(cupy.float64)))
    return wrong


# -- the ranks of this process ------------------------------------------------------------------

class Rank:
    """One GPU of the world that this process drives: its place in the world, its
    device, its lane of the sampler (stream, events, flush buffer) and its NCCL
    communicator."""

    def __init__(self, cupy, rank: int, info, comm) -> None:
        self.cupy, self.rank, self.info, self.comm = cupy, rank, info, comm
        self.device = info.index
        with cupy.cuda.Device(self.device):
            self.stream = cupy.cuda.Stream(non_blocking=True)
        self.lane = Lane(cupy, self.device, self.stream, info.l2_bytes, info.sm_count)

    @contextlib.contextmanager
    def active(self):
        """This rank's device current, and its stream current on that device."""
        with self.lane.active():
            yield

    def free_bytes(self) -> int:
        with self.cupy.cuda.Device(self.device):
            self.cupy.get_default_memory_pool().free_all_blocks()
            return int(self.cupy.cuda.runtime.memGetInfo()[0])


class NcclCases:
    """The loop's Session protocol (multigpu/loop.py) over a world of k ranks, of which
    `ranks` are driven by this process. A launch adapter subclasses it with _wait and
    _allgather, and sets `grouped` where one thread drives several GPUs."""

    grouped = False  # each collective between ncclGroupStart and ncclGroupEnd

    def __init__(self, cupy, nccl, k: int, ranks: list[Rank], hooks: Hooks | None = None
                 ) -> None:
        self.cupy, self.nccl, self.k, self.ranks = cupy, nccl, k, ranks
        # the one timed sample (device/timing.py), over every lane of this process
        self.sampler = Sampler(cupy, [r.lane for r in ranks], hooks)
        self.empty_kernel = self.sampler.empty_kernel
        self._collective_key: tuple | None = None
        self._collective_buffers: tuple[list, list] = ([], [])
        self.sampler.load_harness()

    # -- what a launch adapter says ---------------------------------------------------------
    def _wait(self, r: Rank, what: str) -> None:
        """Until everything enqueued on r's stream is done."""
        raise NotImplementedError

    def _allgather(self, values: list, what: str) -> list:
        """One value for each rank of the world, in rank order, from `values`: one for
        each rank of this process, in the order of `ranks`."""
        raise NotImplementedError

    # -- the loop's Session protocol ---------------------------------------------------------
    def floor_us(self, stop: StopRule, cold: bool) -> float:
        return self._guarded(lambda: self._floor(stop, cold))

    def sharded_sum(self, case: MultiGpuCase, host: HostInput, stop: StopRule,
                    cold: bool) -> MultiMeasurement:
        try:
            return self._guarded(lambda: self._sharded_sum(case, host, stop, cold))
        finally:
            self._release()

    def collective(self, case: MultiGpuCase, stop: StopRule, cold: bool) -> MultiMeasurement:
        return self._guarded(lambda: self._collective(case, stop, cold))

    def new_round(self) -> None:
        """Before each later round: a fresh flush buffer on every GPU."""
        self.sampler.renew_flush_buffers()

    def close(self) -> None:
        self._wait_all("finishing")
        self._collective_buffers, self._collective_key = ([], []), None
        for r in self.ranks:
            r.comm.destroy()
        self.sampler.close()

    def _guarded(self, call):
        try:
            return call()
        except (CaseSkipped, CaseFailed, Unreachable):
            raise
        except UsageError as exc:  # e.g. a rung's size limit
            raise CaseSkipped(str(exc)) from None
        except Exception as exc:
            raise CaseFailed(describe(exc)) from None

    # -- the timing floor ------------------------------------------------------------------
    def _floor(self, stop: StopRule, cold: bool) -> float:
        """An empty kernel on every rank and an all-reduce of one float: the least any
        case of this world can take."""
        sends, recvs = [], []
        for r in self.ranks:
            with r.active():
                sends.append(self.cupy.ones(1, dtype=self.cupy.float32))
                recvs.append(self.cupy.zeros(1, dtype=self.cupy.float32))
        float32 = self._nccl_type("float32")

        def enqueue() -> None:
            for r in self.ranks:
                with r.active():
                    self.empty_kernel((1,), (32,), ())
            self._grouped(lambda i, r: r.comm.allReduce(
                sends[i].data.ptr, recvs[i].data.ptr, 1, float32, self.nccl.NCCL_SUM,
                r.stream.ptr))

        label = f"timing floor gpus={self.k}"
        for _ in range(WARMUP_RUNS):
            self._unheld(enqueue)
        for _ in range(FLOOR_WARMUP_SAMPLES):
            self.sampler.sample_lanes(enqueue, cold, label)
        times, _ = self._sample_until(enqueue, None, stop, cold, label)
        return statistics.median(times)

    # -- the sharded sum -------------------------------------------------------------------
    def _sharded_sum(self, case: MultiGpuCase, host: HostInput, stop: StopRule,
                     cold: bool) -> MultiMeasurement:
        bounds = shard_bounds(case.n, self.k, shard_alignment(case.dtype))
        self._drop_collective_buffers()
        self._agree_fits([self._shard_bytes(case, *bounds[r.rank]) for r in self.ranks],
                         f"its shard of {case.label}")
        acc = self.cupy.dtype(case.dtype.acc_name)
        shards, totals = [], []
        with nvtx_range(f"upload {case.label}", color="grey"):
            for r in self.ranks:
                start, end = bounds[r.rank]
                with r.active():
                    if end > start:
                        x = self.cupy.asarray(host.data[start:end])
                        shards.append(ShardReduction(self.cupy, case, x, r.info.sm_count))
                    else:
                        shards.append(EmptyShard(self.cupy, acc))
                    totals.append(self.cupy.empty(1, dtype=acc))
            self._wait_all(f"uploading {case.label}")
        acc_type = self._nccl_type(case.dtype.acc_name)

        def prepare() -> None:  # outside the interval: scratch copies of in-place rungs
            for r, shard in zip(self.ranks, shards):
                with r.active():
                    shard.prepare()

        def enqueue() -> None:
            partials = []
            for r, shard in zip(self.ranks, shards):
                with r.active():
                    partials.append(shard.enqueue())
            self._grouped(lambda i, r: r.comm.allReduce(
                partials[i], totals[i].data.ptr, 1, acc_type, self.nccl.NCCL_SUM,
                r.stream.ptr))

        with nvtx_range(f"verify {case.label}", color="green"):
            for _ in range(WARMUP_RUNS):
                prepare()
                self._unheld(enqueue)
            prepare()
            for r, shard, total in zip(self.ranks, shards, totals):
                with r.active():
                    shard.poison()
                    total.fill(poison_value(acc.kind == "f"))
            self._unheld(enqueue)
            results = self._read(totals, f"{case.label}: the totals")
        times, spreads = self._sample_until(enqueue, prepare, stop, cold, case.label)
        checks = self._read(totals, f"{case.label}: the totals")
        shapes = self._allgather([(bounds[r.rank][1] - bounds[r.rank][0], s.chain, s.atomics)
                                  for r, s in zip(self.ranks, shards)],
                                 f"{case.label}: the shards' shapes")
        used = [(c, a) for size, c, a in shapes if size]
        chain, atomics = combined_shape([c for c, _ in used], [a for _, a in used], self.k)
        sizes = tuple(end - start for start, end in bounds)
        return MultiMeasurement(times, spreads, results, checks, chain, atomics, sizes)

    @staticmethod
    def _shard_bytes(case: MultiGpuCase, start: int, end: int) -> int:
        """What a rank's shard takes on its GPU: the shard, the scratch copy of an
        in-place rung, and the margin."""
        scratch = case.rung is not None and case.rung.in_place
        acc_bytes = np.dtype(case.dtype.acc_name).itemsize if scratch else 0
        return (end - start) * (case.dtype.itemsize + acc_bytes) + MEMORY_MARGIN

    def _read(self, totals: list, what: str) -> list[float | int]:
        """Every rank's one-element total, read after everything enqueued before it."""
        values = []
        for r, total in zip(self.ranks, totals):
            self._wait(r, "reading a result back")
            with r.active():
                values.append(total[:1].get()[0].item())
        return self._allgather(values, what)

    # -- the NCCL reference collectives ----------------------------------------------------
    def _collective(self, case: MultiGpuCase, stop: StopRule, cold: bool) -> MultiMeasurement:
        sends, recvs = self._buffers(case)
        if case.in_place:
            recvs = sends
        kind, total = self._nccl_type(case.dtype.name), self.nccl.NCCL_SUM

        def enqueue() -> None:
            if case.kind == ALLREDUCE:
                self._grouped(lambda i, r: r.comm.allReduce(
                    sends[i].data.ptr, recvs[i].data.ptr, case.n, kind, total, r.stream.ptr))
            else:
                self._grouped(lambda i, r: r.comm.reduce(
                    sends[i].data.ptr, recvs[i].data.ptr, case.n, kind, total, NCCL_ROOT,
                    r.stream.ptr))

        holds = [case.kind == ALLREDUCE or r.rank == NCCL_ROOT for r in self.ranks]
        with nvtx_range(f"verify {case.label}", color="green"):
            for _ in range(WARMUP_RUNS):
                self._unheld(enqueue)
            for r, send, recv in zip(self.ranks, sends, recvs):
                with r.active():
                    for first in range(0, case.n, VERIFY_CHUNK):
                        last = min(first + VERIFY_CHUNK, case.n)
                        send[first:last] = pattern(self.cupy, r.rank, first, last, case.dtype)
                    if not case.in_place:
                        recv.fill(0)  # every expected element is at least k
            self._unheld(enqueue)
            wrong = self._wrong(recvs, holds, case)
        times, spreads = self._sample_until(enqueue, None, stop, cold, case.label)
        checks = 1
        if not case.in_place:  # inputs intact: the last sample's output must be right too
            wrong = [a + b for a, b in zip(wrong, self._wrong(recvs, holds, case))]
            checks = 2
        counts = self._allgather([(w, case.n * checks if held else 0)
                                  for w, held in zip(wrong, holds)], f"{case.label}: the checks")
        return MultiMeasurement(times, spreads, wrong=sum(w for w, _ in counts),
                                checked_elements=sum(c for _, c in counts))

    def _buffers(self, case: MultiGpuCase) -> tuple[list, list]:
        """A send and a receive vector per rank, kept for the four cases of one size."""
        key = (case.n, case.dtype.name)
        if self._collective_key != key:
            self._drop_collective_buffers()
            self._agree_fits([2 * case.nbytes + MEMORY_MARGIN] * len(self.ranks),
                             f"the send and receive buffers of {case.label}")
            sends, recvs = [], []
            for r in self.ranks:
                with r.active():
                    sends.append(self.cupy.empty(case.n, dtype=storage_dtype(case.dtype)))
                    recvs.append(self.cupy.empty(case.n, dtype=storage_dtype(case.dtype)))
            self._collective_buffers, self._collective_key = (sends, recvs), key
        return self._collective_buffers

    def _drop_collective_buffers(self) -> None:
        self._collective_buffers, self._collective_key = ([], []), None
        self._release()

    def _wrong(self, outputs: list, holds: list[bool], case: MultiGpuCase) -> list[int]:
        """For each rank of this process, the elements of its output that are not the
        elementwise sum (0 for a rank that holds no output: a reduce's other ranks)."""
        wrong = []
        for r, output, held in zip(self.ranks, outputs, holds):
            self._wait(r, case.label)
            with r.active():
                wrong.append(wrong_elements(self.cupy, output, self.k, case) if held else 0)
        return wrong

    # -- memory ----------------------------------------------------------------------------
    def _agree_fits(self, needs: list[int], what: str) -> None:
        """`needs` bytes on each rank of this process, or CaseSkipped on every rank: a
        skip must be taken by all, or the others would wait in the case's collectives, so
        every rank's verdict is gathered and the first refusal applies to all."""
        reasons = []
        for r, need in zip(self.ranks, needs):
            free = r.free_bytes()
            reasons.append("" if need <= free else
                           f"rank {r.rank} needs {number(need / 2**30, '.2f')} GiB on GPU {r.device} "
                           f"for {what}; {number(free / 2**30, '.2f')} GiB is free")
        refusals = [reason for reason in self._allgather(reasons, "checking memory") if reason]
        if refusals:
            raise CaseSkipped(refusals[0])

    def _release(self) -> None:
        for r in self.ranks:
            with self.cupy.cuda.Device(r.device):
                self.cupy.get_default_memory_pool().free_all_blocks()

    # -- timing ----------------------------------------------------------------------------
    def _sample_until(self, enqueue: Callable[[], None], prepare: Callable[[], None] | None,
                      stop: StopRule, cold: bool, label: str) -> tuple[list[float], list[float]]:
        """Samples until the stop rule is met: each sample's slowest rank and slowest -
        fastest (every rank takes the same samples)."""
        try:
            samples = self.sampler.sample_lanes_until(enqueue, stop, cold, label, prepare)
        except HoldTimedOut as exc:
            raise CaseFailed(f"the stream hold of rank {exc.lane} timed out: enqueueing one "
                             f"sample took over {number(HOLD_TIMEOUT_NS / 1e9, '.0f')} s, or a call "
                             "waited for the held GPU") from None
        return [max(s) for s in samples], [max(s) - min(s) for s in samples]

    def _unheld(self, enqueue: Callable[[], None]) -> None:
        enqueue()
        self._wait_all("an unheld run")

    def _wait_all(self, what: str) -> None:
        for r in self.ranks:
            self._wait(r, what)

    def _grouped(self, call: Callable[[int, Rank], None]) -> None:
        """One collective: call(i, rank) for each rank of this process, on its device."""
        if self.grouped:
            self.nccl.groupStart()
        try:
            for i, r in enumerate(self.ranks):
                with self.cupy.cuda.Device(r.device):
                    call(i, r)
        finally:
            if self.grouped:
                self.nccl.groupEnd()

    def _nccl_type(self, dtype_name: str) -> int:
        return nccl_type(self.nccl, dtype_name)


# -- NCCL as CuPy binds it -------------------------------------------------------------------

def load_nccl():
    """(CuPy's NCCL module, None), or (None, why the multi-GPU cases are skipped)."""
    advice = ("install NCCL for CuPy: pip install nvidia-nccl-cu13 (CUDA 13) or "
              "nvidia-nccl-cu12 (CUDA 12)")
    try:
        from cupy.cuda import nccl
    except Exception as exc:
        return None, f"CuPy's NCCL binding did not load ({describe(exc)}); {advice}"
    if not getattr(nccl, "available", False) or not hasattr(nccl, "NcclCommunicator"):
        return None, f"NCCL is not available to CuPy; {advice}"
    return nccl, None


def describe(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def nccl_type(nccl, dtype_name: str) -> int:
    """NCCL's data type for a dtype; CaseSkipped where this binding lacks it."""
    name = NCCL_TYPES[dtype_name]
    if not hasattr(nccl, name):
        raise CaseSkipped(f"this NCCL binding has no {name}")
    return getattr(nccl, name)


def nccl_version(nccl) -> str:
    """NCCL's version as 2.28.9, or "" without NCCL (or a binding that cannot say)."""
    if nccl is None:
        return ""
    try:
        code = int(nccl.get_version())
    except Exception:
        return ""
    return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
