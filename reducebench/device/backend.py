"""The CuPy backend: allocates, compiles and launches the plan the runner gives it, and
reads results. It decides nothing: plans come from the registry through the runner, the
order of runs from execution.run_case, verdicts from verify.py."""

from __future__ import annotations

import os
import statistics
import sys

import numpy as np

from reducebench.device import import_cupy
from reducebench.device.compile import rung_functions
from reducebench.device.gpu import SmClock, device_info, query
from reducebench.device.references import LIBRARIES
from reducebench.device.timing import SampleTimer
from reducebench.dtypes import DType
from reducebench.errors import DeviceUnavailable
from reducebench.execution import run_case
from reducebench.inputs import HostInput
from reducebench.kernels import name_expressions
from reducebench.model import (NEXT, RESULT, TICKET_COUNTER, Case, CaseFailed, CaseSkipped,
                               ContextLost, Measurement, PingPong, Plan, Sampling,
                               bound_arguments)
from reducebench.profiling import nvtx_range
from reducebench.registry import Rung

# Errors after which the CUDA context is unusable: every later call would fail too.
# Driver (CUDA_ERROR_...) and runtime (cudaError...) spellings both occur.
STICKY_ERRORS = ("illegal address", "ILLEGAL_ADDRESS", "IllegalAddress",
                 "illegal memory access", "misaligned", "MISALIGNED", "Misaligned",
                 "LAUNCH_FAILED", "LaunchFailure", "unspecified launch failure",
                 "illegal instruction", "ILLEGAL_INSTRUCTION", "IllegalInstruction",
                 "hardware stack error", "ASSERT", "Assert")
POISON_INT = -(2**31) + 7


class PlanExecution:
    """A plan bound to its kernels and device buffers: enqueue() runs one reduction."""

    def __init__(self, cupy, case: Case, plan: Plan, x) -> None:
        self.cupy, self.plan = cupy, plan
        exprs = name_expressions(case.rung, case.dtype, case.block, plan, case.params)
        functions = rung_functions(case.rung, case.dtype, case.params, list(exprs.values()))
        self.kernels = {etype: functions[expr] for etype, expr in exprs.items()}
        acc = cupy.dtype(case.dtype.acc_name)
        self.buffers = {name: cupy.empty(size, dtype=acc)
                        for name, size in plan.buffers.items()}
        self.buffers["input"] = x
        self.buffers[TICKET_COUNTER] = cupy.zeros(1, dtype=cupy.uint32)
        if plan.scratch_copy:
            self.buffers["scratch"] = cupy.empty(x.size, dtype=acc)
        self.pingpong = PingPong(plan.ping_pong)
        if plan.ping_pong:  # zeroed once; from then on each run zeroes the other
            self.buffers[RESULT].fill(0)
            self.buffers[NEXT].fill(0)
        self.written = RESULT

    def buffer(self, name: str):
        return self.buffers[self.pingpong.buffer(name)]

    def prepare(self) -> None:
        """Outside the timed region: a fresh scratch copy for rungs that work in place."""
        if self.plan.scratch_copy:
            self.buffers["scratch"][...] = self.buffers["input"]

    def enqueue(self) -> None:
        stream = self.cupy.cuda.get_current_stream().ptr
        for name in self.plan.zero_before:
            # cudaMemsetAsync, not a fill kernel: the zeroing is part of the measured
            # reduction, and a memset is the cheapest way to do it.
            target = self.buffer(name)
            self.cupy.cuda.runtime.memsetAsync(target.data.ptr, 0, target.nbytes, stream)
        for launch in self.plan.launches:
            args = tuple(np.int64(a) if isinstance(a, int) else self.buffer(a)
                         for a in bound_arguments(launch))
            self.kernels[launch.element_type]((launch.grid,), (launch.block,), args)
        self.written = self.pingpong.finished_run()

    def poison(self) -> None:
        """A value no correct run leaves behind, so an unwritten result cannot pass. Not
        for ping-pong plans, whose accumulator must stay zero to be added into: there, as
        with any atomic finish (whose memset wipes the poison too), a run that adds
        nothing leaves 0, which exact inputs never sum to."""
        if self.plan.ping_pong:
            return
        result = self.buffer(RESULT)
        result.fill(np.nan if result.dtype.kind == "f" else POISON_INT)

    def read(self) -> float | int:
        return self.buffers[self.written][:1].get()[0].item()


class LibraryExecution:
    def __init__(self, cupy, case: Case, x) -> None:
        self.impl = LIBRARIES[case.rung.library](cupy, x, case.dtype)

    def prepare(self) -> None:
        pass

    def enqueue(self) -> None:
        self.impl.enqueue()

    def poison(self) -> None:
        self.impl.out = None

    def read(self) -> float | int:
        return self.impl.read()


class CupyBackend:
    def __init__(self, device: int = 0) -> None:
        cupy = import_cupy()
        count = cupy.cuda.runtime.getDeviceCount()
        if not 0 <= device < count:
            raise DeviceUnavailable(f"--device {device}: this machine has {count} GPU(s), "
                                    f"0 to {count - 1}")
        self.cupy = cupy
        cupy.cuda.Device(device).use()
        self.info = query(cupy, device)
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.stream.use()
        self.timer = SampleTimer(cupy, self.stream, self.info.l2_bytes, self.info.sm_count)
        self.clock = SmClock(device)

    # -- the runner's Backend protocol -------------------------------------------------
    def device_info(self) -> dict:
        return device_info(self.info)

    def sm_count(self) -> int:
        return self.info.sm_count

    def free_memory(self) -> int:
        self.cupy.get_default_memory_pool().free_all_blocks()
        return int(self.cupy.cuda.runtime.memGetInfo()[0])

    def upload(self, host: HostInput):
        with nvtx_range(f"upload n={host.data.size}", color="grey"):
            x = self.cupy.asarray(host.data)
            self.stream.synchronize()
            return x

    def release(self, handle) -> None:
        del handle
        self.cupy.get_default_memory_pool().free_all_blocks()

    def sm_clock_mhz(self) -> float | None:
        return self.clock.mhz()

    def execute(self, case: Case, plan: Plan, handle, sampling: Sampling | None) -> Measurement:
        try:
            execution = self._bind(case, plan, handle)
            with nvtx_range(f"run {case.label}", color="green"):
                return run_case(execution, sampling, self._sampler(case))
        except (CaseSkipped, CaseFailed):
            raise
        except Exception as exc:  # CUDA and compile errors; never Interrupted
            raise self._classify(exc) from None

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
        if plan.library:
            return LibraryExecution(self.cupy, case, x)
        with nvtx_range(f"compile {case.label}", color="grey"):
            return PlanExecution(self.cupy, case, plan, x)

    def _sampler(self, case: Case):
        """Samples of the fastest of the rung's phases; each later phase starts one
        untimed call later, which flips a library's call parity (Rung.phases)."""
        def sample(execution, sampling: Sampling) -> list[float]:
            self.timer.hold = sampling.hold
            phases = []
            for phase in range(case.rung.phases):
                if phase:
                    execution.prepare()
                    execution.enqueue()
                phases.append(self.timer.sample_until(execution.enqueue, sampling.stop,
                                                      sampling.cold, case.label,
                                                      prepare=execution.prepare))
            return min(phases, key=statistics.median)
        return sample

    def _classify(self, exc: Exception) -> Exception:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        name = type(exc).__name__
        if "CompileException" in name:
            return CaseFailed(f"compile error: {str(exc).strip()[:2000]}")
        if any(marker in str(exc) for marker in STICKY_ERRORS):
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

