"""ResultsStore's bookkeeping (results/store.py), without kills: which files it refuses
to overwrite, what it counts, the key it files samples under, and its last line.
tests/test_results_store.py kills writers at every byte; this file is the fast part."""

from __future__ import annotations

import pytest

from reducebench.ladder.case import case_key
from reducebench.results.files import read_results
from reducebench.results.naming import samples_path
from reducebench.results.samples_file import CaseSamples, all_case_samples, read_samples
from reducebench.results.schema import SCHEMA_VERSION, Record
from reducebench.results.store import ResultsStore, record_key

META = {"schema_version": SCHEMA_VERSION, "kind": "single", "run_id": "r1", "gpu": "Fake GPU"}


def record(n: int, params: str = "", times=(10.0, 11.0, 12.5)) -> Record:
    r = Record("shfl", "float32", n, 256, params=params, samples=len(times),
               median_us=sorted(times)[1] if times else 10.0, meta=META)
    if times:
        r.raw_samples = CaseSamples(times_us=list(times))
    return r


def test_the_key_is_the_cases():
    assert record_key(record(1024, "unroll=4")) == case_key("shfl", "float32", 1024, 256,
                                                            "unroll=4")


@pytest.mark.parametrize("existing", ["run.csv", "run.samples.csv"])
def test_a_new_store_never_overwrites_either_file(tmp_path, existing):
    (tmp_path / existing).write_text("kept\n")
    with pytest.raises(FileExistsError) as refused:
        ResultsStore(tmp_path / "run.csv")
    assert refused.value.args == (tmp_path / existing,)
    assert (tmp_path / existing).read_text() == "kept\n"


def test_a_store_counts_what_it_committed_and_files_samples_by_case(tmp_path):
    path = tmp_path / "run.csv"
    store = ResultsStore(path)
    assert store.samples_path == samples_path(path) == tmp_path / "run.samples.csv"
    store.commit(record(1024, "unroll=4"))
    store.commit(record(2048, times=()))         # a case without samples: its row only
    assert store.rows == 2 and store.samples_written == 1
    assert store.saved() == (f"2 case(s) saved in {path} (every sample in "
                             f"{tmp_path / 'run.samples.csv'})")
    samples = all_case_samples(read_samples(samples_path(path)))
    assert list(samples) == [case_key("shfl", "float32", 1024, 256, "unroll=4")]
    assert list(list(samples.values())[0]) == [10.0, 11.0, 12.5]
    assert list(read_results(path)["n"]) == [1024, 2048]


def test_a_resumed_store_appends_both_files_and_counts_only_its_own(tmp_path):
    path = tmp_path / "run.csv"
    ResultsStore(path).commit(record(1024))
    resumed = ResultsStore(path, resume=True)
    assert resumed.rows == 0 and resumed.samples_written == 0
    resumed.commit(record(2048))
    assert resumed.rows == 1 and resumed.samples_written == 1
    assert list(read_results(path)["n"]) == [1024, 2048]
    assert len(all_case_samples(read_samples(samples_path(path)))) == 2


def test_a_store_without_samples_does_not_name_a_samples_file(tmp_path):
    path = tmp_path / "run.csv"
    store = ResultsStore(path)
    assert store.saved() == "nothing saved"
    store.commit(record(1024, times=()))
    assert store.saved() == f"1 case(s) saved in {path}"


def test_samples_are_filed_under_the_runs_id(tmp_path):
    path = tmp_path / "run.csv"
    ResultsStore(path).commit(record(1024))
    assert list(read_samples(samples_path(path))["run_id"].unique()) == ["r1"]


def test_a_multigpu_store_writes_its_columns_and_no_samples(tmp_path):
    from reducebench.results.schema import MULTIGPU, MULTIGPU_COLUMNS, MultiGpuRecord

    path = tmp_path / "multi.csv"
    store = ResultsStore(path, kind=MULTIGPU)
    store.commit(MultiGpuRecord("sharded", "sharded_sum:pingpong", "float32", 1024, 2,
                                meta={**META, "kind": "multigpu"}))
    assert path.read_text().splitlines()[0].split(",") == list(MULTIGPU_COLUMNS)
    assert store.samples_written == 0 and store.saved() == f"1 case(s) saved in {path}"
