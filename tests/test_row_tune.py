"""`reducebench tune --shapes` without a GPU: the row rungs' search runs every candidate
through runner.run on the host executor (each row verified), with sample times this file
chooses per variant and shape, so the band each shape falls in, the variant each band
gets, the library beside it, what the tuning file holds and what `row_auto` then runs can
be checked against values worked out here."""

from __future__ import annotations

import math

import pytest

import reducebench.device
from reducebench.core.dtypes import DTYPES
from reducebench.ladder import auto as tuning
from reducebench.ladder.auto import Variant, choose_row, load_table, write_table
from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS, ROWS, Rung
from reducebench.measuring.hostexec import HostBackend
from reducebench.measuring.runner import run
from reducebench.measuring.settings import settings_from
from reducebench.tune import rows as row_tune
from reducebench.tune.search import SearchSettings, runner_measure
from cli_runner import invoke

FLOAT32 = DTYPES["float32"]
LIBRARY = Variant("torch_rows", 0)


def variant_of(case) -> Variant:
    return Variant(case.rung.name, case.block, tuple(sorted(case.params.items())))


class ChosenTimes(HostBackend):
    """The host executor with every sample of a variant at a shape taking
    time_of(variant, (rows, cols)) us."""

    def __init__(self, time_of, gpu="host (numpy)"):
        super().__init__()
        self.time_of, self.gpu = time_of, gpu
        self.timed: list[tuple[Variant, tuple[int, int]]] = []

    def device_info(self):
        return {**super().device_info(), "gpu": self.gpu}

    def execute(self, case, plan, handle, sampling):
        measured = super().execute(case, plan, handle, sampling)
        if sampling is not None:
            shape = (case.rows, case.cols)
            self.timed.append((variant_of(case), shape))
            measured.times_us = [self.time_of(variant_of(case), shape)] * 3
        return measured


def landscape(variant: Variant, shape: tuple[int, int]) -> float:
    """A thread per row fastest up to 8 COLS (4 us at any block); a group of 16 lanes
    of 256 threads at 9..64 COLS (5.5 us; other widths 6, each block step away 0.1
    more); a warp in blocks of 128 from 65 COLS (5 us, 0.1 a block step); a block per
    row, and every other row rung, 7 us everywhere; torch_rows 10 us, any other library
    12."""
    _, cols = shape
    steps = abs(math.log2(variant.block) - 8) if variant.block else 0
    if not variant.block:
        return 10.0 if variant == LIBRARY else 12.0
    if variant.rung == "row_thread":
        return 4.0 if cols <= 8 else 50.0
    if variant.rung == "row_group":
        width = variant.param_dict["width"]
        return (5.5 if width == 16 else 6.0) + 0.1 * steps if 9 <= cols <= 64 else 30.0
    if variant.rung == "row_warp":
        return 5.0 + 0.1 * abs(math.log2(variant.block) - 7) if cols > 64 else 20.0
    return 7.0


SHAPES = [(2**10, 4), (2**6, 64), (4, 1024)]   # every one a total of 2^12


def test_param_values_come_from_the_ranges_the_registry_accepts():
    assert row_tune.param_values("width") == (2, 4, 8, 16)
    assert row_tune.param_values("loads") == (1, 2, 4, 8, 16)
    assert row_tune.param_values("l2_prefetch") == (0, 1)
    assert row_tune.param_values("blocks_per_sm") == (1, 2, 4, 8, 16, 32)


def test_the_families_are_read_from_the_registry_whatever_rungs_it_holds():
    families = row_tune.row_families(ROW_RUNGS)
    ours = [r.name for r in ROW_RUNGS if not r.is_library and not r.dispatch]
    assert list(families) == ours
    group = families["row_group"]
    assert group.base == Variant.of("row_group", 256, width=8)
    assert dict(group.axes) == {"block": ROW_LADDER["row_group"].blocks, "width": (2, 4, 8, 16)}
    # a rung added to the row ladder with a parameter of its own is searched too
    split = Rung("row_split", "rows: stand-in", ROWS, "rows/03_warp.cu", "reduce_rows_warp",
                 params={"loads": 4}, lanes_per_row=32, blocks=(128, 256))
    extended = row_tune.row_families([*ROW_RUNGS, split])["row_split"]
    assert extended.base == Variant.of("row_split", 256, loads=4)
    assert dict(extended.axes) == {"block": (128, 256), "loads": (1, 2, 4, 8, 16)}
    space = row_tune.row_space(ROW_RUNGS)
    assert space.references == tuple(Variant(r.name, 0) for r in ROW_RUNGS if r.is_library)
    assert space.simpler == tuple(ours) and not space.finishes


