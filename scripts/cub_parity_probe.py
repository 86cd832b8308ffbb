"""CUB's level flips from one measurement to the next whatever its addresses. Hypothesis:
some state alternates with every CUB call. Each measurement here is 100 samples after
k untimed calls; if the level follows the parity of k, the state is per call."""

import statistics

import cupy

from reducebench.device import open_backend
from reducebench.device.backend import LibraryExecution
from reducebench.dtypes import DTYPES
from reducebench.inputs import make_input
from reducebench.registry import LADDER
from reducebench.runner import Case
from reducebench.stats import StopRule

n = 2**24
dtype = DTYPES["float32"]
backend = open_backend(0)
x = backend.upload(make_input(n, dtype, seed=1), dtype)
stop = StopRule(min_samples=100, max_noise=0.0, max_time=0.0, max_samples=100)
execution = LibraryExecution(cupy, Case(LADDER["cub"], dtype, n, 0), x)
timer = backend.timer


def measure(calls_before, calls_between=0):
    for _ in range(calls_before):
        execution.enqueue()

    def prepare():
        for _ in range(calls_between):
            execution.enqueue()

    times = timer.sample_until(execution.enqueue, stop, True, "probe", prepare=prepare)
    half = len(times) // 2
    return (statistics.median(times), min(times),
            statistics.median(times[0::2]), statistics.median(times[1::2]))


for k in (2, 2, 2, 3, 3, 3, 2, 0, 0, 1, 1):
    print(f"{k} calls before: median {measure(k)[0]:6.2f}", flush=True)
for k in (0, 1, 2, 3):
    med, low, even, odd = measure(k, calls_between=1)
    print(f"{k} before, 1 untimed call between samples: median {med:6.2f} "
          f"(even samples {even:6.2f}, odd {odd:6.2f})", flush=True)
# Warm L2, no flush: does the flip need the flush?
for k in (0, 1, 0, 1):
    for _ in range(k):
        execution.enqueue()
    times = timer.sample_until(execution.enqueue, stop, False, "probe warm")
    print(f"warm, {k} before: median {statistics.median(times):6.2f}", flush=True)
