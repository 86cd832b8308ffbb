"""The CuPy half of the guards (verify/guard_regions.py decides everything else): buffers made
between guards on the device, and the exact allocations `sanitize` asks for."""

from __future__ import annotations

import numpy as np

from reducebench.verify.guard_regions import ALIGNMENT, GUARD_BYTES, GuardedArray
from reducebench.verify.compute_sanitizer import exact_allocations


def guard_bytes(cupy) -> int:
    """The guard on each side of every buffer: GUARD_BYTES, or none where this process
    runs under compute-sanitizer (verify/compute_sanitizer.checked_environment). There CuPy's pool
    is turned off too, so every buffer is one cudaMalloc of exactly its size and memcheck
    sees any access past it. Call before anything is allocated."""
    if not exact_allocations():
        return GUARD_BYTES
    cupy.cuda.set_allocator(None)
    return 0


def guarded_empty(cupy, name: str, n: int, dtype, guards: int) -> GuardedArray:
    """n uninitialised elements between two guards of `guards` bytes."""
    return GuardedArray(cupy, name, n, dtype, guards, to_host=cupy.asnumpy)


def guarded_upload(cupy, data: np.ndarray, guards: int) -> GuardedArray:
    """The input on the device between guards: the view kernels get starts `guards`
    bytes into an allocation, so it keeps the allocation's ALIGNMENT."""
    guarded = guarded_empty(cupy, "input", data.size, data.dtype, guards)
    guarded.view.set(np.ascontiguousarray(data))  # straight into place: no second copy
    if guarded.view.data.ptr % ALIGNMENT:
        raise RuntimeError(f"the input starts at {guarded.view.data.ptr:#x}, not on a "
                           f"{ALIGNMENT}-byte boundary")
    return guarded
