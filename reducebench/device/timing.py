"""The one timed sample, on one GPU or several: hold each GPU's stream, flush its L2 by
reading, record start, enqueue the whole reduction, record stop, release every stream
with one store. See cuda_src/harness.cu for why each step.

A Sampler times over lanes, one per GPU it drives (a Lane: the GPU's stream, events,
flush buffer and hold flag). Every timed path uses it:
- one GPU (`run`, `check`, `tune`, the ceiling and the read): SampleTimer, one lane, with
  NVML's clocks read beside each sample;
- one process driving several GPUs (`multigpu`, device/one_process.py): one lane a GPU,
  one release for all;
- one GPU per process under a launcher (device/cluster.py): one lane, with the hooks a
  world needs: a starting gun after the flush, bounded waits, rank 0's stop decision,
  and every rank's times gathered.
"""

from __future__ import annotations

import contextlib
import ctypes
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from reducebench.device.compile import get_extern_c
from reducebench.device.nvtx import nvtx_range
from reducebench.measuring.sampling import ClockedSamples
from reducebench.core.stats import StopRule
from reducebench.measuring.throttle import ThrottlePolicy, check_clocks
from reducebench.core.numbers import number

HOLD_TIMEOUT_NS = 2_000_000_000
CLOCK_WARM_UP_S = 0.3
WARM_UP_BATCH = 16  # flushes enqueued between two checks of the time
HARNESS = ("hold_stream", "flush_l2", "empty_kernel", "spin_for")


def flush_bytes_for(l2_bytes: int) -> int:
    """Read at least twice the L2, and at least 64 MiB."""
    return max(2 * l2_bytes, 64 << 20)


