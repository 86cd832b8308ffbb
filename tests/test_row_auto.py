"""`row_auto` and the row bands of a tuning file, without a GPU: the band of a shape
(worked out by hand), the choice a hand-written file gives for shapes inside, between and
beyond its bands, the built-in row defaults, each broken row band refused in one line,
where the row bands are looked for, and row_auto cases run through the runner on the host
executor, their records saying which rung ran and where the choice came from."""

from __future__ import annotations

from dataclasses import replace
import textwrap

import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.ladder import auto as tuning
from reducebench.ladder.auto import (DEFAULT_ROW_TABLE, RowBand, Variant, choose_row,
                                     load_table, resolve_auto, resolve_row_auto,
                                     row_auto_rungs, shape_band, with_row_bands)
from reducebench.ladder.case import case_key
from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS
from reducebench.measuring.hostexec import HostBackend
from reducebench.measuring.runner import run
from reducebench.measuring.settings import settings_from

H100 = "NVIDIA H100 80GB HBM3"
HOST = "host (numpy)"   # HostBackend's GPU, 132 SMs

# Three row bands: COLS 1..8 at any total; COLS 17..32 for totals 2^19+1..2^20, and
# COLS 17..32 for totals 2^23+1..2^24, measured there.
ROW_TABLE = textwrap.dedent("""\
    format = 2
    gpu = "{gpu}"
    sm_count = 132
    date = "2026-11-23"
    row_date = "2026-11-27"

    [[row_band]]
    cols_min = 1
    cols_max = 8
    total_min = 1
    rung = "row_thread"
    block = 128
    params = {{}}

    [[row_band]]
    cols_min = 17
    cols_max = 32
    total_min = 524289
    total_max = 1048576
    rung = "row_group"
    block = 256
    params = {{width = 16}}
    shapes = ["32768x32"]
    median_us = [7.5]
    runner_up = "row_warp block=256"
    runner_up_us = [8.0]
    library = "torch_rows"
    library_us = [9.25]
    read_us = [6.0]

    [[row_band]]
    cols_min = 17
    cols_max = 32
    total_min = 8388609
    total_max = 16777216
    rung = "row_warp"
    block = 512
    """)


