"""Parsing element counts: 2^24, 2^24+1, '1<<24', 16M, 16777216, lists and power-of-two
ranges."""

from __future__ import annotations

import re

from reducebench.core.choices import comma_list
from reducebench.core.errors import UsageError
from reducebench.core.shape_sweeps import ShapeRequest, is_sweep, sweep_of

MAX_ELEMENTS = 2**40  # far beyond any GPU's memory; a guard against typos like 2^99

_SUFFIXES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}
_ACCEPTED = ("accepted forms: 2^24, 2^24+1, '1<<24' (quoted in a shell), 16M (K, M, G are "
             "powers of 1024), 16777216, comma lists, and ranges 2^10..2^28 or 2^10..2^28:2 "
             "(every second power)")


def parse_size(text: str) -> int:
    """One element count; raises UsageError naming the bad value."""
    token = text.strip()
    value = _parse_positive(token)
    if value > MAX_ELEMENTS:
        raise UsageError(f"size {text!r} is too large (at most 2^40 elements)")
    return value


def _parse_positive(token: str) -> int:
    bad = UsageError(f"invalid size {token!r}; {_ACCEPTED}")
    if not token.isascii():  # \d and int() would take '٣٢' or '２' as digits
        raise UsageError(f"invalid size {token!r}: digits 0-9 only; {_ACCEPTED}")
    # 2^24+1: a power and what lies past it, as format_size writes sizes just past one
    if m := re.fullmatch(r"(\d+)\s*\^\s*(\d+)(?:\s*\+\s*(\d+))?", token, re.ASCII):
        base, exponent = int(m[1]), int(m[2])
        if exponent > 64:
            raise UsageError(f"size {token!r} is too large (at most 2^40 elements)")
        value = base**exponent + int(m[3] or 0)
    elif m := re.fullmatch(r"(\d+)\s*<<\s*(\d+)", token, re.ASCII):
        if int(m[2]) > 64:
            raise UsageError(f"size {token!r} is too large (at most 2^40 elements)")
        value = int(m[1]) << int(m[2])
    elif m := re.fullmatch(r"(\d+)\s*([KMGkmg]?)", token, re.ASCII):
        value = int(m[1]) * _SUFFIXES[m[2].upper()]
    else:
        raise bad
    if value < 1:
        raise UsageError(f"size {token!r} must be at least 1 element")
    return value


def _parse_range(token: str) -> list[int]:
    """`2^10..2^28` (every power of two) or `2^10..2^28:2` (every second power)."""
    span, _, step_text = token.partition(":")
    low_text, high_text = span.split("..", 1)
    for which, end in (("start", low_text), ("end", high_text)):
        if not end.strip():
            raise UsageError(f"range {token.strip()!r} has no {which}: give both ends, "
                             "e.g. 2^10..2^28")
    low, high = parse_size(low_text), parse_size(high_text)
    for which, end, value in (("start", low_text, low), ("end", high_text, high)):
        if value & (value - 1):
            raise UsageError(f"range {which} {end.strip()!r} must be a power of two "
                             f"(in {token.strip()!r})")
    if low > high:
        raise UsageError(f"range {token!r} runs backwards")
    step = 1
    if step_text:
        if not re.fullmatch(r"[0-9]+", step_text.strip()) or int(step_text) < 1:
            raise UsageError(f"range step {step_text!r} must be a whole number of powers of two")
        step = int(step_text)
    lo_exp, hi_exp = low.bit_length() - 1, high.bit_length() - 1
    return [2**e for e in range(lo_exp, hi_exp + 1, step)]


def parse_sizes(text: str | int | list) -> list[int]:
    """A comma list of sizes and ranges, in the order given, without repeats."""
    if isinstance(text, int) and not isinstance(text, bool):
        return [parse_size(str(text))]
    sizes: list[int] = []
    for token in comma_list(text, "size"):
        for value in _parse_range(token) if ".." in token else [parse_size(token)]:
            if value not in sizes:
                sizes.append(value)
    return sizes


def format_size(n: int) -> str:
    """2^24 for exact powers of two, 2^24+3 just past one, else the plain number."""
    if n >= 2 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    below = 1 << (n.bit_length() - 1)
    if n > 1024 and n - below < 64:
        return f"2^{below.bit_length() - 1}+{n - below}"
    return str(n)


# The separator of a shape's two sides: no size notation holds an x.
_SHAPE_SEPARATOR = re.compile(r"[xX]")
_SHAPE_FORMS = ("shapes are ROWSxCOLS, each side a size as --size takes it "
                "(4096x4096, 2^20x8, 1000x33, 2^10..2^14x64), or a declared sweep "
                "(sweep:rows, sweep:rows@2^24)")


def parse_shape(token: str) -> list[tuple[int, int]]:
    """One ROWSxCOLS token as (rows, cols) pairs: one pair, or one per value where a
    side is a range (rows outermost). Raises UsageError naming the bad token."""
    text = token.strip()
    sides = _SHAPE_SEPARATOR.split(text)
    if len(sides) != 2:
        raise UsageError(f"invalid shape {text!r}: {_SHAPE_FORMS}")
    for which, side in zip(("rows", "cols"), sides):
        if not side.strip():
            raise UsageError(f"invalid shape {text!r}: no {which}; {_SHAPE_FORMS}")
    rows, cols = (_parse_range(s) if ".." in s else [parse_size(s)] for s in sides)
    pairs = [(r, c) for r in rows for c in cols]
    for r, c in pairs:
        if r * c > MAX_ELEMENTS:
            raise UsageError(f"shape {text!r} is too large: {r} x {c} elements "
                             "(at most 2^40 in all)")
    return pairs


def parse_shapes(text: str | list) -> list[tuple[int, int]]:
    """A comma list of shapes and sweeps, in the order given, without repeats."""
    return parse_shape_request(text).shapes


def parse_shape_request(text: str | list) -> ShapeRequest:
    """A comma list of shapes and declared sweeps (core/shape_sweeps.py): every shape, in
    the order given, without repeats, and the strictest chain limit of the sweeps named."""
    shapes: list[tuple[int, int]] = []
    limits: list[int] = []
    for token in comma_list(text, "shape"):
        if is_sweep(token):
            sweep, pairs = sweep_of(token, parse_sizes)
            limits += [sweep.max_chain] if sweep.max_chain else []
        else:
            pairs = parse_shape(token)
        shapes += [pair for pair in pairs if pair not in shapes]
    return ShapeRequest(shapes, min(limits) if limits else None)


def format_shape(rows: int, cols: int) -> str:
    """2^20x8, 1000x33: each side as format_size writes it."""
    return f"{format_size(rows)}x{format_size(cols)}"
