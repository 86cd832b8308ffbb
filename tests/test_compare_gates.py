"""Gates that must not pass by doing nothing: --fail-on-regression and --threshold with
--baseline are refused; two files with no case in common, or a gate with nothing timed
on both sides, exit 2; a bare `compare` picks the newest comparable pair by the time
recorded in the files (never by modification time) or says which files exist. And
`run --format json` is strict JSON, skipped rows included."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import reducebench.device
from reducebench.cli import cli
from reducebench.core.errors import ResultsFileError
from reducebench.results.files import newest_results

from fakes import FakeCliBackend
from cli_runner import invoke, one_error_line

FIXTURES = Path(__file__).parent / "fixtures"
BASE = FIXTURES / "compare_base.csv"      # H100, cold, recorded 2026-11-21T18:40:02
NEW = FIXTURES / "compare_new.csv"        # H100, cold, recorded 2026-11-22T09:12:45
A100 = FIXTURES / "compare_a100_warm.csv"  # A100, warm, recorded 2026-11-23T14:03:10
SWEEP = FIXTURES / "sweep_small.csv"      # H100, cold, recorded 2026-11-24T08:00:00


@pytest.mark.parametrize("gate", [["--fail-on-regression"], ["--threshold", "5"],
                                  ["--fail-on-regression", "--threshold", "0"]])
def test_gates_with_baseline_are_refused_not_ignored(gate):
    line = one_error_line(invoke("compare", SWEEP, "--baseline", "cub", *gate), gate[0])
    assert "BASE NEW" in line


def test_baseline_alone_still_works():
    assert invoke("compare", SWEEP, "--baseline", "cub").exit_code == 0


def _only_rows(source: Path, tmp_path: Path, keep) -> Path:
    lines = source.read_text().splitlines(keepends=True)
    out = tmp_path / f"{source.stem}_part.csv"
    out.write_text(lines[0] + "".join(line for line in lines[1:] if keep(line)))
    return out


def test_two_files_with_no_case_in_common_exit_2(tmp_path):
    # BASE's shfl_unroll rows against NEW's single_pass rows: not one shared case
    base = _only_rows(BASE, tmp_path, lambda line: ",shfl_unroll," in line)
    new = _only_rows(NEW, tmp_path, lambda line: ",single_pass," in line)
    for extra in ([], ["--fail-on-regression"], ["--format", "json"]):
        line = one_error_line(invoke("compare", base, new, *extra), "no case in common")
        assert str(base) in line and str(new) in line
        assert invoke("compare", base, new, *extra).stdout == ""


def test_a_gate_with_nothing_timed_on_both_sides_exits_2(tmp_path):
    # gridstride_atomic at 2^24: ok in BASE, FAIL in NEW -> a regression (exit 1);
    # the same row failing on both sides is no regression, but judged nothing: exit 2
    base = _only_rows(NEW, tmp_path, lambda line: ",gridstride_atomic," in line
                      and ",16777216," in line)
    result = invoke("compare", base, base, "--fail-on-regression")
    one_error_line(result, "nothing was judged")
    assert invoke("compare", base, base).exit_code == 0   # without the gate: a report


def test_bare_compare_goes_by_recorded_time_not_modification_time(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results = Path("results")
    results.mkdir()
    names = {"z_base.csv": BASE, "a_new.csv": NEW, "m_a100.csv": A100}
    for name, source in names.items():
        (results / name).write_text(source.read_text())
    now = time.time()
    # modification times in the opposite order of the recorded times
    os.utime(results / "a_new.csv", (now - 300, now - 300))
    os.utime(results / "z_base.csv", (now, now))
    os.utime(results / "m_a100.csv", (now - 100, now - 100))
    # the newest run (A100, warm) has no earlier A100 warm run: refused, files named
    line = one_error_line(invoke("compare"), "m_a100.csv", "a_new.csv", "z_base.csv")
    assert "same GPU, L2 mode, timing, inputs, dtypes and rungs" in line
    (results / "m_a100.csv").unlink()
    result = invoke("compare", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["base"].endswith("z_base.csv") and doc["new"].endswith("a_new.csv")
    said = " ".join(result.stderr.split())
    assert said.startswith("comparing BASE results/z_base.csv (NVIDIA H100 80GB HBM3, cold "
                           "L2, single timing, exact inputs, float32, 6 rung(s), "
                           "2026-11-21 18:40 UTC) with NEW results/a_new.csv ("), said


def test_newest_results_skips_other_gpus_and_files_that_are_not_results(tmp_path):
    (tmp_path / "base.csv").write_text(BASE.read_text())
    (tmp_path / "new.csv").write_text(NEW.read_text())
    (tmp_path / "notes.csv").write_text("name,value\nx,1\n")
    assert [p.name for p in newest_results(tmp_path, 2)] == ["base.csv", "new.csv"]
    assert [p.name for p in newest_results(tmp_path, 1)] == ["new.csv"]
    # newer, H100 cold, shares cases, but float32 and float64: another kind of run
    (tmp_path / "sweep.csv").write_text(SWEEP.read_text())
    with pytest.raises(ResultsFileError, match="sweep.csv .*float32, float64"):
        newest_results(tmp_path, 2)
    float32 = _only_rows(SWEEP, tmp_path, lambda line: ",float32," in line)
    assert [p.name for p in newest_results(tmp_path, 2)] == ["new.csv", float32.name]


def _recorded_at(source: Path, path: Path, when: str, **columns) -> Path:
    """A copy of `source` recorded at `when`, with `columns` set on every row."""
    import pandas as pd

    frame = pd.read_csv(source, dtype=str, keep_default_na=False)
    frame["utc_time"] = when
    for column, value in columns.items():
        frame[column] = value
    frame.to_csv(path, index=False)
    return path


# The first rows of results/h200x4_multigpu_{sharded,nccl}_f32_9acad4a.csv (4 x H200,
# `multigpu` at 9acad4a): both hold the same timing-floor cases.
MULTIGPU = [FIXTURES / "multigpu_sharded_part.csv", FIXTURES / "multigpu_nccl_part.csv"]


def test_bare_compare_passes_over_multi_gpu_files(tmp_path):
    """The sharded and NCCL files of one `multigpu` session, newer than everything else,
    share their timing-floor rows: they are no pair of single-GPU runs."""
    (tmp_path / "base.csv").write_text(BASE.read_text())
    (tmp_path / "new.csv").write_text(NEW.read_text())
    for source in MULTIGPU:
        _recorded_at(source, tmp_path / source.name, "2026-12-24T08:00:00+00:00")
    assert [p.name for p in newest_results(tmp_path, 2)] == ["base.csv", "new.csv"]
    assert [p.name for p in newest_results(tmp_path, 1)] == ["new.csv"]
    for path in (tmp_path / "base.csv", tmp_path / "new.csv"):
        path.unlink()
    with pytest.raises(ResultsFileError, match="no single-GPU results files"):
        newest_results(tmp_path, 2)


def _options(rungs: list[str]) -> str:
    return json.dumps({"block": [256], "dtype": ["float32"], "inputs": "exact",
                       "mode": "cold", "rung": rungs, "size": [2**20, 2**24],
                       "timing": "single"})


LADDER_A = ["smem_sequential", "shfl", "shfl_unroll", "single_pass", "gridstride_atomic",
            "vector_load", "cub"]


@pytest.mark.parametrize("between", [
    {"options": _options(LADDER_A[:3])},      # another set of rungs asked for
    {"options": _options(LADDER_A), "inputs": "random"},
    {"options": _options(LADDER_A), "timing": "graph"},
    {"options": _options(LADDER_A), "mode": "warm"},
    {"options": _options(LADDER_A), "gpu": "NVIDIA H200"},
])
def test_bare_compare_pairs_runs_of_the_same_kind_and_options(tmp_path, between):
    """BASE and NEW asked for the same rungs; a run recorded between them that differs in
    one respect, and shares cases with both, is passed over."""
    same = {"options": _options(LADDER_A)}
    _recorded_at(BASE, tmp_path / "base.csv", "2026-11-21T18:40:02+00:00", **same)
    _recorded_at(NEW, tmp_path / "new.csv", "2026-11-22T09:12:45+00:00", **same)
    _recorded_at(BASE, tmp_path / "other.csv", "2026-11-22T00:00:00+00:00", **between)
    assert [p.name for p in newest_results(tmp_path, 2)] == ["base.csv", "new.csv"]
    # the same run recorded between them, with the same options, is the pair
    _recorded_at(BASE, tmp_path / "other.csv", "2026-11-22T00:00:00+00:00", **same)
    assert [p.name for p in newest_results(tmp_path, 2)] == ["other.csv", "new.csv"]


def test_bare_compare_with_no_results_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("results").mkdir()
    one_error_line(invoke("compare"), "found 0")


@pytest.mark.parametrize("args", [("compare", "{dir}", NEW), ("compare", BASE, "{dir}"),
                                  ("compare", "{dir}", "--baseline", "cub"),
                                  ("plot", "{dir}")])
def test_a_folder_given_for_a_file_is_called_a_folder(tmp_path, args):
    args = [str(a).replace("{dir}", str(tmp_path)) for a in args]
    line = one_error_line(invoke(*args), str(tmp_path), "is a folder")
    assert "no such file" not in line


# ---- run --format json: strict JSON ------------------------------------------------------------

def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


def test_run_json_is_strict_json_with_skipped_rows(monkeypatch, tmp_path):
    monkeypatch.setattr(reducebench.device, "open_backend",
                        lambda device=0: FakeCliBackend(skip={"torch"}))
    out = tmp_path / "run.csv"
    result = CliRunner().invoke(cli, ["run", "--size", "2^10", "--rung", "shfl,torch",
                                      "--seed", "3", "--format", "json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = _strict(result.stdout)    # a bare NaN in the text would raise here
    by_rung = {row["rung"]: row for row in rows}
    assert by_rung["torch"]["status"] == "skipped"
    assert by_rung["torch"]["median_us"] is None and by_rung["torch"]["gbps"] is None
    assert by_rung["shfl"]["status"] == "ok" and by_rung["shfl"]["median_us"] > 0


def test_a_refusal_counts_a_kernel_as_one_rung_though_its_text_holds_commas(tmp_path,
                                                                           monkeypatch):
    # three rungs and one --kernel, whose options read "{'finish': 'atomic', 'grid': ...}"
    run = Path(__file__).parent.parent / "results" / "h100" / "compare_a_6f78c21.csv"
    monkeypatch.chdir(tmp_path)
    Path("results").mkdir()
    (tmp_path / "results" / run.name).write_text(run.read_text())
    line = one_error_line(invoke("compare"), run.name)
    assert "float32, 4 rung(s))" in line


def test_bare_compare_says_nothing_about_files_it_passes_over(tmp_path, monkeypatch):
    # an older run of another GPU whose last case was measured twice: read while choosing,
    # not chosen, so its "measured more than once" is not the user's business here
    monkeypatch.chdir(tmp_path)
    results = Path("results")
    results.mkdir()
    (results / "base.csv").write_text(BASE.read_text())
    (results / "new.csv").write_text(NEW.read_text())
    old = _recorded_at(A100, results / "old_a100.csv", "2025-01-01T00:00:00+00:00")
    lines = old.read_text().splitlines(keepends=True)
    old.write_text("".join(lines) + lines[-1])
    result = invoke("compare")
    assert result.exit_code == 0, result.output
    assert "old_a100.csv" not in result.stderr, result.stderr