def test_shapes_are_grouped_by_the_octave_of_their_cols_and_of_their_total():
    bands = row_tune.shape_bands([(2**10, 4), (1000, 36), (2**10, 64), (2**6, 64), (4, 1024)],
                                 ("row_warp",))
    assert [(b.cols_min, b.cols_max, b.total_min, b.total_max, b.sizes) for b in bands] == [
        (3, 4, 2049, 4096, ((2**10, 4),)),
        # 1000 x 36 (36,000) and 2^10 x 64 (65,536): COLS 33..64, total 32769..65536
        (33, 64, 2049, 4096, ((2**6, 64),)),
        (33, 64, 32769, 65536, ((1000, 36), (2**10, 64))),
        (513, 1024, 2049, 4096, ((4, 1024),)),
    ]
    assert bands[2].name == "COLS 2^6, total 2^16"
    assert all(b.rows_aligned for b in bands)


def test_rows_off_16_byte_boundaries_are_a_band_of_their_own():
    """1000 x 33 floats (132 bytes a row: off the boundaries) and 2^10 x 64 (256 bytes:
    on them) share COLS 33..64 and total 32769..65536, not a band; the band of rows off
    the boundaries comes first and says so, and the row band it makes keeps its kind."""
    off, on = row_tune.shape_bands([(2**10, 64), (1000, 33)], ("row_warp",))
    assert (off.sizes, off.rows_aligned, on.sizes, on.rows_aligned) == \
        (((1000, 33),), False, ((2**10, 64),), True)
    assert off.name == "COLS 2^6, total 2^16, rows off 16-byte boundaries"
    assert on.name == "COLS 2^6, total 2^16"
    assert [row_tune.rows_aligned(c) for c in (4, 33, 64, 1000, 1000003)] == \
        [True, False, True, True, False]
    assert row_tune.rows_aligned(8, itemsize=2) and not row_tune.rows_aligned(9, itemsize=2)


def search(backend, shapes, max_chain=2**16, settings=None, stages=None, rungs=ROW_RUNGS):
    space = row_tune.row_space(rungs)
    measure = runner_measure(backend, FLOAT32, ladder=ROW_LADDER, max_chain=max_chain)
    bands = row_tune.shape_bands(shapes, tuple(space.families))
    return row_tune.search_rows(measure, settings or SearchSettings(), bands, space,
                                on_stage=stages.append if stages is not None else None)


def test_each_band_gets_the_row_rung_fastest_at_its_shapes():
    thread, group, warp = search(ChosenTimes(landscape), SHAPES)
    assert thread.winner == Variant.of("row_thread", 256)      # every block ties: the base
    assert group.winner == Variant.of("row_group", 256, width=16)   # one move from the base
    assert warp.winner == Variant.of("row_warp", 128)
    assert (thread.winner_us, group.winner_us, warp.winner_us) == ((4.0,), (5.5,), (5.0,))
    assert warp.runner_up in (Variant.of("row_warp", 64), Variant.of("row_warp", 256))
    libraries = [Variant(r.name, 0) for r in ROW_RUNGS if r.is_library]
    for result in (thread, group, warp):
        assert result.references == tuple((v, (10.0 if v == LIBRARY else 12.0,))
                                          for v in libraries)
        assert row_tune.best_library(result) == ("torch_rows", (10.0,))


