"""Result records and the CSV files they live in.

One row per case, written (and flushed) the moment the case completes, so a crash or
Ctrl-C loses nothing already measured. Every row repeats the run's metadata, so a single
row still says where, when and how it was measured. The format is versioned by the
`schema_version` column; readers refuse other versions with a clear message."""

from __future__ import annotations

import csv
import datetime as _dt
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

from reducebench.core.errors import ResultsFileError, UsageError
from reducebench.core.interrupt import deferred
from reducebench.results.schema import COLUMNS, READABLE_VERSIONS, Record
from reducebench.ladder.case import case_key

def default_path(results_dir: Path, gpu: str) -> Path:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    slug = re.sub(r"[^A-Za-z0-9]+", "-", gpu).strip("-").lower() or "gpu"
    path = results_dir / f"{stamp}_{slug}.csv"
    suffix = 1
    while path.exists():
        path = results_dir / f"{stamp}_{slug}_{suffix}.csv"
        suffix += 1
    return path


def check_writable(path: Path, allow_existing: bool = False) -> None:
    """Fail before anything is measured if the file cannot be created."""
    if path.is_dir():
        raise UsageError(f"--out {path} is a folder; give a file's name (e.g. "
                         f"{path / 'run.csv'})")
    if path.exists() and not allow_existing:
        raise UsageError(f"--out {path} already exists; results are never overwritten")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"--out {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"--out {path}: folder {parent} is not writable")


class ResultsWriter:
    """Appends rows as they complete; the header goes in with the first row. A signal
    during a write waits until the row is whole on disk."""

    def __init__(self, path: Path, append: bool = False) -> None:
        self.path = path
        self.rows = 0
        self._has_header = append and path.exists() and path.stat().st_size > 0

    def write(self, record: Record) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with deferred(), open(self.path, "a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS)
            if not self._has_header:
                writer.writeheader()
                self._has_header = True
            writer.writerow(record.as_row())
            handle.flush()
            os.fsync(handle.fileno())
            self.rows += 1


def read_results(path: str | Path):
    """A results CSV as a pandas DataFrame, or one clear ResultsFileError."""
    import pandas as pd

    path = check_results_path(path)
    text = path.read_text(errors="replace")
    if not text.strip():
        raise ResultsFileError(f"{path}: the file is empty")
    header = next(csv.reader(io.StringIO(text)))
    if "schema_version" not in header or "rung" not in header:
        raise ResultsFileError(f"{path}: not a reducebench results file "
                               "(no schema_version and rung columns)")
    width = len(header)
    reader = csv.reader(io.StringIO(text))
    for row in reader:  # line_num: the file's line, even after fields with line breaks
        if row and len(row) != width:
            raise ResultsFileError(f"{path}, line {reader.line_num}: {len(row)} fields where "
                                   f"the header has {width} (truncated or malformed)")
    frame = pd.read_csv(io.StringIO(text))
    if frame.empty:
        raise ResultsFileError(f"{path}: the file holds a header but no results")
    versions = set(frame["schema_version"].dropna().astype(int))
    unknown = versions - set(READABLE_VERSIONS)
    if unknown or not versions:
        found = ", ".join(map(str, sorted(versions))) or "missing"
        raise ResultsFileError(f"{path}: results schema version {found}; this reducebench "
                               f"reads versions {', '.join(map(str, READABLE_VERSIONS))}")
    for column in ("n", "block", "median_us"):
        if column not in frame:
            raise ResultsFileError(f"{path}: missing column {column!r}")
    for column in COLUMNS:  # older versions: the newer columns, empty
        if column not in frame:
            frame[column] = float("nan")
    return frame


def check_results_path(path: str | Path) -> Path:
    """A path given as a results file: ResultsFileError when it is a folder or missing
    (a folder is named as one, never as a missing file)."""
    path = Path(path)
    if path.is_dir():
        raise ResultsFileError(f"{path}: is a folder, not a results file (give a .csv "
                               "file in it)")
    if not path.is_file():
        raise ResultsFileError(f"{path}: no such file")
    return path


def newest_results(results_dir: Path, count: int) -> list[Path]:
    """The newest results file under results_dir (count 1), or the newest pair that can
    be compared (count 2, oldest first): the newest run, and the newest earlier run
    measured on the same GPU with the same L2 mode and timing method, with at least one
    case in common. "Newest" is the time the file records (its latest utc_time), never
    the file's modification time, which a clone or a copy resets. Files that are not
    readable results are passed over. ResultsFileError, naming the files there, when
    there is no such file or pair."""
    if count not in (1, 2):
        raise ValueError("newest_results finds one file or a pair")
    runs = [run for run in map(_run_summary, sorted(results_dir.glob("*.csv")))
            if run is not None]
    runs.sort(key=lambda run: (run.time, run.path.name))
    if not runs:
        raise ResultsFileError(f"no results files under {results_dir}/ (found 0); run "
                               "`reducebench run` or give the files")
    newest = runs[-1]
    if count == 1:
        return [newest.path]
    for earlier in reversed(runs[:-1]):
        if earlier.kind == newest.kind and earlier.keys & newest.keys:
            return [earlier.path, newest.path]
    names = [run.path.name for run in runs]
    listed = ", ".join(names[-8:]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    gpu, mode, timing = newest.kind
    raise ResultsFileError(
        f"the newest results file {newest.path} ({gpu}, {mode} L2, {timing} timing) has no "
        f"earlier run of the same GPU, L2 mode and timing with a case in common under "
        f"{results_dir}/; give BASE and NEW (files there: {listed})")


@dataclass(frozen=True)
class _RunSummary:
    path: Path
    time: str                    # the latest utc_time recorded, ISO 8601 in UTC
    kind: tuple[str, str, str]   # gpu, L2 mode, timing method
    keys: frozenset


def _run_summary(path: Path) -> _RunSummary | None:
    """What newest_results compares a file by; None for a file that is not results."""
    import pandas as pd

    try:
        frame = read_results(path)
    except ResultsFileError:
        return None
    times = pd.to_datetime(frame["utc_time"], errors="coerce", utc=True).dropna()

    def values(column: str, missing: str) -> str:
        found = sorted({str(v).strip() for v in frame[column].dropna() if str(v).strip()})
        return " / ".join(found) or missing

    # files from before the timing column were all timed one launch per sample
    kind = (values("gpu", "unknown GPU"), values("mode", "unknown"), values("timing", "single"))
    return _RunSummary(path, times.max().isoformat() if len(times) else "", kind,
                       frozenset(completed_keys(frame)))


def completed_keys(frame) -> set[tuple]:
    """The case key of every row a results file already holds."""
    params = frame["params"].astype(object).fillna("").astype(str)  # all-empty reads as NaN
    return {case_key(r, d, n, b, p)
            for r, d, n, b, p in zip(frame["rung"], frame["dtype"], frame["n"],
                                     frame["block"], params)}
