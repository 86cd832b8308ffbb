"""The one number formatter: every table, page, line and message that shows a figure
formats it here, so that a missing figure reads the same everywhere (MISSING).
tests/test_numbers.py finds a number format written anywhere else."""

from __future__ import annotations

import math
from numbers import Integral

MISSING = "-"   # a figure that is not there: None, NaN, a blank cell, text that is no number


def as_float(value) -> float:
    """A value as a float; NaN for a missing one (None, a blank cell, text that is no
    number)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def number(value, fmt: str, unit: str = "") -> str:
    """`value` as text in the format spec `fmt` (".2f", "+.1f", ",", "g", ".2g"), `unit`
    appended; MISSING for a missing value. An integer stays one, so that "," groups its
    digits without adding a decimal point."""
    if isinstance(value, Integral) and not isinstance(value, bool):
        return format(int(value), fmt) + unit
    figure = as_float(value)
    return MISSING if math.isnan(figure) else format(figure, fmt) + unit
