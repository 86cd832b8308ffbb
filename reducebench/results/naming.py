"""Where results files are and what they are called: a run's CSV, the samples file beside
it, a new file's default name, and the checks a path gets before anything is measured."""

from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path
from typing import Callable, Iterable

from reducebench.core.errors import ResultsFileError, UsageError

SAMPLES_SUFFIX = ".samples.csv"
RESULTS_FILE, SAMPLES_FILE = "results file", "samples file"  # what a reader says it read
# Where a run writes when it is not told: results/ under the current folder.
RESULTS_DIR = Path("results")


def csv_stem(path: str | Path) -> str:
    """`results/run.csv` -> `run` (a name without .csv stays whole)."""
    name = Path(path).name
    return name[:-len(".csv")] if name.lower().endswith(".csv") else name


def samples_path(results_csv: str | Path) -> Path:
    """`results/run.csv` -> `results/run.samples.csv` (same folder, same stem)."""
    return Path(results_csv).with_name(csv_stem(results_csv) + SAMPLES_SUFFIX)


def unused_names(names: Callable[[str], list[Path]], first: int = 1) -> list[Path]:
    """`names("")`, or else `names("_<first>")`, `names("_<first + 1>")`, ...: the first
    whose paths are none of them an existing file, so that no default name replaces one."""
    tail, number = "", first
    while any(path.exists() for path in names(tail)):
        tail, number = f"_{number}", number + 1
    return names(tail)


def default_path(results_dir: Path, gpu: str) -> Path:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    slug = re.sub(r"[^A-Za-z0-9]+", "-", gpu).strip("-").lower() or "gpu"
    return unused_names(lambda tail: [results_dir / f"{stamp}_{slug}{tail}.csv"])[0]


def check_writable(path: str | Path, option: str = "--out", replace: bool = False,
                   suffixes: Iterable[str] = (), wrong_suffix: str = "") -> Path:
    """The one check every command that writes a file makes, before any work: one
    UsageError, naming the option, for an empty name, a name not ending in one of
    `suffixes` (where given; `wrong_suffix` says what is expected), a folder, a folder
    that does not exist, an existing file unless `replace`, or a place where no file can
    be made (a read-only folder, a file system such as /proc). The file is made and
    removed again to know (an existing one is opened for appending, never changed)."""
    if not str(path).strip():
        raise UsageError(f"{option} '': give a file name")
    path = Path(path)
    if suffixes and path.suffix.lower() not in suffixes:
        raise UsageError(f"{option} {path}: {wrong_suffix}")
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a folder; give a file name in it")
    if path.exists() and not replace:
        raise UsageError(f"{option} {path} already exists; results are never overwritten")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UsageError(f"{option} {path}: folder {folder} {what}")
    existed = path.exists()
    flags = os.O_WRONLY | getattr(os, "O_NONBLOCK", 0)  # a pipe with no reader: no wait
    try:
        if existed:
            os.close(os.open(path, flags | os.O_APPEND))
        else:
            os.close(os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644))
            os.unlink(path)
    except OSError as exc:
        what = "not writable" if existed else f"not writable: no file can be made in {folder}"
        raise UsageError(f"{option} {path}: {what} ({exc.strerror or exc})") from None
    return path


def check_new_results(path: str | Path, option: str = "--out") -> Path:
    """A results file about to be made: writable (check_writable), and neither it nor
    the samples file that goes beside it there already (results are never
    overwritten)."""
    path = check_writable(path, option)
    if samples_path(path).exists():
        raise UsageError(f"{option} {path}: {samples_path(path).name} is already there; "
                         "results are never overwritten")
    return path


def check_results_path(path: str | Path, what: str = RESULTS_FILE) -> Path:
    """A path given as a results file (or, `what`, a samples file): ResultsFileError
    when it is a folder, missing, or not a regular file (a device such as /dev/null, a
    pipe): each named as what it is, never as a missing file."""
    path = Path(path)
    if path.is_dir():
        raise ResultsFileError(f"{path}: is a folder, not a {what} (give a .csv "
                               "file in it)")
    if not path.exists():
        raise ResultsFileError(f"{path}: no such file")
    if not path.is_file():
        raise ResultsFileError(f"{path}: not a reducebench {what} (not a regular file: a "
                               "device, a pipe or a socket)")
    return path


def check_results_csv(path: str | Path) -> Path:
    """A results CSV given to read, checked (check_results_path); a samples file given
    in its place is named as one."""
    path = check_results_path(path)
    if path.name.lower().endswith(SAMPLES_SUFFIX):
        results = path.name[:-len(SAMPLES_SUFFIX)] + ".csv"
        raise ResultsFileError(f"{path}: is a samples file; give its results CSV ({results}): "
                               "the report reads the samples from beside it")
    return path
