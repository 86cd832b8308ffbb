"""The raw-samples file: every timed sample of every case, next to the results CSV.

`run.csv` keeps one summary row per case; `run.samples.csv` keeps the samples the summary
came from, one row per sample, in long format, so one line of pandas reads it:

    pandas.read_csv("results/run.samples.csv")

Columns (docs/samples.md has the full description):

    schema_version  2 (version 1, without `round`, is still read: every sample round 0)
    run_id          the results CSV's run_id of the run that took the sample
    rung, dtype, n, block, params
                    the case key, exactly as in the results CSV
    round           0, 1, ... the round of the case the sample was taken in
    phase           0, 1, ... for rungs sampled in phases (Rung.phases); 0 otherwise
    index           0, 1, ... in time order over the whole case (across its rounds
                    and phases)
    time_us         the sample, microseconds
    sm_clock_mhz, mem_clock_mhz
                    the clocks read with the sample; empty (NaN) where unknown
    kept            False where the throttle rule discarded the sample

Rows are appended one case at a time and flushed to disk, like the results CSV, so an
interrupted run keeps the samples of every case it finished. Pure file handling: nothing
here measures or decides."""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from reducebench.ladder import case as model
from reducebench.core.errors import ResultsFileError
from reducebench.results.csvfile import (complete_records, drop_unfinished_tail,
                                         read_csv_text, rewrite_keeping_backup)
from reducebench.results.naming import (SAMPLES_FILE, SAMPLES_SUFFIX, check_results_path,
                                        samples_path)
from reducebench.ladder.case import KEY_COLUMNS

SAMPLES_SCHEMA_VERSION = 2
READABLE_SAMPLES_VERSIONS = (1, 2)   # 1: no `round` column (one round)
COLUMNS = ("schema_version", "run_id", *KEY_COLUMNS, "round", "phase", "index", "time_us",
           "sm_clock_mhz", "mem_clock_mhz", "kept")
OPTIONAL_COLUMNS = ("round",)  # absent from version 1

# time_us comes from CUDA events, float32 milliseconds: 9 significant digits keep every
# bit of it without writing 17-digit float64 noise into a file of a million rows.
_TIME_FORMAT = "{:.9g}"

CaseKey = tuple  # (rung, dtype, n, block, params), as model.case_key builds it


def case_key(rung: str, dtype: str, n: int, block: int, params: str | None) -> CaseKey:
    """model.case_key (the key the results CSV, resume and `compare` use), also taking
    the NaN that pandas reads for an empty params field."""
    if isinstance(params, float) and math.isnan(params):
        params = ""
    return model.case_key(rung, dtype, n, block, params)


@dataclass
class CaseSamples:
    """One case's samples as the sampling loop took them, in time order.

    times_us is required; the others are per-sample and optional (None: unknown, written
    as NaN clocks, round 0, phase 0, every sample kept)."""

    times_us: Sequence[float]
    phases: Sequence[int] | None = None
    sm_clock_mhz: Sequence[float | None] | None = None
    mem_clock_mhz: Sequence[float | None] | None = None
    kept: Sequence[bool] | None = None
    rounds: Sequence[int] | None = None

    def __post_init__(self) -> None:
        count = len(self.times_us)
        for name in ("phases", "sm_clock_mhz", "mem_clock_mhz", "kept", "rounds"):
            values = getattr(self, name)
            if values is not None and len(values) != count:
                raise ValueError(f"{name} has {len(values)} values for {count} samples")


def _clock_text(value) -> str:
    if value is None:
        return ""
    value = float(value)
    return "" if not math.isfinite(value) else f"{value:g}"


class SamplesWriter:
    """Appends one case's samples at a time; the header goes in with the first rows.
    `append=True` continues an existing file (a resumed run), without a second header."""

    def __init__(self, path: Path, append: bool = False) -> None:
        self.path = Path(path)
        self.cases = 0
        self.rows = 0
        if append and self.path.exists():  # a killed writer's half row must not run on
            drop_unfinished_tail(self.path)
        self._has_header = append and self.path.exists() and self.path.stat().st_size > 0

    def write_case(self, run_id: str, key: CaseKey, samples: CaseSamples) -> None:
        rung, dtype, n, block, params = case_key(*key)
        count = len(samples.times_us)
        phases = samples.phases if samples.phases is not None else [0] * count
        sm = samples.sm_clock_mhz if samples.sm_clock_mhz is not None else [None] * count
        mem = samples.mem_clock_mhz if samples.mem_clock_mhz is not None else [None] * count
        kept = samples.kept if samples.kept is not None else [True] * count
        rounds = samples.rounds if samples.rounds is not None else [0] * count
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", newline="") as handle:
            writer = csv.writer(handle)
            if not self._has_header:
                writer.writerow(COLUMNS)
                self._has_header = True
            for index in range(count):
                writer.writerow((SAMPLES_SCHEMA_VERSION, run_id, rung, dtype, n, block, params,
                                 int(rounds[index]), int(phases[index]), index,
                                 _TIME_FORMAT.format(float(samples.times_us[index])),
                                 _clock_text(sm[index]), _clock_text(mem[index]),
                                 bool(kept[index])))
            handle.flush()
            os.fsync(handle.fileno())
        self.cases += 1
        self.rows += count


