"""CSV files that survive a kill: what a half-written record looks like, cutting it off
before the next append, and rewriting a file atomically with its original kept."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import IO, Callable

from reducebench.core.errors import ResultsFileError


def read_exact_text(path: Path) -> str:
    """A file's text with its line breaks as written (\\r\\n stays \\r\\n): a record
    cut between its \\r and its \\n must not read as complete. Without the byte-order
    mark a spreadsheet saves at the start (utf-8-sig), which would otherwise become part
    of the first column's name."""
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        return handle.read()


# The first bytes of files people have been known to give in place of a CSV.
_SIGNATURES = ((b"\x1f\x8b", "gzip-compressed: gunzip it first"),
               (b"PK\x03\x04", "a zip archive: unzip it first"),
               (b"BZh", "bzip2-compressed: bunzip2 it first"),
               (b"\xfd7zXZ\x00", "xz-compressed: unxz it first"),
               (b"\x28\xb5\x2f\xfd", "zstd-compressed: unzstd it first"),
               (b"\x7fELF", "a program (ELF), not CSV text"),
               (b"\x89PNG", "a PNG image, not CSV text"),
               (b"%PDF", "a PDF document, not CSV text"))
# Bytes no CSV text holds (control characters but tab, line feed and carriage return):
# a few in a note may be a paste gone wrong, more than this share of a file's start is not text.
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r") + b"\x7f"
_CONTROL_SHARE = 0.01


def read_csv_text(path: Path, what: str) -> str:
    """A CSV file's text as read_exact_text reads it, or one ResultsFileError naming the
    file when its bytes are not text at all (a program, an image, a compressed CSV):
    `what` says what the file was given as ("results file", "samples file")."""
    with open(path, "rb") as handle:
        start = handle.read(65536)
    reason = not_text_reason(start)
    if reason:
        raise ResultsFileError(f"{path}: not a reducebench {what} ({reason})")
    return read_exact_text(path)


def not_text_reason(start: bytes) -> str:
    """Why a file's first bytes cannot be CSV text, or "" when they can."""
    for signature, reason in _SIGNATURES:
        if start.startswith(signature):
            return reason
    if b"\x00" in start:
        return "binary data (NUL bytes), not CSV text"
    controls = sum(start.count(bytes([b])) for b in _CONTROL)
    if start and controls > _CONTROL_SHARE * len(start):
        return "binary data (control bytes), not CSV text"
    return ""


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


def rewrite_keeping_backup(path: Path, write: Callable[[IO[str]], None]) -> Path:
    """Rewrite `path` atomically: `write` fills a new file beside it, which is fsynced and
    renamed over it; the original stays as FILE.bak (returned). A FILE.bak already there
    is refused: it may be the only copy of an earlier original."""
    backup = path.with_name(path.name + ".bak")
    if backup.exists():
        raise ResultsFileError(f"{path}: {backup.name} is in the way of the upgrade; move it")
    fresh = path.with_name(path.name + ".upgrading")
    with open(fresh, "w", newline="") as handle:
        write(handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.link(path, backup)
    os.replace(fresh, path)
    fsync_folder(path.parent)
    return backup
