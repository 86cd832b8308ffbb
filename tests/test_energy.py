"""Energy per reduction from synthetic NVML readings of a known power, and the burst plan;
the graph-replay arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reducebench.measuring.energy import (EnergyUnmeasurable, counter_updates, from_counter,
                                from_power, plan_burst)
from reducebench.measuring.graph_timing import graph_size, per_reduction_samples, per_reduction_us

IDLE_W, BURST_W = 135.0, 400.0
REDUCTION_S = 25e-6                      # one reduction back to back: 25 us
BYTES = 2**24 * 4                        # float32, n = 2^24
# 400 W x 25 us = 10 mJ = 10,000 uJ per reduction; 67.1 MB / 10 mJ = 6.71 GB/J
TRUE_UJ = BURST_W * REDUCTION_S * 1e6
TRUE_GB_PER_J = BYTES / (BURST_W * REDUCTION_S) / 1e9


def energy_mj(t: float, start: float) -> float:
    """The board's energy since t = 0: idle power until `start`, burst power after."""
    return 1e3 * (IDLE_W * min(t, start) + BURST_W * max(0.0, t - start))


def counter_readings(start: float, end: float, poll_s: float, period: float = 0.1,
                     phase: float = 0.037, seed: int = 0) -> list[tuple[float, float]]:
    """Polls of an energy counter that publishes the energy (whole mJ) at every update,
    `period` apart, taken every ~poll_s (jittered) while the burst runs."""
    rng = np.random.default_rng(seed)
    polls = np.arange(start, end - poll_s, poll_s)
    times = polls + rng.uniform(0, poll_s / 2, size=len(polls))
    readings = []
    for t in times:
        last_update = phase + math.floor((t - phase) / period) * period
        readings.append((float(t), float(math.floor(energy_mj(last_update, start)))))
    return readings


def burst(start: float = 5.0, seconds: float = 1.2):
    reductions = int(round(seconds / REDUCTION_S))
    return start, start + seconds, reductions, reductions * REDUCTION_S


def test_counter_updates_are_placed_between_two_polls():
    readings = [(0.0, 100.0), (0.001, 100.0), (0.002, 113.0), (0.003, 113.0), (0.004, 127.0)]
    assert counter_updates(readings) == [(0.001, 0.002, 113.0), (0.003, 0.004, 127.0)]


def test_counter_gives_the_true_energy_per_reduction_within_its_bound():
    start, end, reductions, busy_s = burst()
    energy = from_counter(counter_readings(start, end, 0.001), reductions, busy_s, BYTES)
    assert energy.method == "counter"
    assert energy.error_pct < 0.3                    # 1 ms polls over ~1 s
    assert abs(energy.uj_per_reduction / TRUE_UJ - 1) * 100 <= energy.error_pct
    assert energy.gb_per_joule == pytest.approx(TRUE_GB_PER_J, rel=energy.error_pct / 100)
    assert energy.mean_power_w == pytest.approx(BURST_W, rel=0.003)
    assert 0.9 <= energy.window_s <= 1.2             # whole update periods inside the burst


@pytest.mark.parametrize("poll_s", [0.003, 0.02, 0.045])
def test_sparse_polls_widen_the_bound_which_still_holds(poll_s):
    start, end, reductions, busy_s = burst()
    for seed in range(10):
        energy = from_counter(counter_readings(start, end, poll_s, seed=seed), reductions,
                              busy_s, BYTES)
        assert abs(energy.uj_per_reduction / TRUE_UJ - 1) * 100 <= energy.error_pct
    assert energy.error_pct > 100 * poll_s / 2 / 1.2  # at least ~a poll gap over the window


def test_counter_needs_two_updates_inside_the_burst():
    start, end, reductions, busy_s = burst(seconds=0.15)  # one or two updates at most
    readings = [r for r in counter_readings(start, end, 0.001) if r[0] < start + 0.12]
    with pytest.raises(EnergyUnmeasurable, match="make the burst longer"):
        from_counter(readings, reductions, busy_s, BYTES)


def test_counter_refuses_an_empty_burst_and_disordered_readings():
    start, end, reductions, busy_s = burst()
    readings = counter_readings(start, end, 0.001)
    with pytest.raises(EnergyUnmeasurable):
        from_counter(readings, 0, busy_s, BYTES)
    with pytest.raises(ValueError):
        from_counter(readings[::-1], reductions, busy_s, BYTES)