def upgrade_samples(path: Path) -> Path | None:
    """Rewrite a version 1 samples file (no `round` column) as version 2, in place and
    atomically, every sample in round 0; the original kept as FILE.bak (returned).
    None where there is nothing to upgrade: no file, or one of this version."""
    path = Path(path)
    if not path.exists() or not path.stat().st_size:
        return None
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        header = next(csv.reader(handle), [])
    if "round" in header:
        return None
    frame = read_samples(path)
    frame["schema_version"] = SAMPLES_SCHEMA_VERSION
    return rewrite_keeping_backup(
        path, lambda handle: frame.reindex(columns=list(COLUMNS)).to_csv(handle, index=False))


def read_samples(path: str | Path):
    """A samples file as a pandas DataFrame with typed columns (params "" when empty,
    kept bool, clocks float with NaN), or one clear ResultsFileError."""
    import pandas as pd

    path = check_results_path(path, SAMPLES_FILE)
    # a row a killed writer left unfinished at the end never counts
    text, _ = complete_records(read_csv_text(path, SAMPLES_FILE))
    first = text.split("\n", 1)[0]
    if not first.strip():
        raise ResultsFileError(f"{path}: the file is empty")
    try:
        header = next(csv.reader([first]))
    except csv.Error as exc:  # a stray carriage return, bytes that are not CSV
        raise ResultsFileError(f"{path}: not a reducebench samples file ({exc})") from None
    missing = [c for c in COLUMNS if c not in header and c not in OPTIONAL_COLUMNS]
    if missing:
        beside = samples_path(path)
        hint = ("" if "median_us" not in header else
                f" (this is a results CSV; its samples are in {beside.name})"
                if beside.exists() else
                " (this is a results CSV, and no samples file is beside it: it was written "
                "before samples were kept, or without timing)")
        raise ResultsFileError(f"{path}: not a reducebench samples file (no "
                               f"{', '.join(missing)} column(s)){hint}")
    try:
        frame = pd.read_csv(io.StringIO(text), dtype={"params": str, "run_id": str, "rung": str,
                                         "dtype": str, "kept": str})
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:  # e.g. a row too long
        raise ResultsFileError(f"{path}: malformed: {str(exc).strip()}") from None
    # kept is the last column and always True or False: a row cut short (or garbled)
    # shows here, and so does a non-number where a number belongs.
    kept = frame["kept"].map({"True": True, "False": False})
    numbers = {c: pd.to_numeric(frame[c], errors="coerce")
               for c in ("schema_version", "n", "block", "phase", "index", "time_us")}
    bad = kept.isna().to_numpy() | pd.DataFrame(numbers).isna().any(axis=1).to_numpy()
    if bad.any():
        line = int(np.flatnonzero(bad)[0]) + 2  # 1-based, after the header
        raise ResultsFileError(f"{path}, line {line}: truncated or malformed (a number or "
                               "the kept flag is missing or unreadable)")
    versions = set(numbers["schema_version"].astype(int))
    if versions - set(READABLE_SAMPLES_VERSIONS):
        found = ", ".join(map(str, sorted(versions)))
        readable = ", ".join(map(str, READABLE_SAMPLES_VERSIONS))
        raise ResultsFileError(f"{path}: samples schema version {found}; this reducebench "
                               f"reads versions {readable}")
    if "round" not in frame:  # version 1: one round
        frame.insert(frame.columns.get_loc("phase"), "round", 0)
    rounds = pd.to_numeric(frame["round"], errors="coerce")
    if rounds.isna().any():
        line = int(np.flatnonzero(rounds.isna().to_numpy())[0]) + 2
        raise ResultsFileError(f"{path}, line {line}: truncated or malformed (the round "
                               "is missing or unreadable)")
    frame["round"] = rounds.astype(int)
    frame["kept"] = kept.astype(bool)
    frame["params"] = frame["params"].fillna("")
    frame["run_id"] = frame["run_id"].fillna("")
    for column in ("n", "block", "phase", "index"):
        frame[column] = numbers[column].astype(int)
    frame["time_us"] = numbers["time_us"].astype(float)
    for column in ("sm_clock_mhz", "mem_clock_mhz"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    return frame


def _last_block(rows):
    """The rows of the last time a case was written: a case measured again (a resumed
    run appending to its file) starts again at index 0, and the last one wins, as the
    results rows do in `compare`."""
    starts = np.flatnonzero(rows["index"].to_numpy() == 0)
    return rows.iloc[starts[-1]:] if len(starts) else rows


def _select(rows, phase: int | str, kept_only: bool) -> np.ndarray:
    import pandas as pd

    if kept_only:
        rows = rows[rows["kept"]]
    if phase == "all":
        chosen = rows
    elif phase == "fastest":  # in each round, as the results row summarises them
        chosen = rows
        if rows["phase"].nunique() > 1:
            medians = rows.groupby(["round", "phase"])["time_us"].median()
            fastest = set(medians.groupby(level="round").idxmin())
            pairs = pd.MultiIndex.from_arrays([rows["round"], rows["phase"]])
            chosen = rows[pairs.isin(fastest)]
    else:
        chosen = rows[rows["phase"] == int(phase)]
    return chosen.sort_values("index", kind="stable")["time_us"].to_numpy(dtype=float)


def case_samples(frame, key: CaseKey, phase: int | str = "fastest",
                 kept_only: bool = True) -> np.ndarray:
    """One case's sample times (us), in time order, as a float array; empty if the file
    does not hold the case.

    phase: "fastest" (default) is the phase with the lowest median, the one whose
    samples the results CSV summarises (device/cupy_backend.py reports the fastest phase);
    "all" every phase; or a phase number. kept_only leaves out samples the throttle rule
    discarded, as the results CSV's summary does."""
    rung, dtype, n, block, params = case_key(*key)
    mask = ((frame["rung"] == rung) & (frame["dtype"] == dtype) & (frame["n"] == n)
            & (frame["block"] == block) & (frame["params"] == params))
    rows = frame[mask]
    if not len(rows):
        return np.empty(0, dtype=float)
    return _select(_last_block(rows), phase, kept_only)


def all_case_samples(frame, phase: int | str = "fastest",
                     kept_only: bool = True) -> dict[CaseKey, np.ndarray]:
    """Every case's samples at once, keyed as `case_key` builds keys (one pass over the
    file: what `compare` wants for a whole sweep)."""
    out: dict[CaseKey, np.ndarray] = {}
    for key, rows in frame.groupby(list(KEY_COLUMNS), sort=False):
        out[case_key(*key)] = _select(_last_block(rows), phase, kept_only)
    return out


@dataclass(frozen=True)
class RunSamples:
    """The samples belonging to a results file (load_samples): the samples file's frame,
    or a one-line note saying why there are none."""

    path: Path                 # the samples file, where it is or would be
    frame: object = None       # read_samples' DataFrame; None when there are no samples
    note: str = ""             # why there are none; "" when there are
    missing: bool = False      # no samples file at all (a run from before samples were kept)

    def by_case(self, phase: int | str = "fastest") -> dict[CaseKey, np.ndarray] | None:
        """Every case's samples (all_case_samples), or None when there are none."""
        return None if self.frame is None else all_case_samples(self.frame, phase=phase)


def load_samples(path: str | Path) -> RunSamples:
    """The samples belonging to a results file, for every reader (`compare`, `report`,
    `show-samples`): given the results CSV, the samples file beside it; given a samples
    file, that file. Never raises for the samples file: where it gives no samples (it is
    missing, empty, a folder, not CSV, of another schema, or a header only), the note
    says why in one line, and each reader goes on without them (compare: the ratio rule;
    report: the page says so) or stops (show-samples, which has nothing else to show)."""
    path = Path(path)
    if path.name.lower().endswith(SAMPLES_SUFFIX):
        where, beside = path, ""
    else:
        where, beside = samples_path(path), f" beside {path.name}"
    if not where.exists() and not where.is_symlink():
        return RunSamples(where, missing=True, note=(
            f"no samples file ({where.name} is not{beside}: the run was made before "
            "samples were kept, or without timing)" if beside else f"{where}: no such file"))
    try:
        frame = read_samples(where)
    except ResultsFileError as exc:
        return RunSamples(where, note=str(exc))
    if not len(frame):
        return RunSamples(where, note=f"{where}: no samples in the file (a header only)")
    return RunSamples(where, frame)


def samples_for_results(results_csv: str | Path, phase: int | str = "fastest"
                        ) -> dict[CaseKey, np.ndarray] | None:
    """Every case's samples of a results CSV (load_samples), or None where it has none:
    the caller then falls back to the ratio rule, and says so."""
    return load_samples(results_csv).by_case(phase)