def test_a_candidate_over_the_chain_limit_is_never_measured_and_a_band_of_none_is_left_out():
    backend, stages = ChosenTimes(landscape), []
    # the rungs of one element a load: with a chain limit of 2, at 2^10 x 4 a thread per
    # row (a chain of 4) is skipped, and so is every rung with more lanes a row than the
    # row's 4 elements (groups of 8 and 16, a warp, a block): a group of 2 or 4 is what is
    # left (30 us) and wins over torch_rows (10 us is a library: a reference, never the
    # choice); at 1 x 2^12 even a block of 1024 lanes adds 4 in sequence: nothing runs,
    # and the band is left out
    scalar = [ROW_LADDER[name] for name in ("row_thread", "row_group", "row_warp",
                                            "row_block", "torch_rows")]
    results = search(backend, [(2**10, 4), (1, 2**12)], max_chain=2, stages=stages,
                     rungs=scalar)
    assert [r.band.name for r in results] == ["COLS 2^2, total 2^12"]
    assert results[0].winner.rung == "row_group"
    assert results[0].winner.param_dict["width"] in (2, 4)
    timed = [v for v, shape in backend.timed if shape == (2**10, 4) and v.block]
    assert timed and all(v.rung == "row_group" and v.param_dict["width"] <= 4 for v in timed)
    assert any(s.startswith("COLS 2^12, total 2^12: not tuned (tune: no candidate verified")
               for s in stages), stages


def test_the_table_holds_a_row_band_per_band_and_row_auto_reads_it(tmp_path, monkeypatch):
    """The whole path: `tune --shapes` writes the file, row_auto runs what it says for a
    shape measured and for shapes never measured (the nearest band)."""
    backend = ChosenTimes(landscape, gpu="Fake GPU")
    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: backend)
    out = tmp_path / "fake.toml"
    result = invoke("tune", "--shapes", "2^10x4,2^6x64,4x1024", "--out", out, width=200)
    assert result.exit_code == 0, result.output
    assert "row_auto on Fake GPU: the row rung per shape band" in result.output
    assert "tuning file written to" in result.output
    table = load_table(out)
    assert not table.bands and table.row_date
    assert [(b.cols_min, b.cols_max, b.total_min, b.total_max, b.variant.describe())
            for b in table.row_bands] == [
        (3, 4, 2049, 4096, "row_thread block=256"),
        (33, 64, 2049, 4096, "row_group block=256 width=16"),
        (513, 1024, 2049, 4096, "row_warp block=128")]
    band = table.row_bands[1]
    assert band.shapes == ((64, 64),) and band.median_us == (5.5,)
    assert (band.library, band.library_us) == ("torch_rows", (10.0,))
    # shapes never measured: 2^12 x 4 (total 2^14) and 100 x 50 go to the nearest band
    assert choose_row(table, 2**12, 4, "float32").rung == "row_thread"
    assert choose_row(table, 100, 50, "float32").describe() == "row_group block=256 width=16"
    assert choose_row(table, 2, 2**20, "float32").describe() == "row_warp block=128"


def test_row_auto_runs_the_tuned_choice_through_the_runner(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(tuning, "shipped_dir", lambda: tmp_path / "shipped")
    backend = ChosenTimes(landscape)
    results = search(backend, SHAPES)
    table = tuning.TuningTable(gpu="host (numpy)", sm_count=132, bands=(),
                               row_bands=row_tune.row_bands(results), row_date="2026-11-27")
    write_table(table, tuning.user_path("host (numpy)"))
    settings = settings_from({"shape": "2^10x4,2^6x64,4x1024,2x2000,3x3000",
                              "rung": "row_auto", "rounds": 1, "seed": 9})
    records = run(settings, HostBackend(), lambda record: None)
    tuned = "(tuned for host (numpy) on 2026-11-27)"
    # 2 x 2000 lies one octave of COLS from the band of 4 x 1024: that band's choice;
    # 3 x 3000 (total 9000) two octaves of total from every band: the built-in table's
    # (a block a row for COLS 1025..4096 there)
    assert [r.variant for r in records] == [
        f"row_thread block=256 {tuned}", f"row_group block=256 width=16 {tuned}",
        f"row_warp block=128 {tuned}", f"row_warp block=128 {tuned}",
        "row_block block=256 (built-in defaults; no tuned row band within an octave of "
        "3x3000 (nearest: COLS 513..1024, total 2049..4096, rows on 16-byte boundaries))"]
    assert {r.status for r in records} == {"ok"}


def test_each_tune_keeps_the_other_ladders_bands_of_the_file(tmp_path, monkeypatch):
    backend = ChosenTimes(landscape, gpu="Fake GPU")
    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: backend)
    out = tmp_path / "fake.toml"
    out.write_text('format = 1\ngpu = "Fake GPU"\nsm_count = 132\ndate = "2026-11-01"\n'
                   '[[band]]\nn_min = 1\nrung = "one_shot"\nblock = 64\nparams = {loads = 2}\n')
    result = invoke("tune", "--shapes", "2^10x4", "--out", out)
    assert result.exit_code == 0, result.output
    assert "its size bands kept" in result.output
    table = load_table(out)
    assert table.bands[0].variant == Variant.of("one_shot", 64, loads=2)
    assert table.date == "2026-11-01" and len(table.row_bands) == 1
    # a second row tune replaces the band it measures again and keeps the others
    assert invoke("tune", "--shapes", "4x1024", "--out", out).exit_code == 0
    assert [b.variant.rung for b in load_table(out).row_bands] == ["row_thread", "row_warp"]
    assert len(load_table(out).bands) == 1


