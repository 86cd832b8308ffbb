"""Tuning files field by field: every refusal's exact line, every field read and written
back, where the shipped tables are looked for, and how a variant becomes the case `auto`
runs (test_tuning.py has the common paths). Expected values are worked out by hand."""

from __future__ import annotations

import os
import textwrap

import pytest

from reducebench.core import paths
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.ladder import auto as tuning
from reducebench.ladder.auto import (Band, TuningTable, Variant, choose, format_table,
                                     gpu_slug, load_table, lookup_size, resolve_auto_cases,
                                     table_from_dict, user_dir, variant_case, write_table)
from reducebench.ladder.case import Case
from reducebench.ladder.registry import LADDER, Rung

import tomllib

HEAD = 'format = 1\ngpu = "G"\nsm_count = 4\n'
OPEN_BAND = '\n[[band]]\nn_min = 1\nrung = "one_shot"\nblock = 256\n'


def parse(text: str) -> TuningTable:
    return table_from_dict(tomllib.loads(text))


def refusal(text: str) -> str:
    with pytest.raises(ValueError) as caught:
        parse(text)
    return str(caught.value)


def two_bands(first: str = "", second: str = "") -> str:
    """A table of two bands, 1..100 and 101.., with extra lines in each."""
    return (HEAD + '\n[[band]]\nn_min = 1\nn_max = 100\nrung = "one_shot"\nblock = 256\n'
            + first + '\n[[band]]\nn_min = 101\nrung = "one_shot"\nblock = 512\n' + second)


# -- the table's own keys ---------------------------------------------------------------------

@pytest.mark.parametrize("text, line", [
    (HEAD.replace('gpu = "G"', "gpu = 5") + OPEN_BAND, "gpu = 5 should be a string"),
    (HEAD.replace("sm_count = 4", 'sm_count = "4"') + OPEN_BAND,
     "sm_count = '4' should be a whole number"),
    (HEAD.replace("sm_count = 4", "sm_count = true") + OPEN_BAND,
     "sm_count = True should be a whole number"),
    (HEAD + "element_bytes = 3\n" + OPEN_BAND, "element_bytes = 3; expected 2, 4 or 8"),
    (HEAD + 'versions = "cupy 14"\n' + OPEN_BAND, "[versions] should be a table of strings"),
    (HEAD + "[versions]\ncupy = 14\n" + OPEN_BAND, "[versions] should be a table of strings"),
    (HEAD + "band = 5\n", "no [[band]] tables"),
    (HEAD + "band = []\n", "no [[band]] tables"),
])
def test_each_key_of_the_table_is_checked_in_one_line(text, line):
    assert refusal(text) == line


def test_the_optional_keys_are_read_and_default_when_left_out():
    bare = parse(HEAD + OPEN_BAND)
    assert (bare.compute_capability, bare.date, bare.dtype, bare.element_bytes,
            bare.versions) == ("", "", "float32", 4, ())
    full = parse(HEAD + 'compute_capability = "9.0"\ndate = "2026-11-23"\ndtype = "float16"\n'
                 "element_bytes = 2\n[versions]\ncupy = \"14.2.0\"\n" + OPEN_BAND)
    assert (full.compute_capability, full.date, full.dtype, full.element_bytes,
            full.versions) == ("9.0", "2026-11-23", "float16", 2, (("cupy", "14.2.0"),))
    assert parse(HEAD + "element_bytes = 8\n" + OPEN_BAND).element_bytes == 8


