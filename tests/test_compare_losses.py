"""The regression gate counts every loss (#23 item 5): a case verified in BASE that is
FAIL, error, newly skipped, suspect or missing in NEW fails --fail-on-regression, each
with its reason; and a suspect row (faster than the memory allows, #23 item 6) is never
ranked FASTER / SLOWER / SAME, nor drawn in a plot."""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

import pandas as pd
import pytest

from reducebench.analysis.compare import (FASTER, SAME, SKIPPED, SUSPECT, TIMED_VERDICTS,
                                          compare_runs)
from reducebench.results.files import RowWriter, read_results
from reducebench.results.schema import SCHEMA_VERSION, Record
from cli_runner import invoke

META = {"schema_version": SCHEMA_VERSION, "gpu": "Fake GPU", "mode": "cold",
        "timing": "single", "inputs": "exact", "run_id": "r1", "peak_gbps": 3352.3}
N = 2**24
# rung -> BASE's median; every case is verified in BASE
CASES = {"smem_sequential": 84.0, "shfl": 65.0, "vector_load": 27.0, "single_pass": 26.0,
         "pingpong": 26.5, "cub": 32.0}
SUSPECT_NOTE = "faster than the memory allows: the work probably ran outside the timed stream"


def record(rung: str, median: float, status: str = "ok", error: str = "") -> Record:
    block = 0 if rung == "cub" else 256
    ok = status in ("ok", "suspect")
    return Record(rung=rung, dtype="float32", n=N, block=block, status=status, error=error,
                  samples=10 if ok else 0, median_us=median if ok else float("nan"),
                  gbps=4 * N / (median * 1e3) if ok else float("nan"), meta=dict(META))


def write(path: Path, records: list[Record], notes: dict[str, str] | None = None) -> Path:
    """A results file; with `notes`, a `note` column (rung -> text), as the newer schema
    writes it for suspect rows."""
    writer = RowWriter(path)
    for r in records:
        writer.write(r)
    if notes is not None:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        frame["note"] = [notes.get(rung, "") for rung in frame["rung"]]
        frame.to_csv(path, index=False)
    return path


def base_file(tmp_path: Path) -> Path:
    return write(tmp_path / "base.csv", [record(r, t) for r, t in CASES.items()])


# Each loss on its own: NEW equal to BASE except for `rung`, and the reason expected.
LOSSES = {
    "FAIL": ("shfl", record("shfl", 65.0, "FAIL", "result 8388607 vs reference 8388608"),
             "ok in BASE, FAIL in NEW: result 8388607 vs reference 8388608"),
    "error": ("vector_load", record("vector_load", 0, "error",
                                    "CUDA_ERROR_ILLEGAL_ADDRESS; context lost"),
              "ok in BASE, error in NEW: CUDA_ERROR_ILLEGAL_ADDRESS; context lost"),
    "skipped": ("pingpong", record("pingpong", 0, "skipped", "needs compute capability 9.0"),
                "ok in BASE, skipped in NEW: needs compute capability 9.0"),
    "suspect": ("single_pass", record("single_pass", 1.31, "suspect"),
                f"ok in BASE, suspect in NEW: {SUSPECT_NOTE}"),
    "missing": ("smem_sequential", None, "ok in BASE, missing from NEW"),
}


def new_file(tmp_path: Path, kind: str) -> Path:
    rung, replacement, _ = LOSSES[kind]
    records = [record(r, t) for r, t in CASES.items() if r != rung]
    if replacement is not None:
        records.append(replacement)
    notes = {"single_pass": SUSPECT_NOTE} if kind == "suspect" else None
    return write(tmp_path / f"new_{kind}.csv", records, notes)


@pytest.mark.parametrize("kind", sorted(LOSSES))
def test_each_loss_fails_the_gate_with_its_reason(tmp_path, kind):
    base, new = base_file(tmp_path), new_file(tmp_path, kind)
    rung, _, reason = LOSSES[kind]
    result = invoke("compare", base, new, "--fail-on-regression")
    assert result.exit_code == 1, (kind, result.output)
    assert "1 regression(s)" in result.stderr
    assert f"{rung} float32 n=2^24" in result.stderr and reason in result.stderr
    # the same pair without the gate is a report, exit 0
    assert invoke("compare", base, new).exit_code == 0
    c = compare_runs(read_results(base), read_results(new))
    assert list(c.losses["rung"]) == [rung] and list(c.losses["reason"]) == [reason]
    doc = json.loads(invoke("compare", base, new, "--format", "json").stdout)
    assert [(g["rung"], g["reason"]) for g in doc["gate_failures"]] == [(rung, reason)]


def test_an_unchanged_run_passes_and_a_fix_is_no_loss(tmp_path):
    base = base_file(tmp_path)
    assert invoke("compare", base, base, "--fail-on-regression").exit_code == 0
    # errored or skipped in BASE, ok in NEW: a fix, not a loss; nor is a case NEW adds
    broken = write(tmp_path / "broken.csv",
                   [record(r, t) for r, t in CASES.items() if r not in ("shfl", "pingpong")]
                   + [record("shfl", 0, "error", "launch failed"),
                      record("pingpong", 0, "skipped", "needs compute capability 9.0")])
    assert invoke("compare", broken, base, "--fail-on-regression").exit_code == 0
    fewer = write(tmp_path / "fewer.csv", [record(r, t) for r, t in CASES.items()
                                           if r != "cub"])
    assert invoke("compare", fewer, base, "--fail-on-regression").exit_code == 0


