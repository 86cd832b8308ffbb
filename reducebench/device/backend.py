"""The CuPy backend: allocates, compiles, launches the registry's plans, reads results."""

from __future__ import annotations

import statistics

import numpy as np

from reducebench.device import import_cupy
from reducebench.device.compile import rung_functions
from reducebench.device.gpu import SmClock, metadata, query
from reducebench.device.references import LIBRARIES
from reducebench.device.timing import SampleTimer
from reducebench.dtypes import DType
from reducebench.errors import DeviceUnavailable
from reducebench.geometry import Plan
from reducebench.inputs import HostInput, storage_dtype
from reducebench.kernels import name_expressions
from reducebench.profiling import nvtx_range
from reducebench.registry import Rung
from reducebench.runner import Case, CaseFailed, CaseSkipped, ContextLost, Measurement
from reducebench.stats import StopRule
from reducebench.tolerance import library_chain

WARMUP_RUNS = 2
# Errors after which the CUDA context is unusable: every later call would fail too.
# Driver (CUDA_ERROR_...) and runtime (cudaError...) spellings both occur.
STICKY_ERRORS = ("illegal address", "ILLEGAL_ADDRESS", "IllegalAddress",
                 "illegal memory access", "misaligned", "MISALIGNED", "Misaligned",
                 "LAUNCH_FAILED", "LaunchFailure", "unspecified launch failure",
                 "illegal instruction", "ILLEGAL_INSTRUCTION", "IllegalInstruction",
                 "hardware stack error", "ASSERT", "Assert")


class PlanExecution:
    """A rung's plan bound to its kernels and buffers: enqueue() runs the whole reduction."""

    def __init__(self, cupy, case: Case, plan: Plan, x) -> None:
        self.cupy, self.plan = cupy, plan
        dtype = case.dtype
        exprs = name_expressions(case.rung, dtype, case.block, plan, case.params)
        functions = rung_functions(case.rung, dtype, case.params)
        self.kernels = {etype: functions[expr] for etype, expr in exprs.items()}
        acc = cupy.dtype(dtype.acc_name)
        self.buffers = {name: cupy.empty(size, dtype=acc)
                        for name, size in plan.acc_buffers.items()}
        self.buffers["input"] = x
        self.buffers["ticket"] = cupy.zeros(1, dtype=cupy.uint32)
        if plan.scratch_copy:
            self.buffers["scratch"] = cupy.empty(x.size, dtype=acc)
        if plan.ping_pong:  # zeroed once; from then on each launch zeroes the other
            self.buffers["result"].fill(0)
            self.buffers["next"].fill(0)
        self.result = self.buffers["result"]

    def prepare(self) -> None:
        """Outside the timed region: a fresh scratch copy for rungs that work in place."""
        if self.plan.scratch_copy:
            self.buffers["scratch"][...] = self.buffers["input"]

    def enqueue(self) -> None:
        if self.plan.zero_result:
            # cudaMemsetAsync, not an elementwise fill kernel: the zeroing is part of the
            # measured reduction, and a memset is the cheapest way to do it.
            self.cupy.cuda.runtime.memsetAsync(self.result.data.ptr, 0, self.result.nbytes,
                                               self.cupy.cuda.get_current_stream().ptr)
        for launch in self.plan.launches:
            named = {"src": self.buffers[launch.src], "dst": self.buffers[launch.dst],
                     "n": np.int64(launch.n), "workspace": self.buffers.get("workspace"),
                     "ticket": self.buffers["ticket"]}
            named["next"] = self.buffers.get("next")
            args = tuple(named[a] for a in launch.args)
            self.kernels[launch.element_type]((launch.grid,), (launch.block,), args)
        if self.plan.ping_pong:
            written, zeroed = self.buffers["result"], self.buffers["next"]
            self.buffers["result"], self.buffers["next"] = zeroed, written
            self.result = written

    def poison(self) -> None:
        """A value no correct run leaves behind, so an unwritten result cannot pass."""
        if self.plan.ping_pong:
            # The accumulator must stay zero for the launch to add into. As with any
            # atomic finish (whose memset would wipe the poison too), a launch that adds
            # nothing leaves 0, which verification rejects unless the sum really is 0.
            return
        self.result.fill(np.nan if self.result.dtype.kind == "f" else -(2**31) + 7)

    def read(self) -> float | int:
        return self.result[:1].get()[0].item()


