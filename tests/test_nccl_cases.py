"""The multi-GPU device code on a CPU: device/nccl_cases.NcclCases through both of its
launch adapters, device/one_process.Session (one process, grouped collectives) and
device/cluster.ClusterSession (two launched ranks, here two threads), over a fake CuPy
(numpy arrays, addressed where they lie in memory), a fake NCCL that adds what those
addresses hold, and a fake sampler (each GPU's sample takes 10 us plus its index).

What the GPU tests check on real GPUs (tests/test_gpu_multigpu.py, test_gpu_cluster.py),
checked here for the code that both adapters share: every rank's total is the exact sum,
collectives count every element that is not the elementwise sum, a shard that does not
fit is skipped on every rank, and both ways of launching measure the same thing. Expected
values come from numpy on the host input, not from the code under test."""

from __future__ import annotations

import contextlib
import ctypes
import re
import threading
from types import SimpleNamespace

import numpy as np
import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import CaseSkipped
from reducebench.core.stats import StopRule
from reducebench.device import nccl_cases
from reducebench.device.cluster import ClusterSession
from reducebench.device.one_process import Session
from reducebench.ladder.plan import poison_value
from reducebench.ladder.registry import get_rung
from reducebench.multigpu.cases import SHARDED, MultiGpuCase, combined_shape
from reducebench.multigpu.launch import BoundedComm
from reducebench.multigpu.shards import ALLREDUCE, REDUCE, shard_alignment, shard_bounds
from reducebench.verify.inputs import make_input

STOP = StopRule(min_samples=3, max_time=0.0)  # three samples each
GIB = 2**30


# -- a fake CuPy: numpy arrays with device addresses -----------------------------------------

class DeviceArray(np.ndarray):
    """A numpy array that answers as a CuPy array does: data.ptr, get()."""

    @property
    def data(self):
        return SimpleNamespace(ptr=self.__array_interface__["data"][0])

    def get(self):
        return np.array(self)


def on_device(array) -> DeviceArray:
    return np.array(array).view(DeviceArray)


class FakeCupy:
    """The calls NcclCases makes, on the host. `free[d]`: bytes free on device d."""

    float32, float64, int32, int64 = np.float32, np.float64, np.int32, np.int64
    uint16, uint32 = np.uint16, np.uint32
    dtype = staticmethod(np.dtype)
    count_nonzero = staticmethod(np.count_nonzero)

    def __init__(self, free: dict[int, int]):
        self.free = free
        self.current = threading.local()
        cupy = self

        class Device:
            def __init__(self, index):
                self.index = index

            def use(self):
                cupy.current.device = self.index

            def __enter__(self):
                self.before = getattr(cupy.current, "device", 0)
                self.use()

            def __exit__(self, *exc):
                cupy.current.device = self.before

        class Stream(contextlib.nullcontext):
            ptr = 0

            def __init__(self, non_blocking=False):
                super().__init__()

            def synchronize(self):
                pass

        class Event:
            done = True

            def __init__(self, disable_timing=False):
                pass

            def record(self, stream):
                pass

        runtime = SimpleNamespace(
            memGetInfo=lambda: (self.free[getattr(self.current, "device", 0)], 80 * GIB),
            memsetAsync=lambda ptr, value, nbytes, stream: ctypes.memset(ptr, value, nbytes))
        self.cuda = SimpleNamespace(Device=Device, Stream=Stream, Event=Event, runtime=runtime,
                                    get_current_stream=lambda: Stream())

    def get_default_memory_pool(self):
        return SimpleNamespace(free_all_blocks=lambda: None)

    def zeros(self, n, dtype=np.float64):
        return on_device(np.zeros(n, dtype=dtype))

    def ones(self, n, dtype=np.float64):
        return on_device(np.ones(n, dtype=dtype))

    def empty(self, n, dtype=np.float64):
        return on_device(np.full(n, 3, dtype=dtype))  # not zero, and sums without overflow

    def arange(self, start, end, dtype=None):
        return on_device(np.arange(start, end, dtype=dtype))

    def asarray(self, data):
        return on_device(data)  # a copy, as an upload is


# -- a fake NCCL: adds what the ranks' addresses hold ------------------------------------------

