"""Inputs and their references, made on the host from a recorded seed.

Two kinds (docs/verification.md has the reasoning and the guarantees):

exact (the default): nonzero integers, positive wherever the accumulator's exact integers
allow it (all sizes for float64 and int32, up to 2^24 - 1 elements for float, which the
half types accumulate in too), so every partial sum a correct kernel can form, in any
order, is exact; the reference is exact and the tolerance zero, and any dropped or
doubled element changes the result. Past that, +-1 elements (ExactShape says how, and
`every_order_exact` which sizes keep the any-order guarantee).

random: real-valued magnitudes uniform in [0.5, 1.5) with a random sign positive 50.05%
of the time (int32: uniform in -7..8 without 0). Results then carry rounding error, which
is reported as a measurement (relative error, ulps), and verified against a statistical
tolerance (tolerance.py). Never zeros or ones: they hide unwritten outputs and wrong
indexing."""

from __future__ import annotations

import os
import secrets
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from reducebench.core import defaults
from reducebench.core.dtypes import DType

EXACT, RANDOM = "exact", "random"
INPUT_KINDS = (EXACT, RANDOM)
DEFAULT_INPUTS = defaults.INPUTS

CHUNK = 1 << 24
NEGATIVES_STREAM = 2**32  # the random stream of the -1 positions: no chunk index's
POSITIVE_FRACTION = 0.5005
# Integers an accumulator holds exactly: 2^24 (float; the half types accumulate in float
# too) and 2^53 (double). int32 wraps modulo 2^32 and is exact in its own arithmetic.
EXACT_INTEGERS = {"float": 2**24, "double": 2**53}
# Largest element magnitude per input type: what the type stores exactly (bfloat16 holds
# integers up to 256, float16 up to 2048), and 2^20 where nothing else limits it.
MAGNITUDE_CAP = {"bfloat16": 2**8, "float16": 2**11, "float32": 2**12}
WIDE_MAGNITUDE = 2**20


@dataclass
class HostInput:
    data: np.ndarray      # what goes to the device (bfloat16 as its uint16 bit pattern)
    reference: float | int  # the exact sum (an int for exact inputs and int32)
    abs_sum: float
    seed: int
    kind: str = EXACT
    name: str = "positive"   # which input of its kind: positive | signed | random
    # A ROWS x COLS input (verify/row_inputs.py): the exact sum of each row, whose total is
    # `reference`; None for one row summed to one value. A random one also keeps the sum
    # of each row's magnitudes (what its rounding bound grows with).
    row_references: np.ndarray | None = None
    row_abs_sums: np.ndarray | None = None

    @property
    def exact(self) -> bool:
        """Whether every correct kernel must return the reference bit for bit."""
        return isinstance(self.reference, int)


@dataclass(frozen=True)
class ExactShape:
    """How an exact input of n elements is built (docs/verification.md has the table):
    positive: every element in 1..magnitude;
    negatives: +-1 with this many -1 at random places, the rest +1;
    signed: magnitudes 1..magnitude with random signs, one or two more + than -;
    balanced: +-1 with one or two more +1 than -1 in every chunk of CHUNK elements.
    All but `balanced` keep every partial sum exact in any order of additions, even
    with one element missing or doubled; `balanced` does so with overwhelming
    probability for any order that does not depend on the values."""

    regime: str
    magnitude: int = 1
    negatives: int = 0


# Each sign's count in a signed input exceeds half of n by at most this, plus one
# element a buggy kernel may add twice.
SIGNED_SLACK = 4


