"""On the GPU: the read ceiling is a plausible bandwidth that really reads its buffer;
the one-block rung returns the exact sum for every dtype, block size and loads value at
awkward sizes; `auto` verifies and says which variant it ran."""

import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.geometry import BLOCK_SIZES
from reducebench.ladder.case import Case
from reducebench.ladder.registry import LADDER

from gpu_support import check_cases, failures

pytestmark = pytest.mark.gpu

MIB = 1 << 20


@pytest.fixture(scope="module")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


def test_the_ceiling_is_below_the_theoretical_peak_and_not_far_from_it(backend):
    from reducebench.device.ceiling_timing import measure_ceiling

    peak = backend.info.peak_gbps
    ceiling = measure_ceiling(backend)
    assert ceiling.nbytes >= 1 << 30 or backend.info.total_memory < 4 << 30
    assert 0.5 * peak < ceiling.gbps <= peak, ceiling.describe()
    for timing in ceiling.timings:  # a kernel faster than the peak skipped its loads
        assert ceiling.nbytes / (timing.median_us * 1e3) <= peak, timing
    assert measure_ceiling(backend) is ceiling  # measured once per process


def test_every_ceiling_kernel_takes_four_times_as_long_for_four_times_the_bytes(backend):
    from reducebench.device.ceiling_timing import measure_ceiling

    small = measure_ceiling(backend, nbytes=256 * MIB)
    large = measure_ceiling(backend, nbytes=1024 * MIB)
    assert (small.nbytes, large.nbytes) == (256 * MIB, 1024 * MIB)
    for before, after in zip(small.timings, large.timings):
        ratio = after.median_us / before.median_us
        assert 3.2 < ratio < 4.8, f"{after.kernel}: {before.median_us} -> {after.median_us} us"


def test_every_read_kernel_reads_every_word_of_its_buffer(backend):
    # One word marked with the keep-alive sentinel in a buffer of zeros: the thread that
    # reads it (and only it) stores the sentinel. The buffer spans two grid-stride passes
    # of the largest persistent grid and ends in a partial tile of every one-shot shape.
    # Every tile is a power of two of at most 8192 words, so word 8191 of a pass is the
    # last load of a tile's last thread in every kernel, and the partial tile's last word
    # (2046 of 2047) is a later load than the first for every shape.
    import numpy as np

    from reducebench.device.compile import get_functions
    from reducebench.measuring.read_ceiling import (CEILING_SOURCE, KEEP_ALIVE_SENTINEL,
                                               KERNELS)

    cupy, sm_count = backend.cupy, backend.info.sm_count
    one_pass = max(k.block * k.loads * (k.blocks_per_sm or 1) for k in KERNELS) * sm_count
    words = 2 * one_pass + 8192 + 2047
    tiles = {k.name: (k.block, k.block * k.loads) for k in KERNELS}
    assert all(8192 % tile == 0 for _, tile in tiles.values()), tiles
    assert all(block <= (words - 1) % tile for block, tile in tiles.values()), tiles
    buffer = cupy.zeros(4 * words, dtype=cupy.int32)
    sink = cupy.zeros(1, dtype=cupy.int32)
    functions = get_functions(CEILING_SOURCE, [k.expression for k in KERNELS])
    missed = []
    for word in (0, 8191, one_pass + 5, one_pass + 8191, words // 2, words - 1):
        lane = word % 4  # the fold is over all four ints of a word
        buffer[4 * word + lane] = KEEP_ALIVE_SENTINEL
        for kernel in KERNELS:
            sink[0] = 0
            functions[kernel.expression]((kernel.grid(words, sm_count),), (kernel.block,),
                                         (buffer, np.int64(words), sink))
            if int(sink[0]) != KEEP_ALIVE_SENTINEL:
                missed.append(f"{kernel.name}: word {word} of {words}")
        buffer[4 * word + lane] = 0
    assert not missed, "\n".join(missed)
    for kernel in KERNELS[:1]:  # and a buffer of zeros stores nothing
        sink[0] = 0
        functions[kernel.expression]((kernel.grid(words, sm_count),), (kernel.block,),
                                     (buffer, np.int64(words), sink))
        assert int(sink[0]) == 0


needs_one_block = pytest.mark.skipif("one_block" not in LADDER,
                                     reason="one_block is not in the registry yet")
AWKWARD = (1, 7, 31, 33, 1000, 4097, 65537, 1000003)


@needs_one_block
@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_one_block_is_exact_for_every_block_and_loads(backend, dtype_name):
    rung = LADDER["one_block"]
    cases = [Case(rung, DTYPES[dtype_name], n, block, {**rung.params, "loads": loads})
             for block in BLOCK_SIZES for loads in (1, 4, 16) for n in AWKWARD]
    records = check_cases(backend, cases)
    assert not failures(records), "\n".join(failures(records)[:20])
    assert all(r.grid == 1 and r.launches == 1 for r in records)


@needs_one_block
def test_one_block_is_within_tolerance_on_random_inputs(backend):
    rung = LADDER["one_block"]
    cases = [Case(rung, DTYPES["float32"], n, block, dict(rung.params))
             for block in (32, 256, 1024) for n in (4097, 1000003)]
    records = check_cases(backend, cases, inputs="random")
    assert not failures(records), "\n".join(failures(records)[:20])


@pytest.mark.skipif("auto" not in LADDER, reason="auto is not in the registry yet")
def test_auto_verifies_at_every_band_and_names_its_variant(backend):
    from reducebench.measuring.settings import RunSettings
    from reducebench.measuring.runner import run

    sizes = [2**10, 2**12 + 1, 2**16 + 3, 2**20, 2**24 + 5]
    settings = RunSettings(sizes=sizes, dtypes=[DTYPES["float32"], DTYPES["int32"]],
                           rungs=[LADDER["auto"]], timed=False, seed=17)
    records = run(settings, backend, lambda record: None)
    assert not failures(records), "\n".join(failures(records))
    assert all(r.rung == "auto" and r.variant for r in records)
    assert all(("tuned for" in r.variant) or ("built-in defaults" in r.variant)
               for r in records)
