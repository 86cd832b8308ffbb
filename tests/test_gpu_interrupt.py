"""On the GPU, once: SIGTERM in the middle of a real sweep stops it with exit code 130,
the CSV holds whole rows of the finished cases only, and --resume measures exactly the
missing cases, so that the file ends with every case once."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reducebench.results.files import read_results

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parent.parent
# One round: each case's row is written as it completes, so a signal lands between rows
# (a case in rounds is written after its last: tests/test_rounds.py).
SWEEP = ["--size", "2^10..2^24:2", "--rung", "shfl,vector_load,single_pass,cub",
         "--max-time", "0.2", "--seed", "3", "--rounds", "1"]
CASES = 8 * 4


def reducebench(*args, **popen):
    return subprocess.Popen([sys.executable, "-m", "reducebench", "run", *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "COLUMNS": "200"}, **popen)


def rows(path: Path) -> int:
    return max(0, len(path.read_text().splitlines()) - 1) if path.exists() else 0


def test_sigterm_mid_sweep_then_resume_measures_exactly_the_rest(tmp_path):
    out = tmp_path / "sweep.csv"
    process = reducebench(*SWEEP, "--out", str(out))
    deadline = time.monotonic() + 240
    while rows(out) < 5 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, process.communicate()[0]
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 130, output
    assert "Traceback" not in output and "interrupted" in output
    finished = read_results(out)
    assert 5 <= len(finished) < CASES and set(finished["status"]) == {"ok"}

    resumed = reducebench("--resume", str(out))
    output, _ = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, output
    assert f"{len(finished)} case(s) already measured, {CASES - len(finished)} to go" in output
    frame = read_results(out)
    assert len(frame) == CASES and set(frame["status"]) == {"ok"}
    keys = list(zip(frame["rung"], frame["n"]))
    assert len(set(keys)) == CASES   # every case exactly once
