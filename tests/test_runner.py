"""The runner against a pure-Python backend: case order, skips, verification, errors,
records written as they complete, memory checks, seeds and throttling. These tests take
one round (tests/test_rounds.py covers a case measured in several)."""

import math

import numpy as np
import pytest

from reducebench.measuring.settings import RunSettings, settings_from
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import OutOfDeviceMemory
from reducebench.verify.inputs import derive_seed, make_input
from reducebench.core.errors import ContextLost
from reducebench.ladder.case import Case
from reducebench.ladder.registry import LADDER
from reducebench.measuring.runner import expand_cases, run
from reducebench.core.stats import StopRule

from fakes import PEAK, FakeBackend


def _settings(**values):
    values.setdefault("size", "2^12")
    values.setdefault("seed", 1234)
    values.setdefault("rounds", 1)
    return settings_from(values)


def _at_blocks(settings, *blocks):
    """Settings whose named rungs need not take these blocks: what `--rung all --block 32`
    or a resumed file gives the runner (a rung named by name is refused up front:
    tests/test_option_checks.py)."""
    settings.blocks = list(blocks)
    return settings


def _run(settings, backend):
    written = []

    def write(record):
        backend.events.append(("write", record.rung, record.n, record.block))
        written.append(record)

    records = run(settings, backend, write)
    return records, written


# -- cases ------------------------------------------------------------------------------

def test_expand_cases_order_sizes_then_dtypes_then_rungs_blocks_params():
    s = _settings(size="2^10,2^12", dtype="float32,int32", rung="shfl_unroll,cub",
                  block="128,256", params=["unroll=2,4"])
    labels = [(c.n, c.dtype.name, c.rung.name, c.block, c.params.get("unroll"))
              for c in expand_cases(s)]
    expected = []
    for n in (1024, 4096):
        for dtype in ("float32", "int32"):
            for block in (128, 256):
                for unroll in (2, 4):
                    expected.append((n, dtype, "shfl_unroll", block, unroll))
            expected.append((n, dtype, "cub", 0, None))
    assert labels == expected


def test_library_rungs_get_block_0_once():
    cases = expand_cases(_settings(rung="cub,torch", block="64,128,256"))
    assert [(c.rung.name, c.block) for c in cases] == [("cub", 0), ("torch", 0)]
    assert "block" not in cases[0].label


def test_case_label_and_params_text():
    case = Case(LADDER["vector_load"], settings_from({}).dtypes[0], 1024, 256,
                {"loads": 2, "blocks_per_sm": 4})
    assert case.label == "vector_load float32 n=1024 block=256 blocks_per_sm=4 loads=2"
    assert case.params_text() == "blocks_per_sm=4;loads=2"


# -- outcomes ---------------------------------------------------------------------------

def test_correct_results_are_verified_and_timed():
    backend = FakeBackend()
    records, written = _run(_settings(rung="shfl,gridstride_atomic,cub"), backend)
    assert [r.status for r in records] == ["ok", "ok", "ok"]
    assert written == records
    shfl = records[0]
    assert shfl.result == shfl.reference and shfl.abs_error == 0.0 and shfl.tolerance == 0
    assert shfl.meta["inputs"] == "exact" and isinstance(shfl.reference, int)
    assert (shfl.samples, shfl.median_us, shfl.min_us, shfl.max_us) == (3, 11.0, 10.0, 12.0)
    assert shfl.grid == 16 and shfl.launches == 2 and shfl.finish == "relaunch"
    assert shfl.meta["gpu"] == "Fake GPU" and shfl.meta["mode"] == "cold"


def test_unsupported_dtype_and_block_become_skipped_records():
    backend = FakeBackend()
    records, _ = _run(_at_blocks(_settings(dtype="float16",
                                           rung="gmem,unroll_last_warp,torch,shfl"), 32),
                      backend)
    by_rung = {r.rung: r for r in records}
    assert by_rung["gmem"].status == "skipped" and "float16" in by_rung["gmem"].error
    assert by_rung["unroll_last_warp"].status == "skipped"
    assert "block 32" in by_rung["unroll_last_warp"].error
    assert by_rung["torch"].status == "ok" and by_rung["shfl"].status == "ok"
    measured = [e[1] for e in backend.events if e[0] == "measure"]
    assert not any(label.startswith(("gmem", "unroll_last_warp")) for label in measured)
    both, _ = _run(_settings(dtype="bfloat16,float32", rung="cub"), FakeBackend())
    assert [(r.dtype, r.status) for r in both] == [("bfloat16", "skipped"), ("float32", "ok")]


def test_a_run_of_only_skipped_cases_uploads_nothing():
    backend = FakeBackend()
    # (a rung given no dtype it takes is refused before the run: settings tests)
    records, _ = _run(_at_blocks(_settings(rung="unroll_last_warp"), 32), backend)
    assert [r.status for r in records] == ["skipped"] and backend.uploads == []


