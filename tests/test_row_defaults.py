"""The built-in row table (DEFAULT_ROW_TABLE, row_auto without row bands in a tuning
file) is what scripts/row_defaults.py derives from the committed H100 shape sweeps: the
rule docs/tuning.md says the defaults follow. The script's rule itself is checked on a
small frame worked by hand."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from reducebench.ladder.auto import DEFAULT_ROW_TABLE

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "row_defaults.py"
spec = importlib.util.spec_from_file_location("row_defaults", SCRIPT)
row_defaults = importlib.util.module_from_spec(spec)
spec.loader.exec_module(row_defaults)

SWEEPS = [ROOT / "results" / "h100" / name for name in (
    "rows_sweep_7cb42f7.csv", "rows_multi_narrow_7cb42f7.csv", "rows_hint_probe_7cb42f7.csv",
    "rows_multi_wide_ae91a09.csv", "rows_odd_ae91a09.csv")]


def test_the_built_in_row_table_is_the_sweeps():
    frame = row_defaults.sources(SWEEPS)
    derived = row_defaults.joined(row_defaults.choices(frame))
    table = [(b.cols_min, b.cols_max, b.total_min, b.total_max,
              (b.variant.rung, b.variant.block, b.variant.params), b.rows_aligned)
             for b in DEFAULT_ROW_TABLE.row_bands]
    assert table == derived


def record(rung, rows, cols, us, status="ok", params="", read_us=1.0):
    return dict(rung=rung, rows=rows, cols=cols, median_us=us, status=status, block=256,
                params=params, read_us=read_us)


def test_the_fastest_over_a_band_neighbours_joined_libraries_left_out():
    frame = pd.DataFrame([
        # COLS 4 and 8 (octaves 2 and 3) at 2^10 elements: row_thread fastest in both
        record("row_thread", 256, 4, 1.0), record("row_warp", 256, 4, 2.0),
        record("row_thread", 128, 8, 1.0), record("row_warp", 128, 8, 3.0),
        # COLS 32 and 33 (one octave, 33..64 holds 33 and... 32 is octave 5, 33 octave 6)
        record("row_thread", 32, 32, 5.0), record("row_warp", 32, 32, 2.0),
        # a library faster everywhere is never chosen; nor a FAIL
        record("torch_rows", 256, 4, 0.1), record("row_block", 128, 8, 0.1, status="FAIL"),
        # COLS 16 at 2^10: row_warp with a parameter; row_group fast at one shape of two
        record("row_group", 64, 16, 0.5, params="width=4"),
        record("row_warp", 64, 16, 1.5),
    ])
    picked = row_defaults.choices(frame)
    assert picked == {(2, 10, True): ("row_thread", 256, ()),
                      (3, 10, True): ("row_thread", 256, ()),
                      (4, 10, True): ("row_group", 256, (("width", 4),)),
                      (5, 10, True): ("row_warp", 256, ())}
    assert row_defaults.joined(picked) == [
        (3, 8, 513, 1024, ("row_thread", 256, ()), True),
        (9, 16, 513, 1024, ("row_group", 256, (("width", 4),)), True),
        (17, 32, 513, 1024, ("row_warp", 256, ()), True)]


def test_a_variant_missing_at_one_shape_of_a_band_is_not_a_choice():
    frame = pd.DataFrame([
        record("row_block", 1, 1000, 1.0), record("row_warp", 1, 1000, 2.0),
        record("row_warp", 1, 1024, 2.0),          # 1000 and 1024: one COLS octave
    ])
    assert row_defaults.choices(frame) == {(10, 10, True): ("row_warp", 256, ())}


def written(tmp_path, name, records, source_hash, utc_time="2026-11-27T10:00:00+00:00"):
    path = tmp_path / name
    pd.DataFrame([dict(r, dtype="float32", source_hash=source_hash, utc_time=utc_time)
                  for r in records]).to_csv(path, index=False)
    return path


def test_a_later_file_of_a_changed_kernel_replaces_what_it_measured_again(tmp_path):
    """row_vec_block measured again after its kernel changed (another source_hash): at
    the shape both files hold, the later figure alone counts, so the old kernel's 1.0 us
    no longer beats row_block's 1.5; at the shape only the old file holds, it stays."""
    old = written(tmp_path, "old.csv", [
        record("row_vec_block", 1, 4096, 1.0, params="loads=4"),
        record("row_vec_block", 1, 2048, 7.0, params="loads=4"),
        record("row_block", 1, 4096, 1.5)], "aaaa")
    new = written(tmp_path, "new.csv", [
        record("row_vec_block", 1, 4096, 2.0, params="evict_first=0;loads=4")], "bbbb",
        utc_time="2026-11-27T11:00:00+00:00")
    for listed in ([old, new], [new, old]):  # the later measurement, in whatever order
        frame = row_defaults.sources(listed)
        vec = frame[frame["rung"] == "row_vec_block"]
        assert sorted(zip(vec["cols"], vec["median_us"])) == [(2048, 7.0), (4096, 2.0)]
        assert row_defaults.choices(frame)[(12, 12, True)] == ("row_block", 256, ())
    # measured the other way round, the kernel of old.csv is the one that counts
    older = written(tmp_path, "older.csv", [
        record("row_vec_block", 1, 4096, 2.0, params="evict_first=0;loads=4")], "bbbb",
        utc_time="2026-11-27T09:00:00+00:00")
    frame = row_defaults.sources([older, old])
    assert sorted(frame[frame["rung"] == "row_vec_block"]["median_us"]) == [1.0, 7.0]