def test_a_file_for_another_gpu_is_replaced_not_merged(tmp_path, monkeypatch):
    backend = ChosenTimes(landscape, gpu="Fake GPU")
    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: backend)
    out = tmp_path / "other.toml"
    out.write_text('format = 1\ngpu = "Other GPU"\nsm_count = 132\n'
                   '[[band]]\nn_min = 1\nrung = "one_shot"\nblock = 64\n')
    assert invoke("tune", "--shapes", "2^10x4", "--out", out).exit_code == 0
    table = load_table(out)
    assert table.gpu == "Fake GPU" and not table.bands and len(table.row_bands) == 1


@pytest.mark.parametrize("shapes, fragment", [
    ("sweep:rowz", "unknown sweep 'rowz'"),
    ("10y10", "invalid shape '10y10'"),
])
def test_bad_shapes_are_one_line_before_the_device_is_touched(monkeypatch, shapes, fragment):
    from cli_runner import one_error_line

    monkeypatch.setattr(reducebench.device, "open_backend",
                        lambda device=0: pytest.fail("the device was reached"))
    one_error_line(invoke("tune", "--shapes", shapes), fragment)


def test_a_tune_of_the_size_bands_keeps_the_row_bands(tmp_path, monkeypatch):
    from reducebench.tune import search as tune
    from reducebench.tune.search import SizeBand

    backend = ChosenTimes(landscape, gpu="Fake GPU")   # 7 us for every 1-D variant
    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: backend)
    monkeypatch.setattr(tune, "BANDS", (SizeBand("all", 1, None, (2**14,), ("one_shot",)),))
    out = tmp_path / "fake.toml"
    assert invoke("tune", "--shapes", "2^10x4", "--out", out).exit_code == 0
    result = invoke("tune", "--quick", "--out", out)
    assert result.exit_code == 0, result.output
    assert "its row bands kept" in result.output
    table = load_table(out)
    assert len(table.bands) == 1 and table.bands[0].variant.rung == "one_shot"
    assert [b.variant.describe() for b in table.row_bands] == ["row_thread block=256"]


def test_a_bands_inputs_are_made_once_for_all_its_runs(monkeypatch):
    """The search measures a band in several runs (its rounds, then the confirming);
    the host input of each shape is made in the first and kept for the others."""
    from reducebench.measuring import runner

    made = []
    real = runner.row_inputs
    monkeypatch.setattr(runner, "row_inputs",
                        lambda *args: made.append(args[:2]) or real(*args))
    (result,) = search(ChosenTimes(landscape), [(2**6, 64)])
    assert result.winner == Variant.of("row_group", 256, width=16)
    assert made == [(2**6, 64)]