def test_a_wrong_result_is_a_FAIL_with_the_error_text():
    backend = FakeBackend(wrong={"shfl": 12345.0})
    records, _ = _run(_settings(rung="smem_sequential,shfl,shfl_xor"), backend)
    assert [r.status for r in records] == ["ok", "FAIL", "ok"]
    fail = records[1]
    assert not fail.verified and fail.result == 12345.0
    assert "12345.0" in fail.error and "the reference is exact" in fail.error
    assert repr(fail.reference) in fail.error
    assert fail.abs_error == pytest.approx(abs(12345.0 - fail.reference))


def test_a_result_off_by_one_element_fails():
    f32 = DTYPES["float32"]
    host = make_input(2**12, f32, derive_seed(1234, 2**12, f32))   # what the run will use
    smallest = float(np.abs(host.data).min())
    backend = FakeBackend(wrong={"shfl": host.reference - smallest})
    records, _ = _run(_settings(rung="shfl"), backend)
    assert records[0].reference == host.reference
    assert records[0].abs_error == pytest.approx(smallest)
    assert records[0].status == "FAIL"


def test_a_case_is_verified_on_every_input_and_a_signed_input_failure_is_named():
    """At 2^20 float32 the timed (positive) input is checked, and a signed one after it."""
    class WrongOnTheSignedInput(FakeBackend):
        def execute(self, case, plan, handle, sampling):
            measured = super().execute(case, plan, handle, sampling)
            if sampling is None:   # the untimed check on the second input
                measured.values = [v + 1 for v in measured.values]
            return measured

    records, _ = _run(_settings(size="2^20", rung="shfl"), WrongOnTheSignedInput())
    assert records[0].status == "FAIL" and records[0].error.startswith("signed input")
    assert records[0].result == records[0].reference   # the timed input's own result


def test_a_wrong_int_result_fails():
    backend = FakeBackend(wrong={"shfl": 7})
    records, _ = _run(_settings(dtype="int32", rung="shfl,smem_unroll4"), backend)
    assert [r.status for r in records] == ["FAIL", "ok"]
    assert records[1].tolerance == 0.0


def test_a_nan_result_fails():
    backend = FakeBackend(wrong={"shfl": math.nan})
    records, _ = _run(_settings(rung="shfl"), backend)
    assert records[0].status == "FAIL"


def test_later_runs_are_checked_too():
    class Drifting(FakeBackend):
        def execute(self, case, plan, handle, sampling):
            m = super().execute(case, plan, handle, sampling)
            m.values[-1] += 100.0     # e.g. a ticket left unreset
            return m

    records, _ = _run(_settings(rung="single_pass"), Drifting())
    assert records[0].status == "FAIL" and "later runs" in records[0].error
    assert records[0].result == records[0].reference


def test_a_failed_case_is_an_error_and_the_run_goes_on():
    backend = FakeBackend(fail={"shfl"})
    records, written = _run(_settings(rung="smem_sequential,shfl,shfl_xor,cub"), backend)
    assert [r.status for r in records] == ["ok", "error", "ok", "ok"]
    assert records[1].error == "compile error: expected ';'"
    assert len(written) == 4


def test_a_skipped_library_is_a_skipped_record():
    backend = FakeBackend(skip={"torch"})
    records, _ = _run(_settings(rung="torch,cub"), backend)
    assert [r.status for r in records] == ["skipped", "ok"]
    assert records[0].error == "PyTorch is not installed"


def test_a_lost_context_writes_its_record_then_stops_the_run():
    backend = FakeBackend(lose={"shfl"})
    written = []
    with pytest.raises(ContextLost, match="shfl"):
        run(_settings(rung="smem_sequential,shfl,shfl_xor"), backend, written.append)
    assert [(r.rung, r.status) for r in written] == [("smem_sequential", "ok"),
                                                     ("shfl", "error")]
    assert written[1].error.startswith("context lost")
    assert "illegal memory access" in written[1].error
    assert not any(e[1].startswith("shfl_xor") for e in backend.events if e[0] == "measure")
    assert backend.released == []  # freeing in a dead context would only raise again


def test_inputs_are_released_when_a_run_ends_normally():
    backend = FakeBackend()
    run(_settings(rung="shfl"), backend, lambda record: None)
    assert len(backend.released) == 1


def test_records_are_written_one_by_one_as_cases_complete():
    backend = FakeBackend()
    s = _settings(size="2^10,2^12", rung="shfl,cub")
    records, written = _run(s, backend)
    assert written == records and len(records) == 4
    kinds = [e[0] for e in backend.events]
    assert kinds == ["upload", "measure", "write", "measure", "write",
                     "upload", "measure", "write", "measure", "write"]
    assert [(e[1], e[2]) for e in backend.events if e[0] == "write"] == [
        ("shfl", 1024), ("cub", 1024), ("shfl", 4096), ("cub", 4096)]


