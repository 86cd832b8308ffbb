"""What moves a case's time between processes: one process of the study.

Each process times a few cases in ROUNDS rounds under four conditions:
  fixed        the same input and flush buffers in every round (what one run did)
  fresh_input  a new input allocation each round (a spacer of random size first, so it
               lands elsewhere), the flush buffer kept
  fresh_flush  a new flush buffer each round, the input kept
  fresh_both   both new
and records, per round, the median, the buffers' addresses, and NVML's SM and memory
clocks, temperature and throttle reasons. Run several processes (the driver loop in
scripts/variation_study.sh) and compare the spread between rounds of one process with
the spread between processes.

    python scripts/variation_study.py OUT.jsonl PROCESS_INDEX
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time

from reducebench.core.dtypes import parse_dtypes
from reducebench.core.stats import StopRule
from reducebench.device.backend import CupyBackend
from reducebench.ladder.case import Case
from reducebench.ladder.registry import parse_rungs
from reducebench.measuring.backend import Sampling
from reducebench.measuring.runner import plan_case
from reducebench.verify.inputs import case_inputs, derive_seed

ROUNDS = 4
CASES = [("gmem", 2**20), ("smem_unroll4", 2**20), ("cub", 2**20), ("triton_two_pass", 2**20),
         ("read", 2**20), ("smem_unroll4", 2**24), ("cub", 2**24), ("read", 2**24)]
CONDITIONS = ("fixed", "fresh_input", "fresh_flush", "fresh_both")
STOP = StopRule(min_samples=10, max_noise=0.005, max_time=0.25)


def nvml_state(backend) -> dict:
    nvml = backend.nvml
    state = {"sm": nvml.sm_mhz(), "mem": nvml.mem_mhz()}
    try:
        p = nvml._pynvml
        state["temp"] = p.nvmlDeviceGetTemperature(nvml.handle, p.NVML_TEMPERATURE_GPU)
        state["throttle"] = int(p.nvmlDeviceGetCurrentClocksThrottleReasons(nvml.handle))
        state["power_w"] = p.nvmlDeviceGetPowerUsage(nvml.handle) / 1e3
    except Exception as exc:  # noqa: BLE001 - a study: record what failed
        state["nvml_error"] = str(exc)
    return state


def main() -> None:
    out, process = sys.argv[1], int(sys.argv[2])
    rng = random.Random(1000 + process)
    backend = CupyBackend(0)
    cupy = backend.cupy
    dtype = parse_dtypes("float32")[0]
    sampling = Sampling(STOP)
    backend.warm_up()
    sizes = sorted({n for _, n in CASES})
    hosts = {n: case_inputs(n, dtype, derive_seed(7, n, dtype), "exact")[0] for n in sizes}
    flush_bytes = backend.timer.flush_buffer.nbytes
    keep = []  # spacers and old buffers, so a new allocation cannot reuse their place

    def new_input(n):
        keep.append(cupy.empty(rng.randrange(1, 64) << 20, dtype=cupy.uint8))
        return backend.upload(hosts[n])

    def new_flush():
        keep.append(cupy.empty(rng.randrange(1, 64) << 20, dtype=cupy.uint8))
        backend.timer.flush_buffer = cupy.arange(flush_bytes // 4, dtype=cupy.int32)

    inputs = {n: new_input(n) for n in sizes}
    with open(out, "a") as log:
        for condition in CONDITIONS:
            for round_index in range(ROUNDS):
                if condition in ("fresh_input", "fresh_both"):
                    keep.extend(inputs.values())
                    inputs = {n: new_input(n) for n in sizes}
                if condition in ("fresh_flush", "fresh_both"):
                    keep.append(backend.timer.flush_buffer)
                    new_flush()
                if len(keep) > 40:  # bounded memory: drop the oldest
                    del keep[:20]
                for rung_name, n in CASES:
                    before = nvml_state(backend)
                    began = time.perf_counter()
                    x = inputs[n]
                    if rung_name == "read":
                        median = backend.read_reference_us(x, n, 4, sampling)
                        clocks = []
                    else:
                        rung = parse_rungs(rung_name)[0]
                        block = 0 if rung.is_library else 256
                        case = Case(rung, dtype, n, block, dict(rung.params))
                        plan = plan_case(case, backend.sm_count())
                        m = backend.execute(case, plan, x, sampling)
                        median = statistics.median(m.times_us)
                        clocks = [c for c in m.timing.samples.sm_clock_mhz if c]
                    after = nvml_state(backend)
                    log.write(json.dumps({
                        "process": process, "condition": condition, "round": round_index,
                        "rung": rung_name, "n": n, "median_us": median,
                        "in_ptr": int(x.data.ptr),
                        "flush_ptr": int(backend.timer.flush_buffer.data.ptr),
                        "sm_min": min(clocks) if clocks else None,
                        "sm_max": max(clocks) if clocks else None,
                        "before": before, "after": after,
                        "seconds": time.perf_counter() - began}) + "\n")
                    log.flush()


if __name__ == "__main__":
    main()
