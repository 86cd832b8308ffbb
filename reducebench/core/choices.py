"""What a user types where a command takes a list or a name: every comma list is split by
one rule (comma_list), and every unknown name gets the same "did you mean" (did_you_mean)."""

from __future__ import annotations

import difflib
from typing import Iterable

from reducebench.core.errors import UsageError

# How alike a typo and a name must be (difflib's ratio) to be offered: "shfll" and "shfl",
# "vectorload" and "vector_load", but not "zzzz" and anything.
CLOSE_ENOUGH = 0.6


def comma_list(value: object, noun: str) -> list[str]:
    """The items of a comma list ("a,b") or of a config file's list (["a", "b"]), each
    stripped. An empty item (two commas together, one at an end, an empty value) is one
    UsageError: it is a slip, never a request for nothing, and is said so the same way for
    every option. `noun` names one item ("rung", "size", "dtype", ...)."""
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    texts = [str(item).strip() for item in items]
    if any(not text for text in texts):
        shown = ",".join(map(str, items)) if isinstance(value, (list, tuple)) else str(value)
        raise UsageError(f"empty {noun} in {shown!r} (two commas together, or one at an "
                         f"end); give each {noun} once, separated by commas")
    return texts


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """" (did you mean NAME?)" for the choice closest to an unknown word, compared without
    regard to case (SHFL is shfl); "" when none is close."""
    by_lower = {}
    for choice in choices:
        by_lower.setdefault(str(choice).lower(), str(choice))
    close = difflib.get_close_matches(str(word).strip().lower(), list(by_lower), n=1,
                                      cutoff=CLOSE_ENOUGH)
    return f" (did you mean {by_lower[close[0]]}?)" if close else ""


def check_choice(word: str, choices: Iterable[str], noun: str) -> str:
    """`word` when it is one of `choices`, else one UsageError: the unknown word, the
    closest choice and every accepted one."""
    choices = list(choices)
    if word in choices:
        return word
    raise UsageError(f"unknown {noun} {word!r}{did_you_mean(word, choices)}; accepted: "
                     f"{', '.join(choices)}")
