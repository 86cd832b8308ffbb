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