def exact_shape(n: int, dtype: DType, name: str = "positive") -> ExactShape:
    """The shape of the named exact input ("positive" or "signed") of n elements."""
    limit = EXACT_INTEGERS.get(dtype.acc_cpp)
    cap = MAGNITUDE_CAP.get(dtype.name, WIDE_MAGNITUDE)
    if name == "signed":
        if limit is None:
            return ExactShape("signed", cap)
        magnitude = min(cap, limit // (n // 2 + SIGNED_SLACK))
        return ExactShape("signed", magnitude) if magnitude >= 1 else ExactShape("balanced")
    if limit is None:  # int32: a sum of positives wraps, but exactly
        return ExactShape("positive", cap)
    if n + 1 <= limit:  # (n + 1) * magnitude <= limit: the sum plus one more element fits
        return ExactShape("positive", max(1, min(cap, limit // (n + 1))))
    positives = limit - 1
    if n - positives <= limit - 2:  # at least one more +1 than -1: the sum is not 0
        return ExactShape("negatives", 1, n - positives)
    return ExactShape("balanced")


# A positive input with this many magnitudes or more needs no signed companion: a misread
# element reads the value it should with probability 1/16 at most.
VARIED_MAGNITUDES = 16


def exact_inputs(n: int, dtype: DType) -> tuple[str, ...]:
    """The exact inputs every case is verified with: a positive one (any dropped or
    doubled set of elements changes its sum) and, where its values are few, a signed one
    with more varied values (a misread element then rarely reads the value it should)."""
    positive, signed = exact_shape(n, dtype, "positive"), exact_shape(n, dtype, "signed")
    varied = positive.regime == "positive" and positive.magnitude >= VARIED_MAGNITUDES
    if varied or "balanced" in (positive.regime, signed.regime):
        return ("positive",)
    return ("positive", "signed")


def every_order_exact(n: int, dtype: DType) -> bool:
    """Whether every partial sum in any order of additions (even with one element missing
    or doubled) is exact in the accumulator, for the exact inputs of n elements."""
    return all(exact_shape(n, dtype, name).regime != "balanced"
               for name in exact_inputs(n, dtype))


# Threads that make a host input (make_input's `workers`), for `run` and `multigpu` alike:
# each 2^24-element chunk's sign shuffle waits on DRAM (about 1.6 s), so threads scale
# with cores; each holds about 0.5 GiB of temporaries. A 2^33-element input is 512 chunks; each
# chunk has its own random stream, so the input does not depend on the thread count.
INPUT_THREADS = min(32, os.cpu_count() or 1)


def new_seed() -> int:
    return secrets.randbits(32)


def derive_seed(seed: int, n: int, dtype: DType) -> int:
    """A different, reproducible input for every size and dtype of one run."""
    return zlib.crc32(f"{seed}:{n}:{dtype.name}".encode())


def to_bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 (nearest, ties to even) and return the uint16 bits."""
    bits = values.astype(np.float32).view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    return ((bits + rounding) >> 16).astype(np.uint16)


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def storage_dtype(dtype: DType) -> np.dtype:
    return np.dtype(np.uint16) if dtype.name == "bfloat16" else np.dtype(dtype.name)


def case_inputs(n: int, dtype: DType, seed: int, kind: str = EXACT,
                workers: int = 1) -> list[HostInput]:
    """Every input a case of n elements is verified with; the first is also timed."""
    names = exact_inputs(n, dtype) if kind == EXACT else ("random",)
    return [make_input(n, dtype, seed if index == 0 else zlib.crc32(f"{seed}:{name}".encode()),
                       kind, name, workers)
            for index, name in enumerate(names)]


def make_input(n: int, dtype: DType, seed: int, kind: str = EXACT,
               name: str = "positive", workers: int = 1) -> HostInput:
    """n elements, generated and summed chunk by chunk so huge n needs no float64 copy.
    Exact inputs draw each chunk from its own random stream (seed, chunk index), so
    `workers` threads can make them (numpy releases the GIL inside each chunk); random
    inputs keep the one sequential stream earlier versions drew them from."""
    data = np.empty(n, dtype=storage_dtype(dtype))
    if kind != EXACT:
        return _random_input(data, dtype, seed)
    shape = exact_shape(n, dtype, name)
    negatives = _negative_positions(np.random.default_rng((seed, NEGATIVES_STREAM)), n, shape)

    def make_chunk(start: int) -> tuple[int, float]:
        count = min(CHUNK, n - start)
        rng = np.random.default_rng((seed, start // CHUNK))
        values = _exact_chunk(rng, count, shape, first=start == 0)
        if negatives is not None:
            inside = negatives[(negatives >= start) & (negatives < start + count)]
            values[inside - start] = -1
        stored = _store(values, dtype)
        data[start:start + count] = stored
        as_stored = _stored_values(stored, dtype, True)
        return int(as_stored.sum()), float(np.abs(as_stored).sum())

    starts = range(0, n, CHUNK)
    if workers > 1 and len(starts) > 1:
        with ThreadPoolExecutor(workers) as pool:
            parts = list(pool.map(make_chunk, starts))
    else:
        parts = [make_chunk(start) for start in starts]
    return HostInput(data, sum(p for p, _ in parts), sum(a for _, a in parts), seed, kind, name)


def _random_input(data: np.ndarray, dtype: DType, seed: int) -> HostInput:
    rng = np.random.default_rng(seed)
    exact = not dtype.is_float  # int32 sums are exact whatever the values
    reference: float | int = 0 if exact else 0.0
    abs_sum = 0.0
    for start in range(0, data.size, CHUNK):
        count = min(CHUNK, data.size - start)
        stored = _store(_random_chunk(rng, count, dtype), dtype)
        data[start:start + count] = stored
        as_stored = _stored_values(stored, dtype, exact)
        reference += int(as_stored.sum()) if exact else float(as_stored.sum())
        abs_sum += float(np.abs(as_stored).sum())
    return HostInput(data, reference, abs_sum, seed, RANDOM, "random")


def _negative_positions(rng: np.random.Generator, n: int, shape: ExactShape):
    if shape.regime != "negatives":
        return None
    return np.sort(rng.choice(n, size=shape.negatives, replace=False))


def _exact_chunk(rng: np.random.Generator, count: int, shape: ExactShape,
                 first: bool) -> np.ndarray:
    if shape.regime == "balanced":
        return _balanced_signs(rng, count, count // 2 + 1)
    magnitudes = rng.integers(1, shape.magnitude + 1, size=count, dtype=np.int32)
    if shape.regime == "signed":
        # one more + than - (two for an even count) in the first chunk, and never fewer
        # + than - in a chunk: the counts bounded as SIGNED_SLACK says
        return magnitudes * _balanced_signs(rng, count, count // 2 + (1 if first else count % 2))
    return magnitudes


def _balanced_signs(rng: np.random.Generator, count: int, positives: int) -> np.ndarray:
    """+-1 with exactly `positives` of them +1, at random positions: fair coin flips,
    then as many of the majority flipped as it is over."""
    signs = np.where(rng.integers(0, 2, size=count, dtype=np.int8) == 1, 1, -1).astype(np.int32)
    surplus = int(np.count_nonzero(signs > 0)) - positives
    if surplus:
        majority = np.flatnonzero(signs == (1 if surplus > 0 else -1))
        signs[rng.choice(majority, size=abs(surplus), replace=False)] *= -1
    return signs


def _random_chunk(rng: np.random.Generator, count: int, dtype: DType) -> np.ndarray:
    if not dtype.is_float:
        values = rng.integers(-7, 8, size=count, dtype=np.int32)
        return np.where(values >= 0, values + 1, values).astype(np.int32)
    magnitude = rng.random(count, dtype=np.float64) + 0.5
    sign = np.where(rng.random(count) < POSITIVE_FRACTION, 1.0, -1.0)
    return magnitude * sign


def _store(values: np.ndarray, dtype: DType) -> np.ndarray:
    if dtype.name == "bfloat16":
        return to_bfloat16_bits(values)
    return values.astype(storage_dtype(dtype))


def _stored_values(stored: np.ndarray, dtype: DType, exact: bool) -> np.ndarray:
    """The values as the device will read them, widened so their sum is exact."""
    if dtype.name == "bfloat16":
        stored = bfloat16_bits_to_float32(stored)
    return stored.astype(np.int64 if exact else np.float64)
