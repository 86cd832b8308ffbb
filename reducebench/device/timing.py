"""One timed sample: hold the stream, flush L2 by reading, record start, enqueue the
whole reduction, record stop, release. See cuda_src/harness.cu for why each step."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from reducebench.device.compile import get_extern_c
from reducebench.device.nvtx import nvtx_range
from reducebench.measuring.sampling import ClockedSamples
from reducebench.core.stats import StopRule
from reducebench.measuring.throttle import ThrottlePolicy, check_clocks

HOLD_TIMEOUT_NS = 2_000_000_000
CLOCK_WARM_UP_S = 0.3
WARM_UP_BATCH = 16  # flushes enqueued between two checks of the time


class SampleTimer:
    def __init__(self, cupy, stream, l2_bytes: int, sm_count: int, nvml=None) -> None:
        self.cupy, self.stream, self.nvml = cupy, stream, nvml
        kernels = get_extern_c("harness.cu", ["hold_stream", "flush_l2", "empty_kernel",
                                              "spin_for"])
        self.hold_kernel = kernels["hold_stream"]
        self.flush_kernel = kernels["flush_l2"]
        self.empty_kernel = kernels["empty_kernel"]
        self.spin_kernel = kernels["spin_for"]
        self._pinned = cupy.cuda.alloc_pinned_memory(64)
        self.release_flag = np.frombuffer(self._pinned, dtype=np.int32, count=1)
        self.timed_out = cupy.zeros(1, dtype=cupy.int32)
        self.sink = cupy.zeros(1, dtype=cupy.int32)
        # Read at least twice the L2; int4 elements, filled so nothing is a zero page.
        self.flush_bytes = max(2 * l2_bytes, 64 << 20)
        self.flush_buffer = cupy.arange(self.flush_bytes // 4, dtype=cupy.int32)
        self.flush_grid = sm_count * 4
        self.start = cupy.cuda.Event()
        self.stop = cupy.cuda.Event()
        # Off under Nsight (--profile): a profiler that serialises launches would wait on
        # the held stream until the hold times out.
        self.hold = True

    def renew_flush_buffer(self) -> None:
        """A new flush buffer, allocated before the old one is freed so that it lies
        elsewhere: each round of a run flushes through memory of its own."""
        fresh = self.cupy.arange(self.flush_bytes // 4, dtype=self.cupy.int32)
        self.flush_buffer = fresh

    def flush(self) -> None:
        count = np.int64(self.flush_buffer.size // 4)
        self.flush_kernel((self.flush_grid,), (512,), (self.flush_buffer, count, self.sink),
                          stream=self.stream)

    def sample(self, enqueue: Callable[[], None], cold: bool, label: str) -> float:
        """Microseconds from start to stop event around everything `enqueue` launches."""
        self.release_flag[0] = 0
        if self.hold:
            # On our stream by name, not CuPy's current one: code run between two samples
            # (a user's function) may leave another stream current, and a hold there
            # would hold nothing that the events on our stream bracket.
            self.hold_kernel((1,), (1,), (np.uint64(self._pinned.ptr),
                                          np.uint64(HOLD_TIMEOUT_NS), self.timed_out),
                             stream=self.stream)
        try:
            if cold:
                self.flush()
            with nvtx_range(label):
                self.start.record(self.stream)
                enqueue()
                self.stop.record(self.stream)
        finally:  # an interrupt must not leave the GPU spinning until the hold times out
            self.release_flag[0] = 1
        self.stop.synchronize()
        return self.cupy.cuda.get_elapsed_time(self.start, self.stop) * 1e3

    def sample_until(self, enqueue: Callable[[], None], stop: StopRule, cold: bool,
                     label: str, prepare: Callable[[], None] | None = None) -> list[float]:
        """Samples until the stop rule is met. `prepare` runs before each sample's hold,
        outside the measured interval (in-place rungs copy their scratch there)."""
        self.timed_out.fill(0)
        times: list[float] = []
        began = time.perf_counter()
        while not stop.done(times, time.perf_counter() - began):
            if prepare:
                prepare()
            times.append(self.sample(enqueue, cold, label))
        if int(self.timed_out.get()[0]):
            raise RuntimeError("the stream hold timed out: enqueueing one sample took over "
                               f"{HOLD_TIMEOUT_NS / 1e9:.0f} s")
        return times

    def sample_clocked(self, enqueue: Callable[[], None], stop: StopRule, cold: bool,
                       label: str, prepare: Callable[[], None] | None = None,
                       policy: ThrottlePolicy = ThrottlePolicy()) -> ClockedSamples:
        """Samples until the stop rule is met, each followed by a reading of the clocks;
        then, while the throttle rule discards samples, replacements (after a pause) up
        to the policy's limit."""
        self.timed_out.fill(0)
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
        if int(self.timed_out.get()[0]):
            raise RuntimeError("the stream hold timed out: enqueueing one sample took over "
                               f"{HOLD_TIMEOUT_NS / 1e9:.0f} s")
        return ClockedSamples(times, sm, mem, [bool(k) for k in clocks.kept],
                              policy.still_throttled(clocks.kept_count, wanted))

    def warm_up(self, seconds: float = CLOCK_WARM_UP_S) -> None:
        """Keep the GPU reading (the L2 flush, back to back) for `seconds` before the
        first timed case: an idle GPU's SM clock is low (345 MHz on the H100) and takes a
        while to boost, and a run's first case would otherwise be measured on the way up."""
        began = time.perf_counter()
        while time.perf_counter() - began < seconds:
            for _ in range(WARM_UP_BATCH):
                self.flush()
            self.stream.synchronize()

    def spin_us(self, duration_us: float, stop: StopRule) -> list[float]:
        """Samples of a kernel that waits duration_us on the GPU's own timer, measured
        exactly like a rung: what the timing tests compare against the known time."""
        def launch() -> None:
            self.spin_kernel((1,), (1,), (np.uint64(round(duration_us * 1e3)),),
                             stream=self.stream)

        return self.sample_until(launch, stop, True, f"spin {duration_us:g} us")

    def floor_us(self, stop: StopRule, cold: bool = True) -> float:
        """The timing floor: an empty kernel measured exactly like a rung."""
        import statistics

        def launch() -> None:
            self.empty_kernel((1,), (32,), (), stream=self.stream)

        for _ in range(3):
            self.sample(launch, cold, "timing floor")
        return statistics.median(self.sample_until(launch, stop, cold, "timing floor"))