# -- each band -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, line", [
    (HEAD + "band = [5]\n", "band 1 is not a table"),
    (two_bands("", "n_max = \"big\"\n"), "band 2: n_max = 'big' should be a whole number"),
    (two_bands("", "n_max = true\n"), "band 2: n_max = True should be a whole number"),
    (HEAD + OPEN_BAND.replace("n_min = 1", "n_min = 0"), "band 1: n_min = 0, n_max = None "
                                                         "is not a size range"),
    (two_bands().replace("n_max = 100", "n_max = 0"), "band 1: n_min = 1, n_max = 0 is not "
                                                      "a size range"),
    (HEAD + OPEN_BAND.replace('"one_shot"', '"shfl"'),
     "band 1: rung 'shfl'; auto runs one_block, vector_load, single_pass, pingpong, one_shot"),
    (HEAD + OPEN_BAND.replace("256", "96"),
     "band 1: block 96; accepted: 32, 64, 128, 256, 512, 1024"),
    (HEAD + OPEN_BAND + "params = 5\n", "band 1: params should be a table such as {loads = 4}"),
    (HEAD + OPEN_BAND + "params = {blocks_per_sm = 2}\n",
     "band 1: one_shot takes no parameter 'blocks_per_sm' (it takes l2_prefetch, loads)"),
    (HEAD + OPEN_BAND + "params = {loads = true}\n", "band 1: loads = True should be from 1 "
                                                      "to 16"),
    (HEAD + OPEN_BAND + "params = {loads = 0}\n", "band 1: loads = 0 should be from 1 to 16"),
])
def test_each_key_of_a_band_is_checked_in_one_line(text, line):
    assert refusal(text) == line


@pytest.mark.parametrize("key", ["sizes", "median_us", "runner_up_us", "cub_us", "read_us",
                                 "same_bytes_us", "same_bytes_read_us"])
def test_each_measured_list_is_checked_naming_its_band(key):
    assert refusal(two_bands("", f'{key} = ["fast"]\n')) == \
        f"band 2: {key} should be a list of numbers"


def test_a_band_of_one_size_and_a_band_without_params():
    table = parse(two_bands().replace("n_max = 100", "n_max = 1")
                  .replace("n_min = 101", "n_min = 2"))
    assert (table.bands[0].n_min, table.bands[0].n_max) == (1, 1)
    assert table.bands[0].variant == Variant.of("one_shot", 256)


def test_every_measured_field_of_a_band_is_read():
    band = parse(two_bands("", textwrap.dedent("""\
        sizes = [8192, 16384]
        median_us = [4.5, 5.5]
        runner_up = "pingpong block=256"
        runner_up_us = [4.75, 6.0]
        cub_us = [7.5, 7.25]
        read_us = [3.5, 4.0]
        same_bytes_dtype = "float16"
        same_bytes_us = [4.25, 5.25]
        same_bytes_read_us = [3.25, 3.75]
        """))).bands[1]
    assert (band.sizes, band.median_us, band.runner_up, band.runner_up_us, band.cub_us,
            band.read_us, band.same_bytes_dtype, band.same_bytes_us,
            band.same_bytes_read_us) == (
        (8192, 16384), (4.5, 5.5), "pingpong block=256", (4.75, 6.0), (7.5, 7.25),
        (3.5, 4.0), "float16", (4.25, 5.25), (3.25, 3.75))
    bare = parse(two_bands()).bands[1]
    assert (bare.sizes, bare.median_us, bare.runner_up, bare.runner_up_us, bare.cub_us,
            bare.read_us, bare.same_bytes_dtype, bare.same_bytes_us,
            bare.same_bytes_read_us) == ((), (), "", (), (), (), "", (), ())


# -- the bands together ------------------------------------------------------------------------

@pytest.mark.parametrize("text, line", [
    (two_bands().replace("n_min = 1\n", "n_min = 2\n", 1),
     "band 1 starts at n_min = 2; the first band starts at 1"),
    (two_bands().replace("n_min = 101", "n_min = 100"),
     "band 2 starts at n_min = 100; it must start right after band 1 (n_max + 1)"),
    (two_bands("", "n_max = 500\n"), "the last band ends at n_max = 500; leave n_max out of "
                                     "the last band so that it covers every larger size"),
    (two_bands("", "n_max = 500\n") + '[[band]]\nn_min = 501\nn_max = 900\nrung = "one_shot"'
     '\nblock = 1024\n', "the last band ends at n_max = 900; leave n_max out of the last "
                         "band so that it covers every larger size"),
])
def test_the_bands_cover_every_size_once_said_exactly(text, line):
    assert refusal(text) == line