def test_one_upload_per_size_and_dtype_and_every_handle_released():
    backend = FakeBackend()
    _run(_settings(size="2^10,2^11", dtype="float32,int32", rung="shfl,smem_sequential",
                   block="128,256"), backend)
    assert [(h.data.dtype.name, h.data.size) for h in backend.uploads] == [
        ("float32", 1024), ("int32", 1024), ("float32", 2048), ("int32", 2048)]
    assert [id(h) for h in backend.released] == [id(h) for h in backend.handles]


def test_gbps_and_pct_peak_come_from_bytes_and_median():
    backend = FakeBackend(times=[20.0, 10.0, 40.0, 10.0, 30.0])
    records, _ = _run(_settings(size="2^20", dtype="float32,float16", rung="shfl"), backend)
    f32, f16 = records
    assert f32.median_us == 20.0 and f32.min_us == 10.0 and f32.samples == 5
    assert f32.bytes_read == 4 * 2**20 and f16.bytes_read == 2 * 2**20
    assert f32.gbps == pytest.approx(4 * 2**20 / 20e-6 / 1e9)
    assert f16.gbps == pytest.approx(f32.gbps / 2)
    assert f32.pct_peak == pytest.approx(100 * f32.gbps / PEAK)
    assert f32.noise_pct == pytest.approx(100 * np.std([20, 10, 40, 10, 30], ddof=1) / 22)


def test_no_peak_means_no_pct_peak():
    class NoPeak(FakeBackend):
        def device_info(self):
            return {**super().device_info(), "peak_gbps": 0}

    records, _ = _run(_settings(rung="shfl"), NoPeak())
    assert records[0].gbps > 0 and math.isnan(records[0].pct_peak)


def test_random_inputs_get_a_tolerance_from_the_plans_atomics():
    records, _ = _run(_settings(size="2^20", rung="shfl,warp_atomic", inputs="random"),
                      FakeBackend())
    tree, warp = records
    assert tree.meta["inputs"] == "random" and 0 < tree.tolerance
    assert warp.tolerance > 3 * tree.tolerance


def test_check_memory_refuses_before_any_upload():
    # two inputs at 2^20 (a positive and a signed one), three passes' partials and the
    # result (4096 + 16 + 1 floats), 1 MiB of slack
    need = 2 * 4 * 2**20 + 4 * (2**12 + 16 + 1) + 2**20
    backend = FakeBackend(free=need - 1)
    written = []
    with pytest.raises(OutOfDeviceMemory) as info:
        run(_settings(size="2^10,2^20", rung="shfl"), backend, written.append)
    assert "shfl float32 n=1048576" in str(info.value)
    assert backend.uploads == [] and written == []
    records, _ = _run(_settings(size="2^10,2^20", rung="shfl"), FakeBackend(free=need))
    assert [r.status for r in records] == ["ok", "ok"]


def test_check_memory_ignores_cases_that_will_be_skipped():
    backend = FakeBackend(free=1000)
    records, _ = _run(_at_blocks(_settings(size="2^20", rung="unroll_last_warp"), 32), backend)
    assert records[0].status == "skipped"


def test_seed_makes_inputs_reproducible():
    first, second = FakeBackend(), FakeBackend()
    s = _settings(size="2^10,2^11", dtype="float32,int32", rung="shfl")
    records_a, _ = _run(s, first)
    records_b, _ = _run(s, second)
    assert all(r.meta["seed"] == 1234 for r in records_a)
    for a, b in zip(first.uploads, second.uploads):
        assert np.array_equal(a.data, b.data)
        assert a.seed == b.seed
    assert [r.reference for r in records_a] == [r.reference for r in records_b]
    # every size and dtype gets its own input, derived from the run's seed
    assert len({h.seed for h in first.uploads}) == 4
    assert first.uploads[0].seed == derive_seed(1234, 1024, DTYPES["float32"])


def test_another_seed_gives_other_inputs():
    a, b = FakeBackend(), FakeBackend()
    _run(_settings(rung="shfl", seed=1), a)
    _run(_settings(rung="shfl", seed=2), b)
    assert not np.array_equal(a.uploads[0].data, b.uploads[0].data)


def test_without_a_seed_one_is_drawn_and_recorded():
    backend = FakeBackend()
    records = run(settings_from({"size": "2^10", "rung": "shfl"}), backend, lambda r: None)
    seed = records[0].meta["seed"]
    assert isinstance(seed, int)
    assert backend.uploads[0].seed == derive_seed(seed, 1024, DTYPES["float32"])


