"""Plain data for the page's tables: a header per column and a cell per value, each with
the text shown, the value it sorts by, and an optional bar (a percentage drawn behind
the text). The template renders every table alike; nothing here writes HTML."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from reducebench.core.numbers import as_float, number
from reducebench.core.sizes import format_shape, format_size


@dataclass(frozen=True)
class Header:
    label: str
    title: str = ""         # the tooltip: what the column means
    numeric: bool = False   # right-aligned, sorted as a number


@dataclass
class Cell:
    text: str
    sort: float | str = ""
    cls: str = ""            # a CSS class: ok, suspect, fail, skip, faster, slower, ...
    bar: float | None = None  # a percentage, 0..100, drawn behind the text
    title: str = ""          # a tooltip (e.g. the error of a failed row)
    colour: str = ""         # a swatch before the text: the rung's colour in the charts


@dataclass
class Table:
    id: str
    headers: list[Header]
    rows: list[list[Cell]] = field(default_factory=list)
    row_keys: list[str] = field(default_factory=list)   # data-case of each row
    caption: str = ""


def num_cell(value, spec: str, bar: bool = False) -> Cell:
    """A numeric cell (sorted by its value; missing values sort last)."""
    figure = as_float(value)
    shown = number(figure, spec)
    level = None
    if bar and not math.isnan(figure):
        level = min(100.0, max(0.0, figure))
    return Cell(shown, figure if not math.isnan(figure) else "", bar=level)


def text(value) -> str:
    """A value as text; blank for a missing one (pandas reads empty fields as NaN)."""
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    shown = str(value).strip()
    return "" if shown.lower() == "nan" else shown


def truthy(value) -> bool:
    return text(value).lower() in ("true", "1", "yes")


def row_count(row: dict) -> int:
    """The rows a case summed one by one: 1 for a --size case (and in files of schema 5
    or older, which have no `rows`)."""
    rows = as_float(row.get("rows"))
    return int(rows) if not math.isnan(rows) and rows >= 1 else 1


def extent(row: dict) -> str:
    """A case's size as the page names it: `2^24`, or `1000x33` (rows x cols) for a case
    that summed each of several rows."""
    n, rows = int(row["n"]), row_count(row)
    return format_shape(rows, n // rows) if rows > 1 else format_size(n)


def extent_label(row: dict) -> str:
    """`n = 2^24` or `shape = 1000x33`: a title's or a hover's words for a case's size."""
    return f"{'shape' if row_count(row) > 1 else 'n'} = {extent(row)}"


def extent_key(row: dict) -> tuple[int, int]:
    """What sorts cases by size: n, then rows (1000x33 after 33x1000, one n)."""
    return int(row["n"]), row_count(row)


def extent_cell(row: dict) -> Cell:
    """The size column's cell: the size or shape, sorted by n, then rows."""
    n, rows = extent_key(row)
    return Cell(extent(row), n + rows / (n + 1))
