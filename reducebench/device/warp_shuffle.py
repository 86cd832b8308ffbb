"""Runs one real warp shuffle on the GPU (cuda_src/shfl_lab.cu) for `reducebench shfl`:
one block of exactly `threads` threads, the values in, what every thread holds after."""

from __future__ import annotations

from typing import Sequence

import numpy as np

# CuPy only through the device layer's gateway, looked up when a shuffle runs (not bound
# here), so one clear DeviceUnavailable covers every no-GPU case and tests can stand in.
import reducebench.device as device_layer
from reducebench.device.compile import get_functions
from reducebench.shfl.model import LAB_DTYPES, OP_CODES, ShflCall, check_dtype

SOURCE = "shfl_lab.cu"


def name_expression(dtype: str) -> str:
    return f"shfl_lab<{LAB_DTYPES[check_dtype(dtype)][0]}>"


NAME_EXPRESSIONS = [name_expression(d) for d in LAB_DTYPES]


def run_shuffle(call: ShflCall, values: Sequence, dtype: str, device: int = 0) -> list:
    """What each of the call's threads holds after the shuffle: ints for int32, Python
    floats otherwise. Lanes outside the mask come back untouched; lanes the model calls
    undefined come back with whatever the hardware gave them. Raises DeviceUnavailable
    without CuPy, a driver or a GPU."""
    cupy = device_layer.import_cupy()
    dtype = check_dtype(dtype)
    host = np.asarray(values, dtype=np.dtype(LAB_DTYPES[dtype][1]))
    if host.shape != (call.threads,):
        raise ValueError(f"{host.size} value(s) for {call.threads} thread(s)")
    with cupy.cuda.Device(device):
        # Every dtype's instantiation in one module: one compile serves all four.
        kernel = get_functions(SOURCE, NAME_EXPRESSIONS)[name_expression(dtype)]
        x = cupy.asarray(host)
        out = cupy.empty_like(x)
        kernel((1,), (call.threads,),
               (x, out, np.int32(OP_CODES[call.op]), np.uint32(call.mask),
                np.int32(call.operand), np.int32(call.width)))
        result = out.get()   # synchronises with the launch; raises on a kernel error
    return result.tolist()
