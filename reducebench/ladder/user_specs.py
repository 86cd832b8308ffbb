"""What the user's kernels (ladder/custom.py) and callables (ladder/user_callables.py)
share: their [[kernel]] and [[callable]] tables of a config file checked one way, their
files read, their labels, and the rung name each gets."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator

from reducebench.core.errors import UsageError
from reducebench.ladder.registry import LADDER, ROW_LADDER

LABEL = re.compile(r"[A-Za-z0-9_.:+-]+")


def check_label(label: str | None, what: str) -> None:
    """A label becomes a rung name, a column value and part of file names."""
    if label is not None and not LABEL.fullmatch(str(label)):
        raise UsageError(f"{what}: label {label!r} may use letters, digits and _ . : + - only")


def config_entries(entries: object, config_path: Path, table: str, keys: tuple[str, ...],
                   required: tuple[str, ...], example: str) -> Iterator[tuple[str, dict]]:
    """Each [[table]] of a config file with how messages name it (`config F: kernel 2`),
    checked as it is reached: only `keys`, every `required` one, every value a string.
    `example` completes "e.g. [[table]] with ..." in the message for a value that is not
    an array of tables."""
    where = f"config {config_path}"
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise UsageError(f"{where}: {table} should be an array of tables, e.g. [[{table}]] "
                         f"with {example}")
    for index, entry in enumerate(entries, start=1):
        what = f"{where}: {table} {index}"
        unknown = [k for k in entry if k not in keys]
        if unknown:
            raise UsageError(f"{what}: unknown key {unknown[0]!r}; accepted: "
                             f"{', '.join(keys)}")
        for key in required:
            if key not in entry:
                raise UsageError(f"{what}: missing {key!r}")
        for key, value in entry.items():
            if not isinstance(value, str):
                raise UsageError(f"{what}: {key} = {value!r} should be a string")
        yield what, entry


def beside_config(path: str, config_path: Path) -> Path:
    """A path a config file names: a relative one is relative to the config file."""
    given = Path(path)
    return given if given.is_absolute() else Path(os.path.normpath(config_path.parent / given))


def read_user_file(path: str, what: str, kind: str) -> str:
    """The text of a file the user named (`kind` says what it should be: "a .cu file"), or
    one UsageError: a folder, no such file, unreadable or not text."""
    file = Path(path)
    if file.is_dir():
        raise UsageError(f"{what}: {path} is a folder, not {kind}")
    if not file.is_file():
        raise UsageError(f"{what}: no such file {path}")
    try:
        return file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what}: cannot read {path}: {exc}") from None


def rung_name(label: str | None, name: str, stem: str, taken: set[str], table: str,
              clashing: str) -> str:
    """The label, or else `name`, or else (`name` taken) `stem.name`; added to `taken`.
    A built-in rung's name or one already taken is refused: `clashing` says what would
    share it ("kernels"), `table` where to give a label."""
    chosen = label or name
    if chosen in taken and not label:
        chosen = f"{stem}.{name}"
    if chosen in LADDER or chosen in ROW_LADDER:
        raise UsageError(f"label {chosen!r} is a built-in rung's name; choose another")
    if chosen in taken:
        raise UsageError(f"two {clashing} would both be called {chosen!r}; give one a label "
                         f"(label = \"...\" in its [[{table}]] table)")
    taken.add(chosen)
    return chosen