def test_a_variant_measured_again_counts_by_its_last_run_alone_whatever_its_source(tmp_path):
    """The same kernel measured by two runs on machines of one model: the later run
    measured both variants, so the band compares them within it (row_block's 1.9 against
    row_vec_block's 2.0), not row_vec_block's later 2.0 with row_block's earlier 1.9 and
    row_vec_block's earlier 1.0, whose mean (1.41) would have won on the older
    machine's figure. A library measured twice counts by its last record too."""
    first = written(tmp_path, "a.csv", [record("row_vec_block", 1, 4096, 1.0),
                                        record("row_block", 1, 4096, 2.5),
                                        record("torch_rows", 1, 4096, 3.0)], "aaaa",
                    utc_time="2026-11-27T09:00:00+00:00")
    second = written(tmp_path, "b.csv", [record("row_vec_block", 1, 4096, 2.0),
                                         record("row_block", 1, 4096, 1.9),
                                         record("torch_rows", 1, 4096, 4.0)], "aaaa")
    for listed in ([first, second], [second, first]):
        frame = row_defaults.sources(listed)
        assert sorted(zip(frame["rung"], frame["median_us"])) == [
            ("row_block", 1.9), ("row_vec_block", 2.0), ("torch_rows", 4.0)]
        assert row_defaults.choices(frame)[(12, 12, True)] == ("row_block", 256, ())


def test_a_variant_of_a_retired_parameter_is_no_candidate(tmp_path):
    """row_tile's persistent grid is gone from the rung: where a file measured it faster,
    the band still takes a variant that runs (its one-tile grid, named persistent=0 by
    that file, is the variant without the parameter)."""
    path = written(tmp_path, "tile.csv", [
        record("row_tile", 1, 4096, 1.0, params="loads=4;persistent=16"),
        record("row_tile", 1, 4096, 1.5, params="loads=4;persistent=0"),
        record("row_block", 1, 4096, 1.7)], "aaaa")
    assert row_defaults.choices(row_defaults.sources([path])) == {
        (12, 12, True): ("row_tile", 256, (("loads", 4),))}


def test_a_variant_is_scored_against_the_read_of_its_own_run():
    """Two runs on machines 5% apart: row_vec_block's 1.00 us where the read took 0.95
    loses to row_block's 0.99 where the read took 0.90 by time, and wins by time over the
    read (1.05 against 1.10). A record without its read is not scored."""
    frame = pd.DataFrame([
        record("row_vec_block", 1, 4096, 1.00, read_us=0.95),
        record("row_block", 1, 4096, 0.99, read_us=0.90),
        # sorts first among the variants: a NaN score there would stay the minimum
        dict(record("row_block", 1, 4096, 0.50, read_us=float("nan")), block=128),
    ])
    assert row_defaults.choices(frame) == {(12, 12, True): ("row_vec_block", 256, ())}


def test_a_variant_without_its_read_at_one_shape_of_a_band_is_not_scored():
    """COLS 4096 and 3000 are one band (one octave, both on 16-byte boundaries):
    row_block's 0.5 us at both would win, but its record at 1x3000 has no read, so it
    has no score over the band, and row_vec_block (1.0 over the read at both) is chosen."""
    frame = pd.DataFrame([
        # sorts first among the variants: a NaN score there would stay the minimum
        record("row_block", 1, 4096, 0.5),
        record("row_block", 1, 3000, 0.5, read_us=float("nan")),
        record("row_vec_block", 1, 4096, 1.0), record("row_vec_block", 1, 3000, 1.0),
    ])
    assert row_defaults.choices(frame) == {(12, 12, True): ("row_vec_block", 256, ())}


