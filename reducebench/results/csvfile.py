"""Appending CSV records that survive a kill: what a half-written record looks like, and
cutting it off before the next append."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path


def read_exact_text(path: Path) -> str:
    """A file's text with its line breaks as written (\\r\\n stays \\r\\n): a record
    cut between its \\r and its \\n must not read as complete. Without the byte-order
    mark a spreadsheet saves at the start (utf-8-sig), which would otherwise become part
    of the first column's name."""
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        return handle.read()


def complete_records(text: str) -> tuple[str, bool]:
    """The text up to the end of its last complete CSV record, and whether anything was
    cut. Every record a writer here commits ends with a line break (csv's \\r\\n), so a
    record without one is what a kill in the middle of a write leaves: never a result."""
    if not text or text.endswith("\n"):
        return text, False
    buffer = io.StringIO(text, newline="")
    reader = csv.reader(buffer)
    end = 0
    for _ in reader:
        position = buffer.tell()
        if text[position - 1:position] == "\n":
            end = position
    return text[:end], True


def drop_unfinished_tail(path: Path) -> bool:
    """Cut a record left half-written by a killed writer off the end of a file, so that
    what is appended next starts on a line of its own. True if something was cut."""
    raw = Path(path).read_bytes()
    if not raw or raw.endswith(b"\n"):
        return False
    kept, _ = complete_records(raw.decode("utf-8", errors="surrogateescape"))
    with open(path, "r+b") as handle:
        handle.truncate(len(kept.encode("utf-8", errors="surrogateescape")))
        handle.flush()
        os.fsync(handle.fileno())
    return True


def fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
