"""Random inputs and their exact references, made on the host from a recorded seed.

Floats: magnitudes uniform in [0.5, 1.5) with a random sign that is positive 50.05% of
the time: a small non-zero mean (0.001), partial sums that cancel as real data does, and no
element small enough to go missing unnoticed. Integers: uniform in -7..8 without 0.
Never zeros or ones: they hide unwritten outputs and wrong indexing."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import numpy as np

from reducebench.dtypes import DType

CHUNK = 1 << 24
POSITIVE_FRACTION = 0.5005


@dataclass
class HostInput:
    data: np.ndarray      # what goes to the device (bfloat16 as its uint16 bit pattern)
    reference: float      # float64 (or exact int) sum of the values as stored
    abs_sum: float
    seed: int


def new_seed() -> int:
    return secrets.randbits(32)


def to_bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 (nearest, ties to even) and return the uint16 bits."""
    bits = values.astype(np.float32).view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    return ((bits + rounding) >> 16).astype(np.uint16)


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def storage_dtype(dtype: DType) -> np.dtype:
    return np.dtype(np.uint16) if dtype.name == "bfloat16" else np.dtype(dtype.name)


def _chunk_values(rng: np.random.Generator, count: int, dtype: DType) -> np.ndarray:
    if not dtype.is_float:
        values = rng.integers(-7, 8, size=count, dtype=np.int32)
        return np.where(values >= 0, values + 1, values).astype(np.int32)
    magnitude = rng.random(count, dtype=np.float64) + 0.5
    sign = np.where(rng.random(count) < POSITIVE_FRACTION, 1.0, -1.0)
    return magnitude * sign


def make_input(n: int, dtype: DType, seed: int) -> HostInput:
    """n elements, generated and summed chunk by chunk so huge n needs no float64 copy."""
    rng = np.random.default_rng(seed)
    data = np.empty(n, dtype=storage_dtype(dtype))
    reference, abs_sum = (0, 0) if not dtype.is_float else (0.0, 0.0)
    for start in range(0, n, CHUNK):
        count = min(CHUNK, n - start)
        values = _chunk_values(rng, count, dtype)
        if dtype.name == "bfloat16":
            stored = to_bfloat16_bits(values)
            exact = bfloat16_bits_to_float32(stored).astype(np.float64)
        else:
            stored = values.astype(data.dtype)
            exact = stored.astype(np.int64 if not dtype.is_float else np.float64)
        data[start:start + count] = stored
        reference += exact.sum()
        abs_sum += np.abs(exact).sum()
    if dtype.is_float:
        return HostInput(data, float(reference), float(abs_sum), seed)
    return HostInput(data, int(reference), float(abs_sum), seed)