# -- choosing ----------------------------------------------------------------------------------

def test_the_lookup_size_is_at_least_one_element():
    # one float16 is 2 bytes, half a float32 element: rounded up to 1; no element is 1 too
    assert lookup_size(1, "float16") == 1
    assert lookup_size(0, "float32") == 1
    assert lookup_size(3, "float16") == 2     # 6 bytes: 2 elements of 4


def test_a_table_tuned_in_2_byte_elements_is_looked_up_in_them():
    # band 1 holds 1..100 halves (200 bytes): 50 float32 (200 bytes) are in it, 51 are not
    table = parse(two_bands().replace("sm_count = 4", "sm_count = 4\nelement_bytes = 2"))
    assert choose(table, 50, "float32").block == 256
    assert choose(table, 51, "float32").block == 512


def test_a_table_with_a_gap_says_which_size_no_band_holds():
    gap = TuningTable(gpu="", sm_count=1, bands=(Band(1, 10, Variant.of("one_shot", 256)),
                                                 Band(20, None, Variant.of("one_shot", 512))))
    with pytest.raises(UsageError) as caught:
        choose(gap, 15, "float32")
    assert str(caught.value) == "tuning table for defaults: no band holds n = 15"
    with pytest.raises(UsageError) as caught:
        choose(TuningTable(gpu="G", sm_count=1, bands=gap.bands), 15, "float32")
    assert str(caught.value) == "tuning table for G: no band holds n = 15"


def test_a_variant_without_a_block_describes_none():
    assert Variant.of("one_shot", 0, loads=4).describe() == "one_shot loads=4"
    assert Variant.of("one_shot", 64, loads=4).describe() == "one_shot block=64 loads=4"


# -- the case a variant runs ---------------------------------------------------------------------

F32 = DTYPES["float32"]


def test_a_variant_runs_its_rung_of_the_ladder_given():
    mine = {"one_shot": Rung("one_shot", "mine", "one_pass", kernel="my_kernel",
                             params={"loads": 1, "l2_prefetch": 0})}
    case = variant_case(Variant.of("one_shot", 128, loads=2), F32, 4096, mine, name="auto")
    assert case.rung.kernel == "my_kernel" and case.rung.name == "auto"
    assert case.rung.title == "auto: one_shot block=128 loads=2"
    assert case.params == {"loads": 2, "l2_prefetch": 0} and case.block == 128
    assert variant_case(Variant.of("one_shot", 128), F32, 4096).rung.kernel == \
        LADDER["one_shot"].kernel
    with pytest.raises(UsageError) as caught:
        variant_case(Variant.of("single_pass", 128), F32, 4096, mine)
    assert str(caught.value) == ("the tuning table names rung 'single_pass', which this "
                                 "reducebench does not have")


@pytest.fixture
def no_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(tuning, "shipped_dir", lambda: tmp_path / "shipped")


def test_every_auto_case_is_resolved_wherever_it_stands_in_the_list(no_tables):
    auto = Rung("auto", "dispatch", "auto")
    shfl = Case(LADDER["shfl"], F32, 2**20, 256, {})
    mine = {"one_shot": Rung("one_shot", "mine", "one_pass", kernel="my_kernel",
                             params={"loads": 1, "l2_prefetch": 0})}
    cases, labels = resolve_auto_cases([shfl, Case(auto, F32, 2**10, 0, {})], "G", 4, mine)
    assert cases[0] is shfl and labels[0] == ""
    # the built-in defaults: one_shot in blocks of 32 up to 2^16, from the ladder given
    assert cases[1].rung.kernel == "my_kernel" and cases[1].block == 32
    assert labels[1] == "one_shot block=32 l2_prefetch=0 loads=4 (built-in defaults)"


# -- where tables live ---------------------------------------------------------------------------

def test_a_gpu_slug_has_no_dash_at_either_end():
    assert gpu_slug(" NVIDIA H100 (SXM) ") == "nvidia-h100-sxm"
    assert gpu_slug("***") == "gpu"


