"""On the GPU: `run --device all` runs the sweep on every GPU of the host, each in its own
process and file, every row verified and carrying its device index and that GPU's name,
the same inputs everywhere (the same exact sums), and prints the GPUs side by side. An
index the machine does not have is one line and exit code 2."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reducebench.results.files import read_results

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parent.parent


def gpu_names() -> list[str]:
    import cupy

    names = []
    for index in range(cupy.cuda.runtime.getDeviceCount()):
        name = cupy.cuda.runtime.getDeviceProperties(index)["name"]
        names.append(name.decode() if isinstance(name, bytes) else str(name))
    return names


def reducebench(*args, timeout=600):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "reducebench", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_every_gpu_is_measured_in_its_own_file_with_its_index_and_name(tmp_path):
    names = gpu_names()
    if len(names) < 2:
        pytest.skip(f"needs 2 GPUs; this machine has {len(names)}")
    out = tmp_path / "every.csv"
    done = reducebench("run", "--size", "1048577", "--rung", "pingpong,cub", "--device", "all",
                       "--max-time", "0.2", "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    sums = set()
    for device, name in enumerate(names):
        rows = read_results(tmp_path / f"every.gpu{device}.csv")
        assert list(rows["device"]) == [device, device], rows["device"]
        assert set(rows["gpu"]) == {name}
        assert rows["verified"].all(), rows[["rung", "status", "error"]]
        sums |= set(rows["result"])
    assert len(sums) == 1  # exact inputs, one seed: every GPU sums the same numbers
    text = " ".join(done.stdout.split())
    assert "the GPUs side by side" in text and "GPU 1 / GPU 0" in text


def test_an_index_this_machine_does_not_have_is_one_line_and_exit_2(tmp_path):
    count = len(gpu_names())
    done = reducebench("run", "--size", "2^10", "--rung", "cub", "--device", str(count),
                       "--out", str(tmp_path / "none.csv"), timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1 and f"this machine has {count} GPU(s)" in lines[0], lines
