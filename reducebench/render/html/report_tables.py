"""The page's tables, as cells.Table: the run's metadata, the ladder, the hardware
counters, the multi-GPU rows. Every figure is a field of the results file (or of its
samples file, for the clocks the rows do not keep)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from reducebench.analysis.compare import normalise
from reducebench.core.sizes import format_size
from reducebench.ladder.registry import display_rank
from reducebench.render.html.cells import (Cell, Header, Table, as_float, extent, extent_cell,
                                           extent_key, num_cell, row_count, text, truthy)
from reducebench.render.html.run_files import RunFile, distinct
from reducebench.results.naming import samples_path
from reducebench.results.schema import ERROR, FAIL, OK, SKIPPED, SUSPECT
from reducebench.core.numbers import number

# What each status word means on the page (the rich table says "yes" / "yes (throttled)").
VERIFIED, THROTTLED = "verified", "throttled"
STATUS_CLASS = {VERIFIED: "ok", THROTTLED: "ok", SUSPECT: "suspect", FAIL: "fail", ERROR: "fail",
                SKIPPED: "skip"}
STATUS_TITLE = {
    VERIFIED: "the exact sum (or within the rounding bound for random inputs)",
    THROTTLED: "verified, but throttled: too few samples at full clock after the retries "
               "(docs/samples.md)",
}


def status_of(row: dict) -> str:
    """verified, throttled (verified, sampled below full clock), suspect (verified, but
    timed faster than the GPU can be: docs/verification.md), FAIL, error or skipped."""
    status = text(row.get("status")) or OK
    if status == OK:
        return THROTTLED if truthy(row.get("throttled")) else VERIFIED
    return status


def status_cell(row: dict) -> Cell:
    word = status_of(row)
    error = text(row.get("note")) if word == SUSPECT else text(row.get("error"))
    title = STATUS_TITLE.get(word, error)
    return Cell(word, word, cls=STATUS_CLASS.get(word, ""), title=title)


def sorted_rows(frame: pd.DataFrame) -> list[dict]:
    """The rows in the terminal table's order: dtype, n (then rows, for shapes), ladder
    order, block, params."""
    rows = normalise(frame).to_dict("records")
    return sorted(rows, key=lambda r: (str(r["dtype"]), extent_key(r), display_rank(r["rung"]),
                                       int(r["block"]), str(r["params"])))


def case_label(row: dict) -> str:
    """How the page names a case: `vector_load float32 n=2^24 block=256 loads=4`, or
    `row_warp float32 shape=1000x33 block=256`."""
    size = f"shape={extent(row)}" if row_count(row) > 1 else f"n={extent(row)}"
    parts = [str(row["rung"]), str(row["dtype"]), size]
    if int(row["block"]):
        parts.append(f"block={int(row['block'])}")
    parts.extend(p for p in str(row["params"]).split(";") if p)
    return " ".join(parts)


# ---- metadata -------------------------------------------------------------------------

def metadata(run: RunFile) -> list[tuple[str, str]]:
    """(what, value) pairs: where, when, with what and how the file was measured."""
    f = run.frame

    def joined(column: str, unit: str = "") -> str:
        return " / ".join(v + unit for v in distinct(f, column))

    pairs = [("GPU", joined("gpu")), ("device index", joined("device")),
             ("compute capability", joined("compute_capability")),
             ("SMs", joined("sm_count")), ("L2", _l2(f)),
             ("theoretical peak", _figures(f, "peak_gbps", " GB/s")),
             ("measured read ceiling", _figures(f, "ceiling_gbps", " GB/s")),
             ("SM clock", _clocks(run, "sm")), ("memory clock", _clocks(run, "mem")),
             ("driver (CUDA version)", joined("driver")), ("CUDA runtime", joined("runtime")),
             ("CuPy", joined("cupy")), ("reducebench", joined("reducebench")),
             ("commit", joined("git_commit")), ("seed", joined("seed")),
             ("inputs", joined("inputs")), ("timing mode", _timing(f)),
             ("L2 before each sample", joined("mode")), ("measured (UTC)", _when(f)),
             ("run id", joined("run_id")), ("cases", _cases(f)),
             ("samples", _samples(run))]
    if run.kind == "multigpu":
        pairs += [("GPUs used", max(distinct(f, "devices"), key=len, default="")), ("NCCL", joined("nccl")),
                  ("NCCL environment", joined("nccl_env"))]
    return [(what, value) for what, value in pairs if value]


def options_json(run: RunFile) -> str:
    """The sweep's options as the file records them, pretty-printed ("" when absent)."""
    for value in distinct(run.frame, "options"):
        try:
            return json.dumps(json.loads(value), indent=1, sort_keys=True)
        except ValueError:
            return value
    return ""