def test_every_loss_at_once_is_listed_one_line_each(tmp_path):
    base = base_file(tmp_path)
    new = write(tmp_path / "new.csv", [record("cub", 32.0),
                                       *(LOSSES[k][1] for k in ("FAIL", "error", "skipped",
                                                                "suspect"))],
                {"single_pass": SUSPECT_NOTE})
    result = invoke("compare", base, new, "--fail-on-regression")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("reducebench: 5 regression(s)")
    assert sorted(line.split(":", 1)[1].strip() for line in lines[1:]) == \
        sorted(reason for _, _, reason in LOSSES.values())


# ---- suspect rows ---------------------------------------------------------------------------

def test_a_suspect_row_is_never_ranked(tmp_path):
    """single_pass at 1.31 us against 26 us would be 20 times FASTER by the ratio rule;
    suspect, it is shown as SUSPECT, with the reason, and averaged nowhere."""
    base = base_file(tmp_path)
    new = new_file(tmp_path, "suspect")
    c = compare_runs(read_results(base), read_results(new))
    row = c.rows.set_index("rung").loc["single_pass"]
    assert row["verdict"] == SUSPECT and pd.isna(row["ratio"])
    assert row["note"] == f"new suspect: {SUSPECT_NOTE}"
    assert "single_pass" not in set(c.geomean["rung"])
    assert len(c.timed) == len(CASES) - 1 and set(c.timed["verdict"]) == {SAME}
    assert c.counts()[SUSPECT] == 1 and c.counts()[FASTER] == 0
    # BASE suspect, NEW ok: not ranked either, and no loss (BASE had no result)
    back = compare_runs(read_results(new), read_results(base))
    assert back.rows.set_index("rung").loc["single_pass", "verdict"] == SUSPECT
    assert not len(back.losses)


def test_a_suspect_row_without_a_note_column_is_still_suspect(tmp_path):
    base = base_file(tmp_path)
    new = write(tmp_path / "old.csv", [record(r, t) for r, t in CASES.items()
                                       if r != "shfl"] + [record("shfl", 0.5, "suspect")])
    older = read_results(new).drop(columns=["note"])   # a frame from before the note column
    c = compare_runs(read_results(base), older)
    row = c.rows.set_index("rung").loc["shfl"]
    assert row["verdict"] == SUSPECT and row["note"] == "new suspect"
    assert row["verdict"] not in TIMED_VERDICTS


def test_suspect_and_skipped_are_told_apart(tmp_path):
    base = base_file(tmp_path)
    new = new_file(tmp_path, "skipped")
    c = compare_runs(read_results(base), read_results(new))
    assert c.rows.set_index("rung").loc["pingpong", "verdict"] == SKIPPED


def test_the_table_shows_suspect_and_its_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    result = invoke("compare", base_file(tmp_path), new_file(tmp_path, "suspect"))
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "SUSPECT" in out and "FASTER" not in out
    # every row at 2^24 float32, block 256: the notes name rows by rung alone
    assert f"single_pass (SUSPECT): new suspect: {SUSPECT_NOTE}" in out
    assert "1 not timed (1 suspect)" in out


@pytest.mark.skipif(find_spec("matplotlib") is None, reason="needs matplotlib")
def test_a_suspect_row_is_left_out_of_the_plot(tmp_path):
    from reducebench.render.plots import plot_results

    path = new_file(tmp_path, "suspect")
    info = plot_results(read_results(path), tmp_path / "x.png")
    # one size: a bar per verified rung; single_pass's 51,000 GB/s is not one of them
    assert info.kind == "bars" and info.points == len(CASES) - 1
    assert info.skipped == 1 and info.suspect == 1
    result = invoke("plot", path, "-o", tmp_path / "y.png")
    assert result.exit_code == 0, result.output
    assert "1 suspect row(s) left out" in result.stdout
    assert "unverified" not in result.stdout


def test_auto_rows_pair_up_whatever_their_table_resolved_them_to(tmp_path):
    """Two runs of `auto` between which the tuning table changed (another block or
    loads) compare as one case: auto is the case the user asked for."""
    from reducebench.results.files import RowWriter
    from reducebench.results.schema import SCHEMA_VERSION, Record

    paths = []
    for name, block, params in (("a.csv", 256, "loads=4;l2_prefetch=0"),
                                ("b.csv", 512, "loads=4;l2_prefetch=1")):
        path = tmp_path / name
        RowWriter(path).write(Record("auto", "float32", 2**24, block, params=params,
                                     samples=3, median_us=25.0,
                                     meta={"schema_version": SCHEMA_VERSION}))
        paths.append(path)
    c = compare_runs(read_results(paths[0]), read_results(paths[1]))
    assert len(c.rows) == 1 and len(c.only_base) == 0 and len(c.only_new) == 0
