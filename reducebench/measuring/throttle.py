"""The throttle rule: which samples to discard because the GPU was clocked down.

Each sample carries the SM clock the sampling loop read with it (NVML). A sample is
kept when its clock is at least KEEP_FRACTION of the highest SM clock seen in the same
case; a sample without a clock reading is kept (nothing to judge it by).

Why 0.95 of the case's highest clock:
- Boost management moves the SM clock in small steps (15 MHz bins on the H100, 0.8% of
  its 1980 MHz) all the time, with no throttle event; a rule that tight would discard
  good samples and leave too few. A fall of more than 5% is beyond that wander: a power
  or thermal cap, or another process's clock limit.
- It bounds the clock's share of the spread of the kept samples: a rung whose time
  follows the SM clock (small n: launch, block sums, atomics) can differ by at most ~5%
  from the clock alone; a rung bound by memory barely moves with the SM clock.
- Relative to the case's own highest clock, not the GPU's rated boost: a GPU locked at
  a lower clock (nvidia-smi -lgc) or uniformly slowed for a whole case keeps its
  samples; that slower case is what the run-level check in the runner flags
  (runner.throttled: the case's clock against the run's first).

Retries: `ThrottlePolicy` is the pure logic the sampling loop calls after its stop rule
is met: take replacement samples while fewer are kept than the stop rule settled on,
pausing `recovery_s` after a discarded one, up to `max_extra` extra samples. A case
that still has fewer kept samples than wanted when the extras run out is flagged as
throttled in the results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

KEEP_FRACTION = 0.95


@dataclass(frozen=True)
class ClockCheck:
    """The throttle rule applied to one case's per-sample SM clocks."""

    kept: np.ndarray        # bool per sample, True: keep
    discarded: int
    clock_min_mhz: float    # over the samples with a known clock; NaN if none had one
    clock_max_mhz: float
    floor_mhz: float        # fraction x the highest clock: samples below it are discarded

    @property
    def kept_count(self) -> int:
        return int(self.kept.sum())


def check_clocks(sm_clock_mhz: Sequence[float | None], fraction: float = KEEP_FRACTION
                 ) -> ClockCheck:
    """Which samples to keep: those at >= fraction x the case's highest SM clock, and
    those without a clock reading (None or NaN)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"keep fraction {fraction!r} must lie in (0, 1]")
    clocks = np.array([math.nan if c is None else float(c) for c in sm_clock_mhz], dtype=float)
    known = np.isfinite(clocks)
    if not known.any():
        return ClockCheck(np.ones(len(clocks), dtype=bool), 0, math.nan, math.nan, math.nan)
    highest = float(clocks[known].max())
    floor = fraction * highest
    kept = ~known | (clocks >= floor)
    return ClockCheck(kept, int((~kept).sum()), float(clocks[known].min()), highest, floor)


@dataclass(frozen=True)
class ThrottlePolicy:
    """How hard the sampling loop tries to replace discarded samples.

    fraction:   the throttle rule's keep fraction (check_clocks).
    max_extra:  at most this many samples beyond the `wanted` count, per case.
    recovery_s: pause after a discarded sample before the next one, so a clock that has
                dipped has time to come back instead of the extras being spent at once.
    """

    fraction: float = KEEP_FRACTION
    max_extra: int = 200
    recovery_s: float = 0.05

    def needs_more(self, kept: int, discarded: int, wanted: int) -> bool:
        """Take another sample? While fewer than `wanted` (the count the stop rule
        settled on) are kept and the extras are not spent. Nothing discarded: never."""
        if kept >= wanted:
            return False
        extra = kept + discarded - wanted
        return extra < self.max_extra

    def pause_s(self, last_kept: bool) -> float:
        """Seconds to wait before the next sample: recovery_s after a discarded one."""
        return 0.0 if last_kept else self.recovery_s

    def still_throttled(self, kept: int, wanted: int) -> bool:
        """After the loop has stopped: the case could not get `wanted` kept samples
        within its extras, so it is flagged in the results."""
        return kept < wanted
