"""Result records and the CSV files they live in.

One row per case, written (and flushed) the moment the case completes, so a crash or
Ctrl-C loses nothing already measured. Every row repeats the run's metadata, so a single
row still says where, when and how it was measured. The format is versioned by the
`schema_version` column; readers refuse other versions with a clear message."""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import os
import re
import subprocess
import uuid
from dataclasses import dataclass, field, fields
from pathlib import Path

from reducebench import __version__
from reducebench.core.paths import CHECKOUT_DIR
from reducebench.core.errors import ResultsFileError, UsageError
from reducebench.core.interrupt import deferred
from reducebench.measuring.counters import METRIC_COLUMNS, blank_metrics
from reducebench.ladder.case import case_key

# Version 2 added the inputs, options and accuracy columns; version 3 the device index
# (`run --device all` writes one file per GPU). Older files are still read, with the
# newer columns empty.
SCHEMA_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)

# Facts about the device, from the backend: `device` is its CUDA index on that machine.
DEVICE_FIELDS = ("device", "gpu", "compute_capability", "sm_count", "l2_bytes", "peak_gbps",
                 "ceiling_gbps", "driver", "runtime", "cupy")
# Run metadata: the same on every row of a run. `options` is the sweep as JSON, so that
# --resume can continue it without the original command line.
META_FIELDS = ("schema_version", "run_id", "utc_time", *DEVICE_FIELDS, "reducebench",
               "git_commit", "mode", "timing", "inputs", "seed", "options")


def run_metadata(device: dict, options: dict, seed: int) -> dict:
    """What every row of one run repeats: where, when, with what, and how (the sweep's
    options as RunSettings.options() gives them)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": uuid.uuid4().hex[:12],
        "utc_time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        **{k: device.get(k, "") for k in DEVICE_FIELDS},
        "reducebench": __version__, "git_commit": git_commit(), "mode": options["mode"],
        "timing": options["timing"], "inputs": options["inputs"], "seed": seed,
        "options": json.dumps(options, sort_keys=True),
    }


def git_commit() -> str:
    """The checkout's commit (with -dirty), or REDUCEBENCH_COMMIT where the tree travelled
    without its .git (a copy on a GPU machine)."""
    if os.environ.get("REDUCEBENCH_COMMIT"):
        return os.environ["REDUCEBENCH_COMMIT"]
    root = CHECKOUT_DIR
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=5)
        commit = out.stdout.strip()
        if commit:
            dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                    "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=5).stdout.strip()
            return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def bandwidth_gbps(bytes_read: float, median_us: float) -> float:
    """The one bandwidth formula: bytes a case must read over its median time."""
    return bytes_read / (median_us * 1e3)


NOT_COLUMNS = ("meta", "metrics", "raw_samples")  # kept beside the row, not in it


@dataclass
class Record:
    rung: str
    dtype: str
    n: int
    block: int
    status: str = "ok"          # ok | FAIL | error | skipped
    error: str = ""
    params: str = ""            # k=v;k=v, the rung's tunables as run
    finish: str = ""
    grid: int = 0
    launches: int = 0
    deterministic: bool = True
    result: float = float("nan")
    reference: float = float("nan")
    abs_error: float = float("nan")
    tolerance: float = float("nan")
    rel_error: float = float("nan")
    error_ulps: float = float("nan")
    samples: int = 0
    median_us: float = float("nan")
    min_us: float = float("nan")
    max_us: float = float("nan")
    mean_us: float = float("nan")
    noise_pct: float = float("nan")
    bytes_read: int = 0
    gbps: float = float("nan")
    pct_peak: float = float("nan")
    pct_ceiling: float = float("nan")  # of the measured read ceiling (docs/tuning.md)
    sm_clock_start_mhz: float = float("nan")
    sm_clock_end_mhz: float = float("nan")
    sm_clock_min_mhz: float = float("nan")   # over the samples (NVML), where known
    sm_clock_max_mhz: float = float("nan")
    discarded: int = 0          # samples the throttle rule discarded (throttle.py)
    throttled: bool = False
    graph_k: int = 0            # runs per CUDA-graph replay, with --timing graph
    energy_uj: float = float("nan")       # energy per run, whole board (--energy)
    gb_per_joule: float = float("nan")
    energy_err_pct: float = float("nan")
    energy_method: str = ""     # counter | power (energy.py)
    energy_note: str = ""       # why there is no energy figure, when asked for one
    source: str = ""
    source_hash: str = ""
    variant: str = ""           # auto: what ran and where the choice came from
    ncu_error: str = ""         # why --metrics has no counters for this case
    meta: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)  # METRIC_COLUMNS, with --metrics
    raw_samples: object = None  # every sample (samples.CaseSamples): the samples file's

    @property
    def verified(self) -> bool:
        return self.status == "ok"

    def as_row(self) -> dict:
        row = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in NOT_COLUMNS}
        row["verified"] = self.verified
        return {**{k: self.meta.get(k, "") for k in META_FIELDS}, **row,
                **blank_metrics(), **self.metrics}


RECORD_FIELDS = tuple(f.name for f in fields(Record) if f.name not in NOT_COLUMNS)
COLUMNS = META_FIELDS + RECORD_FIELDS + ("verified",) + METRIC_COLUMNS


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
