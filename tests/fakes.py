"""A pure-Python stand-in for the device layer, shared by the runner and CLI tests."""

from reducebench.results import SCHEMA_VERSION
from reducebench.runner import CaseFailed, CaseSkipped, ContextLost, Measurement
from reducebench.tolerance import library_chain

PEAK = 3352.0
TIMES = [10.0, 11.0, 12.0]


class FakeBackend:
    """The runner's Backend protocol in pure Python: every kernel returns the host
    reference unless told otherwise for a rung."""

    def __init__(self, *, wrong=None, fail=(), skip=(), lose=(), free=2**40, clocks=None,
                 times=TIMES):
        self.wrong = wrong or {}         # rung -> result to return
        self.fail, self.skip, self.lose = set(fail), set(skip), set(lose)
        self.free = free
        self.clocks = list(clocks) if clocks is not None else None
        self.times = list(times)
        self.events: list[tuple] = []
        self.uploads: list = []
        self.released: list = []

    def metadata(self):
        return {"schema_version": SCHEMA_VERSION, "gpu": "Fake GPU", "sm_count": 132,
                "peak_gbps": PEAK}

    def sm_count(self):
        return 132

    def free_memory(self):
        return self.free

    def case_bytes(self, case):
        if case.rung.is_library:
            return 0
        plan = case.rung.plan(case.n, case.block or 256, 132, case.params)
        acc = 8 if case.dtype.acc_name == "float64" else 4
        extra = case.n * acc if plan.scratch_copy else 0
        return sum(plan.acc_buffers.values()) * acc + extra

    def upload(self, host, dtype):
        self.uploads.append((host, dtype))
        self.events.append(("upload", dtype.name, host.data.size))
        return host

    def release(self, handle):
        self.released.append(handle)

    def measure(self, case, handle, stop, cold):
        self.events.append(("measure", case.label))
        name = case.rung.name
        if name in self.skip:
            raise CaseSkipped("PyTorch is not installed")
        if name in self.fail:
            raise CaseFailed("compile error: expected ';'")
        if name in self.lose:
            raise ContextLost("an illegal memory access was encountered")
        if case.rung.is_library:
            chain, atomics, grid, launches = library_chain(case.n), 0, 0, 0
        else:
            plan = case.rung.plan(case.n, case.block, 132, case.params)
            chain, atomics = plan.chain, plan.atomics
            grid, launches = plan.grid, len(plan.launches)
        result = self.wrong.get(name, handle.reference)
        return Measurement(result=result, times_us=list(self.times), grid=grid,
                           launches=launches, chain=chain, atomics=atomics)

    def sm_clock_mhz(self):
        if self.clocks is None:
            return None
        return self.clocks.pop(0) if len(self.clocks) > 1 else self.clocks[0]


class FakeCliBackend(FakeBackend):
    """What `run` and `check` need beyond the runner's protocol: a device name, a stream
    hold switch, a compiler for the user's kernels (NVRTC on the CPU, when installed),
    and a hook called before each measurement (to send a signal mid-sweep)."""

    def __init__(self, *, before_measure=None, **kwargs):
        super().__init__(**kwargs)
        import types

        self.info = types.SimpleNamespace(name="Fake GPU")
        self.timer = types.SimpleNamespace(hold=True)
        self.before_measure = before_measure
        self.measured = 0
        self.compiled: list[tuple[str, str]] = []

    def compile_log(self, rung, dtype):
        from reducebench import nvrtc
        from reducebench.kernels import rung_expressions, rung_source

        self.compiled.append((rung.name, dtype.name))
        if not nvrtc.available():
            return None
        done = nvrtc.compile_source(rung_source(rung), rung_expressions(rung, dtype),
                                    file_name=rung.source)
        return None if done.ok else done.log

    def measure(self, case, handle, stop, cold):
        self.measured += 1
        if self.before_measure:
            self.before_measure(self.measured)
        return super().measure(case, handle, stop, cold)

    def verify_once(self, case, handle, repeats=2):
        plan = case.rung.plan(case.n, case.block, 132, case.params)
        value = self.wrong.get(case.rung.name, handle.reference)
        return [value] * repeats, plan
