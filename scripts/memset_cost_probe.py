"""What does zeroing the accumulator cost vector_load? The same plan timed with and
without its cudaMemsetAsync (the second gives wrong sums: timing only), next to
single_pass, which needs no zeroing, at 2^20 and 2^24, 200 samples, cold L2, twice."""

import dataclasses
import statistics

import cupy

from reducebench.device import open_backend
from reducebench.device.backend import PlanExecution
from reducebench.dtypes import DTYPES
from reducebench.inputs import make_input
from reducebench.registry import LADDER
from reducebench.runner import Case
from reducebench.stats import StopRule

backend = open_backend(0)
dtype = DTYPES["float32"]
stop = StopRule(min_samples=200, max_noise=0.0, max_time=0.0, max_samples=200)
for n in (2**20, 2**24):
    x = backend.upload(make_input(n, dtype, seed=3), dtype)
    for repeat in range(2):
        cells = []
        for name, zero in (("vector_load", True), ("vector_load", False), ("single_pass", False)):
            rung = LADDER[name]
            case = Case(rung, dtype, n, 256, dict(rung.params))
            plan = rung.plan(n, 256, backend.sm_count(), case.params)
            plan = dataclasses.replace(plan, zero_result=plan.zero_result and zero)
            execution = PlanExecution(cupy, case, plan, x)
            for _ in range(3):
                execution.enqueue()
            times = backend.timer.sample_until(execution.enqueue, stop, True, "probe")
            label = name + ("" if zero or name != "vector_load" else " (no memset)")
            cells.append(f"{label} {statistics.median(times):6.2f}")
        print(f"n=2^{n.bit_length() - 1} run {repeat}: " + " | ".join(cells), flush=True)
    del x
