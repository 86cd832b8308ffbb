"""A worked example of a Python reduction for `reducebench run --callable`
(docs/callables.md): the sum a CuPy user would write, measured next to the ladder and CUB.

    reducebench run --size 2^24 --rung pingpong,cub --callable examples/cupy_sum.py:cupy_sum

or from Python:

    import reducebench
    reducebench.measure("examples/cupy_sum.py:cupy_sum", size=2**24).to_pandas()

The contract it follows: one parameter, the input, which arrives as a CuPy array (the
default framework) on reducebench's stream, already current; the return value is the sum
as a 0-d array of the accumulator type: float32 for float16 input, the input's own type
for float32, float64 and int32 (int32 wraps, like the CUDA rungs' int32 accumulators).
CuPy has no bfloat16, so bfloat16 cases are skipped; a function that declares
framework="torch" (examples/torch_sum.py) receives them.

What it measures: cupy.sum, which CuPy routes through CUB's DeviceReduce when its CUB
accelerator is on (CUPY_ACCELERATORS, on by default in recent CuPy), else through its own
reduction kernel: compare the row with the `cub` and `cupy` references.

cupy_row_sum is the same for `reducebench run --shape` (docs/rows.md): it receives the
ROWS x COLS array (a 2-D view of reducebench's buffer) and returns each row's sum, a 1-D
array of ROWS values of the accumulator type:

    reducebench run --shape 4096x4096,2^20x8 --callable examples/cupy_sum.py:cupy_row_sum"""

import cupy


def cupy_sum(x):
    accumulator = cupy.float32 if x.dtype == cupy.float16 else x.dtype
    return cupy.sum(x, dtype=accumulator)


def cupy_row_sum(x):
    accumulator = cupy.float32 if x.dtype == cupy.float16 else x.dtype
    return cupy.sum(x, axis=1, dtype=accumulator)