def test_evict_first_at_0_names_the_variant_that_had_no_such_parameter():
    from reducebench.ladder.case import UNKEYED_DEFAULTS
    assert row_defaults.UNKEYED_DEFAULTS == UNKEYED_DEFAULTS  # case keys pair them so too
    assert row_defaults.params_of("evict_first=0;loads=4") == (("loads", 4),)
    assert row_defaults.params_of("evict_first=1;loads=4") == (("evict_first", 1),
                                                               ("loads", 4))
    assert row_defaults.params_of("") == ()


def test_rows_on_and_off_16_byte_boundaries_are_bands_of_their_own():
    """Rows of 33 and 64 floats share a COLS octave (33..64): 33 floats (132 bytes) are
    off 16-byte boundaries, 64 (256 bytes) on them, and each kind gets its fastest."""
    frame = pd.DataFrame([
        record("row_tile", 31, 33, 1.0), record("row_multi", 31, 33, 3.0),
        record("row_tile", 16, 64, 2.0), record("row_multi", 16, 64, 1.0),
    ])
    picked = row_defaults.choices(frame)
    assert picked == {(6, 10, True): ("row_multi", 256, ()),
                      (6, 10, False): ("row_tile", 256, ())}
    assert row_defaults.joined(picked) == [(33, 64, 513, 1024, ("row_multi", 256, ()), True),
                                           (33, 64, 513, 1024, ("row_tile", 256, ()), False)]


def test_a_row_is_on_16_byte_boundaries_when_its_floats_fill_whole_vectors():
    """COLS floats of 4 bytes: 4, 8, 64 and 1000 (4000 bytes, 250 vectors) fill whole
    16-byte vectors; 1, 2, 3, 6 (24 bytes, a multiple of 8 only), 33 (132) and 1000003
    (4000012) do not."""
    for cols in (4, 8, 64, 1000):
        assert row_defaults.rows_aligned(cols), cols
    for cols in (1, 2, 3, 6, 33, 1000003):
        assert not row_defaults.rows_aligned(cols), cols


def test_the_kind_of_row_is_read_from_cols_not_from_rows_or_the_total():
    """4 rows of 33 floats are 132 floats (528 bytes, 33 vectors) in all, yet each row
    after the first starts off a 16-byte boundary; 31 rows of 64 floats are on them."""
    frame = pd.DataFrame([
        record("row_tile", 4, 33, 1.0), record("row_multi", 4, 33, 2.0),
        record("row_multi", 31, 64, 1.0), record("row_tile", 31, 64, 2.0),
    ])
    # 4 x 33: COLS octave 6 (33..64), total 132 in octave 8 (129..256); 31 x 64: total
    # 1984 in octave 11 (1025..2048)
    assert row_defaults.choices(frame) == {(6, 8, False): ("row_tile", 256, ()),
                                           (6, 11, True): ("row_multi", 256, ())}


def test_bands_are_joined_within_one_total_and_kind_and_ordered_by_total_then_kind():
    """Two totals, each with both kinds, given in no order: COLS 17..32 and 33..64 on the
    boundaries at 2^10 join (one choice, neighbouring octaves); nothing joins across a
    total or a kind; each total lists rows on the boundaries first."""
    multi, tile, warp = ("row_multi", 256, ()), ("row_tile", 256, ()), ("row_warp", 256, ())
    picked = {(6, 11, False): tile, (6, 10, True): multi, (6, 11, True): warp,
              (6, 10, False): tile, (5, 10, True): multi}
    assert row_defaults.joined(picked) == [(17, 64, 513, 1024, multi, True),
                                           (33, 64, 513, 1024, tile, False),
                                           (33, 64, 1025, 2048, warp, True),
                                           (33, 64, 1025, 2048, tile, False)]


def test_one_choice_in_cols_octaves_apart_is_not_joined_over_the_octave_between():
    """COLS 3..4 and 9..16 chose row_thread, and nothing was measured at 5..8: two
    bands, not one that claims COLS 5..8 for row_thread unmeasured."""
    thread = ("row_thread", 256, ())
    assert row_defaults.joined({(2, 10, True): thread, (4, 10, True): thread}) == [
        (3, 4, 513, 1024, thread, True), (9, 16, 513, 1024, thread, True)]


