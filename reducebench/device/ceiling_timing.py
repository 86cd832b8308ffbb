"""Measuring the read ceiling on the device: every kernel of reducebench.measuring.read_ceiling.KERNELS
over one buffer of at least 1 GiB of nonzero words, each timed exactly like a rung
(backend.timer: the stream held while a sample is enqueued, L2 flushed by reading before
every sample, CUDA events, the median of many samples). The best is the ceiling; it is
measured once per device and buffer size in a process."""

from __future__ import annotations

import statistics
from dataclasses import replace

import numpy as np

from reducebench.measuring.read_ceiling import (CEILING_SOURCE, DEFAULT_BYTES, KERNELS,
                                                ROW_READ_SOURCE, WORD_BYTES, Ceiling,
                                                KernelTime, buffer_bytes, ceiling_from)
from reducebench.device.compile import get_functions
from reducebench.core.errors import DeviceUnavailable
from reducebench.device.nvtx import nvtx_range
from reducebench.core.stats import StopRule

# 30 samples at least (the median the facts file quotes), more while noisy.
CEILING_STOP = StopRule(min_samples=30, max_noise=0.005, max_time=0.5)
WARMUP_LAUNCHES = 2
# Knuth's multiplicative hash of the word index, low bit set: no word is zero and no
# page repeats, so nothing a memory system might compress is measured.
FILL_MULTIPLIER = np.uint32(2654435761)

_measured: dict[tuple, Ceiling] = {}


def measure_ceiling(backend, nbytes: int = DEFAULT_BYTES,
                    stop: StopRule = CEILING_STOP) -> Ceiling:
    """The GPU's achievable streaming-read bandwidth: the best of the ceiling kernels
    over `nbytes` (less where free memory is short; Ceiling.nbytes says what was read)."""
    info = backend.info
    key = (info.index, info.name, nbytes)
    if key in _measured:
        return _measured[key]
    try:
        size = buffer_bytes(nbytes, backend.free_memory())
    except ValueError as exc:
        raise DeviceUnavailable(str(exc)) from None
    cupy = backend.cupy
    words = size // WORD_BYTES
    functions = get_functions(CEILING_SOURCE, [k.expression for k in KERNELS])
    with nvtx_range("ceiling: fill", color="grey"):
        buffer = cupy.arange(words * 4, dtype=cupy.uint32)
        buffer *= FILL_MULTIPLIER
        buffer |= np.uint32(1)
    sink = cupy.zeros(1, dtype=cupy.int32)
    timer = backend.timer
    held = timer.hold
    timer.hold = True  # as a timed rung is, whatever the last case set (--profile)
    try:
        timings = [_time_kernel(timer, functions[k.expression], k, buffer, words, sink,
                                info.sm_count, stop) for k in KERNELS]
    finally:
        timer.hold = held
        del buffer
        cupy.get_default_memory_pool().free_all_blocks()
    ceiling = ceiling_from(timings, size)
    _measured[key] = ceiling
    return ceiling


def _time_kernel(timer, function, kernel, buffer, words: int, sink, sm_count: int,
                 stop: StopRule) -> KernelTime:
    grid = kernel.grid(words, sm_count)
    args = (buffer, np.int64(words), sink)

    def launch() -> None:
        function((grid,), (kernel.block,), args)

    for _ in range(WARMUP_LAUNCHES):
        launch()
    times = timer.sample_until(launch, stop, True, f"ceiling {kernel.name}")
    return KernelTime(kernel.name, statistics.median(times), len(times))


# -- the same-size read reference ----------------------------------------------------------

# Each ceiling kernel is tried with this rule; the fastest is then timed with the case's own.
READ_SELECT_STOP = StopRule(min_samples=5, max_noise=1.0, max_time=0.0, max_samples=5)


def read_reference_us(backend, handle, n: int, itemsize: int, sampling,
                      chosen: dict | None = None, out_words: int = 0) -> float:
    """The median time of the fastest ceiling kernel reading the n * itemsize bytes of the
    case's own input (`handle`, a CuPy array) as 16-byte words, timed as the case is
    (sampling: cold or not, single launches or graph replays, the same stop rule). The
    words are rounded up: a pool allocation is whole 512-byte blocks, so the last partial
    word is inside it. Each kernel is tried with READ_SELECT_STOP; the best is timed again
    with sampling.stop, so the figure has the case's own sample count. `chosen` keeps
    the kernel picked for each (n, itemsize, out_words, timing) across calls: each later
    round of a run times the same kernel again, without trying them all.

    out_words > 0: the same-shape read of a row case, each kernel's twin in
    cuda_src/row_read.cu, which also writes out_words 32-bit words (one accumulator a
    row, read_ceiling.row_write_words) into a buffer of its own."""
    nbytes = n * itemsize
    words = min(-(-nbytes // WORD_BYTES), handle.data.mem.size // WORD_BYTES)
    cupy = backend.cupy
    if out_words:
        source, expression = ROW_READ_SOURCE, (lambda k: k.row_expression)
        out = cupy.empty(out_words, dtype=cupy.int32)
        extra = (out, np.int64(out_words))
        label = f"read reference n={n} itemsize={itemsize} writes={out_words * 4}B"
    else:
        source, expression = CEILING_SOURCE, (lambda k: k.expression)
        extra = ()
        label = f"read reference n={n} itemsize={itemsize}"
    functions = get_functions(source, [expression(k) for k in KERNELS])
    sink = cupy.zeros(1, dtype=cupy.int32)

    def launcher(kernel):
        function = functions[expression(kernel)]
        grid = kernel.grid(words, backend.info.sm_count)
        args = (handle, np.int64(words), sink, *extra)
        return lambda: function((grid,), (kernel.block,), args, stream=backend.stream)

    key = (n, itemsize, out_words, sampling.cold, sampling.graph)
    best = (chosen or {}).get(key)
    if best is None:
        quick = replace(sampling, stop=READ_SELECT_STOP)
        tried = {k.name: statistics.median(backend.time_enqueue(launcher(k), quick, label))
                 for k in KERNELS}
        best = next(k for k in KERNELS if k.name == min(tried, key=tried.get))
        if chosen is not None:
            chosen[key] = best
    return statistics.median(backend.time_enqueue(launcher(best), sampling, label))