def test_throttling_marks_cases_below_90_percent_of_the_first_clock():
    # two readings per measured case: start and end
    clocks = [1980, 1980,  1900, 1850,  1700, 1980,  1980, 1790,  1782, 1782]
    backend = FakeBackend(clocks=clocks)
    records, _ = _run(_settings(rung="smem_sequential,shfl,shfl_xor,multi_elem,cub"),
                      backend)
    assert [r.throttled for r in records] == [False, False, True, False, False]
    assert records[2].sm_clock_start_mhz == 1700 and records[2].sm_clock_end_mhz == 1980
    assert records[3].sm_clock_end_mhz == 1790


def test_no_clock_readings_never_flag_throttling():
    records, _ = _run(_settings(rung="shfl,cub"), FakeBackend(clocks=None))
    assert not any(r.throttled for r in records)
    assert all(math.isnan(r.sm_clock_start_mhz) for r in records)


def test_skipped_cases_are_never_throttled():
    backend = FakeBackend(clocks=[1980, 1980, 500, 500])
    records, _ = _run(_settings(dtype="float16", rung="shfl,gmem,torch"), backend)
    assert [r.throttled for r in records] == [False, False, True]


def test_profile_mode_uses_a_three_sample_rule():
    seen = []

    class Recording(FakeBackend):
        def execute(self, case, plan, handle, sampling):
            seen.append(sampling)
            return super().execute(case, plan, handle, sampling)

    s = _settings(rung="shfl", mode="warm", min_samples=4)
    _run(s, Recording())
    s.profile = True
    _run(s, Recording())
    assert (seen[0].stop, seen[0].cold, seen[0].hold) == (StopRule(min_samples=4), False, True)
    assert seen[1].stop.max_samples == 3 and seen[1].stop.min_samples == 3
    assert not seen[1].hold   # a profiler serialises launches: a held stream would stall


def test_an_explicit_case_list_is_run_as_given():
    s = RunSettings(seed=5)
    cases = [Case(LADDER["cub"], s.dtypes[0], 1024, 0), Case(LADDER["shfl"], s.dtypes[0],
                                                             1024, 64)]
    backend = FakeBackend()
    records = run(s, backend, lambda r: None, cases=cases)
    assert [(r.rung, r.block) for r in records] == [("cub", 0), ("shfl", 64)]


def test_a_signal_while_counters_are_read_keeps_the_timed_case_with_a_note():
    """--metrics reads a case's counters after it is timed: a signal then keeps the case
    (its counter columns empty, a note saying why) and stops the sweep."""
    import os
    import signal

    from reducebench.core.interrupt import Interrupted, stop_on_signals

    settings = settings_from({"size": "2^10", "rung": "shfl,cub", "seed": 1})
    written = []

    def read_counters(case, record):
        os.kill(os.getpid(), signal.SIGTERM)

    with stop_on_signals(), pytest.raises(Interrupted):
        run(settings, FakeBackend(), written.append, after_case=read_counters)
    assert [r.rung for r in written] == ["shfl"]
    assert written[0].status == "ok" and "interrupted while its counters" in written[0].note
    assert written[0].metrics == {}


def test_reading_a_file_with_a_case_twice_keeps_the_later_row_and_warns_once(tmp_path):
    from reducebench.results.files import ResultsWarning, RowWriter, read_results
    from reducebench.results.schema import SCHEMA_VERSION, Record

    path = tmp_path / "twice.csv"
    writer = RowWriter(path)
    meta = {"schema_version": SCHEMA_VERSION}
    for median in (5.0, 6.0):
        writer.write(Record("auto", "float32", 1024, 256, params="loads=4", median_us=median,
                            meta=meta))
    writer.write(Record("auto", "float32", 1024, 512, params="loads=8", median_us=7.0,
                        meta=meta))   # auto resolved otherwise: still the same case
    writer.write(Record("shfl", "float32", 1024, 256, median_us=9.0, meta=meta))
    with pytest.warns(ResultsWarning) as warned:
        frame = read_results(path)
    assert len(warned) == 1
    assert "1 case(s) were measured more than once" in str(warned[0].message)
    assert "2 earlier row(s) left out" in str(warned[0].message)
    assert frame["median_us"].tolist() == [7.0, 9.0]


def test_each_case_is_planned_once(monkeypatch):
    """The memory check and the measurement share one plan per case."""
    import reducebench.measuring.runner as runner

    planned = []
    real = runner.plan_case

    def counting(case, sm_count):
        planned.append(case.label)
        return real(case, sm_count)

    monkeypatch.setattr(runner, "plan_case", counting)
    records = run(settings_from({"size": "2^10,2^12", "rung": "shfl,single_pass", "seed": 2}),
                  FakeBackend(), lambda r: None)
    assert len(records) == 4 and sorted(planned) == sorted(set(planned)) and len(planned) == 4
