"""The CuPy backend: allocates, compiles and launches the plan the runner gives it, and
reads results. It decides nothing: plans come from the registry through the runner, the
order of runs from execution.run_case, verdicts from verify.py."""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

from reducebench.device.driver import import_cupy
from reducebench.device.poisoned_context import poisons_context
from reducebench.device.compile import rung_functions
from reducebench.device.guarded_buffers import guard_bytes, guarded_empty, guarded_upload
from reducebench.device.gpu import Nvml, device_info, pci_bus_id, query
from reducebench.device.references import LIBRARIES
from reducebench.device.timing import SampleTimer
from reducebench.core.dtypes import DType
from reducebench.core.errors import DeviceUnavailable
from reducebench.measuring.energy import (EnergyNote, EnergyUnmeasurable, counter_updates, from_counter,
                                from_power, plan_burst)
from reducebench.measuring.execution import run_case
from reducebench.measuring.graph_timing import graph_size, per_reduction_samples
from reducebench.verify.guard_regions import GuardedArray, InputGuards
from reducebench.verify.inputs import HostInput
from reducebench.ladder.sources import name_expressions
from reducebench.core.errors import CaseFailed, CaseSkipped, ContextLost
from reducebench.ladder.case import Case
from reducebench.ladder.plan import Launch, Plan
from reducebench.measuring.backend_protocol import Measurement, Sampled, Sampling
from reducebench.measuring.bound_plan import BoundPlan
from reducebench.device.nvtx import nvtx_range
from reducebench.ladder.registry import ROWS, Rung
from reducebench.measuring.sampling import combine_phases
from reducebench.core.stats import StopRule

FLOOR_STOP = StopRule(min_samples=20, max_noise=0.01, max_time=0.2)
GRAPH_ESTIMATE = StopRule(min_samples=3, max_noise=1.0, max_time=0.0, max_samples=3)
ENERGY_POLL_S = 0.001


class PlanExecution(BoundPlan):
    """A plan bound to its kernels and device buffers (measuring/bound_plan.py):
    enqueue() runs one reduction on the current stream."""

    def __init__(self, cupy, case: Case, plan: Plan, x, guards: int = 0,
                 input_guard: GuardedArray | None = None) -> None:
        """guards: bytes of guard on each side of every buffer (0 for none: the shards of
        device/nccl_cases.py, verified their own way); input_guard: the input's own."""
        self.cupy = cupy
        exprs = name_expressions(case.rung, case.dtype, case.block, plan, case.params)
        functions = rung_functions(case.rung, case.dtype, case.params, list(exprs.values()))
        self.kernels = {etype: functions[expr] for etype, expr in exprs.items()}
        super().__init__(plan, x, cupy.dtype(case.dtype.acc_name),
                         lambda name, size, dtype: guarded_empty(cupy, name, size, dtype,
                                                                 guards), input_guard)

    def zero(self, buffer) -> None:
        # cudaMemsetAsync, not a fill kernel: the zeroing is part of the measured
        # reduction, and a memset is the cheapest way to do it.
        self.cupy.cuda.runtime.memsetAsync(buffer.data.ptr, 0, buffer.nbytes,
                                           self.cupy.cuda.get_current_stream().ptr)

    def launch(self, launch: Launch) -> None:
        args = tuple(np.int64(a) if isinstance(a, int) else a for a in self.arguments(launch))
        self.kernels[launch.element_type]((launch.grid,), (launch.block,), args)

    def read(self):
        """The value, or for a row plan each row's value (a numpy array)."""
        if self.plan.row_outputs:
            return self.buffers[self.written][:self.plan.row_outputs].get()
        return self.buffers[self.written][:1].get()[0].item()


class LibraryExecution:
    def __init__(self, cupy, case: Case, x) -> None:
        if case.rung.finish == ROWS:  # a row reference sees the input as ROWS x COLS
            x = x.reshape(case.rows, case.cols)
        self.impl = LIBRARIES[case.rung.library](cupy, x, case.dtype)
        self.stream = cupy.cuda.get_current_stream()

    def prepare(self) -> None:
        pass

    def enqueue(self) -> None:
        self.impl.enqueue()

    def poison(self) -> None:
        self.impl.out = None

    def read(self) -> float | int:
        # A library may read its result on another stream (torch's .item() syncs torch's
        # default stream, which does not wait for ours): wait for ours first.
        self.stream.synchronize()
        return self.impl.read()

    def check_guards(self) -> list[str]:
        return []  # the library allocates its own buffers