def test_a_band_as_a_tuning_file_table_carries_its_measurements():
    """COLS 4 and 8 at 2^10 elements join into one band of row_thread; its table lists
    both shapes by total then COLS, row_thread's medians and reads there, and the library
    whose geometric mean over both is smallest (cub_rows: sqrt(2 x 2) = 2 against torch's
    sqrt(1 x 9) = 3), not the one fastest at a single shape; a library missing a shape
    (triton_rows) is not a candidate, however fast, nor is row_auto."""
    frame = pd.DataFrame([
        {**record("row_thread", 256, 4, 1.5), "read_us": 1.25},
        {**record("row_thread", 128, 8, 1.75), "read_us": 1.5},
        record("row_warp", 256, 4, 3.0), record("row_warp", 128, 8, 3.0),
        record("torch_rows", 256, 4, 1.0), record("torch_rows", 128, 8, 9.0),
        record("cub_rows", 256, 4, 2.0), record("cub_rows", 128, 8, 2.0),
        record("triton_rows", 128, 8, 0.5),
        # row_auto is the dispatcher, neither a choice nor a library
        record("row_auto", 256, 4, 0.1), record("row_auto", 128, 8, 0.1),
    ])
    band, = row_defaults.joined(row_defaults.choices(frame))
    assert row_defaults.toml_band(frame, band) == [
        "[[row_band]]", "cols_min = 3", "cols_max = 8", "total_min = 513",
        "total_max = 1024", "rows_aligned = true", 'rung = "row_thread"', "block = 256",
        "params = {}", 'shapes = ["256x4", "128x8"]', "median_us = [1.500, 1.750]",
        'library = "cub_rows"', "library_us = [2.000, 2.000]", "read_us = [1.250, 1.500]"]


def test_a_library_measured_at_more_shapes_than_the_choice_is_still_a_candidate():
    """At 1x3000 (the band of 1x4096) row_block failed, so the band's shapes are 1x4096
    alone; cub_rows, measured there and at 1x3000 too, is still the band's library (2.0 us
    against torch_rows' 3.0): a shape more is no reason to leave a library out."""
    frame = pd.DataFrame([
        record("row_block", 1, 4096, 1.0), record("row_block", 1, 3000, 0.5, status="FAIL"),
        record("cub_rows", 1, 4096, 2.0), record("cub_rows", 1, 3000, 2.0),
        record("torch_rows", 1, 4096, 3.0),
    ])
    band, = row_defaults.joined(row_defaults.choices(frame))
    assert row_defaults.toml_band(frame, band)[-5:] == [
        'shapes = ["1x4096"]', "median_us = [1.000]", 'library = "cub_rows"',
        "library_us = [2.000]", "read_us = [1.000]"]


def test_the_bands_as_tuning_file_tables_read_back_as_the_built_in_table(tmp_path, capsys):
    """--toml over the H100 sweeps, under a tuning file's header, is a file reducebench
    reads, with the built-in table's bands in the built-in table's order."""
    from reducebench.ladder.auto import load_table
    row_defaults.main([str(p) for p in SWEEPS], toml=True)
    path = tmp_path / "gpu.toml"
    path.write_text('format = 2\ngpu = "GPU"\nsm_count = 132\ncompute_capability = "9.0"\n'
                    'date = "2026-11-27"\ndtype = "float32"\nelement_bytes = 4\n'
                    + capsys.readouterr().out)
    bands = load_table(path).row_bands
    assert [(b.cols_min, b.cols_max, b.total_min, b.total_max, b.variant, b.rows_aligned)
            for b in bands] == [
        (b.cols_min, b.cols_max, b.total_min, b.total_max, b.variant, b.rows_aligned)
        for b in DEFAULT_ROW_TABLE.row_bands]
    assert all(len(b.shapes) == len(b.median_us) == len(b.read_us) >= 1 for b in bands)


