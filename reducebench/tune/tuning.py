"""Tuning one GPU (`tune`): the options checked before the GPU is touched, the search
over every band (search.py), then the table `auto` reads, written; how it ended."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import ContextLost, UsageError
from reducebench.core.interrupt import Interrupted, stop_on_signals
from reducebench.core.numbers import number
from reducebench.ladder.auto import user_path, write_table
from reducebench.measuring.lifecycle import Ending
from reducebench.results.naming import check_new_results, check_writable
from reducebench.results.store import ResultsStore
from reducebench.tune import search as tune

# The finalists of each band are confirmed with float16 too, at the band's bytes:
# auto serves the half types from the same table (search.SameBytes).
SAME_BYTES_DTYPE = "float16"
NOT_WRITTEN = "no tuning file written"


def checked_options(out: str | None, records: str | None, budget: float | None,
                    device: int = 0) -> Path | None:
    """Refuse bad options before the GPU is touched, not after minutes of measuring;
    returns the records path."""
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
             records_path: Path | None, on_stage: Callable, on_case: Callable) -> Ending:
    """Every band searched on `backend`, the table written to `out` (or the user's
    tuning folder); the Ending's records are the bands' results."""
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
    write_table(tune.table_from(results, device_info, dtype), path)
    kept = f"; every candidate in {records_path}" if records_path else ""
    return Ending(records=results, written=f"tuning file written to {path} in "
                                           f"{number(time.monotonic() - began, '.0f')} s{kept}")
