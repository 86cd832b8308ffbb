"""Tuning tables without a GPU: reading hand-written files (and refusing broken ones in
one line), writing them back, choosing a variant per size and dtype, where the files
are looked for, and what `auto` resolves to."""

from __future__ import annotations

import textwrap

import pytest

from reducebench.ladder import auto as tuning
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.ladder.case import Case
from reducebench.ladder.registry import LADDER, Rung
from reducebench.ladder.auto import (DEFAULT_TABLE, Band, TuningTable, Variant, choose, find_table,
                                format_table, gpu_slug, load_table, resolve_auto,
                                resolve_auto_cases, table_from_dict, user_path)

H100 = "NVIDIA H100 80GB HBM3"

THREE_BANDS = textwrap.dedent("""\
    format = 1
    gpu = "NVIDIA H100 80GB HBM3"
    sm_count = 132
    compute_capability = "9.0"
    date = "2026-11-23"

    [versions]
    cupy = "14.2.0"

    [[band]]
    n_min = 1
    n_max = 4096
    rung = "one_block"
    block = 512
    params = {loads = 2}

    [[band]]
    n_min = 4097
    n_max = 1048576
    rung = "single_pass"
    block = 128
    params = {blocks_per_sm = 2, loads = 4, l2_prefetch = 0}
    sizes = [8192, 1048576]
    median_us = [4.5, 5.9]
    cub_us = [7.7, 7.6]
    runner_up = "pingpong block=256"

    [[band]]
    n_min = 1048577
    rung = "pingpong"
    block = 256
    params = {blocks_per_sm = 8, loads = 4, l2_prefetch = 0}
    """)


@pytest.fixture
def config_home(tmp_path, monkeypatch):
    """An empty user config folder, and no shipped tables: each test adds its own."""
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    monkeypatch.setattr(tuning, "shipped_dir", lambda: shipped)
    return home


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- reading and choosing -----------------------------------------------------------------

def test_a_hand_written_table_chooses_by_band(tmp_path):
    table = load_table(write(tmp_path / "t.toml", THREE_BANDS))
    assert choose(table, 1, "float32") == Variant.of("one_block", 512, loads=2)
    assert choose(table, 4096, "float32").rung == "one_block"
    assert choose(table, 4097, "float32") == Variant.of("single_pass", 128, blocks_per_sm=2,
                                                         loads=4, l2_prefetch=0)
    assert choose(table, 2**20, "int32").rung == "single_pass"
    assert choose(table, 2**20 + 1, "float32").rung == "pingpong"
    assert choose(table, 2**32, "float32").rung == "pingpong"  # the last band is open


def test_other_dtypes_are_looked_up_by_their_bytes(tmp_path):
    table = load_table(write(tmp_path / "t.toml", THREE_BANDS))
    # 8192 halves are 16 KiB, as many bytes as 4096 float32: still the first band
    assert choose(table, 8192, "float16").rung == "one_block"
    assert choose(table, 8193, "bfloat16").rung == "single_pass"
    # 2048 doubles are 16 KiB too; 2049 are past it
    assert choose(table, 2048, "float64").rung == "one_block"
    assert choose(table, 2049, "float64").rung == "single_pass"


def test_the_choice_says_where_it_came_from(tmp_path):
    table = load_table(write(tmp_path / "t.toml", THREE_BANDS))
    tuned = choose(table, 100, "float32")
    assert tuned.origin == f"tuned for {H100} on 2026-11-23"
    assert tuned.label() == f"one_block block=512 loads=2 (tuned for {H100} on 2026-11-23)"
    assert choose(DEFAULT_TABLE, 100, "float32").origin == "built-in defaults"


def test_the_measured_figures_are_read():
    band = table_from_dict(_parse(THREE_BANDS)).bands[1]
    assert band.sizes == (8192, 1048576)
    assert band.median_us == (4.5, 5.9) and band.cub_us == (7.7, 7.6)
    assert band.runner_up == "pingpong block=256"


def test_built_in_defaults_one_shot_32x4_to_2p16_then_512x4_then_1024x4():
    small = Variant.of("one_shot", 32, loads=4, l2_prefetch=0)
    middle = Variant.of("one_shot", 512, loads=4, l2_prefetch=0)
    large = Variant.of("one_shot", 1024, loads=4, l2_prefetch=0)
    assert choose(DEFAULT_TABLE, 2**10, "float32") == small
    assert choose(DEFAULT_TABLE, 2**16, "int32") == small
    assert choose(DEFAULT_TABLE, 2**16 + 1, "float32") == middle
    assert choose(DEFAULT_TABLE, 2**24, "int32") == middle
    # by bytes: 2^25 float16 is 2^24 float32's bytes, 2^25 float32 is past the band
    assert choose(DEFAULT_TABLE, 2**25, "float16") == middle
    assert choose(DEFAULT_TABLE, 2**25, "float32") == large
    assert choose(DEFAULT_TABLE, 2**32, "bfloat16") == large


