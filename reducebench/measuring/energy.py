"""Energy per reduction from NVML readings taken around a burst of reductions: the pure
arithmetic (no NVML here; the device layer takes the readings).

The instrument. NVML's total energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ
since the driver loaded) is exact over its own update periods but only updates about
every 100 ms: on the H100, steps of ~13.5 J at ~135 W. One reduction lasts microseconds,
far below that resolution, so the energy of one reduction is measured as the energy of a
burst of back-to-back reductions lasting many update periods, divided by how many ran.

The method (counter):
1. The device layer runs a burst it can count (`plan_burst`): chunks of reductions
   enqueued back to back, two always queued so the GPU never waits for the host, until
   enough counter updates have passed; R = the reductions enqueued, busy_s = their GPU
   time from CUDA events around the whole burst.
2. Between enqueues it polls the counter as often as it can (~1 ms) and keeps every
   reading (host time, mJ), only while the burst is still running on the GPU.
3. `from_counter` finds the counter's updates: the first reading of each new value. An
   update happened between that reading and the one before it, so its instant is known
   to within that gap. The window is from the first update to the last: its energy is
   exact (the difference of two counter values), its duration known to within the two
   gaps, and it lies inside the burst, so the GPU ran reductions the whole time.
4. Reductions in the window = window x R / busy_s (the burst's steady rate), so
   energy per reduction = window energy x busy_s / (window x R).

The error bound is the duration's: window D lies in [D_lo, D_hi] (from the poll gaps at
its two ends), so energy per reduction lies in [E/(D_hi rate), E/(D_lo rate)] plus the
counter's 1 mJ quantum at each end. With 1 ms polls and a window of 10 updates (~1 s),
that is about 0.2%. Not in the bound: the counter's own accuracy (NVML does not state
it), and any unsteadiness of the rate inside the burst (the reason the burst must be
enqueued so the GPU never waits for the host: a held stream or a CUDA graph).

The fallback (power): where the counter is missing, nvmlDeviceGetPowerUsage (mW) is
sampled during the burst. On Ampere (except GA100) and newer GPUs it returns the power
averaged over the last second, so readings from the burst's first `settle_s` seconds mix
in the idle power before it and are left out; the kept readings are integrated
(trapezoid) over their span, giving the mean power, times busy_s / R. Its bound is only
the spread of the readings (half their range over the mean): the sensor's own accuracy
is not stated by NVML for these GPUs, so this method's figures are rougher.

What it measures: the whole board's energy while the reduction runs back to back,
static power included (not the energy above idle), and without the L2 flush of cold
timing; a size whose input fits in L2 is read from L2 in a burst.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from reducebench.core.numbers import number

COUNTER_UPDATE_S = 0.1    # the H100's energy counter period, measured
COUNTER_QUANTUM_MJ = 1.0  # the counter's unit
POWER_AVERAGE_S = 1.0     # nvmlDeviceGetPowerUsage's averaging window on Ampere and newer


@dataclass(frozen=True)
class Energy:
    """Energy per reduction from one burst.

    method:           "counter" or "power".
    uj_per_reduction: microjoules per reduction (whole board, static power included).
    gb_per_joule:     bytes read per reduction / energy per reduction, in GB/J.
    error_pct:        the bound on uj_per_reduction's relative error from the method's
                      resolution (see the module docstring for what it leaves out).
    mean_power_w:     the board's mean power over the window.
    window_s:         the span the energy was taken over (inside the burst).
    reductions:       the reductions that ran in the window (window x rate).
    """

    method: str
    uj_per_reduction: float
    gb_per_joule: float
    error_pct: float
    mean_power_w: float
    window_s: float
    reductions: float


@dataclass(frozen=True)
class EnergyNote:
    """Why a case has no energy figure (recorded instead of one)."""

    reason: str


class EnergyUnmeasurable(ValueError):
    """The readings do not allow a figure (too few updates, a window too short)."""


def _per_reduction(method: str, joules: float, window_s: float, rate_hz: float,
                   bytes_per_reduction: int, error: float) -> Energy:
    reductions = window_s * rate_hz
    per = joules / reductions
    return Energy(method=method, uj_per_reduction=per * 1e6,
                  gb_per_joule=bytes_per_reduction / per / 1e9, error_pct=100.0 * error,
                  mean_power_w=joules / window_s, window_s=window_s, reductions=reductions)


def _rate(reductions: int, busy_s: float) -> float:
    if reductions < 1 or not busy_s > 0:
        raise EnergyUnmeasurable(f"a burst of {reductions} reductions in {busy_s} s: "
                                 "nothing to divide by")
    return reductions / busy_s


def counter_updates(readings: Sequence[tuple[float, float]]
                    ) -> list[tuple[float, float, float]]:
    """(earliest, latest, value) per counter update seen: the update happened after the
    `earliest` reading (the last with the old value) and by the `latest` (the first with
    the new one). The first reading only sets the starting value."""
    updates = []
    for (t_before, before), (t_now, now) in zip(readings, readings[1:]):
        if t_now < t_before:
            raise ValueError("readings must be in time order")
        if now != before:
            updates.append((t_before, t_now, now))
    return updates


def from_counter(readings: Sequence[tuple[float, float]], reductions: int, busy_s: float,
                 bytes_per_reduction: int, min_updates: int = 2) -> Energy:
    """Energy per reduction from energy-counter readings (host seconds, mJ) polled while
    a burst of `reductions` ran for `busy_s` seconds of GPU time. Needs at least
    `min_updates` counter updates inside the burst (the window spans one period less)."""
    rate = _rate(reductions, busy_s)
    updates = counter_updates(readings)
    if len(updates) < max(2, min_updates):
        raise EnergyUnmeasurable(f"{len(updates)} energy-counter update(s) seen during the "
                                 f"burst; at least {max(2, min_updates)} are needed: "
                                 "make the burst longer")
    (first_lo, first_hi, first_mj), (last_lo, last_hi, last_mj) = updates[0], updates[-1]
    joules = (last_mj - first_mj) / 1e3
    if joules <= 0:
        raise EnergyUnmeasurable(f"the energy counter went from {first_mj} to {last_mj} mJ")
    shortest, longest = last_lo - first_hi, last_hi - first_lo
    if shortest <= 0:
        raise EnergyUnmeasurable("the polls are too sparse to place the counter's updates "
                                 "apart: poll more often or run longer")
    window = (shortest + longest) / 2.0
    timing = (longest - shortest) / 2.0 / window  # |D_true / window - 1| at worst
    quantum = 2 * COUNTER_QUANTUM_MJ / 1e3 / joules
    return _per_reduction("counter", joules, window, rate, bytes_per_reduction,
                          timing + quantum)


def from_power(readings: Sequence[tuple[float, float]], reductions: int, busy_s: float,
               bytes_per_reduction: int, burst_start_s: float,
               settle_s: float = POWER_AVERAGE_S) -> Energy:
    """Energy per reduction from power readings (host seconds, mW) taken during a burst
    that began at host time `burst_start_s`; readings before burst_start_s + settle_s
    are left out (the sensor averages over the last second). Trapezoid integration over
    the kept readings gives the mean power; its bound is half the readings' range over
    the mean."""
    rate = _rate(reductions, busy_s)
    kept = [(t, mw) for t, mw in readings if t >= burst_start_s + settle_s]
    if len(kept) < 2 or kept[-1][0] <= kept[0][0]:
        raise EnergyUnmeasurable(f"{len(kept)} power reading(s) after the "
                                 f"{number(settle_s, 'g', ' s')} the "
                                 "sensor needs to settle: make the burst longer")
    joules = 0.0
    for (t0, p0), (t1, p1) in zip(kept, kept[1:]):
        if t1 < t0:
            raise ValueError("readings must be in time order")
        joules += (p0 + p1) / 2.0 / 1e3 * (t1 - t0)
    window = kept[-1][0] - kept[0][0]
    powers = [mw for _, mw in kept]
    mean_mw = joules * 1e3 / window
    spread = (max(powers) - min(powers)) / 2.0 / mean_mw if mean_mw > 0 else math.inf
    return _per_reduction("power", joules, window, rate, bytes_per_reduction, spread)


@dataclass(frozen=True)
class BurstPlan:
    """How to run a burst: enqueue `chunk` reductions at a time (one CUDA graph replay,
    or a loop of launches), keeping two chunks queued so the GPU never waits for the
    host, and polling the meter between enqueues; stop enqueueing when `done` says so.
    The reductions run are then chunks enqueued x chunk, and busy_s the CUDA-event time
    from the first chunk's start to the last one's end."""

    method: str          # "counter" or "power"
    chunk: int           # reductions per enqueue
    min_updates: int     # counter updates to see inside the burst (counter method)
    min_s: float         # and at least this long
    max_s: float         # give up after this long, whatever was seen

    def done(self, updates_seen: int, elapsed_s: float) -> bool:
        """Stop enqueueing? `updates_seen`: counter updates seen so far (ignored by the
        power method); `elapsed_s`: host seconds since the first chunk was enqueued."""
        if elapsed_s >= self.max_s:
            return True
        if elapsed_s < self.min_s:
            return False
        return self.method == "power" or updates_seen >= self.min_updates


def plan_burst(median_us: float, method: str = "counter", updates: int = 10,
               update_s: float = COUNTER_UPDATE_S, chunk_s: float = 0.005,
               min_s: float = 1.0, settle_s: float = POWER_AVERAGE_S) -> BurstPlan:
    """The burst for a case whose single reduction takes `median_us` (its cold median;
    back to back it runs a little faster, which only makes chunks shorter).

    counter: at least `updates` counter updates inside the burst (the window spans
    updates - 1 periods: ~0.9 s for 10) and `min_s` seconds; power: `settle_s` for the
    sensor's average to forget the idle before the burst, then `min_s` of readings.
    A chunk lasts about `chunk_s`, short next to a counter period, so the burst stops
    within a few ms of its goal; max_s gives room for three times the expected time."""
    if not (median_us > 0 and math.isfinite(median_us)):
        raise ValueError(f"median time {median_us!r} us must be positive")
    if method not in ("counter", "power"):
        raise ValueError(f"energy method {method!r}: counter or power")
    chunk = max(1, math.ceil(round(chunk_s * 1e6 / median_us, 9)))
    if method == "counter":
        seconds = max(min_s, (updates + 1) * update_s)
        return BurstPlan("counter", chunk, updates, seconds, 3 * seconds)
    seconds = settle_s + min_s
    return BurstPlan("power", chunk, 0, seconds, 3 * seconds)