def test_a_relative_xdg_config_home_is_ignored(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/config")
    assert user_dir() == tmp_path / ".config" / "reducebench" / "tuning"
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    assert user_dir() == tmp_path / ".config" / "reducebench" / "tuning"


def test_the_shipped_tables_of_a_wheel_then_of_the_checkout(monkeypatch, tmp_path):
    # a wheel: reducebench/_data/configs/tuning beside the package
    wheel = tmp_path / "_data" / "configs" / "tuning"
    wheel.mkdir(parents=True)
    monkeypatch.setattr(paths, "PACKAGE_DIR", tmp_path)
    monkeypatch.setattr(paths, "CHECKOUT_DIR", tmp_path / "nowhere")
    assert tuning.shipped_dir() == wheel
    # neither: the checkout's folder, named even though it is missing
    monkeypatch.setattr(paths, "PACKAGE_DIR", tmp_path / "nothing")
    assert tuning.shipped_dir() == tuning.CHECKOUT_DIR / "configs" / "tuning"


# -- reading again, writing ------------------------------------------------------------------

def test_a_file_is_read_again_when_its_time_or_its_size_changes(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(HEAD + OPEN_BAND)
    assert choose(load_table(path), 1, "float32").block == 256
    stamp = path.stat().st_mtime_ns
    path.write_text(HEAD + OPEN_BAND.replace("256", "128"))    # the same size, a later time
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))
    assert choose(load_table(path), 1, "float32").block == 128
    path.write_text(HEAD + OPEN_BAND.replace("256", "1024"))   # another size, the same time
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))
    assert choose(load_table(path), 1, "float32").block == 1024


def test_a_file_that_cannot_be_read_says_why_in_words(tmp_path):
    missing = tmp_path / "none.toml"
    with pytest.raises(UsageError) as caught:
        load_table(missing)
    assert str(caught.value) == f"tuning file {missing}: cannot read it: No such file or " \
                                "directory"


def test_a_table_written_reads_back_with_every_field(tmp_path):
    table = TuningTable(
        gpu="GPU é", sm_count=4, compute_capability="9.0", date="2026-11-23",
        dtype="float16", element_bytes=2,
        versions=(("CUDA", "13.0"), ("cuda runtime", "13.0"), ("cupy", "14.2.0")),
        bands=(Band(1, 100, Variant.of("one_shot", 256, loads=2), sizes=(64, 100),
                    median_us=(4.0, float("inf")), runner_up="pingpong block=256",
                    runner_up_us=(float("-inf"), 4.5), cub_us=(7.5, 7.25),
                    read_us=(3.5, 4.0), same_bytes_dtype="bfloat16",
                    same_bytes_us=(4.25, 5.25), same_bytes_read_us=(3.25, 3.75)),
               Band(101, None, Variant.of("one_shot", 512))))
    path = write_table(table, tmp_path / "two" / "deep" / "g.toml")
    text = path.read_text()
    assert 'gpu = "GPU é"' in text                     # readable, not \u00e9
    assert 'CUDA = "13.0"' in text and '"cuda runtime" = "13.0"' in text
    assert 'cupy = "14.2.0"' in text
    assert "median_us = [4.000, inf]" in text and "runner_up_us = [-inf, 4.500]" in text
    back = load_table(path)
    assert back.bands == table.bands
    assert (back.gpu, back.versions, back.dtype, back.element_bytes) == (
        table.gpu, table.versions, "float16", 2)
    # written again into the folder now there: replaced, the folder kept
    assert write_table(table, path) == path and load_table(path).bands == table.bands


def test_a_table_that_cannot_be_written_says_why_in_words(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UsageError) as caught:
        write_table(parse(HEAD + OPEN_BAND), blocker / "g.toml")
    # the folder cannot be made: a file holds its name
    assert str(caught.value) == f"cannot write the tuning file {blocker / 'g.toml'}: File " \
                                "exists"
