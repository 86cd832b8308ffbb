"""The files a report is built from: each results CSV with its samples file, read only
through the results layer. A page never fails for its samples: a missing or unreadable
samples file becomes a note on the page."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from reducebench.core.errors import ResultsFileError
from reducebench.results.files import read_results
from reducebench.results.samples_file import all_case_samples, case_key, load_samples

LADDER, MULTIGPU = "ladder", "multigpu"
# How a run's samples_note starts when its samples file is there but gives no samples
# (`report` says so on the console too; a missing file is common and only noted on the page).
UNREADABLE_SAMPLES = "the samples file could not be used: "
# Columns only `reducebench multigpu` writes: a file whose rows have them is a scaling run.
MULTIGPU_COLUMNS = ("case", "gpus")


@dataclass
class RunFile:
    """One results CSV on the page."""

    path: Path
    frame: pd.DataFrame
    samples: pd.DataFrame | None = None  # read_samples' frame, or None
    samples_note: str = ""                # why there are no samples, when there are none
    index: int = 0                        # its place on the page (ids of its elements)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def kind(self) -> str:
        return MULTIGPU if all(c in self.frame for c in MULTIGPU_COLUMNS) else LADDER

    @cached_property
    def case_times(self) -> dict[tuple, np.ndarray]:
        """Every case's kept samples of its fastest phase (what its row's median
        summarises), keyed as results.samples_file.case_key builds keys; {} without samples."""
        if self.samples is None:
            return {}
        return all_case_samples(self.samples)

    def times_of(self, row) -> np.ndarray:
        """The samples of a results row (a dict or a namedtuple), or an empty array."""
        get = row.get if isinstance(row, dict) else lambda k: getattr(row, k)
        params = get("params")
        params = "" if params is None or (isinstance(params, float) and math.isnan(params)) \
            else str(params)
        key = case_key(str(get("rung")), str(get("dtype")), int(get("n")), int(get("block")),
                       params)
        return self.case_times.get(key, np.empty(0))

    def gpus(self) -> list[str]:
        return distinct(self.frame, "gpu")


def distinct(frame: pd.DataFrame, column: str) -> list[str]:
    """The non-empty values of a column, as text, in the order they first appear."""
    if column not in frame:
        return []
    out: list[str] = []
    for value in frame[column]:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        text = str(value).strip()
        if text and text.lower() != "nan" and text not in out:
            out.append(text)
    return out


def load_runs(paths: list[Path]) -> list[RunFile]:
    """Every given file read, in order; the first bad one raises ResultsFileError (the
    CLI turns it into one line and exit 2)."""
    if not paths:
        raise ResultsFileError("no results file given")
    runs = []
    for index, path in enumerate(paths):
        path = Path(path)
        run = RunFile(path=path, frame=read_results(path), index=index)
        _attach_samples(run)
        runs.append(run)
    return runs


def _attach_samples(run: RunFile) -> None:
    if run.kind == MULTIGPU:
        return  # `multigpu` keeps no samples file
    loaded = load_samples(run.path)
    run.samples = loaded.frame
    run.samples_note = loaded.note if loaded.missing or not loaded.note else \
        f"{UNREADABLE_SAMPLES}{loaded.note}"