class LibraryExecution:
    def __init__(self, cupy, case: Case, x) -> None:
        self.impl = LIBRARIES[case.rung.library](cupy, x, case.dtype)

    def prepare(self) -> None:
        pass

    def enqueue(self) -> None:
        self.impl.enqueue()

    def poison(self) -> None:
        pass

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
    def metadata(self) -> dict:
        return metadata(self.info)

    def sm_count(self) -> int:
        return self.info.sm_count

    def free_memory(self) -> int:
        self.cupy.get_default_memory_pool().free_all_blocks()
        return int(self.cupy.cuda.runtime.memGetInfo()[0])

    def case_bytes(self, case: Case) -> int:
        if case.rung.is_library:
            return 64 << 20  # workspace and output: CUB asks for a few kilobytes
        plan = case.rung.plan(case.n, case.block, self.sm_count(), case.params)
        acc = 8 if case.dtype.acc_name == "float64" else 4
        scratch = case.n * acc if plan.scratch_copy else 0
        return scratch + acc * sum(plan.acc_buffers.values()) + (1 << 20)

    def upload(self, host: HostInput, dtype: DType):
        with nvtx_range(f"upload {dtype.name} n={host.data.size}", color="grey"):
            x = self.cupy.asarray(host.data)
            assert x.dtype == storage_dtype(dtype)
            self.stream.synchronize()
            return x

    def release(self, handle) -> None:
        del handle
        self.cupy.get_default_memory_pool().free_all_blocks()

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

    def sm_clock_mhz(self) -> float | None:
        return self.clock.mhz()

    def measure(self, case: Case, handle, stop: StopRule, cold: bool) -> Measurement:
        try:
            return self._measure(case, handle, stop, cold)
        except (CaseSkipped, CaseFailed):
            raise
        except Exception as exc:
            raise self._classify(exc) from None

    def verify_once(self, case: Case, x, repeats: int = 2) -> tuple[list[float | int], Plan]:
        """The results of `repeats` back-to-back runs, untimed, and the plan that made them
        (its accumulation shape sets the tolerance): for correctness tests."""
        try:
            execution, plan = self._execution(case, x)
            results = []
            for _ in range(repeats):
                execution.prepare()
                execution.poison()
                execution.enqueue()
                self.stream.synchronize()
                results.append(execution.read())
            return results, plan
        except (CaseSkipped, CaseFailed):
            raise
        except Exception as exc:
            raise self._classify(exc) from None

    # -- the work ------------------------------------------------------------------------
    def _execution(self, case: Case, x):
        if case.rung.is_library:
            library_plan = Plan((), zero_result=False,
                                chain=library_chain(case.n, case.rung.library_threads))
            return LibraryExecution(self.cupy, case, x), library_plan
        plan = case.rung.plan(case.n, case.block, self.sm_count(), case.params)
        with nvtx_range(f"compile {case.label}", color="grey"):
            execution = PlanExecution(self.cupy, case, plan, x)
        return execution, plan

    def _measure(self, case: Case, x, stop: StopRule, cold: bool) -> Measurement:
        execution, plan = self._execution(case, x)
        with nvtx_range(f"verify {case.label}", color="green"):
            for _ in range(WARMUP_RUNS):
                execution.prepare()
                execution.enqueue()
            execution.prepare()
            execution.poison()
            execution.enqueue()
            self.stream.synchronize()
            result = execution.read()

        times = self._sample_phases(execution, case, stop, cold)
        self.stream.synchronize()
        later = execution.read()
        return Measurement(result=result, times_us=times, grid=plan.grid,
                           launches=len(plan.launches), checks=[later], chain=plan.chain,
                           atomics=plan.atomics)

    def _sample_phases(self, execution, case: Case, stop: StopRule, cold: bool) -> list[float]:
        """The samples of the fastest of the rung's phases; each later phase starts one
        untimed call later, which flips a library's call parity (Rung.phases)."""
        phases = []
        for phase in range(case.rung.phases):
            if phase:
                execution.prepare()
                execution.enqueue()
            phases.append(self.timer.sample_until(execution.enqueue, stop, cold, case.label,
                                                  prepare=execution.prepare))
        return min(phases, key=statistics.median)

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
        import os
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(exit_code)

    # -- info ----------------------------------------------------------------------------
    def copy_bandwidth_gbps(self, nbytes: int = 1 << 30, repeats: int = 10) -> float:
        """Device-to-device copy, counting bytes read plus bytes written."""
        import statistics

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
