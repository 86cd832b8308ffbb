"""k GPUs of one host driven by one process: the sharded sum, the NCCL reference
collectives and the timing floor (docs/multi-gpu.md has the method).

One process, one thread, every device: NCCL communicators from ncclCommInitAll
(NcclCommunicator.initAll), and every collective issued for all ranks between
ncclGroupStart and ncclGroupEnd, as NCCL requires when one thread drives several
devices. No launcher, no second process: the streams of all devices are held by the
harness's spin kernel while the one thread enqueues, so the order in which it visits the
devices never shows in a time.

The environment is left alone: nothing here sets, reads for decisions, or removes an
NCCL_* variable (a host's NCCL_NVLS_ENABLE=0 stays in force), and no multicast API is
used; NCCL picks its own transport."""

from __future__ import annotations

import contextlib
import statistics
from typing import Callable

import numpy as np

from reducebench.device.driver import import_cupy
from reducebench.ladder.plan import poison_value
from reducebench.device.gpu import device_info, query
from reducebench.device.timing import HOLD_TIMEOUT_NS, HoldTimedOut, Lane, Sampler
from reducebench.core.dtypes import DType
from reducebench.core.errors import UsageError
from reducebench.verify.inputs import HostInput, storage_dtype
from reducebench.core.errors import CaseFailed, CaseSkipped
from reducebench.multigpu.cases import NCCL_ROOT, MultiGpuCase, combined_shape
from reducebench.multigpu.loop import MultiMeasurement
from reducebench.multigpu.shards import ALLREDUCE, REDUCE, shard_alignment, shard_bounds
from reducebench.device.nvtx import nvtx_range
from reducebench.ladder.registry import Rung
from reducebench.core.stats import StopRule

WARMUP_RUNS = 2           # untimed and unheld: NCCL connects its peers on first use
FLOOR_WARMUP_SAMPLES = 3
VERIFY_CHUNK = 1 << 26    # elements compared at once when checking a collective
MEMORY_MARGIN = 256 << 20  # bytes kept free on each GPU beyond a case's buffers
NCCL_TYPES = {"float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64", "int32": "NCCL_INT32",
              "float16": "NCCL_FLOAT16", "bfloat16": "NCCL_BFLOAT16"}


def local_reduction(cupy, rung: Rung, dtype: DType, n: int, block: int,
                    params: dict[str, int], x, sm_count: int):
    """The one place that uses the single-GPU execution API (with partial_address): a
    rung's plan for n elements bound to its kernels and buffers on the current device.
    Returns (execution, plan); the execution has prepare(), poison() and enqueue() (on
    the current stream)."""
    from reducebench.device.backend import PlanExecution
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


class Rank:
    """One GPU of the session: its device, its lane of the sampler (stream, events, flush
    buffer) and its communicator."""

    def __init__(self, cupy, rank: int, info, comm) -> None:
        self.cupy, self.rank, self.info, self.comm = cupy, rank, info, comm
        self.device = info.index
        with cupy.cuda.Device(self.device):
            stream = cupy.cuda.Stream(non_blocking=True)
        self.lane = Lane(cupy, self.device, stream, info.l2_bytes, info.sm_count)
        self.stream = stream

    @contextlib.contextmanager
    def active(self):
        """This rank's device current, and its stream current on that device."""
        with self.lane.active():
            yield

    def free_bytes(self) -> int:
        with self.cupy.cuda.Device(self.device):
            self.cupy.get_default_memory_pool().free_all_blocks()
            return int(self.cupy.cuda.runtime.memGetInfo()[0])