def at(address: int, count: int, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    return np.frombuffer((ctypes.c_char * (count * dtype.itemsize)).from_address(address),
                         dtype=dtype)


class NcclWorld:
    """k ranks' calls of one collective: run once every rank has called it, grouped
    (one thread, between groupStart and groupEnd) or each from its own thread."""

    def __init__(self, k: int, drop_rank: int | None = None, writes: int | None = None,
                 silent: str = ""):
        self.k, self.drop_rank, self.writes, self.silent = k, drop_rank, writes, silent
        self.calls: dict[int, tuple] = {}
        self.grouping = False
        self.barrier = threading.Barrier(k, timeout=10)

    def call(self, rank: int, call: tuple) -> None:
        self.calls[rank] = call
        if self.grouping:
            return
        self.barrier.wait()
        if rank == 0:
            self.run()
        self.barrier.wait()

    def run(self) -> None:
        calls = [self.calls.pop(r) for r in range(self.k)]
        if self.writes is not None:  # a combine that stops writing after `writes` runs
            self.writes -= 1
            if self.writes < 0:
                return
        kind, _, _, count, dtype, root = calls[0]
        if kind == self.silent:  # a collective that never writes its output
            return
        wide = np.int64 if np.dtype(dtype).kind == "i" else np.float64
        inputs = [at(send, count, dtype).astype(wide) for _, send, _, _, _, _ in calls]
        total = sum(x for r, x in enumerate(inputs) if r != self.drop_rank)
        for rank, (_, _, recv, _, _, _) in enumerate(calls):
            if kind == "allReduce" or rank == root:
                at(recv, count, dtype)[:] = total.astype(dtype)


class FakeNccl:
    NCCL_SUM = "sum"
    NCCL_FLOAT32, NCCL_FLOAT64, NCCL_INT32 = "float32", "float64", "int32"

    def __init__(self, k: int, **faults):
        self.world = NcclWorld(k, **faults)
        nccl = self

        class Comm:
            def __init__(self, k, unique_id, rank):
                self.rank = rank

            @staticmethod
            def initAll(devices):
                return [Comm(len(devices), None, rank) for rank in range(len(devices))]

            def allReduce(self, send, recv, count, dtype, op, stream):
                nccl.world.call(self.rank, ("allReduce", send, recv, count, dtype, None))

            def reduce(self, send, recv, count, dtype, op, root, stream):
                nccl.world.call(self.rank, ("reduce", send, recv, count, dtype, root))

            def destroy(self):
                pass

        self.NcclCommunicator = Comm

    def get_unique_id(self):
        return "the world"

    def groupStart(self):
        self.world.grouping = True

    def groupEnd(self):
        self.world.grouping = False
        self.world.run()


# -- a fake sampler and lanes; the local rung summed on the host --------------------------------

class FakeLane:
    def __init__(self, cupy, device, stream, l2_bytes, sm_count):
        self.cupy, self.device, self.stream = cupy, device, stream

    @contextlib.contextmanager
    def active(self):
        with self.cupy.cuda.Device(self.device):
            yield


class FakeSampler:
    """device/timing.Sampler's calls and hooks, each GPU's sample 10 + its index us."""

    def __init__(self, cupy, lanes, hooks=None):
        self.lanes, self.hooks = lanes, hooks or nccl_cases.Hooks()
        self.empty_kernel = lambda grid, block, args: None

    def load_harness(self):
        self._wait_all("loading the timing kernels")

    def renew_flush_buffers(self):
        pass

    def close(self):
        pass

    def _wait_all(self, label):
        for lane in self.lanes:
            if self.hooks.wait:
                self.hooks.wait(lane, label)

    def sample_lanes(self, enqueue, cold, label):
        for lane in self.lanes:
            if self.hooks.after_flush:
                self.hooks.after_flush(lane)
        enqueue()
        self._wait_all(label)
        return [10.0 + lane.device for lane in self.lanes]

    def sample_lanes_until(self, enqueue, stop, cold, label, prepare=None):
        samples = []
        while True:
            if prepare:
                prepare()
            samples.append(self.sample_lanes(enqueue, cold, label))
            slowest = [max(s) for s in samples]
            decide = self.hooks.decide or (lambda t, e, s, _: s.done(t, e))
            if decide(slowest, 0.0, stop, label):
                break
        if self.hooks.gather:
            samples, _ = self.hooks.gather(samples, [0] * len(self.lanes), label)
        return samples


class HostShard:
    """The local rung's execution: its shard's exact sum into a one-element result."""

    def __init__(self, cupy, x, acc):
        self.x, self.acc = x, np.dtype(acc)
        self.buffers, self.written = {"result": cupy.zeros(1, acc)}, "result"

    def prepare(self):
        pass

    def poison(self):
        self.buffers["result"].fill(poison_value(self.acc.kind == "f"))

    def enqueue(self):
        wide = np.int64 if self.acc.kind == "i" else np.float64
        # int32 wraps modulo 2^32, as the device's accumulator does
        self.buffers["result"][:] = np.asarray(np.asarray(self.x).astype(wide).sum()).astype(
            self.acc)


def host_reduction(cupy, rung, dtype, n, block, params, x, sm_count):
    return HostShard(cupy, x, dtype.acc_name), rung.plan(n, dtype, block, sm_count, params)


@pytest.fixture(autouse=True)
def fake_device(monkeypatch):
    monkeypatch.setattr(nccl_cases, "Lane", FakeLane)
    monkeypatch.setattr(nccl_cases, "Sampler", FakeSampler)
    monkeypatch.setattr(nccl_cases, "local_reduction", host_reduction)


def info(index):
    return SimpleNamespace(index=index, l2_bytes=50 << 20, sm_count=132)


# -- the two ways of driving two GPUs ---------------------------------------------------------

def one_process(measure, free=None, **nccl):
    """measure(session) with one process driving GPUs 0 and 1."""
    cupy = FakeCupy(free or {0: 80 * GIB, 1: 80 * GIB})
    return measure(Session(cupy, FakeNccl(2, **nccl), [info(0), info(1)]))


class ThreadComm:
    """Two launched ranks' host library, the ranks being threads."""

    def __init__(self, shared, rank):
        self.shared, self.rank, self.size = shared, rank, 2

    def _exchange(self, obj):
        self.shared.slots[self.rank] = obj
        self.shared.barrier.wait()
        every = list(self.shared.slots)
        self.shared.barrier.wait()
        return every

    def barrier(self):
        self._exchange(None)

    def bcast(self, obj):
        return self._exchange(obj)[0]

    def allgather(self, obj):
        return self._exchange(obj)

    def gather(self, obj):
        every = self._exchange(obj)
        return every if self.rank == 0 else None

    def close(self):
        pass


def launched(measure, free=None, **nccl):
    """[rank 0's, rank 1's] measure(session), each rank a ClusterSession on its thread."""
    cupy = FakeCupy(free or {0: 80 * GIB, 1: 80 * GIB})
    nccl = FakeNccl(2, **nccl)
    shared = SimpleNamespace(slots=[None, None], barrier=threading.Barrier(2, timeout=10))
    out: list = [None, None]

    def rank(r):
        member = SimpleNamespace(cupy=cupy, device=r, info=info(r),
                                 world=SimpleNamespace(rank=r, size=2),
                                 comm=BoundedComm(ThreadComm(shared, r), 10.0))
        try:
            out[r] = measure(ClusterSession(member, nccl, 10.0))
        except Exception as exc:  # handed to the test
            out[r] = exc

    threads = [threading.Thread(target=rank, args=(r,), daemon=True) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out


def sharded(dtype_name, n):
    rung = get_rung("pingpong")
    return MultiGpuCase(SHARDED, DTYPES[dtype_name], n, 2, rung, 256, params=dict(rung.params))


# -- the sharded sum ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype_name", ["float32", "int32", "float64"])
@pytest.mark.parametrize("n", [1, 1000003])  # 1: rank 0's shard is empty
def test_both_adapters_give_every_rank_the_exact_total(dtype_name, n):
    case, host = sharded(dtype_name, n), make_input(n, DTYPES[dtype_name], 5)
    bounds = shard_bounds(n, 2, shard_alignment(case.dtype))
    sizes = tuple(end - start for start, end in bounds)
    plans = [case.rung.plan(size, case.dtype, 256, 132, case.params) for size in sizes if size]
    shape = combined_shape([p.chain for p in plans], [p.atomics for p in plans], 2)
    expected = int(host.data.astype(np.float64).sum())
    if dtype_name == "int32":  # the device's int32 total wraps modulo 2^32
        expected = (int(host.data.astype(np.int64).sum()) + 2**31) % 2**32 - 2**31
    for m in [one_process(lambda s: s.sharded_sum(case, host, STOP, True)),
              *launched(lambda s: s.sharded_sum(case, host, STOP, True))]:
        assert not isinstance(m, Exception), m
        assert m.results == [expected, expected] and m.checks == [expected, expected]
        assert m.shard_sizes == sizes and (m.chain, m.atomics) == shape
        # three samples, each the slower GPU's 11 us, 1 us between the GPUs
        assert m.times_us == [11.0] * 3 and m.spreads_us == [1.0] * 3


def test_a_partial_left_out_of_the_combine_shows_on_every_rank():
    case, host = sharded("float32", 1000003), make_input(1000003, DTYPES["float32"], 5)
    start, end = shard_bounds(1000003, 2, 4)[1]
    without_rank_1 = float(host.data.astype(np.float64).sum()
                           - host.data[start:end].astype(np.float64).sum())
    for m in [one_process(lambda s: s.sharded_sum(case, host, STOP, True), drop_rank=1),
              *launched(lambda s: s.sharded_sum(case, host, STOP, True), drop_rank=1)]:
        assert m.results == [without_rank_1] * 2 and m.checks == [without_rank_1] * 2


@pytest.mark.parametrize("dtype_name, poison", [("float32", "nan"), ("int32", -(2**31) + 7)])
def test_a_combine_that_stops_writing_leaves_the_poison_not_the_warm_ups_total(dtype_name,
                                                                                poison):
    """The two warm-up runs combine; the verified run's and the samples' do not write."""
    case, host = sharded(dtype_name, 1000003), make_input(1000003, DTYPES[dtype_name], 5)
    for m in [one_process(lambda s: s.sharded_sum(case, host, STOP, True), writes=2),
              *launched(lambda s: s.sharded_sum(case, host, STOP, True), writes=2)]:
        assert [str(v) for v in m.results] == [str(float(poison) if poison == "nan"
                                                   else poison)] * 2


def test_a_shard_that_does_not_fit_is_skipped_on_every_rank_with_the_reason():
    case, host = sharded("float32", 1000003), make_input(1000003, DTYPES["float32"], 5)
    free = {0: 80 * GIB, 1: 2**20}   # GPU 1 has 1 MiB free
    start, end = shard_bounds(1000003, 2, 4)[1]
    assert not case.rung.in_place    # no scratch copy: the shard and the margin
    reason = (f"rank 1 needs {((end - start) * 4 + (256 << 20)) / GIB:.2f} GiB on GPU 1 for "
              f"its shard of {case.label}; 0.00 GiB is free")
    with pytest.raises(CaseSkipped, match=f"^{re.escape(reason)}$"):
        one_process(lambda s: s.sharded_sum(case, host, STOP, True), free=free)
    for outcome in launched(lambda s: s.sharded_sum(case, host, STOP, True), free=free):
        assert isinstance(outcome, CaseSkipped) and str(outcome) == reason


# -- the floor and the collectives ------------------------------------------------------------

def test_the_floor_is_the_median_of_the_slower_gpus_samples():
    assert one_process(lambda s: s.floor_us(STOP, True)) == 11.0
    assert launched(lambda s: s.floor_us(STOP, True)) == [11.0, 11.0]


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("kind, holders", [(ALLREDUCE, 2), (REDUCE, 1)])
def test_collectives_check_every_element_that_receives_the_sum(kind, holders, in_place):
    case = MultiGpuCase(kind, DTYPES["float32"], 4099, 2, in_place=in_place)
    checks = 1 if in_place else 2   # out of place, the output is checked again after sampling
    for m in [one_process(lambda s: s.collective(case, STOP, True)),
              *launched(lambda s: s.collective(case, STOP, True))]:
        assert not isinstance(m, Exception), m
        assert m.wrong == 0 and m.checked_elements == 4099 * holders * checks
        assert m.times_us == [11.0] * 3


def test_a_collective_that_leaves_a_rank_out_is_counted_wrong():
    """Rank 1's (5j + 3) mod 15 + 1 is never 0, so every element of the sum is wrong."""
    case = MultiGpuCase(ALLREDUCE, DTYPES["float32"], 4099, 2)
    for m in [one_process(lambda s: s.collective(case, STOP, True), drop_rank=1),
              *launched(lambda s: s.collective(case, STOP, True), drop_rank=1)]:
        assert m.wrong == 4099 * 2 * 2


def test_an_output_left_from_the_last_case_of_its_size_is_not_taken_for_the_sum():
    """The all-reduce leaves the right sum in the receive buffers that the reduce of the
    same size reuses; a reduce that writes nothing must still be counted wrong."""
    allreduce = MultiGpuCase(ALLREDUCE, DTYPES["float32"], 4099, 2)
    reduce = MultiGpuCase(REDUCE, DTYPES["float32"], 4099, 2)

    def both(session):
        return [session.collective(case, STOP, True).wrong for case in (allreduce, reduce)]

    for wrong in [one_process(both, silent="reduce"), *launched(both, silent="reduce")]:
        assert wrong == [0, 4099 * 2]   # the root's output, after the first run and after sampling


def test_the_inputs_of_a_collective_are_each_ranks_pattern():
    """(5j + 3r) mod 15 + 1 for rank r: what wrong_elements sums over k ranks."""
    cupy = FakeCupy({0: GIB})
    got = nccl_cases.pattern(cupy, 1, 0, 6, DTYPES["float32"])
    assert got.tolist() == [4.0, 9.0, 14.0, 4.0, 9.0, 14.0]
    case = MultiGpuCase(ALLREDUCE, DTYPES["float32"], 6, 2)
    # rank 0's 1, 6, 11, ... plus rank 1's
    total = on_device(np.array([1 + 4, 6 + 9, 11 + 14, 1 + 4, 6 + 9, 11 + 14], np.float32))
    assert nccl_cases.wrong_elements(cupy, total, 2, case) == 0
    assert nccl_cases.wrong_elements(cupy, got, 2, case) == 6