def _figures(frame: pd.DataFrame, column: str, unit: str) -> str:
    values = sorted({round(v, 1) for v in pd.to_numeric(frame.get(column), errors="coerce")
                     if np.isfinite(v)}) if column in frame else []
    return " / ".join(number(v, ",.1f", unit) for v in values)


def _l2(frame: pd.DataFrame) -> str:
    values = [as_float(v) for v in distinct(frame, "l2_bytes")]
    return " / ".join(number(v / 2**20, "g", " MiB") for v in values if not math.isnan(v))


def _timing(frame: pd.DataFrame) -> str:
    modes = distinct(frame, "timing") or ["single"]  # files from before the column
    out = []
    for mode in modes:
        if mode == "graph" and "graph_k" in frame:
            ks = sorted({int(k) for k in pd.to_numeric(frame["graph_k"], errors="coerce")
                         if np.isfinite(k) and k > 0})
            mode += f" (K = {', '.join(map(str, ks))} runs per replay)" if ks else ""
        out.append(mode)
    return " / ".join(out)


def _when(frame: pd.DataFrame) -> str:
    times = sorted(distinct(frame, "utc_time"))
    if not times:
        return ""
    return times[0] if len(times) == 1 else f"{times[0]} to {times[-1]}"


def _cases(frame: pd.DataFrame) -> str:
    words = [status_of(r) for r in frame.to_dict("records")]
    counts = {w: words.count(w) for w in dict.fromkeys(words)}
    return f"{len(words)} (" + ", ".join(f"{c} {w}" for w, c in counts.items()) + ")"


def _clocks(run: RunFile, which: str) -> str:
    """The clock range over the samples: the rows' min/max columns for the SM clock,
    else (and for the memory clock, which rows do not keep) the samples file."""
    low = high = math.nan
    if which == "sm" and "sm_clock_min_mhz" in run.frame:
        lows = pd.to_numeric(run.frame["sm_clock_min_mhz"], errors="coerce")
        highs = pd.to_numeric(run.frame["sm_clock_max_mhz"], errors="coerce")
        if lows.notna().any():
            low, high = float(lows.min()), float(highs.max())
    if math.isnan(low) and run.samples is not None:
        values = run.samples[f"{which}_clock_mhz"].to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        if len(values):
            low, high = float(values.min()), float(values.max())
    if math.isnan(low):
        return ""
    span = number(low, ".0f", " MHz") if low == high else \
        f"{number(low, '.0f')} to {number(high, '.0f', ' MHz')}"
    return span + " over the samples"


def _samples(run: RunFile) -> str:
    if run.kind == "multigpu":
        return ""
    if run.samples is None:
        return run.samples_note
    kept = int(run.samples["kept"].sum())
    total = len(run.samples)
    dropped = (f", {number(total - kept, ',')} discarded by the throttle rule"
               if total > kept else "")
    return f"{number(total, ',')} in {samples_path(run.path).name}{dropped}"


# ---- the ladder ------------------------------------------------------------------------

def has_values(frame: pd.DataFrame, column: str) -> bool:
    return column in frame and pd.to_numeric(frame[column], errors="coerce").notna().any()


