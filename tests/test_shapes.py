"""Shapes as the user writes them (`--shape ROWSxCOLS`): each side in the notation
--size takes, and one clear UsageError naming the value for everything else. The
expected pairs are worked out by hand."""

import pytest

from reducebench.core.errors import UsageError
from reducebench.core.sizes import format_shape, parse_shape, parse_shapes


@pytest.mark.parametrize("text, expected", [
    ("4096x4096", [(4096, 4096)]),
    ("2^20x8", [(1048576, 8)]),
    ("1000x33", [(1000, 33)]),
    ("1x1", [(1, 1)]),
    ("3X1000003", [(3, 1000003)]),
    (" 16M x 4K ", [(16777216, 4096)]),
    ("1<<4x2^3", [(16, 8)]),
    ("1x2^24", [(1, 16777216)]),
])
def test_a_shape_takes_each_side_as_a_size(text, expected):
    assert parse_shape(text) == expected


def test_a_range_on_either_side_gives_every_pair_rows_outermost():
    assert parse_shape("2^1..2^2x3") == [(2, 3), (4, 3)]
    assert parse_shape("5x2^3..2^5:2") == [(5, 8), (5, 32)]
    assert parse_shape("2..4x8..16") == [(2, 8), (2, 16), (4, 8), (4, 16)]


def test_shapes_are_a_comma_list_in_the_order_given_without_repeats():
    assert parse_shapes("1000x33,2^20x8,1000x33,4x4") == [(1000, 33), (1048576, 8), (4, 4)]


def test_a_list_from_a_config_file_is_taken_too():
    assert parse_shapes(["4x8", "8x4"]) == [(4, 8), (8, 4)]


@pytest.mark.parametrize("text, says", [
    ("4096", "invalid shape '4096'"),
    ("4x4x4", "invalid shape '4x4x4'"),
    ("x8", "no rows"),
    ("8x", "no cols"),
    ("0x8", "at least 1"),
    ("8xfoo", "invalid size 'foo'"),
    ("2^21x2^20", "too large: 2097152 x 1048576"),
    ("3..4x8", "must be a power of two"),
])
def test_a_bad_shape_is_one_usage_error_naming_it(text, says):
    with pytest.raises(UsageError) as caught:
        parse_shapes(text)
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_empty_item_is_refused_as_for_sizes():
    with pytest.raises(UsageError, match="empty shape"):
        parse_shapes("4x4,,8x8")


@pytest.mark.parametrize("rows, cols, text", [
    (1048576, 33, "2^20x33"), (4, 8, "2^2x2^3"), (1000, 33, "1000x33"), (1, 16777217, "1x2^24+1"), (1, 1, "1x1"),
])
def test_a_shape_is_written_as_the_sizes_are(rows, cols, text):
    assert format_shape(rows, cols) == text
    assert parse_shapes(text) == [(rows, cols)]  # --resume reads the written form back
