"""Hardware counters for one case, read with Nsight Compute (ncu). No CuPy here: this
module finds ncu, builds its command line, runs it as a subprocess (injectable, so tests
need no GPU), and turns its raw CSV page into one row of `ncu_` columns.

The metric set and every aggregation rule are documented in docs/metrics.md; keep the
two in step."""

from __future__ import annotations

import csv
import glob
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol, Sequence

from reducebench.core.children import run_child
from reducebench.core.errors import ReducebenchError, UsageError
from reducebench.results.schema import METRIC_COLUMNS
from reducebench.core.numbers import number

NVTX_DOMAIN = "reducebench"  # reducebench.device.nvtx.DOMAIN, repeated to keep this import-light

# Clocks unlocked: the timing columns come from separate, unprofiled launches at the
# GPU's own boost clocks, so the counters are taken in that same clock regime.
CLOCK_CONTROL = "none"
# Every kernel replay starts with flushed caches: the counters do not depend on what the
# previous replay pass left in L2 (ncu's default, stated so the command line says it).
CACHE_CONTROL = "all"

# ---- the metrics asked of ncu (all valid on GH100: ncu --query-metrics --chip gh100) ----
TIME = "gpu__time_duration.sum"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
DRAM_PCT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
WARPS_ACTIVE = "sm__warps_active.avg.pct_of_peak_sustained_active"
SMEM_LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SMEM_ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
SMEM_LD_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SMEM_ST_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
THREADS_PER_INST = "smsp__thread_inst_executed_per_inst_executed.ratio"
WARP_INST = "smsp__inst_executed.sum"
THREAD_INST = "smsp__thread_inst_executed.sum"
L2_HIT = "lts__t_sector_hit_rate.pct"

STALL_REASONS = (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss",
    "lg_throttle", "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc",
    "no_instruction", "not_selected", "selected", "short_scoreboard", "sleeping",
    "tex_throttle", "wait",
)
# "selected" is the warp that issued: a cycle spent issuing, not a stall.
NOT_A_STALL = "selected"


def stall_metric(reason: str) -> str:
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


NCU_METRICS: tuple[str, ...] = (
    TIME, DRAM_READ, DRAM_WRITE, DRAM_PCT, SM_PCT, WARPS_ACTIVE,
    SMEM_LD_CONFLICTS, SMEM_ST_CONFLICTS, SMEM_LD_WAVEFRONTS, SMEM_ST_WAVEFRONTS,
    THREADS_PER_INST, WARP_INST, THREAD_INST, L2_HIT,
) + tuple(stall_metric(r) for r in STALL_REASONS)

# Not asked for (ncu --query-metrics does not list them) but always on the raw page.
REGISTERS = "launch__registers_per_thread"
SMEM_STATIC = "launch__shared_mem_per_block_static"
SMEM_DYNAMIC = "launch__shared_mem_per_block_dynamic"
GRID_SIZE = "launch__grid_size"
THEORETICAL_OCCUPANCY = "sm__maximum_warps_per_active_cycle_pct"

# ---- failures: one clear line each ----
class MetricsError(ReducebenchError):
    """ncu ran but gave no counters for a case."""


class CounterPermissionError(MetricsError):
    """The driver keeps the performance counters from this user (ERR_NVGPUCTRPERM)."""


class NoKernelsProfiled(MetricsError):
    """The NVTX range matched no kernel."""


class NcuFailed(MetricsError):
    """ncu (or the program under it) crashed, exited non-zero, or timed out."""


# ---- finding ncu ----
NCU_FOLDERS = ("/usr/local/cuda/bin",)
NCU_GLOBS = ("/opt/nvidia/nsight-compute/*/ncu",)


def _version_key(path: str) -> list[int]:
    return [int(part) for part in re.findall(r"\d+", path)]


def find_ncu(env: Mapping[str, str] | None = None) -> str:
    """ncu's path: on PATH, else under $CUDA_HOME (or $CUDA_PATH), /usr/local/cuda, or the
    newest /opt/nvidia/nsight-compute/<version>/. A UsageError (exit 2) if none is there."""
    env = os.environ if env is None else env
    on_path = shutil.which("ncu", path=env.get("PATH"))
    if on_path:
        return on_path
    candidates = [os.path.join(env[var], "bin", "ncu") for var in ("CUDA_HOME", "CUDA_PATH")
                  if env.get(var)]
    candidates += [os.path.join(folder, "ncu") for folder in NCU_FOLDERS]
    for pattern in NCU_GLOBS:
        candidates += sorted(glob.glob(pattern), key=_version_key, reverse=True)
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise UsageError("--metrics needs Nsight Compute's ncu, which is not on PATH, in "
                     "$CUDA_HOME/bin, /usr/local/cuda/bin or /opt/nvidia/nsight-compute/*/; "
                     "install Nsight Compute or put ncu on PATH")


