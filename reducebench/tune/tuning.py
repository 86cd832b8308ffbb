"""Tuning one GPU (`tune`): the options checked before the GPU is touched, the search
over every band (search.py; the row rungs' shape bands: rows.py), then the table `auto`
and `row_auto` read, written; how it ended. Each tune keeps the other ladder's bands of
the file it replaces, where that file is one for this GPU."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import ContextLost, UsageError
from reducebench.core.interrupt import Interrupted, deferred, stop_on_signals
from reducebench.core.numbers import number
from reducebench.core.shape_sweeps import MAX_CHAIN
from reducebench.core.sizes import parse_shape_request
from reducebench.ladder.auto import (TuningTable, kept_from, today, user_path, with_row_bands,
                                     write_table)
from reducebench.ladder.registry import ROW_LADDER, ROW_RUNGS
from reducebench.measuring.lifecycle import Ending
from reducebench.measuring.runner import gpu_refusal
from reducebench.results.naming import check_new_results, check_writable
from reducebench.results.store import ResultsStore
from reducebench.tune import rows as row_tune
from reducebench.tune import search as tune

# The finalists of each band are confirmed with float16 too, at the band's bytes:
# auto serves the half types from the same table (search.SameBytes).
SAME_BYTES_DTYPE = "float16"
NOT_WRITTEN = "no tuning file written"


def checked_options(out: str | None, records: str | None, budget: float | None,
                    device: int = 0, shapes: str | None = None) -> Path | None:
    """Refuse bad options before the GPU is touched, not after minutes of measuring;
    returns the records path."""
    if shapes is not None:
        parse_shape_request(shapes)
    if device < 0:
        raise UsageError(f"--device {device}: a CUDA device index is 0 or more")
    if budget is not None and not budget > 0:
        raise UsageError(f"--budget {budget}: seconds above 0, e.g. 240")
    if out is not None:
        check_writable(out, "--out", replace=True)  # a tuning file is replaced
    return check_new_results(records, "--records") if records is not None else None


def search_settings(quick: bool, budget: float | None) -> tune.SearchSettings:
    settings = tune.quick_settings() if quick else tune.SearchSettings()
    if budget is not None:
        settings.budget_s = budget
    return settings


def tune_gpu(backend, device_info: dict, settings: tune.SearchSettings, out: str | None,
             records_path: Path | None, on_stage: Callable, on_case: Callable,
             shapes: str | None = None) -> Ending:
    """Every band searched on `backend`, the table written to `out` (or the user's
    tuning folder); the Ending's records are the bands' results. With `shapes`, the
    row rungs' shape bands instead (tune_rows)."""
    if shapes is not None:
        return tune_rows(backend, device_info, settings, shapes, out, records_path,
                         on_stage, on_case)
    path = Path(out) if out else user_path(device_info["gpu"])
    dtype = DTYPES["float32"]
    writer = ResultsStore(records_path) if records_path else None
    write = writer.commit if writer else (lambda record: None)
    began = time.monotonic()
    try:
        with stop_on_signals():
            half = DTYPES[SAME_BYTES_DTYPE]
            same_bytes = tune.SameBytes(half.name, dtype.itemsize // half.itemsize,
                                        tune.runner_measure(backend, half, write, on_case))
            results = tune.search(tune.runner_measure(backend, dtype, write, on_case),
                                  settings, bands=tune.BANDS, on_stage=on_stage,
                                  same_bytes=same_bytes)
    except Interrupted as exc:
        kept = f"; {writer.saved()}" if writer is not None else ""
        return Ending(kept=NOT_WRITTEN + kept, interrupted=exc, resumable=None)
    except ContextLost as exc:
        return Ending(kept=NOT_WRITTEN, lost=exc, backend=backend)
    table = tune.table_from(results, device_info, dtype)
    old = kept_from(path, table.gpu, table.sm_count)
    if old is not None and old.row_bands:
        table = replace(table, row_bands=old.row_bands, row_date=old.row_date)
    write_table(table, path)
    return Ending(records=results, written=_written(path, began, records_path, old, "row"))


def _written(path: Path, began: float, records_path: Path | None,
             old: TuningTable | None, other: str) -> str:
    """The closing line of a tune: where the file went, how long it took, what it kept."""
    kept = (f", its {other} bands kept" if old is not None and
            (old.row_bands if other == "row" else old.bands) else "")
    also = f"; every candidate in {records_path}" if records_path else ""
    return (f"tuning file written to {path}{kept} in "
            f"{number(time.monotonic() - began, '.0f')} s{also}")


def tune_rows(backend, device_info: dict, settings: tune.SearchSettings, shapes: str,
              out: str | None, records_path: Path | None, on_stage: Callable,
              on_case: Callable) -> Ending:
    """The row rungs searched at the shapes given, per shape band (rows.py), the row
    bands written into `out` (or the user's tuning file for this GPU): each replaces the
    bands it overlaps, every other band of the file is kept. The chain limit of a sweep
    (MAX_CHAIN where the shapes name none) skips candidates that would take
    milliseconds a run; a rung this GPU cannot run (row_cluster before 9.0) is not
    searched."""
    request = parse_shape_request(shapes)
    path = Path(out) if out else user_path(device_info["gpu"])
    dtype = DTYPES["float32"]
    writer = ResultsStore(records_path) if records_path else None
    write = writer.commit if writer else (lambda record: None)
    capability = str(device_info.get("compute_capability") or "")
    space = row_tune.row_space([r for r in ROW_RUNGS if gpu_refusal(r, capability) is None])
    bands = row_tune.shape_bands(request.shapes, tuple(space.families))
    fresh = tune.table_from([], device_info, dtype)
    old = kept_from(path, fresh.gpu, fresh.sm_count)
    base = replace(old, versions=fresh.versions) if old is not None else fresh
    done: list = []

    def keep(result) -> None:
        """Each band written as it is decided: an interrupted tune keeps those (a signal
        during the write waits for it)."""
        with deferred():
            write_table(with_row_bands(base, row_tune.row_bands([*done, result]), today()),
                        path)
            done.append(result)

    began = time.monotonic()
    try:
        with stop_on_signals():
            measure = tune.runner_measure(backend, dtype, write, on_case, ladder=ROW_LADDER,
                                          max_chain=request.max_chain or MAX_CHAIN)
            results = row_tune.search_rows(measure, settings, bands, space,
                                           on_stage=on_stage, on_band=keep)
    except Interrupted as exc:
        kept = f"; {writer.saved()}" if writer is not None else ""
        written = (f"the row bands of {len(done)} of {len(bands)} shape band(s) written to "
                   f"{path}, the others not tuned" if done else NOT_WRITTEN)
        return Ending(kept=written + kept, interrupted=exc, resumable=None)
    except ContextLost as exc:
        return Ending(kept=NOT_WRITTEN, lost=exc, backend=backend)
    return Ending(records=results, written=_written(path, began, records_path, old, "size"))
