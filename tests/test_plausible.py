"""No impossible figure passes as a result: a verified case faster than the GPU's memory
allows, or shorter than an empty kernel, is `suspect`, with the reason, and nothing that
reads only `ok` rows (compare, plots, tune, auto) uses it. Bounds worked out by hand:
2^24 float32 elements are 67,108,864 bytes; at a peak of 3352 GB/s (+5%: 3519.6 GB/s)
they take at least 67,108,864 / 3519.6e3 = 19.07 us."""

import math

import pytest

from reducebench.measuring.plausible import impossible_reason
from reducebench.measuring.runner import mark_if_impossible, run
from reducebench.measuring.settings import settings_from
from reducebench.results.schema import METRIC_COLUMNS, SCHEMA_VERSION, Record, blank_metrics
from reducebench.results.files import RowWriter, read_results

from fakes import FakeBackend

BYTES = 2**24 * 4
PEAK = 3352.0
L2 = 50 * 2**20


def reason(median_us, cold=True, graph=False, floor=3.0, nbytes=BYTES):
    return impossible_reason(median_us, nbytes, PEAK, floor, L2, cold=cold, graph=graph)


def test_a_time_the_dram_cannot_deliver_is_suspect_with_the_figures():
    said = reason(1.31)   # the callable that summed on its own stream: 51,000 GB/s
    assert "faster than the memory allows" in said
    assert "51,228 GB/s" in said and "3,352 GB/s" in said   # 67,108,864 B / 1.31 us


def test_the_bound_sits_at_the_peak_plus_five_percent():
    assert reason(19.10) == ""          # 3513.6 GB/s: under 3519.6
    assert reason(19.00) != ""          # 3532.0 GB/s: over


def test_a_sample_under_the_timing_floor_is_suspect_only_under_cold_single_timing():
    small = 1024 * 4                    # far under any DRAM bound at 2 us
    assert "shorter than an empty kernel" in reason(2.0, floor=3.0, nbytes=small)
    assert reason(2.9, floor=3.0, nbytes=small) == ""   # within 5% of the floor
    assert reason(2.0, floor=3.0, nbytes=small, graph=True) == ""
    assert reason(2.0, floor=3.0, nbytes=small, cold=False) == ""
    assert reason(2.0, floor=math.nan, nbytes=small) == ""


def test_warm_and_graph_timing_bound_only_what_the_l2_cannot_hold():
    # 64 MiB, 50 MiB of it may sit in L2: 14 MiB from DRAM take >= 4.17 us
    assert reason(4.5, cold=False) == ""
    assert "faster than the memory allows" in reason(4.0, cold=False)
    assert reason(0.5, graph=True, nbytes=L2) == ""     # all of it fits in L2


def test_the_dram_bound_to_a_hundredth_of_a_microsecond():
    # 67,108,864 B / 3519.6e3 B/us = 19.067 us
    assert reason(19.07) == ""
    assert "faster than the memory allows" in reason(19.06)


def test_a_time_exactly_at_a_bound_is_possible():
    # 2,100,000 B at 1000 GB/s + 5% = 1,050,000 B/us take exactly 2 us
    assert impossible_reason(2.0, 2_100_000, 1000.0, 0.0, 0, cold=True, graph=False) == ""
    assert impossible_reason(1.999, 2_100_000, 1000.0, 0.0, 0, cold=True, graph=False) != ""
    # a floor of 2 us less 5% is 1.9 us
    assert reason(1.9, floor=2.0, nbytes=4096) == ""
    assert "shorter than an empty kernel" in reason(1.899, floor=2.0, nbytes=4096)


def test_an_untimed_case_or_one_without_bytes_is_not_judged():
    for median in (0.0, -1.0, math.nan):
        assert reason(median) == ""
    assert reason(1.0, floor=3.0, nbytes=0) == ""


def test_without_a_known_peak_only_the_timing_floor_bounds():
    # peak 0 (not recorded): no DRAM bound, but 1.31 us is still under the 3 us floor
    assert "shorter than an empty kernel" in impossible_reason(1.31, BYTES, 0.0, 3.0, L2,
                                                               cold=True, graph=False)
    assert impossible_reason(5.0, BYTES, 0.0, 3.0, L2, cold=True, graph=False) == ""


