"""`multigpu` in one process: every GPU of this host, its rows in one results file."""

from __future__ import annotations

from typing import Callable

from reducebench.core.interrupt import Interrupted, deferred, stop_on_signals
from reducebench.measuring.lifecycle import Ending, Watch, new_store, store_ending
from reducebench.multigpu.cases import settings_from_options
from reducebench.multigpu.loop import run_multigpu
from reducebench.multigpu.ranks import gpus_label
from reducebench.results.naming import check_new_results
from reducebench.results.schema import MULTIGPU


def run_on_host(options: dict, open_multigpu: Callable, watch: Watch) -> Ending:
    """Every case on this host's GPUs (open_multigpu: device/one_process.open_multigpu);
    every option checked before any GPU is opened."""
    settings_from_options(options, present=1)
    out = check_new_results(options["out"]) if options["out"] is not None else None
    records: list = []
    store, backend = None, None
    try:
        with stop_on_signals():
            backend = open_multigpu()
            settings = settings_from_options(options, backend.present())
            gpu = backend.device_info().get("gpu", "gpu")
            store = new_store(out, f"multigpu {gpu}", kind=MULTIGPU)

            def write(record) -> None:
                with deferred():  # a signal meanwhile: the row is both saved and shown
                    store.commit(record)
                    records.append(record)

            with watch(None) as on_case:
                run_multigpu(settings, backend, write, on_case)
    except Interrupted as exc:
        return store_ending(records, store, exc, resumable=False)
    finally:
        if backend is not None:
            backend.close()
    return store_ending(records, store, label=gpus_label)
