"""The same-size read reference: measured once per (n, itemsize) in each round of a run,
through the backend's read_reference_us, recorded as read_us (the median of its rounds),
read_rounds_us and pct_read on every timed record; absent without the method; shown in
the run table, explain and tune."""

import math

import pandas as pd

from reducebench.analysis.ladder_steps import explain
from reducebench.ladder.auto import Variant
from reducebench.measuring.runner import pct_read, run
from reducebench.measuring.settings import settings_from
from reducebench.render.run_tables import Row, ratios, reference_rung, _name
from reducebench.results.schema import Record
from reducebench.tune.search import Measured, pick, score

from fakes import FakeBackend

READS = {(1024, 4): 8.0, (4096, 4): 9.0, (1024, 2): 7.0, (4096, 2): 7.5}


class ReadingBackend(FakeBackend):
    """A fake with a same-size read of known time per (n, itemsize)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.read_calls: list[tuple] = []

    def read_reference_us(self, handle, n, itemsize, sampling):
        self.read_calls.append((n, itemsize, sampling.graph))
        return READS[(n, itemsize)]


class DriftingRead(ReadingBackend):
    """Each later call of the read takes 1 us longer: which round a figure came from
    shows in it."""

    def read_reference_us(self, handle, n, itemsize, sampling):
        super().read_reference_us(handle, n, itemsize, sampling)
        return 8.0 + len(self.read_calls) - 1


def _run(backend, **values):
    values.setdefault("seed", 1234)
    values.setdefault("rounds", 1)
    return run(settings_from(values), backend, lambda record: None)


def test_read_us_is_measured_once_per_size_and_itemsize_and_divides_each_median():
    backend = ReadingBackend()  # medians of the fake: 11.0 us
    records = _run(backend, size="2^10,2^12", dtype="float32,int32,float16",
                   rung="shfl,cub")
    # float32 and int32 share an itemsize: one read per (n, itemsize), not per dtype
    assert backend.read_calls == [(1024, 4, False), (1024, 2, False),
                                  (4096, 4, False), (4096, 2, False)]
    for r in records:
        if r.status != "ok":  # cub takes no float16
            assert math.isnan(r.read_us) and math.isnan(r.pct_read)
            continue
        read = READS[(r.n, 2 if r.dtype == "float16" else 4)]
        assert r.read_us == read
        assert math.isclose(r.pct_read, 100 * read / 11.0)


def test_each_round_reads_once_per_size_and_the_row_keeps_every_round():
    backend = DriftingRead()
    records = _run(backend, size="2^10,2^12", rung="shfl,cub", rounds=3)
    # round-major: both sizes in round 0, then in round 1, then in round 2
    assert backend.read_calls == [(1024, 4, False), (4096, 4, False)] * 3
    small = [r for r in records if r.n == 1024]
    # 2^10 was read in calls 1, 3 and 5 of the run: 8, 10 and 12 us
    assert [r.read_rounds_us for r in small] == ["8.0000;10.0000;12.0000"] * 2
    assert [r.read_us for r in small] == [10.0, 10.0]
    assert math.isclose(small[0].pct_read, 100 * 10.0 / 11.0)


def test_the_read_is_timed_as_the_run_times_its_cases():
    backend = ReadingBackend()
    _run(backend, size="2^10", rung="shfl", timing="graph")
    assert backend.read_calls == [(1024, 4, True)]


def test_a_backend_without_the_method_leaves_the_columns_empty():
    records = _run(FakeBackend(), size="2^10", rung="shfl")
    assert records[0].status == "ok"
    assert math.isnan(records[0].read_us) and math.isnan(records[0].pct_read)


def test_an_untimed_run_measures_no_read():
    backend = ReadingBackend()
    records = _run(backend, size="2^10", rung="shfl", timed=False)
    assert backend.read_calls == [] and math.isnan(records[0].pct_read)


def test_pct_read_is_nan_without_either_time():
    assert pct_read(5.0, 10.0) == 50.0
    assert math.isnan(pct_read(float("nan"), 10.0)) and math.isnan(pct_read(5.0, 0.0))


# -- the run table ------------------------------------------------------------------------

def _record(rung, n, median, status="ok", pct=float("nan")):
    return Record(rung=rung, dtype="float32", n=n, block=0, status=status, samples=10,
                  median_us=median, pct_read=pct)


def test_torch_is_the_reference_past_cubs_limit_and_is_marked():
    big = 2**32
    rows = ratios([_record("cub", big, math.nan, status="skipped"),
                   _record("auto", big, 5.0), _record("torch", big, 10.0)])
    assert reference_rung([r.record for r in rows if r.record.status == "ok"]) == "torch"
    auto, torch = rows[1], rows[2]
    assert auto.vs_reference == 0.5 and torch.reference
    assert "2^31-1" in _name(torch) and "2^31-1" not in _name(auto)
    # within CUB's range, cub stays the reference and torch is not marked
    rows = ratios([_record("cub", 2**20, 8.0), _record("auto", 2**20, 4.0),
                   _record("torch", 2**20, 16.0)])
    assert rows[1].vs_reference == 0.5 and not any(r.reference for r in rows)
    small = ratios([_record("auto", 2**20, 4.0), _record("torch", 2**20, 16.0)])
    assert math.isnan(small[0].vs_reference)


def test_the_run_table_shows_pct_read():
    from rich.console import Console

    from reducebench.render.run_tables import table

    console = Console(width=200, record=True)
    console.print(table(2**20, "float32", [_record("auto", 2**20, 4.0, pct=97.25)]))
    text = console.export_text()
    assert "% read" in text and "97.2" in text


# -- explain and tune -----------------------------------------------------------------------

def test_explain_shows_pct_read_and_the_same_size_read():
    rows = [dict(rung=r, n=2**24, dtype="float32", block=256, status="ok", median_us=t,
                 read_us=20.0, pct_read=100 * 20.0 / t, ncu_dram_pct=d)
            for r, t, d in (("shfl", 40.0, 50.0), ("shfl_unroll", 25.0, 80.0))]
    result = explain(pd.DataFrame(rows), ("shfl", "shfl_unroll"))
    assert "same-size read 20.00 us" in result.title
    line = next(l for l in result.reports[0].lines if l.counter.key == "pct_read")
    assert (line.before, line.after) == (50.0, 80.0)


def test_tune_scores_by_the_same_size_read():
    a, b = Variant.of("pingpong", 256, loads=4), Variant.of("pingpong", 128, loads=4)
    times = {(a, 10): 10.0, (a, 20): 112.0, (b, 10): 11.0, (b, 20): 100.0}
    # against the fastest: a is 1.0 and 1.12 of it, b 1.1 and 1.0: b's worst is better
    assert pick([a, b], Measured(times=dict(times)), (10, 20))[0] == b
    # against the read: a is 50.0% and 89.3% of it, b 45.5% and 100%: a's worst is better
    m = Measured(times=dict(times), reads={10: 5.0, 20: 100.0})
    assert math.isclose(score(a, m, (10, 20), [a, b]), 2.0)
    assert pick([a, b], m, (10, 20))[0] == a
    assert math.isclose(m.pct_read(a, 20), 100 * 100 / 112)
    # a read measured later for the same n does not replace the first
    m.add(Measured(reads={10: 1.0}))
    assert m.reads[10] == 5.0


def test_a_metrics_child_of_auto_runs_auto_without_the_variants_options():
    # `run --metrics --rung auto` used to repeat the resolved variant's --param and
    # --block for the child, which refuses them for auto (ncu exit status 2)
    from pathlib import Path

    from reducebench.measuring.counters import profile_argv
    from reducebench.core.dtypes import DTYPES
    from reducebench.ladder.auto import resolve_auto_cases
    from reducebench.ladder.case import Case
    from reducebench.ladder.registry import LADDER

    settings = settings_from({"rung": "auto"})
    (case,), _ = resolve_auto_cases([Case(LADDER["auto"], DTYPES["float32"], 2**20, 0)],
                                    "Fake GPU", 132)
    assert case.params  # the variant has parameters, which the child must not get
    argv = profile_argv(case, settings, Path("case.csv"))
    assert argv[argv.index("--rung") + 1] == "auto"
    assert "--param" not in argv and "--block" not in argv


def test_plot_draws_pct_read_and_refuses_a_file_without_it(tmp_path):
    import pytest

    from reducebench.core.errors import ResultsFileError
    from reducebench.render.plots import plot_results

    pytest.importorskip("matplotlib")
    frame = pd.DataFrame([dict(rung="auto", dtype="float32", n=n, block=0, params="",
                               status="ok", median_us=t, gbps=4 * n / t / 1e3, pct_read=p)
                          for n, t, p in ((2**10, 4.0, 92.0), (2**20, 5.0, 95.0))])
    info = plot_results(frame, tmp_path / "p.png", y="pct_read")
    assert info.points == 2 and (tmp_path / "p.png").stat().st_size > 0
    with pytest.raises(ResultsFileError, match="pct_read"):
        plot_results(frame.drop(columns="pct_read"), tmp_path / "q.png", y="pct_read")
