"""On the GPU: SIGINT or SIGTERM at every stage of every measuring command ends it with
exit code 130, keeps what was measured in a file every reader takes, leaves no process
of ours behind (Nsight Compute and compute-sanitizer with their profiled programs too),
names only files that exist, and a resumed run completes the rest.

Every process a test starts carries a marker in its environment; after the command has
exited, no process on the machine may still carry it."""

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from reducebench.results.files import read_results

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parent.parent
MARK = "REDUCEBENCH_TEST_MARK"


def start(*args, mark: str) -> subprocess.Popen:
    env = {**os.environ, "COLUMNS": "200", MARK: mark}
    return subprocess.Popen([sys.executable, "-m", "reducebench", *map(str, args)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)


def marked(mark: str) -> list[tuple[int, str]]:
    """(pid, command line) of every live process whose environment carries the mark."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            if f"{MARK}={mark}".encode() in environ.split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
                    found.append((int(entry.name), cmdline.decode(errors="replace")))
        except OSError:
            continue
    return found


def wait_for(condition, process: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, process.communicate()[0][-3000:]
        assert time.monotonic() < deadline, "the stage was never reached"
        time.sleep(0.05)


def rows(path: Path) -> int:
    return len(read_results(path)) if path.exists() and path.stat().st_size else 0


def stop(process: subprocess.Popen, mark: str, signum=signal.SIGTERM) -> str:
    process.send_signal(signum)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 130, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    time.sleep(0.5)  # a killed group's last members are reaped by init
    assert marked(mark) == [], output[-2000:]
    return output


def named_files_exist(output: str) -> None:
    """Every file a message names as saved exists."""
    for word in output.replace("(", " ").replace(")", " ").split():
        if word.endswith(".csv") and ("saved" in output or "written" in output):
            assert Path(word).exists() or not Path(word).is_absolute(), word


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_signal_at_start_up_exits_130_and_names_no_missing_file(tmp_path, signum):
    mark = uuid.uuid4().hex
    out = tmp_path / "early.csv"
    process = start("run", "--size", "2^20", "--rung", "shfl", "--out", out, mark=mark)
    time.sleep(1.0)   # importing CuPy, opening the device, measuring the read ceiling
    output = stop(process, mark, signum)
    named_files_exist(output)
    if not out.exists():  # stopped while loading, or before the first case
        assert "nothing was measured" in output or "nothing saved" in output


def test_a_signal_while_a_huge_exact_input_is_made(tmp_path):
    mark = uuid.uuid4().hex
    out = tmp_path / "huge.csv"
    process = start("run", "--size", str(2**32 + 3), "--rung", "vector_load", "--out", out,
                    mark=mark)

    def making_the_input() -> bool:  # 16 GiB of host memory on its way
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
        except OSError:
            return False
        rss = [line.split()[1] for line in status.splitlines() if line.startswith("VmRSS")]
        return bool(rss) and int(rss[0]) > 4 * 2**20   # no VmRSS: it is exiting

    wait_for(making_the_input, process)
    output = stop(process, mark)
    named_files_exist(output)
    assert not out.exists() and "nothing saved" in output


def test_a_signal_while_counters_are_read_keeps_the_timed_case_and_stops_ncu(tmp_path):
    if shutil.which("ncu") is None:
        pytest.skip("ncu is not on the PATH")
    mark = uuid.uuid4().hex
    out = tmp_path / "metrics.csv"
    process = start("run", "--size", "2^20", "--rung", "shfl,vector_load,cub", "--metrics",
                    "--seed", "4", "--rounds", "1", "--out", out, mark=mark)
    wait_for(lambda: any("ncu" in cmd.split()[0] for _, cmd in marked(mark)
                         if cmd.split()), process)
    time.sleep(1.0)   # ncu has started its profiled child
    output = stop(process, mark)
    frame = read_results(out)
    assert len(frame) >= 1
    assert "interrupted while its counters were read" in str(frame["note"].iloc[-1])
    resumed = start("run", "--resume", out, mark=mark)
    output, _ = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, output[-3000:]
    assert len(read_results(out)) == 3


def test_a_signal_during_check_keeps_its_verdicts(tmp_path):
    mark = uuid.uuid4().hex
    out = tmp_path / "check.csv"
    process = start("check", "--size", "2^24", "--out", out, mark=mark)
    wait_for(lambda: rows(out) >= 2, process)
    stop(process, mark)
    assert rows(out) >= 2


def test_a_signal_during_tune_writes_no_table_and_keeps_the_candidates(tmp_path):
    mark = uuid.uuid4().hex
    table, records = tmp_path / "tuned.toml", tmp_path / "candidates.csv"
    process = start("tune", "--quick", "--out", table, "--records", records, mark=mark)
    wait_for(lambda: rows(records) >= 3, process)
    output = stop(process, mark)
    assert not table.exists() and "no tuning file written" in output
    assert rows(records) >= 3


def test_a_signal_during_sanitize_stops_the_sanitizer_and_its_program(tmp_path):
    if shutil.which("compute-sanitizer") is None:
        pytest.skip("compute-sanitizer is not on the PATH")
    mark = uuid.uuid4().hex
    process = start("sanitize", "--size", "2^20", "--rung", "shfl,vector_load",
                    "--out", tmp_path / "sanitize.md", mark=mark)
    wait_for(lambda: any("compute-sanitizer" in cmd for _, cmd in marked(mark)), process)
    time.sleep(2.0)
    output = stop(process, mark)
    assert not (tmp_path / "sanitize.md").exists() and "no report written" in output


def test_a_signal_during_multigpu_keeps_the_rows(tmp_path):
    mark = uuid.uuid4().hex
    out = tmp_path / "multi.csv"
    process = start("multigpu", "--size", "2^20..2^28", "--gpus", "1", "--rounds", "1",
                    "--out", out, mark=mark)
    wait_for(lambda: rows(out) >= 2, process)
    stop(process, mark)
    frame = read_results(out)
    assert len(frame) >= 2 and set(frame["kind"]) == {"multigpu"}
