"""No impossible figure is reported as a result.

A case that verified can still be timed wrongly: a Python callable that launches its sum
on a stream of its own runs outside the timed interval, and looks faster than the memory
could ever deliver its input. Such a case is marked `suspect` (results.schema), with the
reason in its note, and is kept out of compare's verdicts, the plots' best lines, `tune`
and `auto`: everything that reads only status `ok`.

The bounds (docs/verification.md):
- cold, single timing: the input comes from DRAM, so no case reads faster than the GPU's
  theoretical DRAM bandwidth (peak_gbps) plus MARGIN; and no sample of a whole reduction
  is shorter than an empty kernel timed the same way (the run's measured timing floor)
  less MARGIN;
- warm L2 or graph timing: whatever of the input does not fit in the L2 still comes from
  DRAM at most at peak_gbps plus MARGIN. What the L2 itself can deliver is not measured
  here, so a case whose input fits in the L2 is not bounded, and graph timing (several
  runs per replay) has no per-run floor."""

from __future__ import annotations

import math

from reducebench.core.numbers import number

MARGIN = 0.05  # 5%: the datasheet peak is rounded, and a median can land a hair off


def impossible_reason(median_us: float, bytes_read: int, peak_gbps: float,
                      floor_us: float, l2_bytes: int, cold: bool, graph: bool) -> str:
    """Why a verified case's time cannot be right, or "" if it can be."""
    if not median_us > 0 or not bytes_read:
        return ""
    from_dram = bytes_read if cold and not graph else max(0, bytes_read - (l2_bytes or 0))
    if peak_gbps > 0 and from_dram:
        fastest_us = from_dram / (peak_gbps * (1 + MARGIN) * 1e3)
        if median_us < fastest_us:
            gbps = from_dram / (median_us * 1e3)
            return (f"faster than the memory allows: {number(gbps, ',.0f', ' GB/s')} from DRAM "
                    f"where the GPU peaks at {number(peak_gbps, ',.0f', ' GB/s')}; the work "
                    "probably ran outside the timed stream")
    if cold and not graph and floor_us and math.isfinite(floor_us) and \
            median_us < floor_us * (1 - MARGIN):
        return (f"shorter than an empty kernel ({number(median_us, '.2f', ' us')} < timing "
                f"floor {number(floor_us, '.2f', ' us')}): the work probably ran outside the "
                "timed stream")
    return ""
