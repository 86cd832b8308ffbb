"""How n elements are split into k shards, and the figures nccl-tests defines (algbw,
busbw), speed-up and parallel efficiency: the arithmetic of reductions across GPUs, with
no GPU. docs/multi-gpu.md explains the method.

Shards: contiguous, in rank order, every element in exactly one. With `align` = 1 their
sizes differ by at most one element; the sharded sum uses `align` = the elements of one
16-byte vector, so every boundary falls on a 16-byte multiple and the sizes differ by at
most one vector (see shard_bounds)."""

from __future__ import annotations

import math

from reducebench.core.dtypes import DType
from reducebench.results.schema import bandwidth_gbps

VECTOR_BYTES = 16
ALLREDUCE = "nccl_allreduce"
REDUCE = "nccl_reduce"


# -- shards ------------------------------------------------------------------------------

def shard_bounds(n: int, k: int, align: int = 1) -> list[tuple[int, int]]:
    """[start, end) of each of k contiguous shards of n elements, in rank order.

    The n // align whole granules of `align` elements are dealt out as evenly as possible
    (the first shards get one more), and the n % align elements left over go to the last
    shard. So every boundary but the end is a multiple of `align`, and sizes differ by at
    most `align` elements (by at most one when align = 1). Shards may be empty when
    n < k * align."""
    if k < 1:
        raise ValueError(f"need at least one shard, not {k}")
    if n < 0 or align < 1:
        raise ValueError(f"invalid n={n} or align={align}")
    granules, leftover = divmod(n, align)
    per_shard, extra = divmod(granules, k)
    bounds, start = [], 0
    for rank in range(k):
        size = (per_shard + (1 if rank < extra else 0)) * align
        if rank == k - 1:
            size += leftover
        bounds.append((start, start + size))
        start += size
    return bounds


def shard_sizes(n: int, k: int, align: int = 1) -> list[int]:
    return [end - start for start, end in shard_bounds(n, k, align)]


def shard_alignment(dtype: DType) -> int:
    """Elements per 16-byte vector: the sharded sum's boundaries fall on these."""
    return max(1, VECTOR_BYTES // dtype.itemsize)


# -- nccl-tests' figures (NVIDIA/nccl-tests, doc/PERFORMANCE.md) ---------------------------

def algbw_gbps(nbytes: int, time_us: float) -> float:
    """Algorithm bandwidth: size / time, in GB/s (10^9 bytes per second)."""
    return bandwidth_gbps(nbytes, time_us) if time_us > 0 else math.nan


def bus_factor(collective: str, k: int) -> float:
    """busbw / algbw: 2(k-1)/k for an all-reduce, 1 for a reduce to one root."""
    if collective == ALLREDUCE:
        return 2 * (k - 1) / k
    if collective == REDUCE:
        return 1.0
    raise ValueError(f"no bus bandwidth factor for {collective!r}")


def busbw_gbps(collective: str, nbytes: int, time_us: float, k: int) -> float:
    return algbw_gbps(nbytes, time_us) * bus_factor(collective, k)


def speedup(time_one_gpu_us: float, time_us: float) -> float:
    return time_one_gpu_us / time_us if time_us > 0 else math.nan


def efficiency(speed_up: float, k: int) -> float:
    """Parallel efficiency: the speed-up per GPU (1.0 is perfect scaling)."""
    return speed_up / k


