"""`run --device all` (or a list such as 0,2): the same sweep on each GPU of a host, one
process per GPU, one GPU after the other; then the GPUs side by side.

Why one process per GPU: each GPU gets a fresh CUDA context, compile cache and memory
pool, so nothing one GPU's run leaves behind (a lost context, a full pool, kernels
loaded for another device) can reach the next, and each GPU runs exactly the path that
`run --device i` runs. Why one after the other and not at once: the GPUs of a host share
the CPU that launches their work, the PCIe root and the power budget. Measured at the
same time they would slow each other, and the table would compare the host's contention
rather than the GPUs.

Each GPU's rows go to their own results file, `run.gpu0.csv`, `run.gpu1.csv`, ..., with
the device index and the GPU's name on every row. A file therefore still holds one row
per case, so `compare`, `--resume` and `show-samples` work on it as on any other, and
`reducebench compare run.gpu0.csv run.gpu1.csv` compares two GPUs case by case. Every
GPU measures the same inputs: one seed, drawn here unless given, is passed to all.

Device-free: the child processes are started through a `launch` function, which the CPU
tests replace."""

from __future__ import annotations

import math
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from reducebench.core.choices import comma_list
from reducebench.core.errors import UsageError
from reducebench.core.interrupt import (EXIT_CODE as INTERRUPTED_EXIT, GRACE_S, Interrupted,
                                        ignoring_signals, stop_on_signals)
from reducebench.ladder.case import case_key
from reducebench.results.naming import csv_stem
from reducebench.results.schema import OK

ALL = "all"


# -- which devices ---------------------------------------------------------------------------

def device_spec(value: object) -> str:
    """--device (or the config's `device`) as a normalised spec: "0", "0,2" or "all".
    Only the form is checked here; which indices exist is known once the GPUs are."""
    text = str(value).strip().lower().replace(" ", "")
    if text == ALL:
        return ALL
    items = comma_list(text, "device index")
    if not all(item.isdigit() for item in items):
        raise UsageError(f"--device {value!r}: expected a device index (0), a comma list "
                         "(0,1) or all")
    indices = [int(item) for item in items]
    repeated = sorted({i for i in indices if indices.count(i) > 1})
    if repeated:  # one GPU twice would run its sweep twice into one file name
        raise UsageError(f"--device {value!r}: device {', '.join(map(str, repeated))} given "
                         "more than once; give each GPU once")
    return ",".join(map(str, indices))


def single_device(spec: str) -> int | None:
    """The index when the spec names exactly one device; None for all or a list."""
    return int(spec) if spec.isdigit() else None


def devices_to_run(spec: str, count: int) -> list[int]:
    """`all`, or a comma list of device indices, in the order given (each once:
    device_spec refuses a repeat)."""
    if count < 1:
        raise UsageError("--device: no CUDA GPU found")
    normalised = device_spec(spec)
    if normalised == ALL:
        return list(range(count))
    devices = [int(item) for item in normalised.split(",")]
    for index in devices:
        if index >= count:
            raise UsageError(f"--device {index}: this machine has {count} GPU(s), "
                             f"0 to {count - 1}")
    return devices


def device_path(base: Path, device: int) -> Path:
    """results/run.csv -> results/run.gpu1.csv: where device 1's rows go."""
    return base.with_name(f"{csv_stem(base)}.gpu{device}.csv")


# -- one child per device, in turn -----------------------------------------------------------

@dataclass
class DeviceRun:
    device: int
    path: Path
    exit_code: int | None = None    # None: not started (an interrupt came first)
    stdout: str = ""                # what the child printed (JSON with --format json)


Launch = Callable[[list[str], bool], "subprocess.Popen"]


def child_argv(options: Sequence[str], device: int, out: Path, seed: int) -> list[str]:
    """The child's command line: the options given to this run (without --device, --out
    and --seed, which are the child's own), then this device, its file and the seed."""
    return [sys.executable, "-m", "reducebench", "run", *options, "--device", str(device),
            "--out", str(out), "--seed", str(seed)]


def popen(argv: list[str], capture_stdout: bool) -> subprocess.Popen:
    return subprocess.Popen(argv, stdout=subprocess.PIPE if capture_stdout else None,
                            text=True)


def run_each_device(options: Sequence[str], devices: Sequence[int], base: Path, seed: int,
                    capture_stdout: bool = False, launch: Launch | None = None,
                    announce: Callable[[str], None] = lambda line: None) -> list[DeviceRun]:
    """Runs the sweep on each device in turn, in a child process each (run_in_turn)."""
    runs = [DeviceRun(device, device_path(base, device)) for device in devices]
    return run_in_turn(runs, [child_argv(options, r.device, r.path, seed) for r in runs],
                       capture_stdout, launch,
                       lambda run: announce(f"GPU {run.device}: {run.path}"))