def _parse(text):
    import tomllib

    return tomllib.loads(text)


# -- broken files: one line each ----------------------------------------------------------

def _broken(replace_from, replace_to):
    assert replace_from in THREE_BANDS
    return THREE_BANDS.replace(replace_from, replace_to, 1)


def refusal(folder, text: str) -> str:
    """The error of loading `text` as a tuning file: one line that names the file."""
    path = write(folder / "broken.toml", text)
    with pytest.raises(UsageError) as caught:
        load_table(path)
    message = str(caught.value)
    assert message.startswith(f"tuning file {path}: ")
    assert "\n" not in message
    return message


@pytest.mark.parametrize("text, fragment", [
    pytest.param("format = 1\ngpu = [", "invalid TOML", id="not-toml"),
    pytest.param(_broken("format = 1", "format = 3"), "format = 3", id="format-3"),
    pytest.param(_broken('gpu = "NVIDIA H100 80GB HBM3"\n', ""), "missing key 'gpu'",
                 id="no-gpu"),
    pytest.param(_broken("sm_count = 132", 'sm_count = "132"'), "sm_count",
                 id="sm-count-a-string"),
    pytest.param("format = 1\ngpu = \"x\"\nsm_count = 1\n", "no [[band]] tables",
                 id="no-bands"),
])
def test_a_broken_file_is_one_clear_error_naming_it(tmp_path, text, fragment):
    assert fragment in refusal(tmp_path, text)


@pytest.mark.parametrize("replace_from, replace_to, fragment", [
    pytest.param('rung = "one_block"', 'rung = "shfl"', "band 1: rung 'shfl'", id="rung"),
    pytest.param("block = 512", "block = 100", "band 1: block 100", id="block"),
    pytest.param("params = {loads = 2}", "params = {unroll = 2}",
                 "takes no parameter 'unroll'", id="param-name"),
    pytest.param("params = {loads = 2}", "params = {loads = 99}", "loads = 99",
                 id="param-value"),
    pytest.param("median_us = [4.5, 5.9]", 'median_us = ["fast"]', "median_us",
                 id="median-us"),
])
def test_a_broken_band_is_one_clear_error_naming_it(tmp_path, replace_from, replace_to,
                                                    fragment):
    assert fragment in refusal(tmp_path, _broken(replace_from, replace_to))


@pytest.mark.parametrize("text, fragment", [
    pytest.param(_broken("n_min = 1\n", "n_min = 2\n"), "first band starts at 1",
                 id="first-band-after-1"),
    pytest.param(_broken("n_min = 4097", "n_min = 5000"), "band 2 starts at n_min = 5000",
                 id="gap"),
    # overlaps: by one size, and by most of band 1 (the earlier band would win them)
    *[pytest.param(_broken("n_min = 4097", f"n_min = {n_min}"),
                   f"band 2 starts at n_min = {n_min}", id=f"overlap-from-{n_min}")
      for n_min in (4096, 100)],
    # a middle band left open-ended holds every size after it too
    pytest.param(_broken("n_max = 1048576\n", ""), "band 3 starts at n_min = 1048577",
                 id="open-middle-band"),
    pytest.param(THREE_BANDS + "n_max = 2000000\n", "leave n_max out of the last band",
                 id="closed-last-band"),
])
def test_bands_that_leave_out_or_overlap_sizes_are_one_clear_error(tmp_path, text,
                                                                   fragment):
    assert fragment in refusal(tmp_path, text)


def test_a_missing_file_is_an_error_too(tmp_path):
    with pytest.raises(UsageError, match="cannot read it"):
        load_table(tmp_path / "none.toml")


def test_an_edited_file_is_read_again(tmp_path):
    path = write(tmp_path / "t.toml", THREE_BANDS)
    assert choose(load_table(path), 1, "float32").block == 512
    write(path, THREE_BANDS.replace("block = 512", "block = 1024 "))
    assert choose(load_table(path), 1, "float32").block == 1024


# -- writing --------------------------------------------------------------------------------

