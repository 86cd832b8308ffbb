"""The schema of a results row: its columns, in order, and the record that fills them.

Every row repeats the run's metadata, so a single row still says where, when and how it
was measured. The format is versioned by the `schema_version` column; every version ever
written is still read (files.py)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

# ---- the columns a case's row gets ----
METRIC_COLUMNS: tuple[str, ...] = (
    "ncu_version",                    # Nsight Compute version, e.g. 2025.3.1.0
    "ncu_clock_control",              # the --clock-control setting: none (clocks unlocked)
    "ncu_kernels",                    # kernels in one sample of the case
    "ncu_kernel_us",                  # each kernel's duration: "93.2+3.3+3.0 us"
    "ncu_grids",                      # each kernel's grid: "65536+256+1"
    "ncu_time_us",                    # sum of the kernel durations under the profiler
    "ncu_dram_read_bytes",            # sum over the kernels
    "ncu_dram_write_bytes",           # sum over the kernels
    "ncu_dram_read_per_input",        # DRAM bytes read / (n * element size); 1.0 = ideal
    "ncu_dram_pct",                   # DRAM throughput, % of peak, duration-weighted
    "ncu_sm_pct",                     # SM throughput, % of peak, duration-weighted
    "ncu_l2_hit_pct",                 # L2 sector hit rate, duration-weighted
    "ncu_occupancy_pct",              # achieved occupancy (warps active), duration-weighted
    "ncu_theoretical_occupancy_pct",  # of the first (main) kernel
    "ncu_registers",                  # registers per thread, main kernel
    "ncu_smem_per_block",             # static + dynamic shared memory bytes, main kernel
    "ncu_smem_ld_conflicts",          # shared-memory load bank conflicts, summed
    "ncu_smem_st_conflicts",          # shared-memory store bank conflicts, summed
    "ncu_smem_wavefronts",            # shared-memory wavefronts (loads + stores), summed
    "ncu_threads_per_inst",           # active threads per executed warp instruction (<= 32)
    "ncu_inst_per_elem",              # thread instructions executed per input element
    "ncu_warp_inst_per_elem",         # warp instructions executed per input element
    "ncu_stall_top",                  # the reason most stall cycles went to
    "ncu_stall_top_pct",              # its share of all stall cycles, %
)
TEXT_COLUMNS = frozenset({"ncu_version", "ncu_clock_control", "ncu_kernel_us", "ncu_grids",
                          "ncu_stall_top"})




def blank_metrics() -> dict:
    """Every counter column empty: for rows measured without --metrics, or skipped."""
    return {c: "" if c in TEXT_COLUMNS else math.nan for c in METRIC_COLUMNS}


# The versions, each still read (files.py upgrades older rows in memory, and rewrites an
# older file as the current version before --resume appends to it):
#   1  the first: no inputs, options or accuracy columns
#   2  + inputs, options (the sweep as JSON), rel_error, error_ulps, ceiling_gbps
#   3  + device (`run --device all` writes one file per GPU)
#   4  + kind (single | multigpu), host, gpu_uuid, timing_floor_us, rank, local_rank,
#        world_size; + note, read_us, pct_read; status `suspect`
#   5  + rounds, round_spread_pct, round_medians_us, read_rounds_us: a case measured in
#        rounds (a version 1-4 row is one round, its round columns empty)
SCHEMA_VERSION = 5
READABLE_VERSIONS = (1, 2, 3, 4, 5)

# What kind of record a row is: one case on one GPU, or one case over several GPUs.
SINGLE, MULTIGPU = "single", "multigpu"
KINDS = (SINGLE, MULTIGPU)

# Facts about the device, from the backend: `device` is its CUDA index on that machine;
# timing_floor_us the time of an empty timed sample there (no figure can be below it).
DEVICE_FIELDS = ("device", "gpu", "gpu_uuid", "host", "compute_capability", "sm_count",
                 "l2_bytes", "peak_gbps", "ceiling_gbps", "timing_floor_us", "driver", "runtime",
                 "cupy")
# Where the process ran in a launcher's world (torchrun, srun, mpirun); empty otherwise.
RANK_FIELDS = ("rank", "local_rank", "world_size")
# Run metadata: the same on every row of a run. `options` is the sweep as JSON, so that
# --resume can continue it without the original command line.
META_FIELDS = ("schema_version", "kind", "run_id", "utc_time", *DEVICE_FIELDS, *RANK_FIELDS,
               "reducebench", "git_commit", "mode", "timing", "inputs", "seed", "options")

# How a case ended. `suspect`: measured and verified, but the figure is impossible (faster
# than the memory allows, or under the timing floor): never a plain result.
OK, SUSPECT, FAIL, ERROR, SKIPPED = "ok", "suspect", "FAIL", "error", "skipped"
STATUSES = (OK, SUSPECT, FAIL, ERROR, SKIPPED)


def bandwidth_gbps(bytes_read: float, median_us: float) -> float:
    """The one bandwidth formula: bytes a case must read over its median time."""
    return bytes_read / (median_us * 1e3)


def medians_text(medians) -> str:
    """Round medians as a results cell: microseconds, ;-separated, in round order."""
    return ";".join(f"{m:.4f}" for m in medians)


def parse_medians(text) -> tuple[float, ...]:
    """A results cell of round medians back as numbers; () for an empty or unreadable
    cell (a row of version 4 or older, or an untimed case)."""
    if not isinstance(text, str) or not text.strip():
        return ()
    try:
        values = tuple(float(part) for part in text.split(";"))
    except ValueError:
        return ()
    return values if all(v > 0 and math.isfinite(v) for v in values) else ()


NOT_COLUMNS = ("meta", "metrics", "raw_samples")  # kept beside the row, not in it


@dataclass
class Record:
    rung: str
    dtype: str
    n: int
    block: int
    status: str = OK            # STATUSES
    error: str = ""             # why a case failed, errored or was skipped
    note: str = ""              # anything else a reader must know (why suspect, ...)
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
    noise_pct: float = float("nan")      # inside a round: the median round's stdev/mean
    rounds: int = 0                      # rounds the case was measured in (0: untimed)
    round_spread_pct: float = float("nan")  # (max - min) of round medians / their median
    round_medians_us: str = ""           # each round's median, in round order, ;-separated
    bytes_read: int = 0
    gbps: float = float("nan")
    pct_peak: float = float("nan")
    pct_ceiling: float = float("nan")  # of the measured read ceiling (docs/tuning.md)
    read_us: float = float("nan")      # a pure read of the same n elements, same timing
    pct_read: float = float("nan")     # 100 * read_us / median_us
    read_rounds_us: str = ""           # the same-size read's median in each round
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
        return self.status == OK

    def as_row(self) -> dict:
        row = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in NOT_COLUMNS}
        row["verified"] = self.verified
        return {**{k: self.meta.get(k, "") for k in META_FIELDS}, **row,
                **blank_metrics(), **self.metrics}


RECORD_FIELDS = tuple(f.name for f in fields(Record) if f.name not in NOT_COLUMNS)
COLUMNS = META_FIELDS + RECORD_FIELDS + ("verified",) + METRIC_COLUMNS


@dataclass
class MultiGpuRecord:
    case: str
    rung: str                   # sharded_sum:<rung> | nccl_allreduce | nccl_reduce | timing_floor
    dtype: str
    n: int                      # sharded: whole input; collectives: elements per rank
    gpus: int
    block: int = 0
    params: str = ""            # gpus=K[;in_place=0|1]: with rung, dtype, n, block the key
    local_rung: str = ""
    in_place: bool = False
    devices: str = ""           # index:name of each rank's GPU
    status: str = OK            # STATUSES
    error: str = ""
    note: str = ""
    result: float = math.nan
    reference: float = math.nan
    abs_error: float = math.nan
    tolerance: float = math.nan
    rel_error: float = math.nan
    error_ulps: float = math.nan
    wrong: int = 0
    samples: int = 0
    median_us: float = math.nan
    min_us: float = math.nan
    max_us: float = math.nan
    noise_pct: float = math.nan
    rounds: int = 0             # rounds the case was measured in (as Record's)
    round_spread_pct: float = math.nan
    round_medians_us: str = ""
    spread_us: float = math.nan  # median over samples of (slowest - fastest rank)
    floor_us: float = math.nan   # this k's timing floor, measured in the same run
    bytes: int = 0              # sharded: bytes read over all GPUs; collectives: S of nccl-tests
    gbps: float = math.nan      # bytes / median time (all GPUs together)
    algbw_gbps: float = math.nan
    busbw_gbps: float = math.nan
    speedup: float = math.nan   # median at k=1 / this median (same case otherwise)
    efficiency: float = math.nan
    shards: str = ""            # elements per rank, ;-separated
    nccl: str = ""              # NCCL version
    nccl_env: str = ""          # NCCL_* variables as found (never changed)
    nodes: int = 1              # hosts the ranks ran on
    gpus_per_node: int = 0      # ranks (one GPU each) per host; 0 where one process drives all
    cross_node: bool = False    # whether the case's traffic crossed hosts
    meta: dict = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return self.status == OK

    def as_row(self) -> dict:
        row = {k: v for k, v in asdict(self).items() if k != "meta"}
        row["verified"] = self.verified
        return {**{k: self.meta.get(k, "") for k in META_FIELDS}, **row}


MULTIGPU_COLUMNS = META_FIELDS + tuple(f.name for f in fields(MultiGpuRecord) if f.name != "meta") \
    + ("verified",)


def columns_of(kind: str) -> tuple[str, ...]:
    """The columns of a file of this record kind, in order."""
    return MULTIGPU_COLUMNS if kind == MULTIGPU else COLUMNS
