"""The run's table (render/run_tables.py): each row's speed-up against the previous rung, the
first and cub, which rows are ranked and which is best, one table per size and dtype in
ladder order, and every row rendered."""

import math

import pytest
from rich.console import Console

from reducebench.render.run_tables import group, ratios, tables
from reducebench.results.schema import Record

META = {"gpu": "Fake GPU", "mode": "cold"}


def _rec(rung, median, status="ok", n=2**24, dtype="float32", block=256, **extra):
    samples = 0 if status in ("skipped", "error") or median is None else 10
    return Record(rung=rung, dtype=dtype, n=n, block=block, status=status, samples=samples,
                  median_us=math.nan if median is None else median,
                  min_us=math.nan if median is None else median * 0.95,
                  meta=dict(META), **extra)


def _by_rung(rows):
    return {row.record.rung: row for row in rows}


def test_ratios_against_previous_first_and_cub():
    rows = _by_rung(ratios([_rec("gmem", 400.0), _rec("smem_sequential", 200.0),
                            _rec("shfl", 100.0), _rec("cub", 80.0)]))
    assert math.isnan(rows["gmem"].vs_previous)
    assert rows["smem_sequential"].vs_previous == pytest.approx(2.0)
    assert rows["shfl"].vs_previous == pytest.approx(2.0)
    assert rows["cub"].vs_previous == pytest.approx(1.25)
    assert rows["gmem"].vs_first == pytest.approx(1.0)
    assert rows["shfl"].vs_first == pytest.approx(4.0)
    assert rows["cub"].vs_first == pytest.approx(5.0)
    assert rows["shfl"].vs_reference == pytest.approx(1.25)
    assert rows["cub"].vs_reference == pytest.approx(1.0)
    assert [r.record.rung for r in ratios([_rec("gmem", 400.0), _rec("cub", 80.0)])
            if r.best] == ["cub"]


def test_the_fastest_verified_row_is_best():
    rows = _by_rung(ratios([_rec("gmem", 400.0), _rec("vector_load", 70.0),
                            _rec("cub", 80.0)]))
    assert rows["vector_load"].best and not rows["cub"].best and not rows["gmem"].best
    assert rows["vector_load"].vs_reference == pytest.approx(70 / 80)


def test_failed_rows_are_never_ranked():
    rows = ratios([_rec("gmem", 400.0), _rec("shfl", 10.0, status="FAIL"),
                   _rec("shfl_xor", 200.0), _rec("cub", 100.0)])
    fail = rows[1]
    assert not fail.best
    assert all(math.isnan(v) for v in (fail.vs_previous, fail.vs_first, fail.vs_reference))
    by = _by_rung(rows)
    # the row after a FAIL compares with the last verified row, not the failed one
    assert by["shfl_xor"].vs_previous == pytest.approx(2.0)
    assert by["cub"].best


def test_errors_and_skips_are_never_ranked():
    rows = _by_rung(ratios([_rec("gmem", None, status="error", error="compile error"),
                            _rec("torch", None, status="skipped", error="no PyTorch"),
                            _rec("shfl", 100.0)]))
    assert not rows["gmem"].best and not rows["torch"].best and rows["shfl"].best
    assert rows["shfl"].vs_first == pytest.approx(1.0)


def test_without_a_verified_cub_row_there_is_no_vs_cub():
    rows = _by_rung(ratios([_rec("shfl", 100.0), _rec("cub", 50.0, status="FAIL")]))
    assert math.isnan(rows["shfl"].vs_reference)
    assert rows["shfl"].best


def test_nothing_verified_ranks_nothing():
    rows = ratios([_rec("shfl", 5.0, status="FAIL"), _rec("cub", None, status="error")])
    assert not any(row.best for row in rows)


def test_group_by_size_and_dtype_in_ladder_order():
    records = [_rec("cub", 80.0), _rec("shfl", 100.0, n=1024), _rec("gmem", 400.0),
               _rec("shfl", 100.0, block=128), _rec("shfl", 90.0, dtype="int32")]
    groups = group(records)
    assert list(groups) == [(2**24, "float32"), (1024, "float32"), (2**24, "int32")]
    assert [(r.rung, r.block) for r in groups[(2**24, "float32")]] == [
        ("gmem", 256), ("shfl", 128), ("cub", 256)]


def _render(records):
    console = Console(record=True, width=200)
    for t in tables(records):
        console.print(t)
    return console.export_text()


def test_tables_render_every_row():
    records = [_rec("cub", 80.0, block=0), _rec("gmem", 400.0, gbps=41.9, pct_peak=1.25),
               _rec("shfl", 100.0, status="FAIL", error="result 1.0 vs reference 2.0"),
               _rec("smem_unroll4", 150.0, throttled=True),
               _rec("gmem", None, status="skipped", dtype="float16",
                    error="gmem does not take float16"),
               _rec("shfl_unroll", 90.0, dtype="float16", params="unroll=8")]
    text = _render(records)
    for name in ("cub", "gmem", "shfl", "smem_unroll4", "shfl_unroll"):
        assert name in text
    assert "FAIL" in text and "result 1.0 vs reference 2.0" in text
    assert "skipped" in text and "does not take float16" in text
    assert "throttled" in text and "unroll=8" in text
    assert "n = 2^24 (16,777,216) float32" in text and "float16" in text
    assert "Fake GPU" in text and "cold L2" in text
    assert "400.00" in text and "5.00" in text      # gmem median; cub vs first
    lines = text.splitlines()
    cub_line = next(line for line in lines if line.lstrip("│┃ ").startswith("cub"))
    assert " - " in cub_line or "│ -" in cub_line   # libraries choose their own block


def test_one_table_per_size_and_dtype():
    records = [_rec("shfl", 10.0), _rec("shfl", 10.0, n=1000003),
               _rec("shfl", 10.0, dtype="int32")]
    assert len(tables(records)) == 3
    text = _render(records)
    assert "n = 1000003 (1,000,003) float32" in text
    assert "int32" in text


def test_empty_records_render_no_tables():
    assert tables([]) == []


def test_user_kernels_sit_after_the_ladder_and_before_the_libraries_in_run_order():
    records = [_rec("torch", 30), _rec("mine_v2", 26), _rec("cub", 28), _rec("shfl", 60),
               _rec("mine_v1", 27)]
    ordered = [r.rung for r in group(records)[(2**24, "float32")]]
    assert ordered == ["shfl", "mine_v2", "mine_v1", "cub", "torch"]