def run_in_turn(runs: list[DeviceRun], argvs: list[list[str]], capture_stdout: bool = False,
                launch: Launch | None = None,
                announce: Callable[[DeviceRun], None] = lambda run: None) -> list[DeviceRun]:
    """Runs each child in turn (`run --device all`'s GPUs, `calibrate`'s repeats). A
    child's failed case (exit 1) does not stop the others. On SIGINT or SIGTERM the
    running child stops too (module docstring of interrupt.py: it keeps every row it
    measured), no later child starts, and Interrupted is raised with the runs so far in
    `exc.runs`."""
    launch = launch or popen
    with stop_on_signals():
        for run, argv in zip(runs, argvs):
            announce(run)
            child = launch(argv, capture_stdout)
            try:
                run.stdout = _wait(child)
            except Interrupted as exc:
                run.stdout = _stop(child, exc.signum)
                run.exit_code = child.returncode
                exc.runs = runs
                raise
            run.exit_code = child.returncode
            if run.exit_code == INTERRUPTED_EXIT:  # the child alone was sent the signal
                interrupted = Interrupted(signal.SIGINT)
                interrupted.runs = runs
                raise interrupted
    return runs


def _wait(child) -> str:
    out, _ = child.communicate()
    return out or ""


def _stop(child, signum: int) -> str:
    """Ctrl-C reaches the child by itself (the terminal signals the whole process group);
    a signal sent to this process alone does not. So the child has GRACE_S seconds to end
    on its own before it is sent the signal; meanwhile more signals are ignored here, so
    that a second Ctrl-C cannot cut this process short while its child saves."""
    with ignoring_signals():
        try:
            out, _ = child.communicate(timeout=GRACE_S)
            return out or ""
        except subprocess.TimeoutExpired:
            if child.poll() is None:
                child.send_signal(signum)
            return _wait(child)


def exit_code(runs: Sequence[DeviceRun]) -> int:
    """0 when every child succeeded, else the first failing child's code."""
    return next((r.exit_code for r in runs if r.exit_code), 0)


# -- the GPUs side by side ---------------------------------------------------------------------

@dataclass
class SideBySide:
    """One case across the GPUs: its median on each (NaN where it did not time ok), and
    each one's ratio to the first GPU's."""

    rung: str
    dtype: str
    n: int
    block: int
    params: str
    medians: dict[int, float]
    statuses: dict[int, str]

    def ratio(self, device: int, first: int) -> float:
        base, value = self.medians.get(first, math.nan), self.medians.get(device, math.nan)
        return value / base if base > 0 and not math.isnan(value) else math.nan


def side_by_side(frames: dict[int, object]) -> list[SideBySide]:
    """Rows of every device's results frame, matched by case key, in the order the cases
    first appear."""
    rows: dict[tuple, SideBySide] = {}
    for device, frame in frames.items():
        params = frame["params"].astype(object).fillna("").astype(str)
        for record, param_text in zip(frame.itertuples(), params):
            key = case_key(record.rung, record.dtype, record.n, record.block, param_text)
            row = rows.setdefault(key, SideBySide(*key, medians={}, statuses={}))
            timed = record.status == OK and not math.isnan(float(record.median_us))
            row.medians[device] = float(record.median_us) if timed else math.nan
            row.statuses[device] = str(record.status)
    return list(rows.values())



def device_frames(runs: Sequence[DeviceRun]) -> tuple[dict, dict]:
    """The results each GPU's run wrote: device -> its rows, and device -> its GPU's name
    (runs that wrote nothing left out)."""
    from reducebench.results.files import read_results

    frames, names = {}, {}
    for r in runs:
        if r.path.exists() and r.path.stat().st_size:
            frames[r.device] = read_results(r.path)
            gpus = frames[r.device]["gpu"].dropna()
            names[r.device] = str(gpus.iloc[0]) if len(gpus) else "?"
    return frames, names


def options_argv(given: Sequence[tuple[object, object]]) -> list[str]:
    """The options given to this command, as arguments that give them again: what each
    GPU's child repeats. `given`: (option, value) pairs, the option as click declares it
    (opts, secondary_opts, is_flag, multiple)."""
    argv: list[str] = []
    for option, value in given:
        if option.is_flag and option.secondary_opts:  # --cold/--warm
            argv.append(option.opts[0] if value else option.secondary_opts[0])
        elif option.is_flag:
            argv += [option.opts[0]] if value else []
        elif option.multiple:
            for item in value:
                argv += [option.opts[0], str(item)]
        elif value is not None:
            argv += [option.opts[0], str(value)]
    return argv
