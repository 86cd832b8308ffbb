"""The schema of a results row: its columns, in order, and the record that fills them.

Every row repeats the run's metadata, so a single row still says where, when and how it
was measured. The format is versioned by the `schema_version` column; every version ever
written is still read (files.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

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