def power_readings(start: float, end: float, step: float = 0.02):
    """A sensor that reports the power averaged over the last second, read every step."""
    out = []
    for t in np.arange(start, end, step):
        average_w = (energy_mj(t, start) - energy_mj(t - 1.0, start)) / 1e3
        out.append((float(t), average_w * 1e3))  # mW
    return out


def test_power_fallback_waits_for_the_sensor_average_to_settle():
    start, end, reductions, busy_s = burst(seconds=3.0)
    readings = power_readings(start, end)
    energy = from_power(readings, reductions, busy_s, BYTES, burst_start_s=start)
    assert energy.method == "power"
    assert energy.uj_per_reduction == pytest.approx(TRUE_UJ, rel=1e-6)
    assert energy.error_pct == pytest.approx(0, abs=1e-6)   # a steady reading
    # Without the settle time, the first second mixes in the idle power before the burst:
    unsettled = from_power(readings, reductions, busy_s, BYTES, burst_start_s=start,
                           settle_s=0.0)
    assert unsettled.uj_per_reduction < 0.95 * TRUE_UJ
    assert unsettled.error_pct > 10                          # and its spread shows it


def test_power_readings_are_integrated_over_uneven_gaps():
    """300 W at t = 2 s, 500 W at 3 s and 5 s (burst from 0, 1 s settle): trapezoids give
    400 J + 1000 J over 3 s, a mean of 466.7 W; 1000 reductions in 1 s of GPU time take
    1 ms each, so 0.4667 J = 466,667 uJ per reduction; the bound is (500 - 300) / 2 over
    the mean, 21.4%."""
    readings = [(2.0, 300e3), (3.0, 500e3), (5.0, 500e3)]
    energy = from_power(readings, 1000, 1.0, 10**6, burst_start_s=0.0)
    assert energy.mean_power_w == pytest.approx(1400 / 3)
    assert energy.uj_per_reduction == pytest.approx(1400 / 3 * 1e-3 * 1e6)
    assert energy.error_pct == pytest.approx(100 * 100 / (1400 / 3))
    assert energy.window_s == 3.0 and energy.reductions == pytest.approx(3000)


def test_power_fallback_needs_readings_after_settling():
    start, end, reductions, busy_s = burst(seconds=1.0)
    with pytest.raises(EnergyUnmeasurable, match="settle"):
        from_power(power_readings(start, end), reductions, busy_s, BYTES, burst_start_s=start)


def test_plan_counter_burst():
    plan = plan_burst(25.0)                 # 25 us per reduction, chunks of ~5 ms
    assert plan.chunk == 200 and plan.method == "counter"
    assert plan.min_s == pytest.approx(1.1)  # 10 updates + one: 1.1 s, over the 1 s minimum
    assert not plan.done(updates_seen=9, elapsed_s=2.0)
    assert not plan.done(updates_seen=10, elapsed_s=1.0)
    assert plan.done(updates_seen=10, elapsed_s=1.2)
    assert plan.done(updates_seen=0, elapsed_s=plan.max_s)   # gives up, never hangs


def test_plan_power_burst_and_huge_cases():
    plan = plan_burst(343.0, method="power")  # 2^28 float32
    assert plan.chunk == 15 and plan.min_s == pytest.approx(2.0)  # 1 s settle + 1 s
    assert plan.done(updates_seen=0, elapsed_s=2.0)
    assert plan_burst(20_000.0).chunk == 1    # a reduction longer than a chunk
    with pytest.raises(ValueError):
        plan_burst(0.0)
    with pytest.raises(ValueError):
        plan_burst(10.0, method="guess")


# ---- graph replay ------------------------------------------------------------------------

def test_graph_replay_time_per_reduction():
    assert per_reduction_us(512.0, 128) == 4.0
    assert per_reduction_samples([500.0, 520.0], 100) == [5.0, 5.2]
    with pytest.raises(ValueError):
        per_reduction_us(10.0, 0)


def test_graph_size_aims_at_a_millisecond_replay():
    assert graph_size(5.0) == 200          # 2^10..2^16: a 1 ms replay of 200
    assert graph_size(343.0) == 3          # 2^28: ceil(1000 / 343)
    assert graph_size(0.5) == 1000         # capped
    assert graph_size(5000.0) == 2         # at least two, so one launch is shared
    with pytest.raises(ValueError):
        graph_size(float("nan"))
