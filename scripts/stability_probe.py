"""Issue #5's open question: why do vector_load and cub move between two levels about
1 us apart from one run to the next at 2^24? Each trial places a fresh input at a
different device address (a pad allocation shifts it) and measures both, 100 samples
each, twice; a level that follows the allocation and not the trial points at placement."""

import statistics
import sys

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
stop = StopRule(min_samples=100, max_noise=0.0, max_time=0.0, max_samples=100)
cases = [Case(LADDER["vector_load"], dtype, n, 256, dict(LADDER["vector_load"].params)),
         Case(LADDER["single_pass"], dtype, n, 256, dict(LADDER["single_pass"].params)),
         Case(LADDER["cub"], dtype, n, 0)]
trials = int(sys.argv[1]) if len(sys.argv) > 1 else 8
pads = []
print("trial  input address      " + "  ".join(f"{c.rung.name:>22}" for c in cases))
for trial in range(trials):
    pads.append(cupy.empty((trial * 7 + 1) << 20, dtype=cupy.uint8))  # shifts the input
    host = make_input(n, dtype, seed=trial)
    x = backend.upload(host, dtype)
    cells = []
    for case in cases:
        medians = [statistics.median(backend.measure(case, x, stop, True).times_us)
                   for _ in range(2)]
        cells.append(f"{medians[0]:9.2f} {medians[1]:9.2f}   ")
    print(f"{trial:5d}  {x.data.ptr:#018x}  " + "  ".join(cells), flush=True)
    del x