class CupyBackend:
    def __init__(self, device: int = 0) -> None:
        cupy = import_cupy()
        count = cupy.cuda.runtime.getDeviceCount()
        if not 0 <= device < count:
            raise DeviceUnavailable(f"--device {device}: this machine has {count} GPU(s), "
                                    f"0 to {count - 1}")
        self.cupy = cupy
        self.guards = guard_bytes(cupy)  # before anything is allocated
        self.input_guards = InputGuards()
        cupy.cuda.Device(device).use()
        self.info = query(cupy, device)
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.stream.use()
        self.nvml = Nvml(device, pci_bus_id(cupy, device))
        self.with_ceiling = False  # `run` turns it on: records then carry pct_ceiling
        self._read_kernels: dict = {}  # (n, itemsize, writes, timing) -> the fastest read
        self.timer = SampleTimer(cupy, self.stream, self.info.l2_bytes, self.info.sm_count,
                                 self.nvml)

    # -- the runner's Backend protocol -------------------------------------------------
    def device_info(self) -> dict:
        """The device's facts; with `with_ceiling`, its read ceiling too (measured once
        per process, about a second: timed runs only, never under compute-sanitizer)."""
        facts = device_info(self.info)
        if self.with_ceiling:
            from reducebench.device.ceiling_timing import measure_ceiling

            facts["ceiling_gbps"] = round(measure_ceiling(self).gbps, 1)
        return facts

    def sm_count(self) -> int:
        return self.info.sm_count

    def free_memory(self) -> int:
        self.cupy.get_default_memory_pool().free_all_blocks()
        return int(self.cupy.cuda.runtime.memGetInfo()[0])

    def upload(self, host: HostInput):
        self.stream.use()
        with nvtx_range(f"upload n={host.data.size}", color="grey"):
            guarded = guarded_upload(self.cupy, host.data, self.guards)
            self.stream.synchronize()
            return self.input_guards.add(guarded)

    def release(self, handle) -> None:
        self.input_guards.forget(handle)
        del handle
        self.cupy.get_default_memory_pool().free_all_blocks()

    def sm_clock_mhz(self) -> float | None:
        return self.nvml.sm_mhz()

    def timing_floor_us(self, sampling: Sampling) -> float:
        """An empty kernel timed as the run's cases are (cold or warm): the timing floor."""
        return self.timer.floor_us(FLOOR_STOP, cold=sampling.cold)

    def new_round(self) -> None:
        """Before each later round of a run (measuring/rounds.py): a fresh L2-flush
        buffer. Inputs are uploaded afresh by the runner, and every case binds new
        buffers of its own whenever it is executed."""
        self.stream.use()
        self.timer.renew_flush_buffer()
        self.stream.synchronize()

    def warm_up(self) -> None:
        """Clocks up before a timed run (timing.SampleTimer.warm_up)."""
        self.stream.use()
        self.timer.warm_up()

    def execute(self, case: Case, plan: Plan, handle, sampling: Sampling | None) -> Measurement:
        # Everything a case launches goes to our stream, whatever the code of the case
        # before it (a user's function, a library) left current.
        self.stream.use()
        try:
            # Each timed sample has its own range, named after the case (timing.py); it
            # must stay at the top of the NVTX stack, where `ncu --nvtx-include
            # "reducebench@<label>/"` (and --metrics) looks for it.
            return run_case(self._bind(case, plan, handle), sampling,
                            self._sampler(case, plan))
        except (CaseSkipped, CaseFailed, ContextLost):
            raise
        except Exception as exc:  # CUDA and compile errors; never Interrupted
            raise self._classify(exc) from None
        finally:
            self.stream.use()

    def read_reference_us(self, handle, n: int, itemsize: int, sampling: Sampling) -> float:
        """A pure read of the case's n * itemsize input bytes by the fastest ceiling
        kernel, timed as the case is (device/ceiling_timing.py): the runner's `read_us`."""
        from reducebench.device.ceiling_timing import read_reference_us

        self.stream.use()
        try:
            return read_reference_us(self, handle, n, itemsize, sampling, self._read_kernels)
        except Exception as exc:  # CUDA and compile errors; never Interrupted
            raise self._classify(exc) from None

    def row_read_reference_us(self, handle, rows: int, cols: int, itemsize: int,
                              acc_itemsize: int, sampling: Sampling) -> float:
        """The same-shape read of a row case: its rows x cols input read as the 1-D read
        reads it, and one accumulator of acc_itemsize bytes written a row
        (cuda_src/row_read.cu), timed as the case is: the row ladder's `read_us`."""
        from reducebench.device.ceiling_timing import read_reference_us
        from reducebench.measuring.read_ceiling import row_write_words

        self.stream.use()
        try:
            return read_reference_us(self, handle, rows * cols, itemsize, sampling,
                                     self._read_kernels,
                                     out_words=row_write_words(rows, acc_itemsize))
        except Exception as exc:  # CUDA and compile errors; never Interrupted
            raise self._classify(exc) from None

    def same_size_reads(self, sizes: tuple[int, ...], hold: bool = True
                        ) -> list[tuple[int, float]]:
        """The same-size read (what `run` records as read_us) at each size, float32, cold:
        what `info` shows."""
        buffer = self.cupy.arange(max(sizes), dtype=self.cupy.int32) | 1  # no zero page
        sampling = Sampling(StopRule(max_time=0.2), cold=True, hold=hold)
        try:
            return [(n, self.read_reference_us(buffer, n, 4, sampling)) for n in sizes]
        finally:
            del buffer
            self.cupy.get_default_memory_pool().free_all_blocks()

    def time_enqueue(self, enqueue, sampling: Sampling, label: str) -> list[float]:
        """Per-run samples of whatever `enqueue` launches on our stream, timed as a case
        is: single launches (cold or warm, held), or replays of a graph of K of them."""
        self.timer.hold = sampling.hold
        enqueue()  # warm: module load and first-launch costs stay out of the samples
        if not sampling.graph:
            return self.timer.sample_until(enqueue, sampling.stop, sampling.cold, label)
        estimate = statistics.median(self.timer.sample_until(
            enqueue, GRAPH_ESTIMATE, sampling.cold, label))
        k = graph_size(estimate)
        self.stream.synchronize()
        self.stream.begin_capture()
        try:
            for _ in range(k):
                enqueue()
        finally:
            graph = self.stream.end_capture()
        times = self.timer.sample_until(lambda: graph.launch(self.stream), sampling.stop,
                                        sampling.cold, label)
        return per_reduction_samples(times, k)

    def compile_log(self, rung: Rung, dtype: DType) -> str | None:
        """None if the rung compiles for dtype (the module is then cached for the run),
        else the compiler's log."""
        try:
            rung_functions(rung, dtype, dict(rung.params))
        except Exception as exc:
            if "CompileException" not in type(exc).__name__:
                raise
            return str(exc)
        return None

    # -- the work ------------------------------------------------------------------------
    def _bind(self, case: Case, plan: Plan, x):
        if plan.library == "callable":
            from reducebench.device.python_reductions import CallableExecution

            return CallableExecution(self.cupy, case, x)
        if plan.library:
            return LibraryExecution(self.cupy, case, x)
        with nvtx_range(f"compile {case.label}", color="grey"):
            return PlanExecution(self.cupy, case, plan, x, self.guards,
                                 self.input_guards.of(x))

    def _sampler(self, case: Case, plan: Plan):
        def sample(execution, sampling: Sampling) -> Sampled:
            # A framework that cannot enqueue on our stream (JAX) cannot be held: its
            # work would run beside the hold (device/python_reductions.py).
            self.timer.hold = sampling.hold and getattr(execution, "stream_ordered", True)
            if sampling.graph:
                sampled = self._sample_graph(execution, case, plan, sampling)
            else:
                sampled = self._sample_phases(execution, case, sampling)
            if sampling.energy:
                sampled.energy = self._energy(execution, case, plan,
                                              statistics.median(sampled.times_us))
            return sampled
        return sample

    def _sample_phases(self, execution, case: Case, sampling: Sampling) -> Sampled:
        """Samples of the fastest of the rung's phases; each later phase starts one
        untimed call later, which flips a library's call parity (Rung.phases)."""
        phases = []
        for phase in range(case.rung.phases):
            if phase:
                execution.prepare()
                execution.enqueue()
            phases.append(self.timer.sample_clocked(execution.enqueue, sampling.stop,
                                                    sampling.cold, case.label,
                                                    prepare=execution.prepare))
        fastest, samples = combine_phases(phases)
        return Sampled(phases[fastest].kept_times, samples,
                       throttled=any(p.throttled for p in phases),
                       discarded=samples.kept.count(False))

    def _sample_graph(self, execution, case: Case, plan: Plan, sampling: Sampling) -> Sampled:
        """K runs back to back, captured once in a CUDA graph; each sample is a replay,
        reported per run. Launch cost is paid once per replay, so at small n this shows
        the kernels' own time. Only the first run of a replay follows the L2 flush."""
        if plan.scratch_copy:
            raise CaseSkipped("graph timing: this rung reduces a scratch copy in place, "
                              "which needs a fresh copy before every run")
        if getattr(execution, "not_capturable", None):
            raise CaseSkipped(f"graph timing: {execution.not_capturable}")
        estimate = statistics.median(self.timer.sample_until(
            execution.enqueue, GRAPH_ESTIMATE, sampling.cold, case.label))
        k = graph_size(estimate)
        k += k % 2 if plan.ping_pong else 0  # an even count leaves the pair as it found it
        self.stream.synchronize()
        self.stream.begin_capture()
        try:
            for _ in range(k):
                execution.enqueue()
        except Exception as exc:
            self.stream.end_capture()
            raise CaseSkipped(f"graph timing: cannot capture it in a CUDA graph "
                              f"({type(exc).__name__}: {str(exc)[:120]})") from None
        graph = self.stream.end_capture()
        clocked = self.timer.sample_clocked(lambda: graph.launch(self.stream), sampling.stop,
                                            sampling.cold, case.label)
        clocked.times_us = per_reduction_samples(clocked.times_us, k)
        _, samples = combine_phases([clocked])
        return Sampled(clocked.kept_times, samples, throttled=clocked.throttled,
                       discarded=samples.kept.count(False), graph_k=k)

    def _energy(self, execution, case: Case, plan: Plan, median_us: float):
        """Energy per run from NVML over a burst of runs enqueued back to back (never
        more than two chunks ahead of the GPU), as energy.py describes; None where
        NVML gives neither an energy counter nor power readings."""
        if plan.scratch_copy:
            return EnergyNote("not measured: this rung reduces a scratch copy in place")
        if self.nvml.energy_mj() is not None:
            method, read = "counter", self.nvml.energy_mj
        elif self.nvml.power_mw() is not None:
            method, read = "power", self.nvml.power_mw
        else:
            return EnergyNote("not measured: NVML gives no energy counter or power")
        burst = plan_burst(median_us, method)
        cupy, stream = self.cupy, self.stream
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        readings, queued, chunks = [], [], 0
        began = time.perf_counter()
        start.record(stream)
        while True:
            for _ in range(burst.chunk):
                execution.enqueue()
            chunks += 1
            queued.append(cupy.cuda.Event())
            queued[-1].record(stream)
            while len(queued) > 2 and not queued[0].done:  # keep two chunks ahead
                readings.append((time.perf_counter(), read()))
                time.sleep(ENERGY_POLL_S)
            queued = [event for event in queued if not event.done]
            readings.append((time.perf_counter(), read()))
            updates = len(counter_updates(readings)) if method == "counter" else 0
            if burst.done(updates, time.perf_counter() - began):
                break
        end.record(stream)
        while not end.done:
            readings.append((time.perf_counter(), read()))
            time.sleep(ENERGY_POLL_S)
        busy_s = cupy.cuda.get_elapsed_time(start, end) / 1e3
        runs = chunks * burst.chunk
        try:
            if method == "counter":
                return from_counter(readings, runs, busy_s, plan.bytes_read)
            return from_power(readings, runs, busy_s, plan.bytes_read, began)
        except EnergyUnmeasurable as exc:
            return EnergyNote(f"not measured: {exc}")

    def _classify(self, exc: Exception) -> Exception:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        name = type(exc).__name__
        if "CompileException" in name:
            return CaseFailed(f"compile error: {str(exc).strip()[:2000]}")
        if poisons_context(str(exc)):
            return ContextLost(f"{name}: {text}")
        return CaseFailed(f"{name}: {text}")

    def abandon(self, exit_code: int) -> None:
        """End the process after a lost context, without Python's teardown: every CuPy
        destructor (events, modules, memory) would fail in the dead context and print
        its own traceback under the run's clean message."""
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(exit_code)

    # -- info ----------------------------------------------------------------------------
    def copy_bandwidth_gbps(self, nbytes: int = 1 << 30, repeats: int = 10) -> float:
        """Device-to-device copy, counting bytes read plus bytes written."""
        cupy = self.cupy
        src = cupy.arange(nbytes // 4, dtype=cupy.int32)
        dst = cupy.empty_like(src)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        times = []
        for _ in range(repeats + 2):
            start.record(self.stream)
            dst[...] = src
            end.record(self.stream)
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
        del src, dst
        self.cupy.get_default_memory_pool().free_all_blocks()
        return 2 * nbytes / statistics.median(times[2:]) / 1e9

