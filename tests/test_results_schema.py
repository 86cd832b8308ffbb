"""A results row as the schema builds it (results/schema.py): the blank counter columns,
the bandwidth formula, round medians as a cell and back, and each record's row with
its metadata, in the file's column order."""

from __future__ import annotations

import math

import pytest

from reducebench.results.schema import (COLUMNS, METRIC_COLUMNS, MULTIGPU, MULTIGPU_COLUMNS,
                                        SINGLE, TEXT_COLUMNS, MultiGpuRecord, Record,
                                        bandwidth_gbps, blank_metrics, columns_of,
                                        medians_text, parse_medians)


def test_blank_counters_are_empty_text_or_nan():
    blank = blank_metrics()
    assert list(blank) == list(METRIC_COLUMNS)
    assert {c for c, v in blank.items() if v == ""} == set(TEXT_COLUMNS) == {
        "ncu_version", "ncu_clock_control", "ncu_kernel_us", "ncu_grids", "ncu_stall_top"}
    assert all(math.isnan(v) for c, v in blank.items() if c not in TEXT_COLUMNS)


def test_bandwidth_is_bytes_per_nanosecond():
    # 4 GB in 2 ms is 2000 GB/s
    assert bandwidth_gbps(4e9, 2000.0) == pytest.approx(2000.0)


def test_round_medians_as_a_cell_and_back():
    assert medians_text([1.23456, 2, 0.5]) == "1.2346;2.0000;0.5000"
    assert parse_medians("1.2346;2.0000;0.5000") == (1.2346, 2.0, 0.5)
    assert parse_medians("0.25") == (0.25,)


@pytest.mark.parametrize("cell", [math.nan, None, 3.0, "", "  ", "1;x", "1;;2", "1;0", "1;-2",
                                  "1;inf", "nan"])
def test_a_cell_that_is_not_positive_times_is_no_rounds(cell):
    assert parse_medians(cell) == ()


META = {"schema_version": 5, "kind": "single", "run_id": "r1", "gpu": "H100", "seed": 7}


def test_a_records_row_has_every_column_in_order_with_its_metadata():
    row = Record("shfl", "float32", 1024, 256, median_us=3.5, meta=META).as_row()
    assert list(row) == list(COLUMNS)
    assert row["run_id"] == "r1" and row["seed"] == 7 and row["host"] == "" \
        and row["driver"] == ""
    assert row["verified"] is True and row["median_us"] == 3.5
    assert row["ncu_version"] == "" and math.isnan(row["ncu_dram_pct"])
    assert not {"meta", "metrics", "raw_samples"} & set(row)
    failed = Record("shfl", "float32", 1024, 256, status="FAIL",
                    metrics={"ncu_version": "2025.3", "ncu_dram_pct": 91.0}).as_row()
    assert failed["verified"] is False
    assert failed["ncu_version"] == "2025.3" and failed["ncu_dram_pct"] == 91.0


def test_a_multigpu_records_row_has_every_column_in_order_with_its_metadata():
    row = MultiGpuRecord("sharded", "sharded_sum:pingpong", "float32", 1024, 2,
                         meta={**META, "kind": "multigpu"}).as_row()
    assert list(row) == list(MULTIGPU_COLUMNS)
    assert row["kind"] == "multigpu" and row["run_id"] == "r1" and row["host"] == ""
    assert row["verified"] is True and row["gpus"] == 2
    assert MultiGpuRecord("sharded", "x", "float32", 1, 2, status="error").as_row()[
        "verified"] is False


def test_the_columns_of_each_kind():
    assert columns_of(MULTIGPU) == MULTIGPU_COLUMNS and columns_of(SINGLE) == COLUMNS
    assert columns_of("anything else") == COLUMNS
