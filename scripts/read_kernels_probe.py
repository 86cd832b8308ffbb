"""On the GPU: every read kernel of the same-size read (reducebench/measuring/ceiling.py
KERNELS) at each size, timed as a case is (cold L2, held stream, events, the median), in
rounds that alternate the kernels' order. It shows which kernel is the yardstick at each
size, and how much faster it is than the best kernel of an older set (--old NAMES).

    python3 scripts/read_kernels_probe.py OUT.csv [--sizes 2^10..2^32] [--rounds 2]
        [--old "one-shot 1024x4;one-shot 512x8;..."]

OUT.csv has a row per (round, bytes, kernel): its median and sample count. The table
printed last has, per size, the fastest kernel (median over rounds) and its lead over the
best of the old set, in us and in percent.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys

import numpy as np

from reducebench.core.sizes import parse_sizes
from reducebench.core.stats import StopRule
from reducebench.measuring.backend import Sampling
from reducebench.measuring.ceiling import CEILING_SOURCE, KERNELS, WORD_BYTES

STOP = StopRule(min_samples=15, max_noise=0.005, max_time=0.05)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--sizes", default="2^10..2^32", help="float32 elements")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--old", default="", help="kernel names separated by ;")
    args = parser.parse_args(argv)
    sizes = parse_sizes(args.sizes)
    old = [name.strip() for name in args.old.split(";") if name.strip()]
    unknown = sorted(set(old) - {k.name for k in KERNELS})
    if unknown:  # a typo would otherwise compare against every kernel: a lead of 0
        print(f"read_kernels_probe.py: no read kernel named {', '.join(unknown)}",
              file=sys.stderr)
        return 2

    from reducebench.device import open_backend
    from reducebench.device.compile import get_functions

    backend = open_backend(0)
    cupy = backend.cupy
    largest_words = -(-max(sizes) * 4 // WORD_BYTES)
    buffer = cupy.arange(largest_words * 4, dtype=cupy.uint32)
    buffer |= np.uint32(1)  # in place: one 16 GiB buffer at 2^32, not two
    sink = cupy.zeros(1, dtype=cupy.int32)
    functions = get_functions(CEILING_SOURCE, [k.expression for k in KERNELS])
    medians: dict[tuple[int, str], list[float]] = {}
    try:
        measure(args, sizes, backend, functions, buffer, sink, medians)
    except KeyboardInterrupt:  # a deadline's SIGINT: the table of what was measured
        print("interrupted: the table holds the sizes measured in every kernel",
              file=sys.stderr)
        print_table(sizes, old, medians)
        return 130  # as reducebench itself exits after Ctrl-C
    print_table(sizes, old, medians)
    return 0


def measure(args, sizes, backend, functions, buffer, sink, medians) -> None:
    sampling = Sampling(STOP)
    with open(args.out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["round", "bytes", "kernel", "median_us", "samples"])
        for round_ in range(args.rounds):
            order = KERNELS if round_ % 2 == 0 else tuple(reversed(KERNELS))
            for n in sizes:
                words = -(-n * 4 // WORD_BYTES)
                for kernel in order:
                    function = functions[kernel.expression]
                    grid = kernel.grid(words, backend.info.sm_count)
                    call_args = (buffer, np.int64(words), sink)

                    def launch(function=function, grid=grid, kernel=kernel,
                               call_args=call_args) -> None:
                        function((grid,), (kernel.block,), call_args, stream=backend.stream)

                    times = backend.time_enqueue(launch, sampling, f"probe {kernel.name}")
                    median = statistics.median(times)
                    medians.setdefault((n * 4, kernel.name), []).append(median)
                    writer.writerow([round_, n * 4, kernel.name, f"{median:.4f}", len(times)])
                handle.flush()


def print_table(sizes, old, medians) -> None:
    print(f"{'bytes':>12} {'fastest':>40} {'us':>10} {'best old':>28} {'us':>10} "
          f"{'lead us':>8} {'lead %':>7}")
    for n in sizes:
        if any((n * 4, k.name) not in medians for k in KERNELS):
            continue
        by_kernel = {k.name: statistics.median(medians[(n * 4, k.name)]) for k in KERNELS}
        fastest = min(by_kernel, key=by_kernel.get)
        olds = {name: by_kernel[name] for name in old if name in by_kernel} or by_kernel
        best_old = min(olds, key=olds.get)
        lead = olds[best_old] - by_kernel[fastest]
        print(f"{n * 4:>12} {fastest:>40} {by_kernel[fastest]:>10.3f} {best_old:>28} "
              f"{olds[best_old]:>10.3f} {lead:>8.3f} {100 * lead / olds[best_old]:>7.2f}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