@pytest.fixture
def no_tables(tmp_path, monkeypatch):
    """No user file and no shipped file: each test writes its own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    monkeypatch.setattr(tuning, "shipped_dir", lambda: shipped)
    return tmp_path


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("cols, total, band", [
    (33, 33000, (33, 64, 32769, 65536)),             # 1000 x 33
    (4, 2**20, (3, 4, 2**19 + 1, 2**20)),            # 2^18 x 4: powers are a band's top
    (5, 2**20 + 5, (5, 8, 2**20 + 1, 2**21)),        # just past them: the next octave
    (1, 1, (1, 1, 1, 1)),
    (2, 2, (2, 2, 2, 2)),
    (1000003, 1000003, (2**19 + 1, 2**20, 2**19 + 1, 2**20)),
])
def test_the_band_of_a_shape_is_the_octave_of_its_cols_and_of_its_total(cols, total, band):
    assert shape_band(cols, total) == band


def test_a_hand_written_file_chooses_by_row_band(tmp_path):
    table = load_table(write(tmp_path / "t.toml", ROW_TABLE.format(gpu=H100)))
    assert not table.bands and len(table.row_bands) == 3
    group = Variant.of("row_group", 256, width=16)
    # inside the bands
    assert choose_row(table, 2**18, 4, "float32") == Variant.of("row_thread", 128)
    assert choose_row(table, 2**15, 32, "float32") == group
    assert choose_row(table, 2**19, 32, "float32") == Variant.of("row_warp", 512)
    # by bytes: 64 float16 COLS are 32 float32 COLS' bytes, the total likewise
    assert choose_row(table, 2**15, 64, "float16") == group
    # no band holds COLS 17..32 at a total of 2^22: the nearest along the total (2^20 is
    # two octaves away, 2^23 + 1 one)
    assert choose_row(table, 2**17, 32, "float32").rung == "row_warp"
    # COLS 12 is an octave from COLS 8 (log2 12/8 = 0.58) and from 17 (0.50): 17..32
    # is nearer, and of its bands the nearer total (2^20 for a total of 2^20 * 12 / 16)
    assert choose_row(table, 2**16, 12, "float32") == group
    # far past every band's COLS: the nearest COLS, then the nearest total
    assert choose_row(table, 2, 2**20, "float32") == group
    assert choose_row(table, 1, 2**28, "float32").rung == "row_warp"
    assert choose_row(table, 2**15, 32, "float32").origin == f"tuned for {H100} on 2026-11-27"


def test_the_measured_figures_of_a_row_band_are_read_and_written_back(tmp_path):
    table = load_table(write(tmp_path / "t.toml", ROW_TABLE.format(gpu=H100)))
    band = table.row_bands[1]
    assert band.shapes == ((32768, 32),) and band.median_us == (7.5,)
    assert (band.runner_up, band.runner_up_us) == ("row_warp block=256", (8.0,))
    assert (band.library, band.library_us, band.read_us) == ("torch_rows", (9.25,), (6.0,))
    again = load_table(tuning.write_table(table, tmp_path / "again.toml"))
    assert again.row_bands == table.row_bands and again.row_date == "2026-11-27"
    assert "format = 2" in (tmp_path / "again.toml").read_text()


def test_the_built_in_row_defaults_by_shape():
    def rung(rows, cols, dtype="float32"):
        chosen = choose_row(DEFAULT_ROW_TABLE, rows, cols, dtype)
        assert chosen.origin == "built-in defaults"
        return chosen.describe()

    # inside the bands the H100 sweeps measured (results/h100/*_7cb42f7.csv)
    narrow = "row_multi block=256 group_rows=1 l2_prefetch=1 "
    assert rung(2**22, 4) == narrow + "lanes=1 loads=1"
    assert rung(2**21, 8) == narrow + "lanes=1 loads=2"
    assert rung(2**19, 32) == narrow + "lanes=4 loads=2"
    assert rung(2**16, 256) == narrow + "lanes=32 loads=2"
    # rows of 33 floats (off 16-byte boundaries): a band of their own kind
    assert rung(1016801, 33) == "row_tile block=256 l2_prefetch=1 loads=4"
    assert rung(4096, 4096) == "row_vec_block block=256 loads=4"
    split = "row_split block=256 blocks_per_sm=16 l2_prefetch=1 loads=4"
    assert rung(1, 2**24) == rung(16, 2**20) == split
    # beyond them, the nearest band: 2^29 elements of 4 COLS as 2^28 of 4; 8 rows of 2^26
    # COLS (2^29 elements) as the widest band of 2^28, split
    assert rung(2**27, 4) == rung(2**26, 4) == "row_tile block=256 l2_prefetch=0 loads=4"
    assert rung(8, 2**26) == split
    # 16 halves are 8 floats' bytes
    assert rung(2**21, 16, "float16") == rung(2**21, 8)
    for band in DEFAULT_ROW_TABLE.row_bands:
        assert band.variant.rung in row_auto_rungs()


def test_row_auto_runs_every_row_rung_of_ours_with_the_registrys_parameters():
    rungs = row_auto_rungs()
    ours = [r for r in ROW_RUNGS if not r.is_library and not r.dispatch]
    assert list(rungs) == [r.name for r in ours]
    assert all(rungs[r.name] == tuple(r.params) for r in ours)
    assert "torch_rows" not in rungs and "row_auto" not in rungs


def _broken(old, new):
    text = ROW_TABLE.format(gpu=H100)
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize("text, fragment", [
    (_broken("format = 2", "format = 1"), "[[row_band]] tables need format = 2"),
    (_broken('rung = "row_thread"', 'rung = "torch_rows"'),
     "row band 1: rung 'torch_rows'; row_auto runs row_thread, row_group"),
    (_broken('rung = "row_thread"', 'rung = "one_shot"'), "row band 1: rung 'one_shot'"),
    (_broken("block = 128", "block = 100"), "row band 1: block 100; accepted: 32, 64"),
    (_broken("params = {{width = 16}}".format(), "params = {width = 3}"),
     "row band 2: width 3: a row's lanes must be a power of two"),
    (_broken("params = {{width = 16}}".format(), "params = {width = 99}"),
     "row band 2: width = 99 should be from 2 to 16"),
    (_broken("params = {}", "params = {width = 4}"),
     "row band 1: row_thread takes no parameter 'width' (it takes none)"),
    (_broken("cols_max = 8", "cols_max = 0"), "row band 1: cols_min = 1, cols_max = 0"),
    (_broken("total_min = 8388609", "total_min = 1048576"),
     "row band 3 (COLS 17..32, total 1048576..16777216) overlaps row band 2 (COLS 17..32, "
     "total 524289..1048576)"),
    (_broken('shapes = ["32768x32"]', 'shapes = ["32768y32"]'), "row band 2: shapes: "),
    (_broken("cols_max = 8", "cols_max = 8\nrows_aligned = 1"),
     "row band 1: rows_aligned = 1 should be true or false"),
    ("format = 2\ngpu = \"x\"\nsm_count = 1\n", "no [[band]] tables or [[row_band]] tables"),
])
def test_a_broken_row_band_is_one_line_naming_the_file(tmp_path, text, fragment):
    path = write(tmp_path / "broken.toml", text)
    with pytest.raises(UsageError) as caught:
        load_table(path)
    message = str(caught.value)
    assert message.startswith(f"tuning file {path}: ") and "\n" not in message
    assert fragment in message, message


def test_without_row_bands_row_auto_runs_the_defaults_and_auto_its_own(no_tables):
    # the user's file holds only 1-D bands: row_auto goes on to the defaults
    write(tuning.user_path(H100), textwrap.dedent("""\
        format = 1
        gpu = "NVIDIA H100 80GB HBM3"
        sm_count = 132
        [[band]]
        n_min = 1
        rung = "one_shot"
        block = 64
        params = {loads = 2}
        """))
    assert resolve_row_auto(1000, 33, "float32", H100, 132).origin == "built-in defaults"
    assert resolve_auto(2**20, "float32", H100, 132).block == 64


def test_a_file_of_row_bands_only_leaves_auto_to_the_shipped_table(no_tables):
    write(tuning.user_path(H100), ROW_TABLE.format(gpu=H100))
    shipped = tuning.shipped_dir() / "nvidia-h100-80gb-hbm3.toml"
    write(shipped, "format = 1\ngpu = \"NVIDIA H100 80GB HBM3\"\nsm_count = 132\n"
                   "[[band]]\nn_min = 1\nrung = \"one_shot\"\nblock = 128\n")
    assert resolve_auto(2**20, "float32", H100, 132).block == 128       # the shipped one
    assert resolve_row_auto(2**15, 32, "float32", H100, 132).rung == "row_group"  # yours


def test_row_bands_for_another_sm_count_are_not_used_and_the_record_says_why(no_tables):
    path = write(tuning.user_path(H100), ROW_TABLE.format(gpu=H100))
    chosen = resolve_row_auto(2**15, 32, "float32", H100, 114)
    assert chosen.rung == "row_multi" and chosen.param_dict == {  # the defaults'
        "group_rows": 1, "l2_prefetch": 1, "lanes": 4, "loads": 2}
    assert chosen.origin == f"built-in defaults; {path} is for {H100} with 132 SMs"


def test_new_row_bands_replace_the_ones_they_overlap_and_keep_the_others(tmp_path):
    table = load_table(write(tmp_path / "t.toml", ROW_TABLE.format(gpu=H100)))
    new = RowBand(17, 32, 2**19 + 1, 2**20, Variant.of("row_block", 64))
    merged = with_row_bands(table, (new,), "2026-12-01")
    assert [b.variant.rung for b in merged.row_bands] == ["row_thread", "row_block",
                                                          "row_warp"]
    assert merged.row_date == "2026-12-01" and merged.bands == table.bands


def test_a_row_band_holds_its_ends_and_nothing_past_them():
    """A band's COLS and totals run from its min to its max, both ends included (tune
    writes octaves such as 17..32, a power of two at the top): one past either end is
    another band's shape."""
    band = RowBand(17, 32, 2**19 + 1, 2**20, Variant.of("row_warp", 256))
    assert band.holds(17, 2**19 + 1) and band.holds(32, 2**20)
    assert not band.holds(16, 2**20) and not band.holds(33, 2**20)
    assert not band.holds(32, 2**19) and not band.holds(17, 2**20 + 1)