class Lane:
    """One GPU's share of a sample: its device, stream, start and stop events, the flag
    its hold reports a timeout in, and the buffer its L2 flush reads (int4 words, filled
    so that nothing is a zero page)."""

    def __init__(self, cupy, device: int, stream, l2_bytes: int, sm_count: int) -> None:
        self.cupy, self.device, self.stream = cupy, device, stream
        with self.on_device():
            self.start, self.stop = cupy.cuda.Event(), cupy.cuda.Event()
            self.timed_out = cupy.zeros(1, dtype=cupy.int32)
            self.sink = cupy.zeros(1, dtype=cupy.int32)
            self.flush_bytes = flush_bytes_for(l2_bytes)
            self.flush_buffer = cupy.arange(self.flush_bytes // 4, dtype=cupy.int32)
        self.flush_grid = sm_count * 4

    @contextlib.contextmanager
    def active(self):
        """This lane's device current, and its stream current on that device: for the
        work a multi-GPU case enqueues on each GPU."""
        with self.cupy.cuda.Device(self.device), self.stream:
            yield

    @contextlib.contextmanager
    def on_device(self):
        """This lane's device current, the current stream left alone: the sampler names
        the lane's stream in every call, and the case it times enqueues on whatever
        stream its caller made current (leaving a stream context would not put that one
        back)."""
        if self.cupy.cuda.runtime.getDevice() == self.device:
            yield
        else:
            with self.cupy.cuda.Device(self.device):
                yield

    def clear_timed_out(self) -> None:
        self.cupy.cuda.runtime.memsetAsync(self.timed_out.data.ptr, 0, self.timed_out.nbytes,
                                           self.stream.ptr)

    def read_timed_out(self) -> int:
        self.stream.synchronize()
        return int(self.timed_out.get(stream=self.stream)[0])

    def renew_flush_buffer(self) -> None:
        """A new flush buffer, allocated before the old one is freed so that it lies
        elsewhere: each round of a run flushes through memory of its own."""
        with self.on_device():
            self.flush_buffer = self.cupy.arange(self.flush_bytes // 4, dtype=self.cupy.int32)

    def elapsed_us(self) -> float:
        return self.cupy.cuda.get_elapsed_time(self.start, self.stop) * 1e3


@dataclass
class Hooks:
    """What a world of processes adds to a sample (device/cluster.py); none on one host.

    after_flush(lane): enqueued after the flush, before the start event (a starting gun
        that lines the ranks up);
    wait(lane, label): until everything enqueued on the lane's stream is done (bounded:
        a collective whose peer died never completes);
    decide(times, elapsed, stop, label): whether to stop sampling (one rank decides for
        all);
    gather(times, timed_out): every rank's per-sample times and timed-out flags, so
        that each sample is judged by its slowest rank."""

    after_flush: Callable | None = None
    wait: Callable | None = None
    decide: Callable | None = None
    gather: Callable | None = None


class Sampler:
    """Timed samples over one or more lanes, released together by one pinned flag."""

    def __init__(self, cupy, lanes: list[Lane], hooks: Hooks | None = None) -> None:
        self.cupy, self.lanes, self.hooks = cupy, lanes, hooks or Hooks()
        with lanes[0].on_device():
            kernels = get_extern_c("harness.cu", list(HARNESS))
        self.hold_kernel, self.flush_kernel = kernels["hold_stream"], kernels["flush_l2"]
        self.empty_kernel, self.spin_kernel = kernels["empty_kernel"], kernels["spin_for"]
        runtime = cupy.cuda.runtime
        # Pinned host memory is addressable from every device at the same address under
        # unified addressing; portable makes it pinned for every context, not only one.
        self.flag_address = runtime.hostAlloc(64, runtime.hostAllocPortable
                                              | runtime.hostAllocMapped)
        self.flag = np.ctypeslib.as_array((ctypes.c_int32 * 16).from_address(
            self.flag_address))
        self.flag[:] = 0
        # Off under Nsight (--profile): a profiler that serialises launches would wait on
        # the held stream until the hold times out.
        self.hold = True

    def load_harness(self) -> None:
        """Launch each harness kernel once on every lane, unheld: a kernel's module is
        loaded on a device at its first launch there, which must not happen while that
        device's stream is held."""
        self.flag[:] = 1  # released: the spin kernel returns at once
        for lane in self.lanes:
            with lane.on_device():
                self._hold(lane)
                self.flush_kernel((1,), (32,), (lane.flush_buffer, np.int64(0), lane.sink),
                                  stream=lane.stream)
                self.empty_kernel((1,), (32,), (), stream=lane.stream)
        for lane in self.lanes:
            self._wait(lane, "loading the timing kernels")
        self.flag[:] = 0

    def flush(self, lane: Lane) -> None:
        count = np.int64(lane.flush_buffer.size // 4)
        self.flush_kernel((lane.flush_grid,), (512,), (lane.flush_buffer, count, lane.sink),
                          stream=lane.stream)

    def renew_flush_buffers(self) -> None:
        for lane in self.lanes:
            lane.renew_flush_buffer()

    def sample_lanes(self, enqueue: Callable[[], None], cold: bool, label: str
                     ) -> list[float]:
        """Microseconds from start to stop event on each lane, around everything
        `enqueue` launches."""
        self.flag[0] = 0
        try:
            for lane in self.lanes:
                with lane.on_device():
                    if self.hold:
                        self._hold(lane)
                    if cold:
                        self.flush(lane)
                    if self.hooks.after_flush:
                        self.hooks.after_flush(lane)
            with nvtx_range(label):
                for lane in self.lanes:
                    with lane.on_device():
                        lane.start.record(lane.stream)
                enqueue()
                for lane in self.lanes:
                    with lane.on_device():
                        lane.stop.record(lane.stream)
        finally:  # an interrupt must not leave the GPUs spinning until the hold times out
            self.flag[0] = 1
        times = []
        for lane in self.lanes:
            with lane.on_device():
                self._wait(lane, label)
                times.append(lane.elapsed_us())
        return times

    def sample_lanes_until(self, enqueue: Callable[[], None], stop: StopRule, cold: bool,
                           label: str, prepare: Callable[[], None] | None = None
                           ) -> list[list[float]]:
        """Samples until the stop rule is met (judged on each sample's slowest lane):
        per sample, each lane's time. `prepare` runs before each sample's hold, outside
        the measured interval (in-place rungs copy their scratch there)."""
        for lane in self.lanes:
            with lane.on_device():
                lane.clear_timed_out()
        samples: list[list[float]] = []
        began = time.perf_counter()
        while True:  # every stop rule asks for one sample at least (settings.stop_rule)
            if prepare:
                prepare()
            samples.append(self.sample_lanes(enqueue, cold, label))
            slowest = [max(s) for s in samples]
            if self._done(slowest, time.perf_counter() - began, stop, label):
                break
        timed_out = []
        for lane in self.lanes:
            with lane.on_device():
                timed_out.append(lane.read_timed_out())
        if self.hooks.gather:
            samples, timed_out = self.hooks.gather(samples, timed_out, label)
        late = [index for index, flag in enumerate(timed_out) if flag]
        if late:
            raise HoldTimedOut(late[0])
        return samples

    def _done(self, slowest: list[float], elapsed: float, stop: StopRule, label: str) -> bool:
        if self.hooks.decide:
            return self.hooks.decide(slowest, elapsed, stop, label)
        return stop.done(slowest, elapsed)

    def _hold(self, lane: Lane) -> None:
        # On the lane's stream by name, not CuPy's current one: code run between two
        # samples (a user's function) may leave another stream current, and a hold there
        # would hold nothing that the events on our stream bracket.
        self.hold_kernel((1,), (1,), (np.uint64(self.flag_address),
                                      np.uint64(HOLD_TIMEOUT_NS), lane.timed_out),
                         stream=lane.stream)

    def _wait(self, lane: Lane, label: str) -> None:
        if self.hooks.wait:
            self.hooks.wait(lane, label)
        else:
            lane.stream.synchronize()

    def close(self) -> None:
        if self.flag_address:
            self.cupy.cuda.runtime.freeHost(self.flag_address)
            self.flag_address = 0


class HoldTimedOut(RuntimeError):
    """A lane's hold gave up waiting for the release: enqueueing one sample took longer
    than HOLD_TIMEOUT_NS (or a call waited for the held GPU). `lane` is its index."""

    def __init__(self, lane: int) -> None:
        super().__init__("the stream hold timed out: enqueueing one sample took over "
                         + number(HOLD_TIMEOUT_NS / 1e9, ".0f", " s"))
        self.lane = lane


class SampleTimer(Sampler):
    """One GPU: samples of a case on the backend's stream, with NVML's clocks beside
    each, the clock warm-up before a run, the timing floor and the spin tests' kernel."""

    def __init__(self, cupy, stream, l2_bytes: int, sm_count: int, nvml=None,
                 device: int | None = None) -> None:
        device = cupy.cuda.Device().id if device is None else device
        super().__init__(cupy, [Lane(cupy, device, stream, l2_bytes, sm_count)])
        self.stream, self.nvml = stream, nvml

    @property
    def lane(self) -> Lane:
        return self.lanes[0]

    @property
    def flush_buffer(self):
        return self.lane.flush_buffer

    def renew_flush_buffer(self) -> None:
        self.lane.renew_flush_buffer()

    def sample(self, enqueue: Callable[[], None], cold: bool, label: str) -> float:
        """Microseconds from start to stop event around everything `enqueue` launches."""
        return self.sample_lanes(enqueue, cold, label)[0]

    def sample_until(self, enqueue: Callable[[], None], stop: StopRule, cold: bool,
                     label: str, prepare: Callable[[], None] | None = None) -> list[float]:
        """Samples until the stop rule is met."""
        return [s[0] for s in self.sample_lanes_until(enqueue, stop, cold, label, prepare)]

    def sample_clocked(self, enqueue: Callable[[], None], stop: StopRule, cold: bool,
                       label: str, prepare: Callable[[], None] | None = None,
                       policy: ThrottlePolicy = ThrottlePolicy()) -> ClockedSamples:
        """Samples until the stop rule is met, each followed by a reading of the clocks;
        then, while the throttle rule discards samples, replacements (after a pause) up
        to the policy's limit."""
        self.lane.clear_timed_out()
        times: list[float] = []
        sm: list[float | None] = []
        mem: list[float | None] = []

        def take() -> None:
            if prepare:
                prepare()
            times.append(self.sample(enqueue, cold, label))
            sm.append(self.nvml.sm_mhz() if self.nvml else None)
            mem.append(self.nvml.mem_mhz() if self.nvml else None)

        began = time.perf_counter()
        while not stop.done(times, time.perf_counter() - began):
            take()
        wanted = len(times)
        clocks = check_clocks(sm, policy.fraction)
        while policy.needs_more(clocks.kept_count, clocks.discarded, wanted):
            time.sleep(policy.pause_s(bool(clocks.kept[-1])))
            take()
            clocks = check_clocks(sm, policy.fraction)
        if self.lane.read_timed_out():
            raise HoldTimedOut(0)
        return ClockedSamples(times, sm, mem, [bool(k) for k in clocks.kept],
                              policy.still_throttled(clocks.kept_count, wanted))

    def warm_up(self, seconds: float = CLOCK_WARM_UP_S) -> None:
        """Keep the GPU reading (the L2 flush, back to back) for `seconds` before the
        first timed case: an idle GPU's SM clock is low (345 MHz on the H100) and takes a
        while to boost, and a run's first case would otherwise be measured on the way up."""
        began = time.perf_counter()
        while time.perf_counter() - began < seconds:
            for _ in range(WARM_UP_BATCH):
                self.flush(self.lane)
            self.stream.synchronize()

    def spin_us(self, duration_us: float, stop: StopRule) -> list[float]:
        """Samples of a kernel that waits duration_us on the GPU's own timer, measured
        exactly like a rung: what the timing tests compare against the known time."""
        def launch() -> None:
            self.spin_kernel((1,), (1,), (np.uint64(round(duration_us * 1e3)),),
                             stream=self.stream)

        return self.sample_until(launch, stop, True, f"spin {number(duration_us, 'g', ' us')}")

    def floor_us(self, stop: StopRule, cold: bool = True) -> float:
        """The timing floor: an empty kernel measured exactly like a rung."""
        def launch() -> None:
            self.empty_kernel((1,), (32,), (), stream=self.stream)

        for _ in range(3):
            self.sample(launch, cold, "timing floor")
        return statistics.median(self.sample_until(launch, stop, cold, "timing floor"))