# ---- the command line ----
def nvtx_filter(range_label: str) -> str:
    """ncu's filter for the push/pop range named `range_label` in reducebench's domain."""
    for reserved in "/@*\\":
        if reserved in range_label:
            raise UsageError(f"cannot profile case {range_label!r}: ncu's NVTX filter "
                             f"reserves {reserved!r}; give the kernel a label without it")
    return f"{NVTX_DOMAIN}@{range_label}/"


def command_line(ncu: str, range_label: str, reducebench_argv: Sequence[str],
                 python: str = sys.executable,
                 metrics: Sequence[str] = NCU_METRICS) -> list[str]:
    """ncu profiling only the kernels inside the case's NVTX range, printing the raw page
    as CSV in base units, around `python -m reducebench <argv>`."""
    return [ncu, "--nvtx", "--nvtx-include", nvtx_filter(range_label),
            "--clock-control", CLOCK_CONTROL, "--cache-control", CACHE_CONTROL,
            "--csv", "--page", "raw", "--print-units", "base",
            "--metrics", ",".join(metrics),
            python, "-m", "reducebench", *reducebench_argv]


# ---- parsing the raw page ----
@dataclass
class Kernel:
    """One profiled kernel launch: its raw-page cells, numbers parsed on demand."""

    name: str
    grid: str
    cells: dict[str, str] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    def number(self, metric: str) -> float:
        """The metric as a float in base units (bytes, ns); NaN if absent or n/a."""
        value = parse_number(self.cells.get(metric, ""))
        return value * unit_scale(metric, self.units.get(metric, ""))

    def signature(self) -> tuple[str, str]:
        return (self.name, self.grid)


def parse_number(text: str) -> float:
    cleaned = text.strip().replace(",", "")
    if cleaned.lower() in ("", "n/a", "nan"):
        return math.nan
    try:
        return float(cleaned)
    except ValueError:
        return math.nan


_BYTE_SCALE = {"byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12}
_NS_SCALE = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6,
             "msecond": 1e6, "s": 1e9, "second": 1e9}


def unit_scale(metric: str, unit: str) -> float:
    """Factor to base units, should ncu scale a value despite --print-units base."""
    unit = unit.strip().lower()
    if not unit:
        return 1.0
    for table in (_BYTE_SCALE, _NS_SCALE):
        if unit in table:
            return table[unit]
    return 1.0  # %, inst, sector, register/thread...: no scaling


HEADER_START = '"ID",'