def test_bands_of_one_cols_span_at_neighbouring_totals_do_not_overlap():
    """Each total octave of a COLS span is a band of its own: neither band overlaps the
    other, whichever is asked, so a new band at the higher total keeps the lower one."""
    low = RowBand(17, 32, 2**19 + 1, 2**20, Variant.of("row_group", 256, width=16))
    high = RowBand(17, 32, 2**20 + 1, 2**21, Variant.of("row_warp", 512))
    assert not low.overlaps(high) and not high.overlaps(low)
    table = tuning.TuningTable(gpu="", sm_count=0, bands=(), row_bands=(low,))
    assert with_row_bands(table, (high,), "2026-12-01").row_bands == (low, high)


def run_row_auto(shapes, dtype="float32"):
    settings = settings_from({"shape": shapes, "rung": "row_auto", "dtype": dtype,
                              "rounds": 1, "seed": 5})
    return run(settings, HostBackend(), lambda record: None)


def test_row_auto_through_the_runner_with_the_defaults(no_tables):
    narrow, odd, few_long = run_row_auto("2^10x4,1000x33,2x5000")
    assert [r.rung for r in (narrow, odd, few_long)] == ["row_auto"] * 3
    assert [r.status for r in (narrow, odd, few_long)] == ["ok"] * 3
    assert narrow.variant == "row_thread block=256 (built-in defaults)"
    assert narrow.grid == 4                # 256 rows a block: a thread each
    assert odd.variant == "row_group block=256 width=8 (built-in defaults)"
    assert odd.grid == 32                  # 32 rows a block, 1000 rows
    assert few_long.variant == ("row_split block=256 blocks_per_sm=16 evict_first=0 "
                                "l2_prefetch=1 loads=4 (built-in defaults)")
    # two tiles of 4096 a row, so two blocks a row
    assert (few_long.rows, few_long.cols, few_long.grid) == (2, 5000, 4)


