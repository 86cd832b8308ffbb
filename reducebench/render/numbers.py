"""The one number formatter: every table, line and markdown cell that shows a figure
formats it here, so a missing figure reads the same (blank) everywhere."""

from __future__ import annotations

import math


def number(value, fmt: str, unit: str = "") -> str:
    """A figure as text in `fmt` (a format spec, e.g. ".2f", "+.1f"), `unit` appended;
    blank for a missing one (None, NaN, anything that is not a number)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(value) else format(value, fmt) + unit
