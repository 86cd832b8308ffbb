"""`--timing graph`: the arithmetic of the graph-replay mode (the capture and replay are
device work, in reducebench/device/).

Default (cold) timing measures one reduction per sample, alone: hold the stream, flush
L2, record start, launch, record stop. That is the time a caller waits for one
reduction, launch cost included; at small n (2^10..2^16 every rung takes 4-8 us) it is
mostly launch cost, the same for every rung.

Graph timing captures K back-to-back reductions of the case (each with its own
accumulator reset, as the plan launches it) in one CUDA graph and times a replay:
per-reduction time = replay time / K. The graph's launch is paid once per replay, 1/K
of it per reduction, so at small n what remains is the kernels' own time (and the gaps
between dependent kernels inside the graph). There is no L2 flush between the K
reductions: an input that fits in L2 is read from L2 after the first, so graph times at
those sizes are warm-cache times. Use cold timing for what one call costs; graph timing
to compare kernels where the launch would hide them, or for work that is launched in
graphs or long streams anyway.
"""

from __future__ import annotations

import math
from typing import Sequence

TARGET_REPLAY_US = 1000.0  # a replay long next to a graph launch (~us) and event resolution
MAX_K = 1000               # capture and instantiation cost grow with the graph
MIN_K = 2


def per_reduction_us(replay_us: float, k: int) -> float:
    """One reduction's time from a replay of a graph of `k` reductions."""
    if k < 1:
        raise ValueError(f"a graph of {k} reductions")
    return replay_us / k


def per_reduction_samples(replays_us: Sequence[float], k: int) -> list[float]:
    """Every replay sample as a per-reduction sample (what the samples file records in
    graph mode, so the statistics see per-reduction times)."""
    return [per_reduction_us(t, k) for t in replays_us]


def graph_size(single_us: float, target_replay_us: float = TARGET_REPLAY_US,
               min_k: int = MIN_K, max_k: int = MAX_K) -> int:
    """K for a case whose single reduction takes about `single_us`: enough that a replay
    lasts ~target_replay_us, within [min_k, max_k]."""
    if not (single_us > 0 and math.isfinite(single_us)):
        raise ValueError(f"single-reduction time {single_us!r} us must be positive")
    return int(min(max_k, max(min_k, math.ceil(target_replay_us / single_us))))
