"""A case reaches disk as its samples, then its row: a kill at any instant leaves files in
which every row has all its samples, at most one block of samples has no row, and a
resumed run completes the rest with every case once."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reducebench.core.errors import ResultsFileError
from reducebench.ladder.case import case_key
from reducebench.results.files import RowWriter, read_results, row_keys
from reducebench.results.naming import samples_path
from reducebench.results.samples_file import CaseSamples, all_case_samples, read_samples
from reducebench.results.schema import MULTIGPU, MULTIGPU_COLUMNS, SCHEMA_VERSION, Record
from reducebench.results.store import ResultsStore

REPO = Path(__file__).resolve().parent.parent
META = {"schema_version": SCHEMA_VERSION, "kind": "single", "run_id": "r1", "gpu": "Fake GPU",
        "seed": 3}


def record(n: int, times=(10.0, 11.0, 12.5)) -> Record:
    r = Record("shfl", "float32", n, 256, samples=len(times), median_us=sorted(times)[1],
               error="", meta=META)
    r.raw_samples = CaseSamples(times_us=list(times))
    return r


RECORDS = [record(1024), record(2048, (20.0, 21.0, 22.0, 23.0)), record(4096)]


def write_all(folder: Path) -> tuple[bytes, bytes, list[tuple[int, int]]]:
    """Both files' final bytes, and after each commit the sizes (samples, results)."""
    path = folder / "full.csv"
    store = ResultsStore(path)
    sizes = []
    for r in RECORDS:
        store.commit(r)
        sizes.append((samples_path(path).stat().st_size, path.stat().st_size))
    return samples_path(path).read_bytes(), path.read_bytes(), sizes


def kill_points(sizes, samples_bytes: bytes, results_bytes: bytes, stride: int = 41):
    """(samples prefix, results prefix) of every state a kill can leave: inside commit i,
    the samples file is anywhere from its size after commit i-1 to after commit i while
    the results file is as after commit i-1; then the row is anywhere on its way."""
    header_samples = samples_bytes.index(b"\n") + 1
    before = (header_samples, 0)
    for after in sizes:
        for cut in sorted({*range(before[0], after[0] + 1, stride), *ends(after[0])}):
            yield cut, before[1]
        for cut in sorted({*range(before[1], after[1] + 1, stride), *ends(after[1])}):
            yield after[0], cut
        before = after


def ends(size: int) -> tuple[int, ...]:
    """The last bytes of a write: just before its \\r, between \\r and \\n, complete."""
    return size - 2, size - 1, size


def check_invariants(path: Path) -> set:
    """Every row read has every one of its samples; at most one block has no row. The
    keys of the rows."""
    keys = set()
    if path.exists() and path.stat().st_size and path.read_bytes().count(b"\n") > 1:
        frame = read_results(path)
        keys = set(row_keys(frame))
        samples = all_case_samples(read_samples(samples_path(path)))
        for key, count in zip(row_keys(frame), frame["samples"]):
            assert len(samples[key]) == count, key
        assert len(set(samples) - keys) <= 1
    return keys


@pytest.mark.filterwarnings("ignore::reducebench.results.files.ResultsWarning")
def test_a_kill_at_any_byte_of_a_commit_leaves_a_consistent_pair_that_resumes(tmp_path):
    samples_bytes, results_bytes, sizes = write_all(tmp_path)
    states = list(kill_points(sizes, samples_bytes, results_bytes))
    assert len(states) > 60
    for index, (samples_cut, results_cut) in enumerate(states):
        path = tmp_path / f"killed{index}.csv"
        samples_path(path).write_bytes(samples_bytes[:samples_cut])
        if results_cut:
            path.write_bytes(results_bytes[:results_cut])
        done = check_invariants(path)
        store = ResultsStore(path, resume=True)
        for r in RECORDS:
            key = case_key(r.rung, r.dtype, r.n, r.block, r.params)
            if key not in done:
                store.commit(r)
        assert check_invariants(path) == {case_key(r.rung, r.dtype, r.n, r.block, r.params)
                                          for r in RECORDS}
        assert len(read_results(path)) == len(RECORDS)


def test_samples_reach_disk_before_the_row(tmp_path, monkeypatch):
    order = []
    path = tmp_path / "run.csv"
    store = ResultsStore(path)
    real_samples, real_row = store._samples.write_case, store._rows.write
    monkeypatch.setattr(store._samples, "write_case",
                        lambda *a: (order.append("samples"), real_samples(*a)))
    monkeypatch.setattr(store._rows, "write", lambda r: (order.append("row"), real_row(r)))
    store.commit(RECORDS[0])
    assert order == ["samples", "row"]


WRITER = """
import sys, time
from reducebench.results.samples_file import CaseSamples
from reducebench.results.schema import Record, SCHEMA_VERSION
from reducebench.results.store import ResultsStore
store = ResultsStore(__import__("pathlib").Path(sys.argv[1]), resume=True)
n = int(sys.argv[2])
while True:
    r = Record("shfl", "float32", n, 256, samples=400, median_us=5.0,
               meta={"schema_version": SCHEMA_VERSION, "kind": "single", "run_id": "k"})
    r.raw_samples = CaseSamples(times_us=[5.0 + i * 1e-3 for i in range(400)])
    store.commit(r)
    n += 1
"""


@pytest.mark.filterwarnings("ignore::reducebench.results.files.ResultsWarning")
def test_kill_9_while_writing_never_leaves_a_row_without_its_samples(tmp_path):
    path = tmp_path / "killed.csv"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    next_n = 1
    for delay in (0.35, 0.5, 0.62, 0.8, 0.93):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(next_n)],
                                  env=env)
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        keys = check_invariants(path)
        next_n = max((key[2] for key in keys), default=0) + 1
    assert len(keys) > 5   # the writer got going each time


def test_a_file_is_only_appended_in_its_own_layout(tmp_path):
    path = tmp_path / "run.csv"
    RowWriter(path).write(RECORDS[0])
    text = path.read_text()
    with pytest.raises(ResultsFileError, match="another version of reducebench"):
        RowWriter(path, MULTIGPU_COLUMNS)
    older = tmp_path / "older.csv"
    older.write_text(text.replace(",note,", ",",).replace(",,", ",", 1))
    with pytest.raises(ResultsFileError, match="results schema"):
        RowWriter(older)
    assert path.read_text() == text


def test_store_names_only_files_that_exist(tmp_path):
    store = ResultsStore(tmp_path / "never.csv")
    assert store.saved() == "nothing saved"
    store.commit(RECORDS[0])
    assert "1 case(s) saved in" in store.saved() and "samples" in store.saved()


def test_a_multigpu_store_writes_its_own_columns(tmp_path):
    from reducebench.results.schema import MultiGpuRecord

    path = tmp_path / "multi.csv"
    ResultsStore(path, kind=MULTIGPU).commit(
        MultiGpuRecord("sharded", "sharded_sum:pingpong", "float32", 1024, 2,
                       meta={**META, "kind": "multigpu"}))
    assert path.read_text().splitlines()[0].split(",") == list(MULTIGPU_COLUMNS)
    assert not samples_path(path).exists()
    assert read_results(path)["kind"].tolist() == ["multigpu"]