def test_the_inputs_kept_between_runs_are_bounded(monkeypatch):
    from reducebench.measuring import runner
    from reducebench.verify.row_inputs import row_inputs

    one = row_inputs(4, 4, FLOAT32, 1)            # 64 bytes of float32
    kept = runner.MadeInputs(groups=2)
    for key in "abc":
        kept.keep(key, one)
    assert list(kept) == ["b", "c"]               # the oldest dropped first
    kept.keep("b", one)
    assert list(kept) == ["c", "b"]               # used again: the newest
    monkeypatch.setattr(runner, "HOST_CACHE_BYTES", 100)
    kept.keep("d", one)
    assert list(kept) == ["d"]                    # two would be 128 bytes
    monkeypatch.setattr(runner, "HOST_CACHE_BYTES", 10)
    kept.keep("e", one)
    assert not kept                               # too large to keep at all


class InterruptedAt(ChosenTimes):
    """ChosenTimes whose first timed run at a shape of `cols` columns is cut by Ctrl-C."""

    def __init__(self, time_of, cols, gpu="Fake GPU"):
        super().__init__(time_of, gpu)
        self.cols = cols

    def execute(self, case, plan, handle, sampling):
        if sampling is not None and case.cols == self.cols:
            from reducebench.core.interrupt import Interrupted
            import signal

            raise Interrupted(signal.SIGINT)
        return super().execute(case, plan, handle, sampling)


def test_an_interrupted_row_tune_keeps_the_bands_it_finished(tmp_path, monkeypatch):
    """Bands are searched in order of COLS: 2^10 x 4, then 2^6 x 64, then 4 x 1024; Ctrl-C
    in the third leaves the first two in the file, and the output says how many."""
    backend = InterruptedAt(landscape, cols=1024)
    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: backend)
    out = tmp_path / "fake.toml"
    result = invoke("tune", "--shapes", "2^10x4,2^6x64,4x1024", "--out", out, width=200)
    assert result.exit_code == 130, result.output
    assert f"the row bands of 2 of 3 shape band(s) written to {out}" in \
        " ".join(result.output.split())
    assert [b.variant.describe() for b in load_table(out).row_bands] == [
        "row_thread block=256", "row_group block=256 width=16"]


def test_a_row_tune_cut_in_its_first_band_writes_no_file(tmp_path, monkeypatch):
    backend = InterruptedAt(landscape, cols=4)
    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: backend)
    out = tmp_path / "fake.toml"
    result = invoke("tune", "--shapes", "2^10x4,2^6x64", "--out", out, width=200)
    assert result.exit_code == 130 and "no tuning file written" in result.output
    assert not out.exists()


class SkippedAt(ChosenTimes):
    """ChosenTimes that skips every case at a shape of `cols` columns (as a GPU skips a
    case it cannot run): nothing runs there."""

    def __init__(self, time_of, cols):
        super().__init__(time_of)
        self.cols = cols

    def execute(self, case, plan, handle, sampling):
        if case.cols == self.cols:
            from reducebench.core.errors import CaseSkipped

            raise CaseSkipped("planted: cannot run here")
        return super().execute(case, plan, handle, sampling)


def test_a_band_left_out_does_not_stop_the_bands_after_it():
    stages: list[str] = []
    results = search(SkippedAt(landscape, cols=4), [(2**10, 4), (2**6, 64)], stages=stages)
    assert [r.band.name for r in results] == ["COLS 2^6, total 2^12"]
    assert results[0].winner == Variant.of("row_group", 256, width=16)
    assert any(s.startswith("COLS 2^2, total 2^12: not tuned (") for s in stages), stages
    # the search's own stages of the band it tuned reach on_stage too
    assert any(s.startswith("COLS 2^6, total 2^12") and "not tuned" not in s
               for s in stages), stages


def test_no_band_tuned_is_one_error_naming_the_first_band_left_out():
    from reducebench.tune.search import TuneError

    with pytest.raises(TuneError) as caught:
        search(SkippedAt(landscape, cols=4), [(2**10, 4)])
    assert str(caught.value).startswith("tune: no shape band could be tuned; "
                                         "COLS 2^2, total 2^12: ")
    with pytest.raises(TuneError, match="^tune: no shape band could be tuned; no shapes given$"):
        search(ChosenTimes(landscape), [])


def test_a_row_band_keeps_its_runner_up_and_no_read_where_none_was_timed():
    (group,) = search(ChosenTimes(landscape), [(2**6, 64)])
    (band,) = row_tune.row_bands([group])
    # the landscape: row_group width 16 is 5.5 us at block 256 and 0.1 more a block step
    assert band.runner_up in ("row_group block=128 width=16", "row_group block=512 width=16")
    assert band.runner_up_us == (5.6,)
    assert band.read_us == ()          # the host executor times no same-size read