def ladder_table(run: RunFile, colours: dict[str, str]) -> Table:
    """One row per case: the figures of the terminal table, bars for % of peak, % of the
    read ceiling and (where the file has it) % of the read-only time, and the status."""
    frame = run.frame
    headers = [Header("rung", "click a header to sort"), Header("dtype"),
               Header("n", numeric=True), Header("block", numeric=True), Header("params"),
               Header("median us", "median of the kept samples", True),
               Header("min us", numeric=True),
               Header("noise %", "stdev / mean of the kept samples", True),
               Header("samples", numeric=True),
               Header("GB/s", "input bytes / median time", True),
               Header("% peak", "of the theoretical DRAM bandwidth", True),
               Header("% ceiling", "of the measured read ceiling (pct_ceiling)", True)]
    read = has_values(frame, "pct_read")
    read_us = has_values(frame, "read_us")
    if read_us:
        headers.append(Header("read us", "time to only read the input (read_us)", True))
    if read:
        headers.append(Header("% read", "read-only time / median time (pct_read)", True))
    headers.append(Header("status", "verified, throttled, suspect (timed impossibly fast), "
                          "FAIL, error, skipped"))
    table = Table(id=f"ladder-{run.index}", headers=headers)
    for row in sorted_rows(frame):
        cells = [Cell(row["rung"], rung_rank(row["rung"]), colour=colours.get(row["rung"], "")),
                 Cell(row["dtype"], row["dtype"]), extent_cell(row),
                 Cell(str(row["block"]) if int(row["block"]) else "-", int(row["block"])),
                 Cell(row["params"], row["params"]),
                 num_cell(row["median_us"], ".2f"), num_cell(row.get("min_us"), ".2f"),
                 num_cell(row.get("noise_pct"), ".2f"), num_cell(row.get("samples"), ".0f"),
                 num_cell(row.get("gbps"), ".0f"), num_cell(row.get("pct_peak"), ".1f", True),
                 num_cell(row.get("pct_ceiling"), ".1f", True)]
        if read_us:
            cells.append(num_cell(row.get("read_us"), ".2f"))
        if read:
            cells.append(num_cell(row.get("pct_read"), ".1f", True))
        cells.append(status_cell(row))
        table.rows.append(cells)
        table.row_keys.append(case_label(row))
    return table


def rung_rank(rung: str) -> float:
    """A rung's place in the ladder as one number: what the rung column sorts by."""
    group, index = display_rank(rung)
    return group * 1000 + index


def failures(run: RunFile) -> list[tuple[str, str]]:
    """(case, error) of every row that did not verify: listed under the table."""
    out = []
    for row in sorted_rows(run.frame):
        if status_of(row) in (FAIL, ERROR, SKIPPED):
            out.append((case_label(row), f"{status_of(row)}: {text(row.get('error'))}"))
    return out


# ---- hardware counters -----------------------------------------------------------------

COUNTER_HEADERS = (
    ("ncu_time_us", "kernel us", "sum of the kernel durations under ncu", ".2f"),
    ("ncu_dram_pct", "DRAM %", "DRAM throughput, % of peak", ".1f"),
    ("ncu_sm_pct", "SM %", "SM throughput, % of peak", ".1f"),
    ("ncu_l2_hit_pct", "L2 hit %", "L2 sector hit rate", ".1f"),
    ("ncu_occupancy_pct", "occupancy %", "achieved occupancy", ".1f"),
    ("ncu_registers", "registers", "per thread, main kernel", ".0f"),
    ("ncu_smem_ld_conflicts", "ld conflicts", "shared-memory load bank conflicts", ".0f"),
    ("ncu_smem_st_conflicts", "st conflicts", "shared-memory store bank conflicts", ".0f"),
    ("ncu_threads_per_inst", "threads/inst", "active threads per warp instruction", ".1f"),
    ("ncu_inst_per_elem", "inst/elem", "thread instructions per input element", ".2f"),
    ("ncu_dram_read_per_input", "DRAM read / input", "1.0 = every byte read once", ".2f"),
)


def counter_rows(frame: pd.DataFrame) -> list[dict]:
    """The rows with any hardware counter (or a reason for having none)."""
    numeric = [c for c in frame.columns if c.startswith("ncu_")
               and c not in ("ncu_version", "ncu_clock_control", "ncu_kernel_us", "ncu_grids",
                             "ncu_stall_top", "ncu_error")]
    if not numeric:
        return []
    values = frame[numeric].apply(pd.to_numeric, errors="coerce")
    has = values.notna().any(axis=1)
    if "ncu_error" in frame:
        has |= frame["ncu_error"].map(text) != ""
    return sorted_rows(frame[has.to_numpy()]) if has.any() else []


def counters_table(run: RunFile, colours: dict[str, str]) -> Table | None:
    rows = counter_rows(run.frame)
    if not rows:
        return None
    headers = [Header("rung"), Header("dtype"), Header("n", numeric=True),
               Header("block", numeric=True), Header("params")]
    headers += [Header(label, title, True) for _, label, title, _ in COUNTER_HEADERS]
    headers += [Header("top stall", "the reason most stall cycles went to")]
    table = Table(id=f"counters-{run.index}", headers=headers)
    for row in rows:
        cells = [Cell(row["rung"], rung_rank(row["rung"]), colour=colours.get(row["rung"], "")),
                 Cell(row["dtype"], row["dtype"]), extent_cell(row),
                 Cell(str(row["block"]) if int(row["block"]) else "-", int(row["block"])),
                 Cell(row["params"], row["params"])]
        cells += [num_cell(row.get(column), spec) for column, _, _, spec in COUNTER_HEADERS]
        stall = text(row.get("ncu_stall_top"))
        share = as_float(row.get("ncu_stall_top_pct"))
        error = text(row.get("ncu_error"))
        if stall and not math.isnan(share):
            stall += " " + number(share, ".0f", "%")
        shown = stall if stall else (f"no counters: {error}" if error else "")
        cells.append(Cell(shown, shown))
        table.rows.append(cells)
        table.row_keys.append(case_label(row))
    return table