SHIPPED_SWEEPS = {  # a GPU's sources (a kernel measured later replaces an earlier one)
    "nvidia-h100-80gb-hbm3.toml": [ROOT / "results" / "h100" / name for name in (
        "rows_sweep_7cb42f7.csv", "rows_multi_narrow_7cb42f7.csv",
        "rows_hint_probe_7cb42f7.csv", "rows_multi_wide_ae91a09.csv", "rows_odd_ae91a09.csv",
        "rows_long_366e799.csv", "rows_multi_wide_366e799.csv", "rows_multi_wide_e2740d7.csv",
        "rows_tile_e2740d7.csv", "rows_mid_e2740d7.csv", "rows_block_e2740d7.csv",
        "rows_long_e2740d7.csv", "rows_tile_dd4ef6c.csv", "rows_mid_dd4ef6c.csv",
        "rows_block_dd4ef6c.csv", "rows_long_dd4ef6c.csv", "rows_multi_wide_1598851.csv")],
    "nvidia-h200.toml": [ROOT / "results" / "h200" / name for name in (
        "rows_sweep_9e9dbe5.csv", "rows_multi_narrow_b88697d.csv",
        "rows_multi_wide_ff9e6a5.csv", "rows_odd_ff9e6a5.csv", "rows_block_ff9e6a5.csv",
        "rows_long_d2548c1.csv", "rows_multi_wide_366e799.csv", "rows_multi_evict_682bb1e.csv",
        "rows_multi_wide_8b88afb.csv", "rows_tile_8b88afb.csv", "rows_mid_8b88afb.csv",
        "rows_tile_e2740d7.csv", "rows_mid_e2740d7.csv", "rows_block_e2740d7.csv",
        "rows_long_e2740d7.csv", "rows_tile_a9dacd4.csv", "rows_mid_a9dacd4.csv",
        "rows_block_a9dacd4.csv", "rows_long_a9dacd4.csv", "rows_tile_dd4ef6c.csv",
        "rows_multi_wide_1598851.csv")],
}


@pytest.mark.parametrize("name", sorted(SHIPPED_SWEEPS))
def test_a_gpus_shipped_row_bands_are_its_sweeps(name):
    """configs/tuning/<gpu>.toml's row bands are what scripts/row_defaults.py chooses from
    that GPU's committed sweeps (the H100's choices do not carry over to the H200: the L2
    hint that takes narrow rows to the read on an H100 costs row_split 5-9% on an
    H200), each with the measurements --toml gives it, and the file's size bands are
    still there."""
    from reducebench.ladder.auto import load_table
    frame = row_defaults.sources(SHIPPED_SWEEPS[name])
    derived = row_defaults.joined(row_defaults.choices(frame))
    table = load_table(ROOT / "configs" / "tuning" / name)
    assert table.bands and table.row_date
    shipped = {(b.cols_min, b.cols_max, b.total_min, b.total_max,
                (b.variant.rung, b.variant.block, b.variant.params), b.rows_aligned): b
               for b in table.row_bands}
    assert sorted(shipped, key=repr) == sorted(derived, key=repr)
    for band in derived:
        lines = row_defaults.toml_band(frame, band)
        medians = next(line for line in lines if line.startswith("median_us"))
        assert medians == "median_us = [" + ", ".join(
            f"{v:.3f}" for v in shipped[band].median_us) + "]"
    # and every line of the bands, the libraries' and the read's evidence too
    text = (ROOT / "configs" / "tuning" / name).read_text()
    written = [line for line in text[text.index("[[row_band]]"):].splitlines() if line]
    printed = [line for band in row_defaults.joined(row_defaults.choices(frame))
               for line in row_defaults.toml_band(frame, band)]
    assert written == printed


SHIPPED_AUTO = {  # the row_auto runs docs/rows.md and the README cite
    "nvidia-h100-80gb-hbm3.toml": ROOT / "results" / "h100" / "rows_auto_1598851.csv",
    "nvidia-h200.toml": ROOT / "results" / "h200" / "rows_auto_1598851.csv",
}


@pytest.mark.parametrize("name", sorted(SHIPPED_AUTO))
def test_a_gpus_cited_row_auto_run_ran_its_shipped_bands(name):
    """At every shape, the cited run's row_auto ran the variant the GPU's shipped tuning
    file chooses there: the run's verdict is the shipped bands' verdict, and bands
    changed without a new run fail here."""
    from reducebench.ladder.auto import choose_row, load_table
    table = load_table(ROOT / "configs" / "tuning" / name)
    runs = pd.read_csv(SHIPPED_AUTO[name])
    auto = runs[runs["rung"] == "row_auto"]
    assert len(auto) == 234
    for record in auto.itertuples():
        chosen = choose_row(table, record.rows, record.cols, record.dtype)
        ran = (record.variant.split()[0], record.block, row_defaults.params_of(record.params))
        assert ran == (chosen.rung, chosen.block, row_defaults.params_of(
            ";".join(f"{k}={v}" for k, v in chosen.params))), (record.rows, record.cols)


def test_a_file_that_is_not_a_sweeps_results_is_one_line_and_exit_2(tmp_path):
    import subprocess
    import sys
    other = tmp_path / "other.csv"
    other.write_text("rung,median_us\nrow_warp,1.0\n")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "row_defaults.py"),
                           str(other)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"row_defaults.py: {other} is not a row sweep's results file (no dtype, block, "
        "params, rows, cols, status, read_us, source_hash, utc_time column)"]