def test_row_auto_through_the_runner_with_a_table(no_tables):
    write(tuning.user_path(HOST), ROW_TABLE.format(gpu=HOST))
    (record,) = run_row_auto("2^15x32", "int32")
    assert record.status == "ok"
    assert record.variant == f"row_group block=256 width=16 (tuned for {HOST} on 2026-11-27)"
    assert (record.block, record.params) == (256, "width=16")
    assert record.grid == 2**15 // (256 // 16)


def test_a_row_auto_case_is_keyed_without_its_block_and_params():
    assert case_key("row_auto", "float32", 33000, 256, "width=4", 1000) == \
        case_key("row_auto", "float32", 33000, 0, "", 1000)
    assert "row_auto" in ROW_LADDER and ROW_LADDER["row_auto"].dispatch


# -- rows on and off 16-byte boundaries ---------------------------------------------------

def _kinds_table(*bands: RowBand) -> tuning.TuningTable:
    return tuning.TuningTable(gpu="", sm_count=0, builtin=True, bands=(), row_bands=bands)


ON = RowBand(1, 64, 1, None, Variant.of("row_multi", 256, lanes=8), rows_aligned=True)
OFF = RowBand(1, 64, 1, None, Variant.of("row_tile", 256), rows_aligned=False)


@pytest.mark.parametrize("rows, cols, dtype, rung", [
    (1000, 64, "float32", "row_multi"),    # 256 bytes a row: on the boundaries
    (1000, 33, "float32", "row_tile"),     # 132 bytes: off
    (1000, 16, "float16", "row_multi"),    # 32 bytes
    (1000, 33, "float16", "row_tile"),     # 66 bytes
    (1000, 2, "float64", "row_multi"),     # 16 bytes
    (1000, 3, "int32", "row_tile"),        # 12 bytes
    (1000, 6, "float32", "row_tile"),      # 24 bytes: a multiple of 8, not of 16
    (1000, 15, "float16", "row_tile"),     # 30 bytes, looked up as 8 float32 COLS (32)
])
def test_a_shape_takes_the_band_for_its_kind_of_row(rows, cols, dtype, rung):
    assert choose_row(_kinds_table(ON, OFF), rows, cols, dtype).rung == rung
    assert choose_row(_kinds_table(OFF, ON), rows, cols, dtype).rung == rung