def parse_raw_csv(text: str) -> list[Kernel]:
    """The kernels on ncu's raw CSV page, in launch order. Whatever precedes the header
    row (the program's own output, ncu's ==PROF== lines) and any line after the table
    that is not a full row is ignored; the units row (empty ID) gives each column's unit."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(HEADER_START)), None)
    if start is None:
        return []
    reader = csv.reader(lines[start:])
    header = next(reader)
    units: dict[str, str] = {}
    kernels: list[Kernel] = []
    for row in reader:
        if len(row) != len(header):
            continue
        cells = dict(zip(header, row))
        if not cells["ID"].strip():
            units = cells
            continue
        kernels.append(Kernel(cells.get("Kernel Name", ""), cells.get("Grid Size", ""),
                              cells, units))
    return kernels


# ---- which kernels make one sample ----
def last_sample(kernels: list[Kernel], launches_per_sample: int | None) -> list[Kernel]:
    """The kernels of the last sample. Profile mode runs each case three times inside its
    range; a sample is `launches_per_sample` consecutive kernels. Without that count, a
    sample is the shortest period of the (kernel, grid) sequence. The last sample is used
    because it is the furthest from any one-time start-up effect."""
    if not kernels:
        return []
    if launches_per_sample is None:
        launches_per_sample = shortest_period([k.signature() for k in kernels])
    if launches_per_sample < 1 or len(kernels) % launches_per_sample:
        raise MetricsError(f"ncu profiled {len(kernels)} kernels in the case's range, not a "
                           f"multiple of its {launches_per_sample} launches per sample")
    return kernels[-launches_per_sample:]


def shortest_period(items: Sequence[object]) -> int:
    for period in range(1, len(items) + 1):
        if len(items) % period == 0 and all(items[i] == items[i % period]
                                            for i in range(len(items))):
            return period
    return len(items)


# ---- aggregation over one sample's kernels ----
def weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    pairs = [(v, w) for v, w in zip(values, weights)
             if not math.isnan(v) and not math.isnan(w) and w > 0]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total else math.nan


def _sum(kernels: Sequence[Kernel], metric: str) -> float:
    values = [k.number(metric) for k in kernels]
    return math.nan if all(math.isnan(v) for v in values) else \
        sum(v for v in values if not math.isnan(v))


def _ratio(top: float, bottom: float) -> float:
    return top / bottom if bottom and not math.isnan(bottom) else math.nan


def dominant_stall(kernels: Sequence[Kernel]) -> tuple[str, float]:
    """The stall reason with the most stall cycles over the sample, and its share (%) of
    all stall cycles. ncu gives warps stalled per issue-active cycle; times the warp
    instructions executed (about one issue-active cycle each) that is the cycles stalled,
    which add up across kernels. Without instruction counts, duration weights."""
    weights = [k.number(WARP_INST) for k in kernels]
    if any(math.isnan(w) for w in weights):
        weights = [k.number(TIME) for k in kernels]
    cycles: dict[str, float] = {}
    for reason in STALL_REASONS:
        if reason == NOT_A_STALL:
            continue
        per_kernel = [k.number(stall_metric(reason)) * w for k, w in zip(kernels, weights)]
        known = [c for c in per_kernel if not math.isnan(c)]
        if known:
            cycles[reason] = sum(known)
    total = sum(cycles.values())
    if not total:
        return "", math.nan
    top = max(cycles, key=cycles.__getitem__)
    return top, 100.0 * cycles[top] / total


def _int_or_nan(value: float) -> float | int:
    return value if math.isnan(value) else int(round(value))


def _rounded(value: float, digits: int) -> float:
    return value if math.isnan(value) else round(value, digits)


def aggregate(kernels: Sequence[Kernel], n: int, itemsize: int) -> dict:
    """One case's metric columns (all but version and clock control) from the kernels of
    one sample, first (main) kernel first. Rules in docs/metrics.md."""
    if not kernels:
        raise ValueError("aggregate needs at least one kernel")
    main = kernels[0]
    durations = [k.number(TIME) for k in kernels]
    thread_inst, warp_inst = _sum(kernels, THREAD_INST), _sum(kernels, WARP_INST)
    dram_read = _sum(kernels, DRAM_READ)
    stall, stall_pct = dominant_stall(kernels)
    smem = main.number(SMEM_STATIC) + (0.0 if math.isnan(main.number(SMEM_DYNAMIC))
                                       else main.number(SMEM_DYNAMIC))

    def by_time(metric: str) -> float:
        return _rounded(weighted_mean([k.number(metric) for k in kernels], durations), 2)

    return {
        "ncu_kernels": len(kernels),
        "ncu_kernel_us": "+".join(number(d / 1000, ".1f") for d in durations) + " us",
        "ncu_grids": "+".join(_grid_text(k) for k in kernels),
        "ncu_time_us": _rounded(sum(durations) / 1000, 3),
        "ncu_dram_read_bytes": _int_or_nan(dram_read),
        "ncu_dram_write_bytes": _int_or_nan(_sum(kernels, DRAM_WRITE)),
        "ncu_dram_read_per_input": _rounded(_ratio(dram_read, n * itemsize), 4),
        "ncu_dram_pct": by_time(DRAM_PCT),
        "ncu_sm_pct": by_time(SM_PCT),
        "ncu_l2_hit_pct": by_time(L2_HIT),
        "ncu_occupancy_pct": by_time(WARPS_ACTIVE),
        "ncu_theoretical_occupancy_pct": _rounded(main.number(THEORETICAL_OCCUPANCY), 2),
        "ncu_registers": _int_or_nan(main.number(REGISTERS)),
        "ncu_smem_per_block": _int_or_nan(smem),
        "ncu_smem_ld_conflicts": _int_or_nan(_sum(kernels, SMEM_LD_CONFLICTS)),
        "ncu_smem_st_conflicts": _int_or_nan(_sum(kernels, SMEM_ST_CONFLICTS)),
        "ncu_smem_wavefronts": _int_or_nan(_sum(kernels, SMEM_LD_WAVEFRONTS)
                                           + _sum(kernels, SMEM_ST_WAVEFRONTS)),
        "ncu_threads_per_inst": _rounded(threads_per_inst(kernels, durations), 3),
        "ncu_inst_per_elem": _rounded(_ratio(thread_inst, n), 3),
        "ncu_warp_inst_per_elem": _rounded(_ratio(warp_inst, n), 4),
        "ncu_stall_top": stall,
        "ncu_stall_top_pct": _rounded(stall_pct, 1),
    }


def threads_per_inst(kernels: Sequence[Kernel], durations: Sequence[float]) -> float:
    """Active threads per executed warp instruction over the whole sample: the ratio of
    the summed counts (exact), else ncu's per-kernel ratio weighted by duration."""
    exact = _ratio(_sum(kernels, THREAD_INST), _sum(kernels, WARP_INST))
    if not math.isnan(exact):
        return exact
    return weighted_mean([k.number(THREADS_PER_INST) for k in kernels], durations)


