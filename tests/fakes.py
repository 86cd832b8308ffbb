"""Stand-ins for the device layer, shared by the runner and CLI tests.

FakeBackend is the honest host executor (reducebench.measuring.hostexec: numpy runs each plan pass
by pass, with the device's buffers) plus faults injected by rung name, and hooks called
inside each stage so a test can send a signal there."""

from reducebench.measuring.hostexec import HostBackend
from reducebench.core.errors import CaseFailed, CaseSkipped, ContextLost
from reducebench.measuring.backend_protocol import Measurement

PEAK = 3352.0
TIMES = [10.0, 11.0, 12.0]
STAGES = ("upload", "execute", "sample")


class FakeBackend(HostBackend):
    def __init__(self, *, wrong=None, fail=(), skip=(), lose=(), free=2**40, clocks=None,
                 times=TIMES, hooks=None, compute_capability=""):
        super().__init__(free=free, times=tuple(times), peak_gbps=PEAK,
                         compute_capability=compute_capability)
        self.wrong = wrong or {}         # rung -> value its runs return instead
        self.fail, self.skip, self.lose = set(fail), set(skip), set(lose)
        self.clocks = list(clocks) if clocks is not None else None
        self.hooks = hooks or {}         # stage -> callable(count): e.g. raise a signal
        self.counts = {stage: 0 for stage in STAGES}
        self.events: list[tuple] = []
        self.uploads: list = []
        self.handles: list = []         # what each upload returned, in order
        self.released: list = []
        self.plans: dict[str, object] = {}  # case label -> the plan it was given

    def _stage(self, stage: str) -> None:
        self.counts[stage] += 1
        if stage in self.hooks:
            self.hooks[stage](self.counts[stage])

    def device_info(self):
        return {**super().device_info(), "gpu": "Fake GPU"}

    def upload(self, host):
        self._stage("upload")
        self.uploads.append(host)
        self.events.append(("upload", host.data.dtype.name, host.data.size))
        self.handles.append(super().upload(host))
        return self.handles[-1]

    def release(self, handle):
        self.released.append(handle)
        super().release(handle)

    def bind(self, case, plan, handle):  # inside execute's error handling, as on a GPU
        self._stage("execute")
        return super().bind(case, plan, handle)

    def execute(self, case, plan, handle, sampling):
        self.events.append(("measure", case.label))
        self.plans[case.label] = plan
        name = case.rung.name
        if name in self.skip:
            raise CaseSkipped("PyTorch is not installed")
        if name in self.fail:
            raise CaseFailed("compile error: expected ';'")
        if name in self.lose:
            raise ContextLost("an illegal memory access was encountered")
        measured = super().execute(case, plan, handle, sampling)
        if name in self.wrong:
            measured = Measurement([self.wrong[name]] * len(measured.values),
                                   measured.times_us)
        return measured

    def sampler(self):
        inner = super().sampler()

        def sample(execution, sampling):
            self._stage("sample")
            return inner(execution, sampling)
        return sample

    def sm_clock_mhz(self):
        if self.clocks is None:
            return None
        return self.clocks.pop(0) if len(self.clocks) > 1 else self.clocks[0]


class FakeCliBackend(FakeBackend):
    """What `run` and `check` need beyond the runner's protocol: a device name, and a
    compiler for the user's kernels (NVRTC on the CPU, when installed)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        import types

        self.info = types.SimpleNamespace(name="Fake GPU")
        self.compiled: list[tuple[str, str]] = []

    def compile_log(self, rung, dtype):
        from reducebench.ladder import nvrtc
        from reducebench.ladder.sources import rung_expressions, rung_source

        self._stage_compile()
        self.compiled.append((rung.name, dtype.name))
        if not nvrtc.available():
            return None
        done = nvrtc.compile_source(rung_source(rung), rung_expressions(rung, dtype),
                                    file_name=rung.source)
        return None if done.ok else done.log

    def _stage_compile(self):
        if "compile" in self.hooks:
            self.hooks["compile"](len(self.compiled) + 1)


class CountingPool:
    """ThreadPoolExecutor, recording the threads each pool was made with (patched in where
    inputs are made, to see whether a pool is made and of how many threads)."""

    made: list = []

    def __init__(self, workers):
        from concurrent.futures import ThreadPoolExecutor

        CountingPool.made.append(workers)
        self._pool = ThreadPoolExecutor(workers)

    def __enter__(self):
        return self._pool.__enter__()

    def __exit__(self, *exc):
        return self._pool.__exit__(*exc)