class Session:
    """Devices 0..k-1 with one NCCL communicator each, and the shared timer: one release
    flag in pinned host memory that the spin kernel on every device polls."""

    def __init__(self, cupy, nccl, infos: list) -> None:
        self.cupy, self.nccl, self.k = cupy, nccl, len(infos)
        comms = nccl.NcclCommunicator.initAll([info.index for info in infos])
        self.ranks = [Rank(cupy, r, info, comm) for r, (info, comm) in
                      enumerate(zip(infos, comms))]
        # the one timed sample (device/timing.py), over every rank's lane at once
        self.sampler = Sampler(cupy, [r.lane for r in self.ranks])
        self.empty_kernel = self.sampler.empty_kernel
        self.sampler.load_harness()
        self._collective_key: tuple | None = None
        self._collective_buffers: tuple[list, list] = ([], [])

    # -- the runner's Session protocol ---------------------------------------------------
    def floor_us(self, stop: StopRule, cold: bool) -> float:
        """k empty kernels and an all-reduce of one float: the least any case can take."""
        try:
            sends, recvs = [], []
            for r in self.ranks:
                with r.active():
                    sends.append(self.cupy.ones(1, dtype=self.cupy.float32))
                    recvs.append(self.cupy.zeros(1, dtype=self.cupy.float32))

            def enqueue() -> None:
                for r in self.ranks:
                    with r.active():
                        self.empty_kernel((1,), (32,), ())
                float32 = self._nccl_type("float32")
                self._grouped(lambda r: r.comm.allReduce(
                    sends[r.rank].data.ptr, recvs[r.rank].data.ptr, 1, float32,
                    self.nccl.NCCL_SUM, r.stream.ptr))

            label = f"timing floor gpus={self.k}"
            for _ in range(WARMUP_RUNS):
                self._unheld(enqueue)
            for _ in range(FLOOR_WARMUP_SAMPLES):
                self._sample(enqueue, cold, label)
            times, _ = self._sample_until(enqueue, None, stop, cold, label)
            return statistics.median(times)
        except (CaseSkipped, CaseFailed):
            raise
        except Exception as exc:
            raise CaseFailed(describe(exc)) from None

    def sharded_sum(self, case: MultiGpuCase, host: HostInput, stop: StopRule,
                    cold: bool) -> MultiMeasurement:
        try:
            return self._sharded_sum(case, host, stop, cold)
        except (CaseSkipped, CaseFailed):
            raise
        except UsageError as exc:  # e.g. a rung's size limit
            raise CaseSkipped(str(exc)) from None
        except Exception as exc:
            raise CaseFailed(describe(exc)) from None
        finally:
            self._release()

    def collective(self, case: MultiGpuCase, stop: StopRule, cold: bool) -> MultiMeasurement:
        try:
            return self._collective(case, stop, cold)
        except (CaseSkipped, CaseFailed):
            raise
        except Exception as exc:
            raise CaseFailed(describe(exc)) from None

    def close(self) -> None:
        self._synchronize()
        self._collective_buffers = ([], [])
        for r in self.ranks:
            r.comm.destroy()
        self.sampler.close()

    def new_round(self) -> None:
        """Before each later round: a fresh flush buffer on every GPU."""
        self.sampler.renew_flush_buffers()

    # -- the sharded sum -------------------------------------------------------------------
    def _sharded_sum(self, case: MultiGpuCase, host: HostInput, stop: StopRule,
                     cold: bool) -> MultiMeasurement:
        bounds = shard_bounds(case.n, self.k, shard_alignment(case.dtype))
        sizes = tuple(end - start for start, end in bounds)
        self._collective_buffers, self._collective_key = ([], []), None
        self._check_fits(case, sizes)
        acc = self.cupy.dtype(case.dtype.acc_name)
        shards, totals = [], []
        with nvtx_range(f"upload {case.label}", color="grey"):
            for r, (start, end) in zip(self.ranks, bounds):
                with r.active():
                    if end > start:
                        x = self.cupy.asarray(host.data[start:end])
                        shards.append(ShardReduction(self.cupy, case, x, r.info.sm_count))
                    else:
                        shards.append(EmptyShard(self.cupy, acc))
                    totals.append(self.cupy.empty(1, dtype=acc))
            self._synchronize()
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
            self._grouped(lambda r: r.comm.allReduce(
                partials[r.rank], totals[r.rank].data.ptr, 1, acc_type, self.nccl.NCCL_SUM,
                r.stream.ptr))

        with nvtx_range(f"verify {case.label}", color="green"):
            for _ in range(WARMUP_RUNS):
                prepare()
                self._unheld(enqueue)
            prepare()
            for r, shard, total in zip(self.ranks, shards, totals):
                with r.active():
                    shard.poison()
                    total.fill(poison_value(np.dtype(acc).kind == "f"))
            self._unheld(enqueue)
            results = self._read(totals)
        times, spreads = self._sample_until(enqueue, prepare, stop, cold, case.label)
        self._synchronize()
        checks = self._read(totals)
        used = [s for s, size in zip(shards, sizes) if size]
        chain, atomics = combined_shape([s.chain for s in used], [s.atomics for s in used],
                                        self.k)
        return MultiMeasurement(times, spreads, results, checks, chain, atomics, sizes)

    def _check_fits(self, case: MultiGpuCase, sizes: tuple[int, ...]) -> None:
        acc_bytes = np.dtype(case.dtype.acc_name).itemsize
        scratch = case.rung is not None and case.rung.in_place
        for r, size in zip(self.ranks, sizes):
            need = size * case.dtype.itemsize + (size * acc_bytes if scratch else 0) \
                + MEMORY_MARGIN
            free = r.free_bytes()
            if need > free:
                raise CaseSkipped(f"rank {r.rank}'s shard needs {need / 2**30:.2f} GiB on GPU "
                                  f"{r.device}; {free / 2**30:.2f} GiB is free")

    def _read(self, totals: list) -> list[float | int]:
        values = []
        for r, total in zip(self.ranks, totals):
            with r.active():  # on the rank's stream: after everything enqueued there
                values.append(total[:1].get()[0].item())
        return values

    # -- the NCCL reference collectives ----------------------------------------------------
    def _collective(self, case: MultiGpuCase, stop: StopRule, cold: bool) -> MultiMeasurement:
        count = case.n
        sends, recvs = self._buffers(case)
        if case.in_place:
            recvs = sends
        kind = self._nccl_type(case.dtype.name)
        total = self.nccl.NCCL_SUM

        def enqueue() -> None:
            if case.kind == ALLREDUCE:
                self._grouped(lambda r: r.comm.allReduce(
                    sends[r.rank].data.ptr, recvs[r.rank].data.ptr, count, kind, total,
                    r.stream.ptr))
            else:
                self._grouped(lambda r: r.comm.reduce(
                    sends[r.rank].data.ptr, recvs[r.rank].data.ptr, count, kind, total,
                    NCCL_ROOT, r.stream.ptr))

        holders = [NCCL_ROOT] if case.kind == REDUCE else list(range(self.k))
        with nvtx_range(f"verify {case.label}", color="green"):
            for _ in range(WARMUP_RUNS):
                self._unheld(enqueue)
            self._fill_inputs(sends, case.dtype)
            if not case.in_place:
                for r in self.ranks:
                    with r.active():
                        recvs[r.rank].fill(0)  # every expected element is at least k
            self._unheld(enqueue)
            wrong = sum(self.wrong_elements(recvs[rank], rank, case) for rank in holders)
        checked = count * len(holders)
        times, spreads = self._sample_until(enqueue, None, stop, cold, case.label)
        if not case.in_place:  # inputs intact: the last sample's output must be right too
            self._synchronize()
            wrong += sum(self.wrong_elements(recvs[rank], rank, case) for rank in holders)
            checked *= 2
        return MultiMeasurement(times, spreads, wrong=wrong, checked_elements=checked)

    def _buffers(self, case: MultiGpuCase) -> tuple[list, list]:
        """A send and a receive vector per rank, kept for the four cases of one size."""
        key = (case.n, case.dtype.name)
        if self._collective_key != key:
            self._collective_buffers, self._collective_key = ([], []), None
            self._release()
            need = 2 * case.nbytes + MEMORY_MARGIN
            for r in self.ranks:
                free = r.free_bytes()
                if need > free:
                    raise CaseSkipped(f"{case.nbytes / 2**30:.2f} GiB twice does not fit in "
                                      f"the {free / 2**30:.2f} GiB free on GPU {r.device}")
            sends, recvs = [], []
            for r in self.ranks:
                with r.active():
                    sends.append(self.cupy.empty(case.n, dtype=storage_dtype(case.dtype)))
                    recvs.append(self.cupy.empty(case.n, dtype=storage_dtype(case.dtype)))
            self._collective_buffers, self._collective_key = (sends, recvs), key
        return self._collective_buffers

    def _fill_inputs(self, sends: list, dtype: DType) -> None:
        for r in self.ranks:
            with r.active():
                for start in range(0, sends[r.rank].size, VERIFY_CHUNK):
                    end = min(start + VERIFY_CHUNK, sends[r.rank].size)
                    sends[r.rank][start:end] = self._pattern(r.rank, start, end, dtype)

    def _pattern(self, rank: int, start: int, end: int, dtype: DType):
        return pattern(self.cupy, rank, start, end, dtype)

    def wrong_elements(self, output, rank: int, case: MultiGpuCase) -> int:
        with self.ranks[rank].active():
            return wrong_elements(self.cupy, output, self.k, case)

    # -- timing ------------------------------------------------------------------------------
    def _sample(self, enqueue: Callable[[], None], cold: bool, label: str) -> tuple[float, float]:
        """One sample on every GPU (device/timing.Sampler: every stream held, every L2
        flushed, one release): the slowest rank's interval and slowest - fastest, in us."""
        times = self.sampler.sample_lanes(enqueue, cold, label)
        return max(times), max(times) - min(times)

    def _sample_until(self, enqueue: Callable[[], None], prepare: Callable[[], None] | None,
                      stop: StopRule, cold: bool, label: str) -> tuple[list[float], list[float]]:
        try:
            samples = self.sampler.sample_lanes_until(enqueue, stop, cold, label, prepare)
        except HoldTimedOut as exc:
            raise CaseFailed(f"the stream hold on GPU {self.ranks[exc.lane].device} timed "
                             f"out: enqueueing one sample took over "
                             f"{HOLD_TIMEOUT_NS / 1e9:.0f} s, or a call waited for the "
                             "held GPU") from None
        return [max(s) for s in samples], [max(s) - min(s) for s in samples]

    # -- helpers -----------------------------------------------------------------------------
    def _grouped(self, call: Callable[[Rank], None]) -> None:
        """One collective for every rank: one thread driving several devices must group
        the per-device calls, or the first would wait for peers never called."""
        self.nccl.groupStart()
        try:
            for r in self.ranks:
                with self.cupy.cuda.Device(r.device):
                    call(r)
        finally:
            self.nccl.groupEnd()

    def _unheld(self, enqueue: Callable[[], None]) -> None:
        enqueue()
        self._synchronize()

    def _synchronize(self) -> None:
        for r in self.ranks:
            with self.cupy.cuda.Device(r.device):
                r.stream.synchronize()

    def _release(self) -> None:
        for r in self.ranks:
            with self.cupy.cuda.Device(r.device):
                self.cupy.get_default_memory_pool().free_all_blocks()

    def _nccl_type(self, dtype_name: str) -> int:
        return nccl_type(self.nccl, dtype_name)


