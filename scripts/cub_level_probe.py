"""Why does cub's median at 2^24 sit at one of two levels about 1 us apart? The
stability probe showed the first measurement in a process state faster than the next.
Here: cub measured repeatedly, with the device addresses of CUB's allocations (its
temporary storage and output, from CuPy's memory pool) logged for each measurement."""

import statistics

import cupy

from reducebench.device import open_backend
from reducebench.dtypes import DTYPES
from reducebench.inputs import make_input
from reducebench.registry import LADDER
from reducebench.runner import Case
from reducebench.stats import StopRule

n = 2**24
dtype = DTYPES["float32"]
backend = open_backend(0)
pool = cupy.get_default_memory_pool()
log = []


def logging_malloc(size):
    memory = pool.malloc(size)
    log.append((size, memory.ptr))
    return memory


cupy.cuda.set_allocator(logging_malloc)
stop = StopRule(min_samples=100, max_noise=0.0, max_time=0.0, max_samples=100)
host = make_input(n, dtype, seed=1)
x = backend.upload(host, dtype)
cub = Case(LADDER["cub"], dtype, n, 0)
vl = Case(LADDER["vector_load"], dtype, n, 256, dict(LADDER["vector_load"].params))


def measure(case, note):
    log.clear()
    times = backend.measure(case, x, stop, True).times_us
    allocations = sorted({(s, hex(p)) for s, p in log if s < 1 << 20})
    print(f"{note:34s} {case.rung.name:12s} median {statistics.median(times):7.2f} "
          f"min {min(times):7.2f}  small allocations {allocations[:4]}", flush=True)


for i in range(4):
    measure(cub, f"cub, repeat {i}")
measure(vl, "vector_load in between")
for i in range(2):
    measure(cub, f"cub after vector_load, repeat {i}")
keep = [cupy.empty(1 << 20, dtype=cupy.uint8) for _ in range(3)]  # move the pool's state
for i in range(2):
    measure(cub, f"cub after 3 MiB held, repeat {i}")