def _grid_text(kernel: Kernel) -> str:
    grid = kernel.number(GRID_SIZE)
    if not math.isnan(grid):
        return str(int(grid))
    return kernel.grid.strip("() ").split(",")[0].strip() or "?"




# ---- running ncu ----
class Completed(Protocol):
    returncode: int
    stdout: str
    stderr: str


Runner = Callable[[Sequence[str], float], Completed]


def run_subprocess(argv: Sequence[str], timeout: float) -> Completed:
    """ncu in a process group of its own: a signal or a time-out stops ncu and the
    program it profiles together (core/children.py)."""
    return run_child(argv, timeout)


def _tail(text: str, lines: int = 3) -> str:
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(kept[-lines:]) or "(no output)"


PERMISSION_MARK = "ERR_NVGPUCTRPERM"
NO_KERNELS_MARK = "No kernels were profiled"


def check_output(returncode: int, stdout: str, stderr: str, range_label: str) -> list[Kernel]:
    """The profiled kernels, or the one error that says why there are none."""
    everything = f"{stdout}\n{stderr}"
    if PERMISSION_MARK in everything:
        raise CounterPermissionError(
            "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): run as root "
            "or with CAP_PERFMON, or have an admin set NVreg_RestrictProfilingToAdminUsers=0; "
            "see https://developer.nvidia.com/ERR_NVGPUCTRPERM")
    if returncode != 0:
        raise NcuFailed(f"ncu exited with status {returncode} profiling {range_label!r}: "
                        f"{_tail(everything)}")
    kernels = parse_raw_csv(stdout)
    if kernels:
        return kernels
    if NO_KERNELS_MARK in everything:
        raise NoKernelsProfiled(
            f"ncu profiled no kernel in the NVTX range {nvtx_filter(range_label)!r}: the "
            f"case did not run, or ran under another range name")
    raise NcuFailed(f"ncu printed no CSV rows profiling {range_label!r}: {_tail(everything)}")


_versions: dict[str, str] = {}  # ncu path -> version, for the real subprocess only


def ncu_version(ncu: str, runner: Runner = run_subprocess) -> str:
    """'2025.3.1.0' from `ncu --version`, or 'unknown'. Asked once per ncu and run."""
    if runner is run_subprocess and ncu in _versions:
        return _versions[ncu]
    try:
        done = runner([ncu, "--version"], 60)
        match = re.search(r"Version\s+(\d[\w.]*)", f"{done.stdout}\n{done.stderr}")
        version = match.group(1) if match else "unknown"
    except (OSError, subprocess.SubprocessError):
        version = "unknown"
    if runner is run_subprocess:
        _versions[ncu] = version
    return version


