"""Element counts as the user writes them: every accepted form, and one clear UsageError
naming the value for everything else."""

import pytest

from reducebench.core.errors import UsageError
from reducebench.core.sizes import MAX_ELEMENTS, format_size, parse_size, parse_sizes


@pytest.mark.parametrize("text, expected", [
    ("2^24", 2**24),
    ("1<<24", 2**24),
    ("16M", 16 * 2**20),
    ("16m", 16 * 2**20),
    ("16777216", 16777216),
    ("4K", 4096),
    ("1G", 2**30),
    (" 2^10 ", 1024),
    ("1000003", 1000003),
    ("1", 1),
    ("2^40", 2**40),
    ("2^24+1", 2**24 + 1),
    ("2^10 + 25", 1049),
])
def test_size_accepts_every_documented_form(text, expected):
    assert parse_size(text) == expected


def test_size_accepts_power_notation():
    assert parse_size("2^24") == 16777216
    assert parse_size("1<<24") == 16777216


def test_sizes_accept_comma_lists_in_the_order_given():
    assert parse_sizes("2^20,1000,4K") == [2**20, 1000, 4096]


def test_sizes_accept_a_range_of_every_power_of_two():
    assert parse_sizes("2^10..2^16") == [2**e for e in range(10, 17)]


def test_sizes_accept_a_range_with_a_step():
    assert parse_sizes("2^10..2^16:2") == [2**10, 2**12, 2**14, 2**16]


def test_sizes_mix_ranges_and_values_without_repeats():
    assert parse_sizes("2^12, 2^10..2^13, 4K, 1000") == [4096, 1024, 2048, 8192, 1000]


def test_sizes_drop_repeats_of_the_same_value_in_different_notation():
    assert parse_sizes("16M,2^24,1<<24,16777216") == [2**24]


def test_sizes_accept_an_int_and_a_toml_list():
    assert parse_sizes(1024) == [1024]
    assert parse_sizes([1024, "2^11", "2^12..2^13"]) == [1024, 2048, 4096, 8192]


@pytest.mark.parametrize("bad", ["0", "-1", "2^", "2^99", "abc", "1.5", "16Q", "1<<99",
                                 "0<<3", "2^41", "99999999999999999999", "2^-3", "K", "",
                                 "2^24+", "2^24+-1", "+3", "2^24+1+1", "1<<24+1"])
def test_size_rejects_bad_values_naming_them(bad):
    with pytest.raises(UsageError) as info:
        parse_sizes(bad)
    assert repr(bad.strip()) in str(info.value)


def test_size_rejects_more_than_the_maximum():
    assert parse_size(str(MAX_ELEMENTS)) == MAX_ELEMENTS
    with pytest.raises(UsageError, match="too large"):
        parse_size(str(MAX_ELEMENTS + 1))


@pytest.mark.parametrize("text", ["2^10,,2^12", "2^10,", ",2^10", " , "])
def test_sizes_reject_empty_items(text):
    with pytest.raises(UsageError, match="empty size"):
        parse_sizes(text)


def test_sizes_name_the_bad_item_inside_a_list():
    with pytest.raises(UsageError, match="'16Q'"):
        parse_sizes("2^10,16Q,2^12")


def test_range_rejects_running_backwards():
    with pytest.raises(UsageError, match=r"'2\^16\.\.2\^10' runs backwards"):
        parse_sizes("2^16..2^10")


@pytest.mark.parametrize("text, missing", [("2^24..", "end"), ("..2^24", "start"),
                                           ("2^10..:2", "end")])
def test_a_range_with_an_end_left_out_says_which(text, missing):
    with pytest.raises(UsageError, match=f"has no {missing}: give both ends"):
        parse_sizes(text)


@pytest.mark.parametrize("text, bad_end", [("1000..2^16", "1000"), ("2^10..3000", "3000"),
                                           ("2^10..2^16+1", None)])
def test_range_rejects_ends_that_are_not_powers_of_two(text, bad_end):
    with pytest.raises(UsageError) as info:
        parse_sizes(text)
    if bad_end is not None:
        assert repr(bad_end) in str(info.value)
        assert "power of two" in str(info.value)


@pytest.mark.parametrize("step", ["0", "x", "-1", "1.5"])
def test_range_rejects_a_bad_step(step):
    with pytest.raises(UsageError, match="step"):
        parse_sizes(f"2^10..2^16:{step}")


def test_range_rejects_a_bad_end_value():
    with pytest.raises(UsageError, match="'abc'"):
        parse_sizes("abc..2^16")


@pytest.mark.parametrize("n, text", [(2**24, "2^24"), (2, "2^1"), (2**24 + 3, "2^24+3"),
                                     (1000, "1000"), (1, "1"), (1000003, "1000003"),
                                     (2**20 - 1, "1048575"), (2**11 + 63, "2^11+63"),
                                     (2**11 + 64, "2112")])
def test_format_size(n, text):
    assert format_size(n) == text


@pytest.mark.parametrize("n", [2**10, 2**24, 2**40, 2**24 + 1, 1049, 2**11 + 63, 2112, 1000003,
                               1])
def test_format_size_round_trips_through_parse_size(n):
    """What a record's options hold (`--resume` reads them back) parses to the same size,
    also just past a power of two (1049 is written 2^10+25)."""
    assert parse_size(format_size(n)) == n