class DeviceMultiGpu:
    """The runner's MultiGpuBackend: the GPUs present, NCCL, and one Session per k."""

    def __init__(self) -> None:
        self.cupy = import_cupy()
        self.count = int(self.cupy.cuda.runtime.getDeviceCount())
        self.infos = [query(self.cupy, index) for index in range(self.count)]
        self.nccl, self._reason = load_nccl()
        self._sessions: dict[int, Session] = {}

    def present(self) -> int:
        return self.count

    def unavailable_reason(self) -> str | None:
        return self._reason

    def device_info(self) -> dict:
        # GPU 0's facts; no single device index: each row names its GPUs in `devices`
        return {**device_info(self.infos[0]), "device": ""}

    def devices(self, k: int) -> str:
        return ";".join(f"{info.index}:{info.name}" for info in self.infos[:k])

    def nccl_version(self) -> str:
        return nccl_version(self.nccl)

    def session(self, k: int) -> Session:
        if k not in self._sessions:
            try:
                self._sessions[k] = Session(self.cupy, self.nccl, self.infos[:k])
            except Exception as exc:
                raise CaseFailed(f"setting up {k} GPU(s) with NCCL failed: "
                                 f"{describe(exc)}") from None
        return self._sessions[k]

    def close(self) -> None:
        for session in self._sessions.values():
            with contextlib.suppress(Exception):
                session.close()
        self._sessions.clear()


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


def open_multigpu() -> DeviceMultiGpu:
    return DeviceMultiGpu()


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
