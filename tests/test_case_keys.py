"""A case's key (ladder/case.py), the one identity of a case in results files, `--resume`,
`compare` and samples files: its fields for one row and for several, the dispatchers'
keys without block or parameters, and parameters added after files were written."""

from __future__ import annotations

from reducebench.ladder.case import case_key, keyed_params


def test_a_one_row_case_has_the_five_fields_every_schema_version_had():
    assert case_key("gmem", "float32", 1024, 256, "unroll=4") == \
        ("gmem", "float32", 1024, 256, "unroll=4")


def test_a_case_of_several_rows_adds_its_row_count():
    assert case_key("row_warp", "float32", 2000, 256, "", rows=2) == \
        ("row_warp", "float32", 2000, 256, "", 2)
    assert case_key("row_warp", "float32", 33000, 256, "", rows=1000) == \
        ("row_warp", "float32", 33000, 256, "", 1000)


def test_auto_and_row_auto_are_keyed_as_asked_whatever_they_resolved_to():
    assert case_key("auto", "float32", 2**24, 512, "loads=4") == ("auto", "float32", 2**24, 0, "")
    assert case_key("row_auto", "int32", 33000, 256, "evict_first=1;loads=4", rows=1000) == \
        ("row_auto", "int32", 33000, 0, "", 1000)


def test_evict_first_at_0_is_left_out_and_other_values_and_parameters_are_kept():
    assert keyed_params("evict_first=0;group_rows=1;lanes=4") == "group_rows=1;lanes=4"
    assert keyed_params("evict_first=0") == ""
    assert keyed_params("evict_first=1;loads=4") == "evict_first=1;loads=4"
    assert keyed_params("l2_prefetch=0;loads=4") == "l2_prefetch=0;loads=4"
    assert keyed_params("") == ""
    assert case_key("row_tile", "float32", 33000, 256, "evict_first=0;loads=4", rows=1000) == \
        case_key("row_tile", "float32", 33000, 256, "loads=4", rows=1000)


def test_row_tiles_one_tile_grid_named_persistent_0_is_the_case_without_it():
    """The files of dd4ef6c name row_tile's one-tile grid `persistent=0`: the kernel every
    other file measured, so `compare` and `--resume` pair their cases; another value is
    another case."""
    assert case_key("row_tile", "float32", 33000, 64, "evict_first=1;loads=4;persistent=0",
                    rows=1000) == case_key("row_tile", "float32", 33000, 64,
                                           "evict_first=1;loads=4", rows=1000)
    assert keyed_params("loads=4;persistent=16") == "loads=4;persistent=16"
