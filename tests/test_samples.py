"""The raw-samples file: its name, the writer, the reader's errors, one case's samples
out of it, and the per-case summary show-samples prints."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reducebench.core.errors import ResultsFileError
from reducebench.analysis.samples_summary import case_label, drift_pct, matches, summarize_samples
from reducebench.results.naming import samples_path
from reducebench.results.samples_file import (COLUMNS, CaseSamples, SamplesWriter, all_case_samples, case_key, case_samples, read_samples, samples_for_results)

VECTOR = ("vector_load", "float32", 2**20, 256, "loads=4")
CUB = ("cub", "float32", 2**20, 0, "")


def test_samples_file_sits_next_to_its_results_csv():
    assert samples_path("results/20250101T000000Z_h100.csv") == \
        Path("results/20250101T000000Z_h100.samples.csv")
    assert samples_path(Path("/x/run.CSV")) == Path("/x/run.samples.csv")


def write_example(path: Path) -> SamplesWriter:
    writer = SamplesWriter(path)
    writer.write_case("run1", VECTOR, CaseSamples(
        times_us=[6.25, 6.5, 9.0, 6.0], sm_clock_mhz=[1980, 1980, 1700, None],
        mem_clock_mhz=[2619, 2619, 2619, 2619], kept=[True, True, False, True]))
    # cub in two phases: phase 1 faster (medians 8.0 and 7.0); index runs over both
    writer.write_case("run1", CUB, CaseSamples(times_us=[8.0, 8.1, 7.9, 7.0, 7.1, 6.9],
                                               phases=[0, 0, 0, 1, 1, 1]))
    return writer


def test_written_file_reads_with_plain_pandas(tmp_path):
    path = tmp_path / "run.samples.csv"
    writer = write_example(path)
    assert (writer.cases, writer.rows) == (2, 10)
    frame = pd.read_csv(path)  # the one line the docs promise
    assert tuple(frame.columns) == COLUMNS
    assert len(frame) == 10 and path.read_text().count("schema_version") == 1
    first = frame.iloc[0]
    assert (first.run_id, first.rung, first.n, first.block, first.params) == \
        ("run1", "vector_load", 2**20, 256, "loads=4")
    assert frame["index"].tolist() == [0, 1, 2, 3, 0, 1, 2, 3, 4, 5]
    assert frame["kept"].tolist() == [True, True, False, True] + [True] * 6
    assert math.isnan(frame["sm_clock_mhz"][3]) and frame["sm_clock_mhz"][2] == 1700
    assert frame["mem_clock_mhz"][4:].isna().all()          # cub: clocks unknown
    assert frame["phase"].tolist() == [0] * 4 + [0, 0, 0, 1, 1, 1]


def test_writer_appends_case_by_case_and_resumes_without_a_second_header(tmp_path):
    path = tmp_path / "run.samples.csv"
    write_example(path)
    resumed = SamplesWriter(path, append=True)
    resumed.write_case("run2", VECTOR, CaseSamples(times_us=[5.0] * 3))
    text = path.read_text()
    assert text.count("schema_version") == 1 and len(text.splitlines()) == 1 + 10 + 3
    # the case measured again: the last time it was written is the one returned
    assert case_samples(read_samples(path), VECTOR).tolist() == [5.0, 5.0, 5.0]


def test_times_keep_the_timer_resolution(tmp_path):
    path = tmp_path / "t.samples.csv"
    value = float(np.float32(6.1834e-3)) * 1e3   # an event time, float32 ms -> us
    SamplesWriter(path).write_case("r", CUB, CaseSamples(times_us=[value]))
    assert read_samples(path)["time_us"][0] == pytest.approx(value, rel=1e-8)


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="kept has 1 values for 2 samples"):
        CaseSamples(times_us=[1.0, 2.0], kept=[True])


def test_case_samples_by_key_kept_only_and_by_phase(tmp_path):
    path = tmp_path / "run.samples.csv"
    write_example(path)
    frame = read_samples(path)
    assert case_samples(frame, VECTOR).tolist() == [6.25, 6.5, 6.0]     # 9.0 discarded
    assert case_samples(frame, VECTOR, kept_only=False).tolist() == [6.25, 6.5, 9.0, 6.0]
    assert case_samples(frame, CUB).tolist() == [7.0, 7.1, 6.9]        # the faster phase
    assert case_samples(frame, CUB, phase=0).tolist() == [8.0, 8.1, 7.9]
    assert len(case_samples(frame, CUB, phase="all")) == 6
    assert case_samples(frame, ("cub", "float64", 2**20, 0, "")).size == 0
    everything = all_case_samples(frame)
    assert set(everything) == {VECTOR, CUB}
    assert everything[CUB].tolist() == [7.0, 7.1, 6.9]
    assert isinstance(everything[VECTOR], np.ndarray)


def test_samples_for_results_is_none_without_a_samples_file(tmp_path):
    results = tmp_path / "run.csv"
    results.write_text("whatever")
    assert samples_for_results(results) is None
    write_example(samples_path(results))
    assert samples_for_results(results)[VECTOR].tolist() == [6.25, 6.5, 6.0]


def test_reader_errors_are_one_clear_line(tmp_path):
    with pytest.raises(ResultsFileError, match="no such file"):
        read_samples(tmp_path / "missing.samples.csv")
    empty = tmp_path / "empty.samples.csv"
    empty.write_text("\n")
    with pytest.raises(ResultsFileError, match="empty"):
        read_samples(empty)
    foreign = tmp_path / "foreign.csv"
    foreign.write_text("a,b\n1,2\n")
    with pytest.raises(ResultsFileError, match="not a reducebench samples file"):
        read_samples(foreign)
    results = tmp_path / "run.csv"
    results.write_text("schema_version,rung,median_us\n1,cub,5.0\n")
    with pytest.raises(ResultsFileError, match="no samples file is beside it"):
        read_samples(results)   # a file is never named unless it is there
    (tmp_path / "run.samples.csv").write_text("schema_version\n")
    with pytest.raises(ResultsFileError, match="this is a results CSV; its samples are in "
                                               "run.samples.csv"):
        read_samples(results)


def test_reader_refuses_truncated_rows_and_other_versions(tmp_path):
    path = tmp_path / "run.samples.csv"
    write_example(path)
    lines = path.read_text().splitlines()
    truncated = tmp_path / "cut.samples.csv"
    truncated.write_text("\n".join(lines[:4] + [lines[4][:20]]) + "\n")
    with pytest.raises(ResultsFileError, match="line 5: truncated or malformed"):
        read_samples(truncated)
    cut_in_kept = tmp_path / "cut2.samples.csv"
    cut_in_kept.write_text("\n".join(lines[:3] + [lines[3][:-2]]) + "\n")  # "Fal"/"Tr"
    with pytest.raises(ResultsFileError, match="line 4: truncated or malformed"):
        read_samples(cut_in_kept)
    too_long = tmp_path / "long.samples.csv"
    too_long.write_text("\n".join(lines[:2] + [lines[2] + ",extra,fields"]) + "\n")
    with pytest.raises(ResultsFileError, match="malformed"):
        read_samples(too_long)
    other = tmp_path / "v3.samples.csv"
    other.write_text("\n".join([lines[0]] + ["3" + l[1:] for l in lines[1:]]) + "\n")
    with pytest.raises(ResultsFileError, match="samples schema version 3"):
        read_samples(other)
    garbled = tmp_path / "bad.samples.csv"
    garbled.write_text("\n".join(lines[:2] + [lines[2].replace(",6.5,", ",fast,")]) + "\n")
    with pytest.raises(ResultsFileError, match="line 3: truncated or malformed"):
        read_samples(garbled)


def test_summary_of_a_case_worked_by_hand():
    # 10 samples at 10.0, 10 at 10.5, 10 at 11.0, in that order, and three discarded 50s
    times = [10.0] * 10 + [50.0] + [10.5] * 10 + [50.0, 50.0] + [11.0] * 10
    kept = [t != 50.0 for t in times]
    s = summarize_samples(times, kept)
    assert (s.count, s.kept, s.discarded) == (33, 30, 3)
    assert (s.median, s.min, s.max) == (10.5, 10.0, 11.0)
    # mean 10.5; 20 deviations of 0.5: sample variance 5 / 29
    assert s.noise_pct == pytest.approx(100 * math.sqrt(5 / 29) / 10.5)
    assert s.drift_pct == pytest.approx(10.0)   # last third 11.0 over first third 10.0


def test_drift_needs_three_samples_and_has_a_sign():
    assert math.isnan(drift_pct([1.0, 2.0]))
    assert drift_pct([2.0, 1.5, 1.0]) == pytest.approx(-50.0)


def test_case_key_takes_what_pandas_reads_for_empty_params():
    assert case_key("cub", "float32", 1024.0, 0, float("nan")) == ("cub", "float32", 1024, 0, "")
    assert case_key("cub", "float32", 1024, 0, None) == ("cub", "float32", 1024, 0, "")


def test_case_labels_and_matching():
    assert case_label(VECTOR) == "vector_load float32 n=2^20 block=256 loads=4"
    assert case_label(CUB) == "cub float32 n=2^20"
    assert matches(VECTOR, "vector_load") and matches(VECTOR, "float32 n=1M")
    assert matches(VECTOR, "vector_load n=2^20 block=256 loads=4")
    assert not matches(VECTOR, "vector_load n=2^24")
    assert not matches(VECTOR, "loads=8") and not matches(VECTOR, "block=512")
    assert not matches(CUB, "vector_load") and matches(CUB, "cub")
