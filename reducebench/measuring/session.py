"""One measuring session, from an open device to committed rows: what `run`, `check` and
`run --resume` share. The command line only parses before it and renders after it.

A session ends in one of three ways, all returned rather than raised, so that the caller
renders what was measured either way: every case done, stopped by a signal (the case in
progress abandoned, every earlier one on disk), or the GPU context lost (the failing case
written, nothing more can run)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from reducebench.core.errors import ContextLost, UsageError
from reducebench.core.interrupt import Interrupted
from reducebench.ladder.case import Case
from reducebench.measuring.backend_protocol import Backend
from reducebench.measuring.runner import expand_cases, missing_cases, run
from reducebench.measuring.each_device import single_device
from reducebench.measuring.settings import (RunSettings, blame_config, load_config, merge,
                                            recorded_values, resumed_values, settings_from)
from reducebench.results.files import completed_keys, file_version, read_results, upgrade_file
from reducebench.results.naming import check_new_results, samples_path
from reducebench.results.samples_file import upgrade_samples
from reducebench.results.schema import ERROR, FAIL, SCHEMA_VERSION, Record
from reducebench.results.store import ResultsStore


@dataclass
class Outcome:
    records: list[Record] = field(default_factory=list)
    interrupted: Interrupted | None = None
    lost: ContextLost | None = None

    @property
    def failed(self) -> list[Record]:
        return [r for r in self.records if r.status in (FAIL, ERROR)]


def measure(settings: RunSettings, backend: Backend, store: ResultsStore | None,
            cases: list[Case] | None = None,
            on_case: Callable[[Case, int, int], None] | None = None,
            after_case: Callable[[Case, Record], None] | None = None,
            on_record: Callable[[Record], None] | None = None) -> Outcome:
    """Run the cases, committing each record to `store` (if any) the moment it exists."""
    outcome = Outcome()

    def commit(record: Record) -> None:
        if store is not None:
            store.commit(record)
        outcome.records.append(record)
        if on_record is not None:
            on_record(record)

    try:
        run(settings, backend, commit, on_case, cases=cases, after_case=after_case)
    except Interrupted as exc:
        outcome.interrupted = exc
    except ContextLost as exc:
        outcome.lost = exc
    return outcome


@dataclass
class Resumption:
    """What `run` measures: the settings and the cases; for `run --resume FILE` (path),
    the recorded sweep's settings and the cases the file does not hold yet."""

    path: Path | None
    settings: RunSettings
    cases: list[Case]
    done: int


def plan_sweep(given: dict, defaults: dict, config: str | None = None,
               resume: Path | None = None) -> Resumption:
    """What `run` measures: the sweep a --resume file recorded (its missing cases), or the
    config file merged with the options given; every value checked (exit 2) before any
    GPU is looked for."""
    if resume is not None:
        if config:
            raise UsageError("--resume continues the sweep recorded in its file; leave out "
                             "--config")
        if "out" in given:
            raise UsageError("--resume appends to its own file; leave out --out")
        plan = plan_resume(resume, given, defaults)
        if single_device(plan.settings.devices) is None:
            raise UsageError("--resume continues one GPU's file; give one --device (or "
                             "none: the device the file records)")
        return plan
    values = load_config(config) if config else {}
    try:
        settings = settings_from(merge(values, given, defaults))
    except UsageError as exc:
        raise blame_config(exc, values, given, config) from None
    cases = expand_cases(settings)
    if settings.out is not None:
        check_new_results(settings.out)
    return Resumption(None, settings, cases, 0)


def plan_resume(path: Path, given: dict, defaults: dict) -> Resumption:
    """The sweep a results file recorded, with the options given again that leave it
    unchanged. Refused with one line (the file untouched, no GPU opened) when the file
    records no options, or an option given would change the sweep."""
    frame = read_results(path)
    recorded = next(iter(frame["options"].dropna()), None)
    if recorded is None:
        raise UsageError(f"--resume {path}: the file does not record its sweep's options "
                         f"(results schema {file_version(path)}, written by an older "
                         "reducebench), so the rest of its sweep is unknown; start a new run")
    values = {**defaults, **resumed_values(recorded_values(recorded), given)}
    seed = recorded_integer(frame, "seed")
    if "seed" in given and seed is not None and given["seed"] != seed:
        raise UsageError(f"--resume: the file's inputs were drawn with seed {seed}; "
                         f"--seed {given['seed']} would measure other inputs")
    values["seed"] = seed if seed is not None else values.get("seed")
    device = recorded_integer(frame, "device")
    if "device" not in given and device is not None:  # where the file was measured
        values["device"] = device
    rounds = recorded_rounds(frame)
    if "rounds" not in given and rounds is not None:  # the rest measured as the file was
        values["rounds"] = rounds
    settings = settings_from(values)
    settings.out = path
    done = completed_keys(frame)
    return Resumption(path, settings, missing_cases(expand_cases(settings), done), len(done))


def recorded_integer(frame, column: str) -> int | None:
    """The one integer a results file records in `column` (its seed, its device)."""
    values = frame[column].dropna().unique()
    return int(values[0]) if len(values) else None


def recorded_rounds(frame) -> int | None:
    """The rounds a results file's timed cases were measured in (the most any row took:
    a case that failed early took fewer); None for a file without the column."""
    import pandas as pd

    rounds = pd.to_numeric(frame["rounds"], errors="coerce").dropna()
    rounds = rounds[rounds > 0]
    return int(rounds.max()) if len(rounds) else None


def open_resumed(path: Path) -> tuple[ResultsStore, Path | None]:
    """The store that appends to a resumed file; an older file is first rewritten in
    today's schema (the original kept as FILE.bak, returned), and so is an older samples
    file beside it (as FILE.samples.csv.bak)."""
    backup = upgrade_file(path) if file_version(path) != SCHEMA_VERSION else None
    upgrade_samples(samples_path(path))
    return ResultsStore(path, resume=True), backup


def abandon_lost_context(backend, exit_code: int = 1) -> None:
    """A real device ends the process here (its teardown would only print tracebacks);
    a fake one has nothing to abandon."""
    abandon = getattr(backend, "abandon", None)
    if abandon is not None:
        abandon(exit_code)
