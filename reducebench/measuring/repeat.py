"""`calibrate`'s runs: the same `reducebench run` several times, one process after the
other, each with its own results file and the same seed (the same inputs), so that
whatever differs between them comes from the runs, not the code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Sequence

from reducebench.measuring.each_device import DeviceRun, Launch, run_in_turn

# Options each repeat gets its own value of (the rest are passed on as given).
OWN_OPTIONS = ("--out", "--seed", "--resume", "--device", "--format")


def repeat_paths(folder: Path, count: int) -> list[Path]:
    return [folder / f"run{index + 1}.csv" for index in range(count)]


def repeat_argv(options: Sequence[str], out: Path, seed: int, device: int) -> list[str]:
    return [sys.executable, "-m", "reducebench", "run", *options, "--device", str(device),
            "--out", str(out), "--seed", str(seed)]


def run_repeats(options: Sequence[str], folder: Path, count: int, seed: int, device: int,
                launch: Launch | None = None,
                announce: Callable[[DeviceRun], None] = lambda run: None) -> list[DeviceRun]:
    """`count` runs of `reducebench run OPTIONS`, in turn (each_device.run_in_turn: an
    interrupt stops the running one, which keeps what it measured)."""
    runs = [DeviceRun(device, path) for path in repeat_paths(folder, count)]
    return run_in_turn(runs, [repeat_argv(options, r.path, seed, device) for r in runs],
                       launch=launch, announce=announce)


def measure_repeats(options: Sequence[str], count: int, folder: Path | None, device: int,
                    gpu_count: Callable[[], int], say: Callable[[str], None]):
    """`calibrate --runs`: every option checked, the folder made, then `count` runs;
    (their files, None) when all wrote one, else ([], the Ending of an interruption)."""
    from reducebench.core.errors import UsageError
    from reducebench.core.interrupt import Interrupted
    from reducebench.measuring.lifecycle import Ending, results_path
    from reducebench.verify.inputs import new_seed

    own = [o for o in options if o.split("=")[0] in OWN_OPTIONS]
    if own:
        raise UsageError(f"{', '.join(own)}: calibrate sets each run's own "
                         "--out, --seed and --device; leave them out")
    if gpu_count() < 1:  # before any folder or child: measuring needs a GPU
        raise UsageError("calibrate --runs: no CUDA GPU here; give results files made "
                         "elsewhere to judge them (reducebench calibrate A.csv B.csv ...)")
    if device >= gpu_count():
        raise UsageError(f"--device {device}: this machine has {gpu_count()} GPU(s)")
    folder = folder or results_path(None, "calibrate").with_suffix("")
    if folder.exists() and any(folder.iterdir()):
        raise UsageError(f"--out {folder}: the folder is not empty; give a new one")
    folder.mkdir(parents=True, exist_ok=True)
    seed = new_seed()
    say(f"{count} runs of `reducebench run {' '.join(options)}`, seed {seed}, "
        f"one process each, into {folder}/")
    try:
        runs = run_repeats(options, folder, count, seed, device,
                           announce=lambda run: say(f"[bold]{run.path}[/]"))
    except Interrupted as exc:
        done = [str(r.path) for r in getattr(exc, "runs", []) if r.path.exists()]
        return [], Ending(kept=f"saved {', '.join(done) or 'nothing'}", interrupted=exc,
                          resumable=None)
    bad = next((r for r in runs if r.exit_code == 2), None)
    if bad is not None:
        raise UsageError(f"`reducebench run` refused the options (its line above); "
                         f"nothing was measured in {bad.path}")
    missing = [r for r in runs if not r.path.exists()]
    if missing:
        raise UsageError(f"run {missing[0].path} wrote no results (exit code "
                         f"{missing[0].exit_code})")
    return [r.path for r in runs], None
