"""The files results live in: reading any version ever written, appending rows in a
file's own layout, upgrading an older file, and finding files.

One row per case, written (and fsynced) the moment the case completes, so a crash or
Ctrl-C loses nothing already measured (store.py commits a case's samples, then its row).
Every row repeats the run's metadata, so a single row still says where, when and how it
was measured. schema.py says what each version added."""

from __future__ import annotations

import csv
import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from reducebench.core.errors import ResultsFileError
from reducebench.core.interrupt import deferred
from reducebench.results.csvfile import (complete_records, drop_unfinished_tail,
                                         read_csv_text, rewrite_keeping_backup)
from reducebench.results.naming import RESULTS_FILE, SAMPLES_SUFFIX, check_results_path
from reducebench.results.schema import (COLUMNS, MULTIGPU, READABLE_VERSIONS, SCHEMA_VERSION,
                                        SINGLE, STATUSES, columns_of)
from reducebench.ladder.case import case_key
from reducebench.core.numbers import number

class RowWriter:
    """Appends one row at a time to a results file of one record kind, each flushed and
    fsynced before write() returns; the header goes in with the first row. An existing
    file is only ever appended in its own layout: one of an older schema version, or of
    another record kind, is refused (upgrade_file rewrites an older one first)."""

    def __init__(self, path: Path, columns: tuple[str, ...] = COLUMNS) -> None:
        self.path = Path(path)
        self.columns = columns
        self.rows = 0
        if self.path.exists():  # a killed writer's half row must not run into the next
            drop_unfinished_tail(self.path)
        self._has_header = self.path.exists() and self.path.stat().st_size > 0
        if self._has_header:
            header = read_header(self.path)
            if tuple(header) != tuple(columns):
                raise ResultsFileError(
                    f"{self.path}: written by another version of reducebench (results schema "
                    f"{_header_version(self.path)}, {len(header)} columns; this one appends "
                    f"schema {SCHEMA_VERSION}, {len(columns)} columns); it is left as it is")

    def write(self, record) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with deferred(), open(self.path, "a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.columns)
            if not self._has_header:
                writer.writeheader()
                self._has_header = True
            writer.writerow(record.as_row())
            handle.flush()
            os.fsync(handle.fileno())
        self.rows += 1


def read_header(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        return next(csv.reader(handle), [])


def _header_version(path: Path) -> str:
    """The schema version of a file's first row, as text ("?" if unreadable)."""
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        reader = csv.DictReader(handle)
        first = next(reader, None)
    return str((first or {}).get("schema_version") or "?")


class ResultsWarning(UserWarning):
    """Something a reader of a results file should know, that does not stop it."""


def read_results(path: str | Path):
    """A results CSV of any schema version as a pandas DataFrame with the current
    version's columns (newer columns empty in older files), or one clear
    ResultsFileError. A record a killed writer left unfinished at the end is ignored;
    where a case appears twice, the later row wins (ResultsWarning, once per file)."""
    import pandas as pd

    path = check_results_path(path)
    text, cut = complete_records(read_csv_text(path, RESULTS_FILE))
    if not text.strip():
        raise ResultsFileError(f"{path}: the file is empty")
    header, row_lines = _checked_rows(path, text)
    try:
        frame = pd.read_csv(io.StringIO(text), keep_default_na=True)
    except pd.errors.ParserError as exc:
        raise ResultsFileError(f"{path}: not a reducebench {RESULTS_FILE} (not readable as "
                               f"CSV: {str(exc).strip()})") from None
    if frame.empty:
        raise ResultsFileError(f"{path}: the file holds a header but no results")
    numbers = pd.to_numeric(frame["schema_version"], errors="coerce")
    _refuse_first(numbers.isna(), frame, "schema_version", "a number", path,  # empty too
                  row_lines[1:])
    versions = set(numbers.dropna().astype(int))
    unknown = versions - set(READABLE_VERSIONS)
    if unknown or not versions:
        found = ", ".join(map(str, sorted(versions))) or "missing"
        raise ResultsFileError(f"{path}: results schema version {found}; this reducebench "
                               f"reads versions {', '.join(map(str, READABLE_VERSIONS))}")
    for column in ("dtype", "n", "block", "median_us"):   # the key, and the time
        if column not in frame:
            raise ResultsFileError(f"{path}: missing column {column!r}")
    _check_cells(frame, path, row_lines[1:])
    if cut:
        warnings.warn(f"{path}: its last row was left unfinished by a killed run; "
                      "ignored", ResultsWarning, stacklevel=2)
    return _current_layout(_latest_rows(frame, path), header)


def _checked_rows(path: Path, text: str) -> tuple[list[str], list[int]]:
    """The header, and the file's line of each data row (line_num counts the file's
    lines, even after fields with line breaks). One ResultsFileError for text that is
    not a results CSV: no schema_version and rung columns, a row of another width, or
    text the csv module cannot read at all (a field too long, a stray quote)."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
        if "schema_version" not in header or "rung" not in header:
            raise ResultsFileError(f"{path}: not a reducebench {RESULTS_FILE} "
                                   "(no schema_version and rung columns)")
        row_lines = [reader.line_num]
        for row in reader:
            if row and len(row) != len(header):
                raise ResultsFileError(f"{path}, line {reader.line_num}: {len(row)} fields "
                                       f"where the header has {len(header)} (malformed)")
            if row:
                row_lines.append(reader.line_num)
    except csv.Error as exc:
        raise ResultsFileError(f"{path}, line {reader.line_num}: not a reducebench "
                               f"{RESULTS_FILE} ({_csv_reason(exc)})") from None
    return header, row_lines


def _csv_reason(exc: csv.Error) -> str:
    if "field larger than field limit" in str(exc):
        return f"a field longer than {number(csv.field_size_limit(), ',')} characters"
    return f"not readable as CSV: {exc}"


# What a row must hold for any reader to use it: a case's size and block are its key.
_WHOLE_AT_LEAST = {"n": 1, "block": 0}


def _check_cells(frame, path: Path, lines: list[int]) -> None:
    """One clear ResultsFileError for the first cell no reader could use: n or block not
    a whole number (n at least 1, block at least 0), a median that is not a number, or a
    status this version does not know. An empty median is a case that was not timed."""
    import pandas as pd

    for column, least in _WHOLE_AT_LEAST.items():
        numbers = pd.to_numeric(frame[column], errors="coerce")
        _refuse_first(numbers.isna() | (numbers % 1 != 0) | (numbers < least), frame, column,
                      f"a whole number of at least {least}", path, lines)
    medians = pd.to_numeric(frame["median_us"], errors="coerce")
    _refuse_first(frame["median_us"].notna() & medians.isna(), frame, "median_us",
                  "a number of microseconds", path, lines)
    if "status" in frame:
        _refuse_first(frame["status"].notna() & ~frame["status"].isin(STATUSES), frame,
                      "status", f"one of {', '.join(STATUSES)}", path, lines)


def _refuse_first(bad, frame, column: str, what: str, path: Path, lines: list[int]) -> None:
    """ResultsFileError naming the file's line of the first row where `bad` holds."""
    import pandas as pd

    if not bad.any():
        return
    index = int(bad.to_numpy().argmax())
    value = frame[column].iloc[index]
    shown = ("an empty cell" if pd.isna(value) else
             repr(value) if isinstance(value, str) else str(value))
    line = lines[index] if index < len(lines) else "?"
    raise ResultsFileError(f"{path}, line {line}: {column}: {shown} is not {what}")


def file_kind(header) -> str:
    """single or multigpu: from the kind column (version 4), else from the columns."""
    return MULTIGPU if "gpus" in header else SINGLE


def _current_layout(frame, header):
    """Older versions' rows in today's columns: the newer ones empty, the kind set."""
    import pandas as pd

    kind = file_kind(header)
    if "kind" not in frame or frame["kind"].isna().all():
        frame["kind"] = kind
    # every reader may ask for any single-GPU column; added in one step, as a frame that
    # grows a column at a time is fragmented (pandas' PerformanceWarning)
    missing = [c for c in dict.fromkeys((*columns_of(kind), *COLUMNS)) if c not in frame]
    if not missing:
        return frame
    empty = pd.DataFrame(float("nan"), index=frame.index, columns=missing)
    return pd.concat([frame, empty], axis=1)


def _latest_rows(frame, path: Path):
    """Each case's last row: a case measured twice (an older resume, a merged file) is
    what it measured last."""
    keys = row_keys(frame)
    if "rank" in frame and frame["rank"].notna().any():  # a fleet file: a row per case per rank
        keys = keys.combine(frame["rank"].astype(str), lambda key, rank: (*key, rank))
    duplicated = keys.duplicated(keep="last")
    if duplicated.any():
        cases = len(set(keys[duplicated]))
        warnings.warn(f"{path}: {cases} case(s) were measured more than once; the latest row "
                      f"of each is used ({int(duplicated.sum())} earlier row(s) left out)",
                      ResultsWarning, stacklevel=3)
        frame = frame[~duplicated.to_numpy()].reset_index(drop=True)
    return frame


def row_keys(frame):
    """Each row's case key (ladder.case.case_key), as a pandas Series of tuples."""
    import pandas as pd

    params = frame["params"].astype(object).where(frame["params"].notna(), "").astype(str) \
        if "params" in frame else pd.Series([""] * len(frame))
    return pd.Series([case_key(r, d, n, b, p) for r, d, n, b, p in
                      zip(frame["rung"], frame["dtype"], frame["n"], frame["block"], params)],
                     index=frame.index)


def file_version(path: Path) -> int:
    """The schema version a results file is written in (of its first row)."""
    version = _header_version(path)
    return int(version) if version.isdigit() else 0


def upgrade_file(path: Path) -> Path:
    """Rewrite an older results file in today's schema, in place and atomically: the new
    file is written beside it, fsynced and renamed over it; the original is kept as
    FILE.bak. Rows keep every value they had, and say what they were upgraded from."""
    frame = read_results(path)
    old = file_version(path)
    kind = str(frame["kind"].iloc[0])
    frame["note"] = frame["note"].astype(object).where(frame["note"].notna(), "")
    frame["note"] = [f"{n}; upgraded from results schema {old}".lstrip("; ")
                     for n in frame["note"]]
    frame["schema_version"] = SCHEMA_VERSION
    return rewrite_keeping_backup(path, lambda handle: frame.reindex(
        columns=list(columns_of(kind))).to_csv(handle, index=False, lineterminator="\r\n"))


def newest_results(results_dir: Path, count: int) -> list[Path]:
    """The newest single-GPU results file under results_dir (count 1), or the newest pair
    that can be compared (count 2, oldest first): the newest run, and the newest earlier
    run of the same kind (GPU, L2 mode, timing method, inputs, dtypes, and the rungs its
    options asked for) with at least one case in common. "Newest" is the time the file
    records (its latest utc_time), never the file's modification time, which a clone or
    a copy resets. Files that are not readable results, and multi-GPU files (`multigpu`:
    they have a `gpus` column), are passed over. ResultsFileError, naming the files
    there, when there is no such file or pair."""
    if count not in (1, 2):
        raise ValueError("newest_results finds one file or a pair")
    candidates = sorted(path for path in results_dir.rglob("*.csv")  # subfolders too
                        if not path.name.endswith(SAMPLES_SUFFIX))
    with warnings.catch_warnings():  # about files it may not pick: the chosen ones, when read
        warnings.simplefilter("ignore", ResultsWarning)
        runs = [run for run in map(_run_summary, candidates) if run is not None]
    runs.sort(key=lambda run: (run.time, run.path.name))
    if not runs:
        raise ResultsFileError(f"no single-GPU results files under {results_dir}/ or its "
                               "folders (found 0); run `reducebench run` or give the files")
    newest = runs[-1]
    if count == 1:
        return [newest.path]
    for earlier in reversed(runs[:-1]):
        if earlier.kind == newest.kind and earlier.keys & newest.keys:
            return [earlier.path, newest.path]
    names = [run.path.name for run in runs]
    listed = ", ".join(names[-8:]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    gpu, mode, timing, inputs, dtypes, rungs = newest.kind
    rungs = f"{len(rungs)} rung(s)" if rungs else "rungs not recorded"
    raise ResultsFileError(
        f"the newest results file {newest.path} ({gpu}, {mode} L2, {timing} timing, "
        f"{inputs} inputs, {dtypes}, {rungs}) has no earlier run of the same GPU, "
        f"L2 mode, timing, inputs, dtypes and rungs with a case in common under "
        f"{results_dir}/; give BASE and NEW (files there: {listed})")


@dataclass(frozen=True)
class _RunSummary:
    path: Path
    time: str                    # the latest utc_time recorded, ISO 8601 in UTC
    kind: tuple                  # gpu, L2 mode, timing, inputs, dtypes, rungs asked for
    keys: frozenset


def _run_summary(path: Path) -> _RunSummary | None:
    """What newest_results compares a file by; None for a file that is not single-GPU
    results. The dtypes and rungs are the ones the run's options asked for (the rungs
    include --kernel and --callable); a file that records no options has its rows'
    dtypes, and rungs "not recorded" (such files only pair with each other)."""
    import json

    import pandas as pd

    try:
        frame = read_results(path)
    except ResultsFileError:
        return None
    if "gpus" in frame.columns:   # a multi-GPU file: another kind of run altogether
        return None
    times = pd.to_datetime(frame["utc_time"], errors="coerce", utc=True).dropna()

    def values(column: str, missing: str) -> str:
        found = sorted({str(v).strip() for v in frame[column].dropna() if str(v).strip()})
        return " / ".join(found) or missing

    try:
        options = json.loads(next(str(v) for v in frame["options"].dropna() if str(v).strip()))
    except (StopIteration, ValueError):
        options = {}
    options = options if isinstance(options, dict) else {}

    def listed(*names: str) -> list[str]:
        found: set[str] = set()
        for name in names:
            value = options.get(name) or []
            found |= {str(v) for v in (value if isinstance(value, list) else [value])}
        return sorted(found)

    dtypes = listed("dtype") or sorted({str(v) for v in frame["dtype"].dropna()})
    rungs = listed("rung", "kernel", "callable")
    # files from before the timing and inputs columns were all timed one launch per
    # sample, on exact inputs; the rungs stay a tuple: a --kernel's text holds commas
    kind = (values("gpu", "unknown GPU"), values("mode", "unknown"),
            values("timing", "single"), values("inputs", "exact"), ", ".join(dtypes),
            tuple(rungs))
    return _RunSummary(path, times.max().isoformat() if len(times) else "", kind,
                       frozenset(completed_keys(frame)))


def completed_keys(frame) -> set[tuple]:
    """The case key of every row a results file already holds."""
    return set(row_keys(frame))
