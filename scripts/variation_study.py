"""What moves a case's time between processes: one process of the study.

Each process times a few cases in ROUNDS rounds under five conditions:
  fixed_bind   the same input and flush buffers, and the case bound once: the same
               partials and workspace in every round
  fixed        the same input and flush buffers in every round, the case bound anew
               (new partials and workspace) each round
  fresh_input  a new input allocation each round (a spacer of random size first, so it
               lands elsewhere), the flush buffer kept
  fresh_flush  a new flush buffer each round, the input kept
  fresh_both   both new
and records, per round, the median, the buffers' addresses, and NVML's SM and memory
clocks, temperature and throttle reasons. Run several processes (the driver loop in
scripts/variation_study.sh) and compare the spread between rounds of one process with
the spread between processes.

    python scripts/variation_study.py OUT.jsonl PROCESS_INDEX [--conditions A,B,...]
    python scripts/variation_study.py --summary OUT.jsonl [OUT.jsonl ...]

--summary prints, per case and condition, the spread of round medians inside one process
(the mean over processes of largest / smallest - 1) beside the spread of the processes'
medians, and the clocks, temperatures and throttle reasons seen (pandas only).
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time


ROUNDS = 4
CASES = [("gmem", 2**20), ("smem_unroll4", 2**20), ("cub", 2**20), ("triton_two_pass", 2**20),
         ("read", 2**20), ("smem_unroll4", 2**24), ("cub", 2**24), ("read", 2**24)]
CONDITIONS = ("fixed_bind", "fixed", "fresh_input", "fresh_flush", "fresh_both")
STOP = dict(min_samples=10, max_noise=0.005, max_time=0.15)


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


def summary(paths: list[str]) -> None:
    import pandas as pd

    rows = [json.loads(line) for path in paths for line in open(path)]
    frame = pd.DataFrame(rows)
    frame["case"] = frame["rung"] + " " + frame["n"].map(lambda n: f"2^{n.bit_length() - 1}")

    def spread(values) -> float:
        return round(100 * (values.max() / values.min() - 1), 2)

    table = []
    for (case, condition), group in frame.groupby(["case", "condition"], sort=False):
        per_process = group.groupby("process")["median_us"]
        table.append({"case": case, "condition": condition,
                      "median us": round(group["median_us"].median(), 3),
                      "rounds of one process %": round(per_process.apply(spread).mean(), 2),
                      "between processes %": spread(per_process.median())})
    columns = list(table[0])
    print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for row in table:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    states = pd.json_normalize(frame["before"])
    print(f"\nSM clock {states['sm'].min():g}-{states['sm'].max():g} MHz, memory clock "
          f"{states['mem'].min():g}-{states['mem'].max():g} MHz, temperature "
          f"{states['temp'].min()}-{states['temp'].max()} C, throttle reasons "
          f"{sorted(set(states['throttle'].dropna().astype(int)))}; processes "
          f"{frame['process'].nunique()}, rounds {frame['round'].nunique()} each")


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    if sys.argv[1] == "--summary":
        summary(sys.argv[2:])
        return
    from reducebench.core.dtypes import parse_dtypes
    from reducebench.core.stats import StopRule
    from reducebench.device.cupy_backend import CupyBackend
    from reducebench.ladder.case import Case
    from reducebench.ladder.registry import parse_rungs
    from reducebench.measuring.backend_protocol import Sampling
    from reducebench.measuring.execution import run_case
    from reducebench.measuring.runner import plan_case
    from reducebench.verify.inputs import case_inputs, derive_seed

    out, process = sys.argv[1], int(sys.argv[2])
    conditions = CONDITIONS
    if "--conditions" in sys.argv:
        conditions = tuple(sys.argv[sys.argv.index("--conditions") + 1].split(","))
    rng = random.Random(1000 + process)
    backend = CupyBackend(0)
    cupy = backend.cupy
    dtype = parse_dtypes("float32")[0]
    sampling = Sampling(StopRule(**STOP))
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
        backend.timer.lane.flush_buffer = cupy.arange(flush_bytes // 4, dtype=cupy.int32)

    inputs = {n: new_input(n) for n in sizes}
    with open(out, "a") as log:
        bound = {}  # fixed_bind: (rung, n) -> the execution bound once
        for condition in conditions:
            for round_index in range(ROUNDS):
                if condition in ("fresh_input", "fresh_both"):
                    keep.extend(inputs.values())
                    inputs = {n: new_input(n) for n in sizes}
                if condition in ("fresh_flush", "fresh_both"):
                    keep.append(backend.timer.lane.flush_buffer)
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
                        if condition == "fixed_bind":
                            key = (rung_name, n)
                            if key not in bound:
                                bound[key] = backend._bind(case, plan, x)
                            backend.stream.use()
                            m = run_case(bound[key], sampling, backend._sampler(case, plan))
                        else:
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
