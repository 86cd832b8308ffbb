"""Where results files are and what they are called: a run's CSV, the samples file beside
it, a new file's default name, and the checks a path gets before anything is measured."""

from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path

from reducebench.core.errors import ResultsFileError, UsageError

SAMPLES_SUFFIX = ".samples.csv"
# Where a run writes when it is not told: results/ under the current folder.
RESULTS_DIR = Path("results")


def csv_stem(path: str | Path) -> str:
    """`results/run.csv` -> `run` (a name without .csv stays whole)."""
    name = Path(path).name
    return name[:-len(".csv")] if name.lower().endswith(".csv") else name


def samples_path(results_csv: str | Path) -> Path:
    """`results/run.csv` -> `results/run.samples.csv` (same folder, same stem)."""
    return Path(results_csv).with_name(csv_stem(results_csv) + SAMPLES_SUFFIX)


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
        raise UsageError(f"--out {path}: is a folder; give a file name in it, e.g. "
                         f"{path / 'run.csv'}")
    if path.exists() and not allow_existing:
        raise UsageError(f"--out {path} already exists; results are never overwritten")
    if samples_path(path).exists() and not allow_existing:
        raise UsageError(f"--out {path}: {samples_path(path).name} is already there; results "
                         "are never overwritten")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"--out {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"--out {path}: folder {parent} is not writable")


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
