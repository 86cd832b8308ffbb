"""The sampling loop's data: one phase's samples with the clocks read beside them, and
how a case's phases combine into what the raw-samples file keeps (results.samples_file)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

from reducebench.results.samples_file import CaseSamples


@dataclass
class ClockedSamples:
    """One phase's samples in time order, each with the clocks read right after it, and
    whether the throttle rule keeps it (throttle.py)."""

    times_us: list[float]
    sm_mhz: list[float | None]
    mem_mhz: list[float | None]
    kept: list[bool]
    throttled: bool = False   # still too few kept samples after the retries

    @property
    def kept_times(self) -> list[float]:
        return [t for t, keep in zip(self.times_us, self.kept) if keep]


def combine_phases(phases: Sequence[ClockedSamples]) -> tuple[int, CaseSamples]:
    """The fastest phase (by the median of its kept samples) and every phase's samples
    in time order, tagged with their phase, for the raw-samples file."""
    def median_of(phase: ClockedSamples) -> float:
        return statistics.median(phase.kept_times or phase.times_us)

    fastest = min(range(len(phases)), key=lambda i: median_of(phases[i]))
    samples = CaseSamples(
        times_us=[t for p in phases for t in p.times_us],
        phases=[i for i, p in enumerate(phases) for _ in p.times_us],
        sm_clock_mhz=[c for p in phases for c in p.sm_mhz],
        mem_clock_mhz=[c for p in phases for c in p.mem_mhz],
        kept=[k for p in phases for k in p.kept])
    return fastest, samples