# ---- multi-GPU files -------------------------------------------------------------------

def multigpu_tables(run: RunFile) -> list[Table]:
    """The sharded sums (speed-up and efficiency against one GPU) and the NCCL reference
    collectives (nccl-tests' algbw and busbw), as `reducebench multigpu` prints them."""
    f = run.frame
    rows = f.to_dict("records")
    out = []
    sharded = [r for r in rows if text(r.get("case")) == "sharded_sum"]
    if sharded:
        t = Table(id=f"sharded-{run.index}", caption="sharded sum",
                  headers=[Header("rung"), Header("dtype"), Header("n", numeric=True),
                           Header("GPUs", numeric=True), Header("median us", numeric=True),
                           Header("spread us", "median slowest - fastest rank", True),
                           Header("GB/s", "all GPUs together", True),
                           Header("speed-up", "over one GPU", True),
                           Header("efficiency", "speed-up / GPUs", True),
                           Header("floor us", "the timing floor at this GPU count", True),
                           Header("status")])
        for r in sorted(sharded, key=lambda r: (int(r["n"]), int(r["gpus"]))):
            t.rows.append([Cell(text(r["rung"]), text(r["rung"])), Cell(text(r["dtype"])),
                           Cell(format_size(int(r["n"])), int(r["n"])),
                           num_cell(r["gpus"], ".0f"), num_cell(r["median_us"], ".2f"),
                           num_cell(r.get("spread_us"), ".2f"), num_cell(r.get("gbps"), ".0f"),
                           num_cell(r.get("speedup"), ".2f"), num_cell(r.get("efficiency"), ".2f"),
                           num_cell(r.get("floor_us"), ".2f"), status_cell(r)])
            t.row_keys.append(f"{text(r['rung'])} n={format_size(int(r['n']))} "
                              f"gpus={int(r['gpus'])}")
        out.append(t)
    collectives = [r for r in rows if text(r.get("case")).startswith("nccl_")]
    if collectives:
        t = Table(id=f"nccl-{run.index}", caption="NCCL reference collectives",
                  headers=[Header("op"), Header("bytes", "per GPU", True), Header("dtype"),
                           Header("GPUs", numeric=True), Header("place"),
                           Header("median us", numeric=True),
                           Header("algbw GB/s", "bytes / time (nccl-tests)", True),
                           Header("busbw GB/s", "algbw x the collective's bus factor", True),
                           Header("status")])
        for r in sorted(collectives, key=lambda r: (text(r["rung"]), as_float(r.get("bytes")),
                                                    int(r["gpus"]))):
            place = "in" if truthy(r.get("in_place")) else "out"
            nbytes = as_float(r.get("bytes"))
            t.rows.append([Cell(text(r["rung"]).removeprefix("nccl_")),
                           Cell(format_size(int(nbytes)) if not math.isnan(nbytes) else "",
                                nbytes if not math.isnan(nbytes) else ""),
                           Cell(text(r["dtype"])), num_cell(r["gpus"], ".0f"), Cell(place),
                           num_cell(r["median_us"], ".2f"), num_cell(r.get("algbw_gbps"), ".2f"),
                           num_cell(r.get("busbw_gbps"), ".2f"), status_cell(r)])
            t.row_keys.append(f"{text(r['rung'])} bytes={number(nbytes, '.0f')} "
                              f"gpus={int(r['gpus'])} {place}-place")
        out.append(t)
    return out


def timing_floors(run: RunFile) -> list[str]:
    """`k=2: 11.39 us` per GPU count: k empty kernels and a one-float all-reduce."""
    rows = [r for r in run.frame.to_dict("records") if text(r.get("case")) == "timing_floor"]
    return [f"k={int(r['gpus'])}: {number(r['median_us'], '.2f', ' us')}"
            for r in sorted(rows, key=lambda r: int(r["gpus"]))]