def collect(range_label: str, reducebench_argv: Sequence[str],
            launches_per_sample: int | None, n: int, itemsize: int, timeout: float,
            *, ncu: str | None = None, runner: Runner = run_subprocess) -> dict:
    """Run `python -m reducebench <argv>` (a profile-mode run of exactly this case) under
    ncu and return every column of METRIC_COLUMNS for the case whose NVTX range is
    `range_label`. Raises UsageError if ncu is missing, MetricsError subclasses if it
    gives no counters."""
    ncu = ncu or find_ncu()
    argv = command_line(ncu, range_label, reducebench_argv)
    try:
        done = runner(argv, timeout)
    except subprocess.TimeoutExpired:
        raise NcuFailed(f"ncu did not finish profiling {range_label!r} within "
                        f"{number(timeout, 'g', ' s')}")
    except OSError as exc:
        raise NcuFailed(f"could not start {ncu}: {exc}")
    kernels = check_output(done.returncode, done.stdout or "", done.stderr or "", range_label)
    row = aggregate(last_sample(kernels, launches_per_sample), n, itemsize)
    row["ncu_version"] = ncu_version(ncu, runner)
    row["ncu_clock_control"] = CLOCK_CONTROL
    return {column: row[column] for column in METRIC_COLUMNS}


def kernel_durations_us(range_label: str, reducebench_argv: Sequence[str],
                        launches_per_sample: int | None, timeout: float, *,
                        ncu: str | None = None, runner: Runner = run_subprocess) -> list[float]:
    """ncu's own duration (gpu__time_duration, one replay pass) of each kernel of the
    case's last profiled sample, in microseconds: an independent check of the timings."""
    ncu = ncu or find_ncu()
    argv = command_line(ncu, range_label, reducebench_argv, metrics=(TIME,))
    try:
        done = runner(argv, timeout)
    except subprocess.TimeoutExpired:
        raise NcuFailed(f"ncu did not finish profiling {range_label!r} within "
                        f"{number(timeout, 'g', ' s')}")
    kernels = check_output(done.returncode, done.stdout or "", done.stderr or "", range_label)
    return [k.number(TIME) / 1e3 for k in last_sample(kernels, launches_per_sample)]


# -- the after-case hook of `run --metrics` ------------------------------------------------

METRICS_TIMEOUT_S = 600


def counter_reader(settings) -> Callable:
    """The after-case hook of --metrics: ncu, found before anything is measured, run on
    each verified case's profile-mode launches in a child process (profile_argv)."""
    import tempfile
    from pathlib import Path

    ncu = find_ncu()
    folder = Path(tempfile.mkdtemp(prefix="reducebench-ncu-"))

    def read(case, record) -> None:
        argv = profile_argv(case, settings, folder / "case.csv")
        launches = record.launches or None  # a library's kernels: found from their period
        try:
            record.metrics = collect(case.label, argv, launches, case.n,
                                     case.dtype.itemsize, METRICS_TIMEOUT_S, ncu=ncu)
        except CounterPermissionError:
            raise
        except MetricsError as exc:
            record.ncu_error = str(exc)
        for leftover in folder.glob("*"):
            leftover.unlink()
    return read


def profile_argv(case, settings, out) -> list[str]:
    """`reducebench run` arguments that repeat exactly one case in profile mode (three
    samples, no stream hold), writing its row to `out`: what --metrics runs under ncu. A
    case of the row ladder (or a user's row kernel or function) is a --shape run."""
    from reducebench.ladder.case import DISPATCHERS

    rung = case.rung
    spec = next((k for k in settings.kernels if rung.origin == "user"
                 and rung.source == k.path and rung.kernel == k.name), None)
    which = (["--rung", "none", "--kernel", f"{spec.path}:{spec.name}", "--finish",
              spec.finish, "--grid", spec.grid] if spec else ["--rung", rung.name])
    if rung.origin == "callable":
        which = ["--rung", "none", "--callable", rung.callable_ref.target]
    params = [arg for k, v in sorted(case.params.items()) for arg in ("--param", f"{k}={v}")]
    block = ["--block", str(case.block)] if case.block else []
    if rung.name in DISPATCHERS:  # the child resolves auto (row_auto) from the same
        params, block = [], []    # table to the same variant (it takes neither option)
    # a row case (its rung sums each row) is the same shape run again
    extent = ["--shape", f"{case.rows}x{case.cols}"] if rung.finish == "rows" else \
        ["--size", str(case.n)]
    return ["run", *extent, "--dtype", case.dtype.name, *which, *block, *params,
            "--cold" if settings.cold else "--warm", "--inputs", settings.inputs,
            "--device", str(settings.device), "--profile", "--out", str(out)]
