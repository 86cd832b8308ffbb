"""A measuring command's life around its cases: where its results go, its writer, what a
signal or a lost GPU context leaves, and its exit code.

`run`, `check`, `tune`, `sanitize`, `multigpu`, `run --device all`, `calibrate` and every
launched rank end in an Ending; the command line prints its closing lines
(render/closing.py) and exits with its code. A signal is held to core/interrupt.py's
rules while the cases run, so the Ending always says what is on disk."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager

from reducebench.core.interrupt import EXIT_CODE as INTERRUPTED_EXIT, Interrupted, stop_on_signals
from reducebench.measuring.session import Outcome, measure
from reducebench.results.naming import RESULTS_DIR, default_path
from reducebench.results.schema import ERROR, FAIL
from reducebench.results.store import ResultsStore

FAILED = (FAIL, ERROR)  # the statuses that make a run's exit code 1

# a progress display over a run's cases: entered with the number of cases, it yields
# the on_case(case, index, total) hook (or None: nothing shown)
Watch = Callable[[int], ContextManager]


@dataclass
class Ending:
    """How a command ended and what it leaves on disk: the closing lines' facts."""

    records: list = field(default_factory=list)   # every record made, to be shown
    path: Path | None = None   # the results file written, if one was opened
    heading: str = ""          # a line said before the records
    kept: str = ""             # what is on disk, as said after an interruption
    written: str | None = None  # the last line of a run that ended; None: none
    interrupted: Interrupted | None = None
    during: str = ""           # what was running when the signal came, if it matters
    lost: BaseException | None = None  # the GPU context was lost in this case
    failed: list[str] = field(default_factory=list)  # what failed, one label each
    failure: str | None = None  # the failures' heading; None: how many cases failed
    code: int | None = None    # the exit code, where not the rule below
    resumable: bool | None = True  # whether `run --resume` measures the unfinished
                                   # again (None: say nothing of them)
    quiet: bool = False        # each case already said its verdict: no summary lines
    show: bool = True          # whether `records` are shown (not after an error line)
    backend: object = None     # abandoned when its context was lost

    @property
    def exit_code(self) -> int:
        if self.interrupted is not None:
            return INTERRUPTED_EXIT
        if self.code is not None:
            return self.code
        return 1 if self.lost is not None or self.failed else 0


def results_path(out: str | Path | None, name: str) -> Path:
    """--out as given, or a new file under results/ (made when missing) named after
    `name` (the GPU, or what the file holds)."""
    if out is not None:
        return Path(out)
    RESULTS_DIR.mkdir(exist_ok=True)
    return default_path(RESULTS_DIR, name)


def new_store(out: str | Path | None, name: str, **kind) -> ResultsStore:
    """The writer of a new results file (results_path)."""
    return ResultsStore(results_path(out, name), **kind)


def case_label(record) -> str:
    return f"{record.rung} {record.dtype} n={record.n}"


def store_ending(records: list, store: ResultsStore | None,
                 interrupted: Interrupted | None = None, lost: BaseException | None = None,
                 label: Callable = case_label, **more) -> Ending:
    """The Ending of a run that wrote its records to `store` (None: nothing opened)."""
    saved = store.saved() if store is not None else "nothing saved"
    failed = [label(r) for r in records if r.status in FAILED]
    return Ending(records=records, path=store.path if store is not None else None,
                  kept=saved, interrupted=interrupted, lost=lost,
                  written=saved.replace("saved in", "written to"), failed=failed, **more)


def measure_cases(settings, cases, open_backend: Callable[[], object],
                  open_store: Callable[[object], ResultsStore | None],
                  watch: Watch | None = None, after_case=None, on_record=None,
                  quiet: bool = False) -> Ending:
    """One GPU's run (`run`, `check`): the device opened, the writer opened, the cases
    measured and each committed, whatever stops it (a signal while opening too)."""
    outcome, backend, store = Outcome(), None, None
    with stop_on_signals():
        try:
            backend = open_backend()
            store = open_store(backend)
            total = len(cases) if cases is not None else None
            with (watch(total) if watch else contextlib.nullcontext()) as on_case:
                outcome = measure(settings, backend, store, cases, on_case,
                                  after_case=after_case, on_record=on_record)
        except Interrupted as exc:  # before the first case: opening, compiling
            outcome.interrupted = exc
    ending = store_ending(outcome.records, store, outcome.interrupted, outcome.lost,
                          backend=backend, quiet=quiet)
    if quiet:  # `check`: what is on disk is said only when something was written
        ending.kept = store.saved() if store is not None else ""
    return ending


def measure_each_device(settings, devices: list[int], options: list[str],
                        capture_stdout: bool, say: Callable[[str], None]) -> Ending:
    """`run --device all`: the sweep on each GPU in turn, a child process and a results
    file each (each_device.py), one seed for all. The Ending's records are the runs."""
    from reducebench.measuring.each_device import device_path, exit_code, run_each_device
    from reducebench.results.naming import check_new_results
    from reducebench.verify.inputs import new_seed

    base = results_path(settings.out, "gpus")
    for device in devices:
        check_new_results(device_path(base, device))
    seed = settings.seed if settings.seed is not None else new_seed()
    say(f"{len(devices)} GPUs, one after the other, seed {seed}:")
    try:
        runs = run_each_device(options, devices, base, seed, capture_stdout=capture_stdout,
                               announce=lambda line: say(f"[bold]{line}[/]"))
    except Interrupted as exc:
        runs = getattr(exc, "runs", [])
        saved = ", ".join(str(r.path) for r in runs if r.path.exists()) or "nothing"
        return Ending(records=runs, kept=f"saved {saved}", interrupted=exc)
    failed = [f"GPU {r.device} (exit {r.exit_code})" for r in runs if r.exit_code]
    return Ending(records=runs, failed=failed, code=exit_code(runs),
                  failure="not every GPU's run succeeded" if failed else None)