def test_the_best_library_leaves_out_one_not_timed_and_takes_sub_microsecond_times():
    from dataclasses import replace

    (group,) = search(ChosenTimes(landscape), [(2**6, 64)])
    torch, cub, triton = (Variant(r.name, 0) for r in ROW_RUNGS if r.is_library)
    timed = replace(group, references=((torch, ()), (cub, (0.5,)), (triton, (0.0,))))
    assert row_tune.best_library(timed) == ("cub_rows", (0.5,))
    assert row_tune.best_library(replace(group, references=((torch, ()),))) == ("", ())


def test_a_row_band_keeps_the_read_where_one_was_timed_and_no_runner_up_where_none_was():
    from dataclasses import replace

    (group,) = search(ChosenTimes(landscape), [(2**6, 64)])
    (timed,) = row_tune.row_bands([replace(group, read_us=(0.5,))])
    assert timed.read_us == (0.5,)     # a read under a microsecond is a read
    (alone,) = row_tune.row_bands([replace(group, runner_up=None)])
    assert alone.runner_up == ""


def test_a_bands_shapes_go_by_total_then_cols():
    """Within a band the shapes are in order of their totals (a quick tune measures the
    last, the largest): 5 x 70 (350), 3 x 126 (378), 6 x 66 (396), all COLS 65..128, a
    total of 257..512 and rows off 16-byte boundaries, whatever order they come in."""
    (band,) = row_tune.shape_bands([(6, 66), (3, 126), (5, 70)], ("row_warp",))
    assert band.sizes == ((5, 70), (3, 126), (6, 66))


def test_a_read_of_no_time_is_no_read():
    from dataclasses import replace

    (group,) = search(ChosenTimes(landscape), [(2**6, 64)])
    (band,) = row_tune.row_bands([replace(group, read_us=(0.0,))])
    assert band.read_us == ()


class CountingBackend(ChosenTimes):
    """ChosenTimes with a clock warm-up, a timing floor and a same-shape read, each
    counted: what a run pays once before its cases."""

    def __init__(self):
        super().__init__(landscape)
        self.calls = {"warm_up": 0, "floor": 0, "read": 0}

    def warm_up(self):
        self.calls["warm_up"] += 1

    def timing_floor_us(self, sampling):
        self.calls["floor"] += 1
        return 2.0

    def row_read_reference_us(self, handle, rows, cols, itemsize, acc_itemsize, sampling):
        self.calls["read"] += 1
        return 3.0


def test_a_tune_warms_the_clocks_and_times_the_floor_and_each_read_once(monkeypatch):
    """Runs back to back in one tune share them (runner.Carried); a lone run, or a run
    after the GPU has been idle a while, pays them itself."""
    from reducebench.measuring import runner

    backend = CountingBackend()
    measure = runner_measure(backend, FLOAT32, ladder=ROW_LADDER, max_chain=2**16)
    stop = SearchSettings().stop
    for variant in (Variant.of("row_warp", 128), Variant.of("row_warp", 256)):
        measured = measure([variant], ((64, 64),), stop)
        assert measured.reads == {(64, 64): 3.0}
    assert backend.calls == {"warm_up": 1, "floor": 1, "read": 1}
    measure([Variant.of("row_warp", 64)], ((32, 64),), stop)      # another shape: its read
    assert backend.calls == {"warm_up": 1, "floor": 1, "read": 2}
    monkeypatch.setattr(runner, "STILL_WARM_S", 0.0)              # idle since: warm again
    measure([Variant.of("row_warp", 64)], ((32, 64),), stop)
    assert backend.calls == {"warm_up": 2, "floor": 1, "read": 2}
    lone = run(settings_from({"shape": "64x64", "rung": "row_warp", "rounds": 1}), backend,
               lambda record: None)
    assert lone[0].read_us == 3.0 and lone[0].status == "ok"
    assert backend.calls == {"warm_up": 3, "floor": 2, "read": 3}
