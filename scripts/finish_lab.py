"""What one_shot's finish costs, step by step, and whether a shorter one exists
(scripts/finish_lab.cu says what each kernel does). Every kernel is timed exactly as a
case is (backend.time_enqueue: stream held, L2 flushed by reading before every sample,
CUDA events, the median), beside the run's same-size read reference (read_us) and the
shipped one_shot kernel, at each size and tile, in ROUNDS rounds (a difference is
believed only if both rounds show it). Writes one CSV row per kernel and round, then
prints, per size and tile, each kernel's median above the lab's own read.

    PYTHONPATH=$PWD python3 scripts/finish_lab.py OUT.csv [--quick] [--pieces | --v2 | --dynamic | --small]

--pieces runs the second set: one_shot put back together piece by piece (lab::pieces);
--v2 the third: a candidate one_shot (lab::one_shot_v2) beside the shipped one.
--dynamic the fourth: a persistent grid that takes tiles in order from a counter
(lab::dynamic_tiles, one block sum per block instead of per tile) beside one_shot, at
2^22..2^26 with the tiles tune chooses there.
--small the fifth: the steps at 2^17..2^19 with tiles of one warp, 128 and 256 threads
(the tables' choices there), where the target is 0.3 us above the same-size read.
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

import numpy as np

from reducebench.core.stats import StopRule
from reducebench.device.backend import CupyBackend
from reducebench.ladder.nvrtc import cuda_include_dirs
from reducebench.ladder.sources import COMPILE_OPTIONS, expanded_source
from reducebench.measuring.backend import Sampling

SIZES = (2**20, 2**22, 2**24, 2**26)
TILES = ((256, 2), (256, 4), (512, 4), (1024, 2))
FINISHES = {  # name -> lab::Finish value; one_shot is the shipped kernel
    "read": 0, "warp": 1, "block": 2, "block_store": 3, "block_atomic": 4,
    "warp_atomic": 5, "short_block": 6, "smem_atomic": 7, "redux": 8,
}
# lab::pieces: name -> (PIECES bits, FAST_SUM); guard 1, split 2, fast split 4, head and
# tail 8, next 16 (finish_lab.cu).
PIECES = {
    "bare": (0, 0), "guard": (1, 0), "split": (3, 0), "split_tail": (11, 0),
    "all_pieces": (27, 0), "next_only": (16, 0), "fast_split": (29, 0), "fast_all": (29, 1),
}
SETS = {
    "steps": {
        "float32": ("read", "warp", "block", "block_store", "block_atomic", "warp_atomic",
                    "short_block", "smem_atomic", "one_shot"),
        "int32": ("read", "block_atomic", "redux", "one_shot"),
    },
    "pieces": {
        "float32": ("read", "one_shot") + tuple(PIECES),
        "int32": ("read", "one_shot", "bare", "all_pieces", "fast_split", "fast_all"),
    },
    "v2": {
        "float32": ("read", "one_shot", "bare", "v2", "v2_fast"),
        "int32": ("read", "one_shot", "bare", "v2", "v2_fast"),
    },
    "dynamic": {
        "float32": ("read", "one_shot", "dynamic"),
        "int32": ("read", "one_shot", "dynamic"),
    },
}
SETS["small"] = {  # below 2^20, with the tiles the tables choose there (thirteenth session)
    "float32": ("read", "warp", "block", "block_atomic", "warp_atomic", "one_shot"),
    "int32": ("read", "block_atomic", "redux", "one_shot"),
}
SET_SIZES = {"dynamic": (2**22, 2**23, 2**24, 2**25, 2**26), "small": (2**17, 2**18, 2**19)}
SET_TILES = {"dynamic": ((256, 4), (512, 2), (512, 4), (1024, 2)),
             "small": ((32, 4), (128, 4), (256, 4))}
CXX = {"float32": ("float", "float"), "int32": ("int", "int")}
ROUNDS = 2
STOP = StopRule(min_samples=30, max_noise=0.005, max_time=0.2)


def expression(dtype: str, finish: str, block: int, loads: int) -> str:
    t, acc = CXX[dtype]
    if finish == "one_shot":
        return f"reduce_one_shot<{t}, {acc}, {block}, {loads}, 0>"
    if finish in ("v2", "v2_fast"):
        return f"lab::one_shot_v2<{t}, {acc}, {block}, {loads}, {int(finish == 'v2_fast')}>"
    if finish == "dynamic":
        return f"lab::dynamic_tiles<{t}, {acc}, {block}, {loads}>"
    if finish in PIECES:
        bits, fast = PIECES[finish]
        return f"lab::pieces<{t}, {acc}, {block}, {loads}, {bits}, {fast}>"
    return f"lab::finish_lab<{t}, {acc}, {block}, {loads}, {FINISHES[finish]}>"


def compile_all(cupy, per_dtype: dict, tiles: tuple) -> dict:
    here = Path(__file__).resolve().parent
    text = expanded_source("19_one_shot.cu") + "\n" + (here / "finish_lab.cu").read_text()
    names = sorted({expression(d, f, b, k) for d, fs in per_dtype.items() for f in fs
                    for b, k in tiles})
    options = COMPILE_OPTIONS + tuple(f"-I{d}" for d in cuda_include_dirs())
    module = cupy.RawModule(code=text, options=options, name_expressions=names)
    module.compile()
    return {name: module.get_function(name) for name in names}


def resident_blocks(fn, block: int) -> int:
    """Blocks of `fn` one SM holds at once (threads, registers in 256-register warp
    allocations, the 32-block limit): the persistent grid is this times the SM count."""
    regs_per_warp = -(-fn.num_regs * 32 // 256) * 256
    warps_by_regs = 65536 // regs_per_warp
    return max(1, min(2048 // block, warps_by_regs // (block // 32), 32))


def positive_input(cupy, n: int, dtype: str):
    rng = cupy.random.default_rng(20261123)
    if dtype == "float32":
        return rng.random(n, dtype=cupy.float32) + cupy.float32(0.5)
    return rng.integers(1, 100, n, dtype=cupy.int32)


def main(argv: list[str]) -> None:
    out_path = argv[0]
    quick = "--quick" in argv
    chosen = [a[2:] for a in argv[1:] if a[2:] in SETS]
    set_name = chosen[0] if chosen else "steps"
    per_dtype = SETS[set_name]
    sizes = SET_SIZES.get(set_name, SIZES)
    tiles = SET_TILES.get(set_name, TILES)
    backend = CupyBackend()
    cupy = backend.cupy
    sm_count = cupy.cuda.Device().attributes["MultiProcessorCount"]
    functions = compile_all(cupy, per_dtype, tiles)
    for name, fn in sorted(functions.items()):
        print(f"registers {fn.num_regs:3d} local {fn.local_size_bytes:3d}  {name}")
    sampling = Sampling(STOP, cold=True, hold=True)
    gpu = backend.info.name
    rows = []
    for dtype, finishes in per_dtype.items():
        for n in sizes[:1] if quick else sizes:
            x = positive_input(cupy, n, dtype)
            vectors = n // 4
            out = cupy.zeros(vectors, dtype=x.dtype)  # a slot per block for block_store
            nxt = cupy.zeros(1, dtype=x.dtype)
            sink = cupy.zeros(1, dtype=cupy.int32)
            counters = cupy.zeros(2, dtype=cupy.uint32)  # dynamic's pingpong pair
            read_us = backend.read_reference_us(x, n, 4, sampling)
            for round_ in range(ROUNDS):
                for block, loads in tiles:
                    grid = vectors // (block * loads)
                    order = finishes if round_ % 2 == 0 else tuple(reversed(finishes))
                    for finish in order:
                        fn = functions[expression(dtype, finish, block, loads)]
                        last = sink if FINISHES.get(finish) is not None else nxt
                        args = (x, out, np.int64(n), last)
                        if finish == "dynamic":
                            launch = dynamic_launcher(fn, sm_count, block, grid, x, out, n,
                                                      counters, backend.stream)
                            if round_ == 0:
                                check_sum(cupy, launch, x, out, f"{dtype} {n} {block}x{loads}")
                        else:
                            def launch(fn=fn, grid=grid, block=block, args=args) -> None:
                                fn((grid,), (block,), args, stream=backend.stream)

                        times = backend.time_enqueue(launch, sampling, f"lab {finish}")
                        rows.append({"gpu": gpu, "dtype": dtype, "n": n, "block": block,
                                     "loads": loads, "finish": finish, "round": round_,
                                     "median_us": round(statistics.median(times), 4),
                                     "samples": len(times), "read_us": round(read_us, 4)})
                        print(f"{dtype} n={n} {block}x{loads} {finish:12s} round {round_}: "
                              f"{rows[-1]['median_us']:.3f} us", flush=True)
            del x, out
            backend.release(None)
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    with open(out_path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    summarize(rows)


def dynamic_launcher(fn, sm_count: int, block: int, tiles: int, x, out, n: int, counters,
                     stream):
    """lab::dynamic_tiles over one wave, its counters swapped at every launch (the kernel
    zeroes the other one for the next launch, as one_shot does its accumulators)."""
    grid = min(tiles, sm_count * resident_blocks(fn, block))
    pair = [counters[0:1], counters[1:2]]
    counters.fill(0)

    def launch() -> None:
        fn((grid,), (block,), (x, out, np.int64(n), pair[0], pair[1]), stream=stream)
        pair.reverse()

    return launch


def check_sum(cupy, launch, x, out, label: str) -> None:
    """One launch into a zeroed accumulator against cupy's own sum: a timing of a kernel
    that skips or repeats tiles would mean nothing."""
    out[0] = 0
    launch()
    cupy.cuda.Device().synchronize()
    if x.dtype.kind == "f":
        got, want = float(out[0]), float(x.astype(cupy.float64).sum())
        ok = abs(got - want) <= 1e-5 * abs(want)
    else:  # int32 accumulators wrap: compare modulo 2^32
        got, want = int(out[0]) % 2**32, int(x.astype(cupy.int64).sum()) % 2**32
        ok = got == want
    print(f"dynamic sum {label}: {got:.6g} vs {want:.6g} {'ok' if ok else 'WRONG'}", flush=True)
    if not ok:
        raise SystemExit(f"finish_lab: dynamic_tiles sums {label} wrongly")


def summarize(rows: list[dict]) -> None:
    """Per size and tile: each kernel's median (over rounds) minus the lab's read, in us."""
    keys = sorted({(r["dtype"], r["n"], r["block"], r["loads"]) for r in rows})
    for dtype, n, block, loads in keys:
        group = [r for r in rows if (r["dtype"], r["n"], r["block"], r["loads"]) ==
                 (dtype, n, block, loads)]
        by = {}
        for r in group:
            by.setdefault(r["finish"], []).append(r["median_us"])
        base = statistics.median(by["read"])
        cells = " ".join(f"{f}={statistics.median(v) - base:+.3f}[{max(v) - min(v):.3f}]"
                         for f, v in by.items() if f != "read")
        print(f"{dtype} 2^{n.bit_length() - 1} {block}x{loads} read_us={group[0]['read_us']:.3f} "
              f"lab_read={base:.3f} | {cells}")


if __name__ == "__main__":
    main(sys.argv[1:])