def test_any_known_peak_bounds_and_an_unknown_l2_holds_nothing():
    # 1000 B at 1 GB/s + 5% take 1000 / 1050 = 0.95238 us (with one byte left out,
    # 999 / 1050 = 0.95143 us): warm timing without an L2 size reads all of it from DRAM
    assert "faster than the memory allows" in impossible_reason(0.9, 1000, 1.0, 0.0, 0,
                                                                cold=True, graph=False)
    assert "faster than the memory allows" in impossible_reason(0.952, 1000, 1.0, 0.0, 0,
                                                                cold=False, graph=False)


def test_an_input_that_fits_in_the_l2_is_not_bounded_however_fast():
    assert reason(1e-9, cold=False, nbytes=L2) == ""
    assert reason(1e-9, graph=True, nbytes=L2 // 2) == ""


@pytest.mark.parametrize("mode, timing, suspect", [
    ("cold", "single", True), (None, None, True),    # the defaults: cold, single
    ("cold", "graph", False), ("warm", "single", False)])
def test_the_runner_holds_only_cold_single_timing_to_the_timing_floor(mode, timing, suspect):
    # 4 KiB at 2 us is far under any DRAM bound; the floor is 3 us
    record = Record("shfl", "float32", 1024, 256, median_us=2.0, bytes_read=4096)
    meta = {"peak_gbps": PEAK, "timing_floor_us": 3.0, "l2_bytes": L2}
    meta.update({k: v for k, v in (("mode", mode), ("timing", timing)) if v is not None})
    mark_if_impossible(record, meta)
    assert (record.status == "suspect") == suspect
    assert ("shorter than an empty kernel" in (record.note or "")) == suspect


def test_the_runner_marks_an_impossible_case_and_says_why():
    record = Record("callable", "float32", 2**24, 0, median_us=1.31, bytes_read=BYTES)
    mark_if_impossible(record, {"peak_gbps": PEAK, "timing_floor_us": 3.0, "mode": "cold",
                                "timing": "single", "l2_bytes": L2})
    assert record.status == "suspect" and not record.verified
    assert "outside the timed stream" in record.note


def test_a_run_with_an_impossibly_fast_device_writes_suspect_rows(tmp_path):
    settings = settings_from({"size": "2^20", "rung": "shfl,cub", "seed": 1})
    records = run(settings, FakeBackend(times=[0.05, 0.05, 0.05]), lambda r: None)
    assert {r.status for r in records} == {"suspect"}
    ok = run(settings, FakeBackend(), lambda r: None)   # 10-12 us: 1 MiB at ~100 GB/s
    assert {r.status for r in ok} == {"ok"}


def test_counter_columns_survive_the_file(tmp_path):
    """A row measured with --metrics keeps every ncu_ value through the CSV."""
    counters = {c: (f"text {i}" if isinstance(v, str) else float(i + 1))
                for i, (c, v) in enumerate(blank_metrics().items())}
    record = Record("shfl", "float32", 1024, 256, samples=3, median_us=5.0,
                    metrics=counters, meta={"schema_version": SCHEMA_VERSION})
    path = tmp_path / "counters.csv"
    RowWriter(path).write(record)
    row = read_results(path).iloc[0]
    for column in METRIC_COLUMNS:
        expected = counters[column]
        if isinstance(expected, str):
            assert row[column] == expected, column
        else:
            assert row[column] == pytest.approx(expected), column


def test_each_impossible_time_says_why_in_its_own_words():
    # 4 MB at 1 us is 4,000 GB/s; the GPU's 1,000 GB/s (5% margin) needs 3.81 us
    assert impossible_reason(1.0, 4_000_000, 1000.0, 0.0, 0, cold=True, graph=False) == (
        "faster than the memory allows: 4,000 GB/s from DRAM where the GPU peaks at "
        "1,000 GB/s; the work probably ran outside the timed stream")
    # no peak known: only the floor
    assert impossible_reason(1.31, 4_000_000, 0.0, 3.0, 0, cold=True, graph=False) == (
        "shorter than an empty kernel (1.31 us < timing floor 3.00 us): the work probably "
        "ran outside the timed stream")