def test_a_band_for_the_other_kind_of_row_is_taken_only_where_none_of_its_own_is_left():
    near_on = RowBand(33, 64, 1, None, Variant.of("row_multi", 256), rows_aligned=True)
    far_off = RowBand(2**20, None, 1, None, Variant.of("row_split", 256), rows_aligned=False)
    table = _kinds_table(near_on, far_off)
    assert choose_row(table, 1000, 33, "float32").rung == "row_split"   # 15 octaves away
    assert choose_row(_kinds_table(near_on), 1000, 33, "float32").rung == "row_multi"
    either = RowBand(33, 64, 1, None, Variant.of("row_warp", 256))
    assert choose_row(_kinds_table(either, far_off), 1000, 33, "float32").rung == "row_warp"


def test_bands_for_the_two_kinds_of_row_may_share_their_spans():
    assert not ON.overlaps(OFF) and not OFF.overlaps(ON)
    assert ON.overlaps(ON) and OFF.overlaps(OFF)
    either = RowBand(1, 64, 1, None, Variant.of("row_warp", 256))
    assert either.overlaps(ON) and either.overlaps(OFF) and ON.overlaps(either)
    assert ON.holds(64, 6400, aligned=True) and not ON.holds(33, 3300, aligned=False)
    assert ON.holds(33, 3300) and either.holds(33, 3300, aligned=False)
    assert OFF.describe() == "COLS 1..64, total 1.., rows off 16-byte boundaries"
    assert ON.describe().endswith(", rows on 16-byte boundaries")


def test_a_tuning_file_keeps_each_bands_kind_of_row(tmp_path):
    table = tuning.TuningTable(gpu=H100, sm_count=132, bands=(), row_bands=(ON, OFF),
                               row_date="2026-11-27")
    text = tuning.format_table(table)
    assert text.count("rows_aligned = true") == 1 and text.count("rows_aligned = false") == 1
    again = tuning.load_table(write(tmp_path / "t.toml", text))
    assert [b.rows_aligned for b in again.row_bands] == [True, False]
    broken = text.replace("rows_aligned = true", 'rows_aligned = "yes"')
    with pytest.raises(UsageError, match="row band 1: rows_aligned = 'yes' should be true "
                                         "or false"):
        tuning.load_table(write(tmp_path / "u.toml", broken))


def test_new_bands_of_either_kind_of_row_keep_the_other_kinds_band_of_the_same_spans():
    """A tune of rows of 33 floats replaces the band of rows off 16-byte boundaries and
    keeps the one of rows on them, whatever the order; bands of one span go on, either,
    off."""
    table = tuning.TuningTable(gpu=H100, sm_count=132, bands=(), row_bands=(OFF, ON))
    tuned_off = replace(OFF, variant=Variant.of("row_group", 256, width=4))
    merged = with_row_bands(table, (tuned_off,), "2026-11-28")
    assert [(b.rows_aligned, b.variant.rung) for b in merged.row_bands] == \
        [(True, "row_multi"), (False, "row_group")]
    either = RowBand(1, 64, 1, None, Variant.of("row_warp", 256))
    assert [b.rows_aligned for b in with_row_bands(
        tuning.TuningTable(gpu=H100, sm_count=132, bands=()), (OFF, either, ON),
        "2026-11-28").row_bands] == [True, None, False]


def test_a_row_table_of_two_byte_elements_looks_shapes_up_by_their_bytes():
    """A table counted in 2-byte elements: 1000 rows of 2 floats are 8 bytes a row, 4 of
    its elements (COLS 3..4, not 1..2), 8000 bytes in all (4000 elements: 2049..4096)."""
    near = RowBand(1, 2, 2049, 4096, Variant.of("row_thread", 256))
    wide = RowBand(3, 4, 1, 2048, Variant.of("row_group", 256, width=4))
    right = RowBand(3, 4, 2049, 4096, Variant.of("row_warp", 256))
    table = tuning.TuningTable(gpu="", sm_count=0, builtin=True, bands=(),
                               row_bands=(near, wide, right), element_bytes=2)
    assert choose_row(table, 1000, 2, "float32").rung == "row_warp"