def test_a_written_table_reads_back_the_same(tmp_path):
    table = TuningTable(
        gpu='GPU "quoted" \\ name', sm_count=132, compute_capability="9.0", date="2026-11-23",
        versions=(("cupy", "14.2.0"), ("driver", "13.0")),
        bands=(Band(1, 2**12, Variant.of("one_block", 256, loads=4), sizes=(1024, 4096),
                    median_us=(4.0, 4.125), runner_up="pingpong block=256",
                    runner_up_us=(4.9, 4.9), cub_us=(float("nan"), 4.16)),
               Band(2**12 + 1, None, Variant.of("pingpong", 512, blocks_per_sm=2, loads=8,
                                                l2_prefetch=1))))
    path = tuning.write_table(table, tmp_path / "deeper" / "gpu.toml")
    back = load_table(path)
    assert back.gpu == table.gpu and back.sm_count == 132 and back.date == "2026-11-23"
    assert back.versions == table.versions
    assert [b.variant for b in back.bands] == [b.variant for b in table.bands]
    assert back.bands[0].median_us == (4.0, 4.125)
    assert back.bands[0].cub_us[1] == 4.16 and back.bands[0].cub_us[0] != back.bands[0].cub_us[0]
    assert back.bands[1].n_max is None
    assert not list(path.parent.glob("*.partial"))


def test_the_written_text_is_readable():
    text = format_table(DEFAULT_TABLE)
    assert "[[band]]" in text and 'rung = "one_shot"' in text and "block = 1024" in text
    assert "block = 32\n" in text
    assert "params = {l2_prefetch = 0, loads = 4}" in text


# -- where files live, and what auto resolves to ----------------------------------------------

def test_slug_of_a_gpu_name():
    assert gpu_slug(H100) == "nvidia-h100-80gb-hbm3"
    assert gpu_slug("NVIDIA H100 80GB HBM3 MIG 1g.10gb") == "nvidia-h100-80gb-hbm3-mig-1g-10gb"


def test_user_location_follows_xdg_config_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert user_path(H100) == tmp_path / "reducebench" / "tuning" / "nvidia-h100-80gb-hbm3.toml"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_path(H100) == tmp_path / "home" / ".config" / "reducebench" / "tuning" / \
        "nvidia-h100-80gb-hbm3.toml"


def test_without_a_file_auto_runs_the_defaults(config_home):
    assert find_table(H100) is None
    variant = resolve_auto(2**24, "float32", H100, 132)
    assert variant.rung == "one_shot" and variant.origin == "built-in defaults"


def test_the_shipped_table_is_used_and_the_users_wins_over_it(config_home):
    shipped = write(tuning.shipped_dir() / "nvidia-h100-80gb-hbm3.toml", THREE_BANDS)
    assert find_table(H100) == shipped
    assert resolve_auto(2**16, "float32", H100, 132).rung == "single_pass"
    mine = write(user_path(H100),
                 THREE_BANDS.replace('rung = "single_pass"', 'rung = "vector_load"'))
    assert find_table(H100) == mine
    chosen = resolve_auto(2**16, "float32", H100, 132)
    assert chosen.rung == "vector_load" and chosen.origin.startswith("tuned for")


def test_a_table_for_another_sm_count_falls_back_to_the_defaults_and_says_why(config_home):
    write(user_path(H100), THREE_BANDS)
    variant = resolve_auto(2**16, "float32", H100, 114)
    assert variant == choose(DEFAULT_TABLE, 2**16, "float32")
    assert variant.origin.startswith("built-in defaults") and "132 SMs" in variant.origin


def test_a_broken_user_file_stops_auto_with_its_one_line(config_home):
    write(user_path(H100), "format = 1\n[[band]\n")
    with pytest.raises(UsageError, match="invalid TOML"):
        resolve_auto(2**16, "float32", H100, 132)


def test_auto_cases_become_the_chosen_rung_under_the_name_auto(config_home):
    write(user_path(H100), THREE_BANDS)
    auto = Rung("auto", "dispatch", "auto")
    float32 = DTYPES["float32"]
    others = Case(LADDER["shfl"], float32, 2**20, 256, {})
    cases, labels = resolve_auto_cases([Case(auto, float32, 2**20, 0, {}), others], H100, 132)
    concrete, untouched = cases
    assert untouched is others and labels[1] == ""
    assert concrete.rung.name == "auto"
    assert concrete.rung.kernel == LADDER["single_pass"].kernel
    assert concrete.rung.finish == LADDER["single_pass"].finish
    assert concrete.block == 128
    assert concrete.params == {"blocks_per_sm": 2, "loads": 4, "l2_prefetch": 0}
    assert labels[0] == ("single_pass block=128 blocks_per_sm=2 l2_prefetch=0 loads=4 "
                         f"(tuned for {H100} on 2026-11-23)")
    plan = concrete.rung.plan(concrete.n, float32, concrete.block, 132, concrete.params)
    assert plan.grid == 2 * 132  # single_pass with 2 blocks per SM, 2^20 elements


def test_the_auto_rungs_take_the_parameters_the_registry_gives_them():
    for name, params in tuning.AUTO_RUNGS.items():
        if name in LADDER:  # one_block joins the registry with this work
            assert tuple(sorted(LADDER[name].params)) == tuple(sorted(params)), name
