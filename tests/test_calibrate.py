"""`calibrate`: runs of the same code compared pair by pair, each FASTER or SLOWER counted
as a false alarm and each failed gate named; measuring the runs in separate processes
with one seed."""

import json
from pathlib import Path

from click.testing import CliRunner

from reducebench.cli import cli
from reducebench.measuring.each_device import DeviceRun
from reducebench.measuring.repeat import repeat_argv, repeat_paths
from reducebench.results.files import RowWriter
from reducebench.results.schema import Record, medians_text

STEADY = [24.352, 24.384, 24.352, 24.320, 24.352]
JUMPY = [[7.904, 8.352, 8.800, 7.904, 8.352], [8.352, 8.800, 8.768, 8.352, 8.800],
         [8.800, 7.904, 8.352, 8.352, 7.904]]


def write_run(path: Path, run: int, slower: float = 1.0) -> Path:
    writer = RowWriter(path)
    for rung, n, rounds in (("pingpong", 2**24, [x * slower for x in STEADY]),
                            ("smem_unroll4", 2**20, JUMPY[run % 3])):
        writer.write(Record(rung=rung, dtype="float32", n=n, block=256, samples=100,
                            median_us=sorted(rounds)[2], noise_pct=0.3, rounds=5,
                            round_medians_us=medians_text(rounds),
                            meta={"schema_version": 5, "kind": "single",
                                  "run_id": f"run{run}", "gpu": "NVIDIA H100 80GB HBM3",
                                  "mode": "cold"}))
    return path


def test_three_runs_of_the_same_code_pass_with_no_false_alarm(tmp_path):
    files = [str(write_run(tmp_path / f"r{i}.csv", i)) for i in range(3)]
    result = CliRunner().invoke(cli, ["calibrate", *files, "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert [(p["base"][-6:], p["new"][-6:]) for p in doc["pairs"]] == [
        ("r0.csv", "r1.csv"), ("r0.csv", "r2.csv"), ("r1.csv", "r2.csv")]
    assert doc["cases"] == 6 and doc["false_alarms"] == 0 and doc["failed_gates"] == 0
    # the jumpy rung moves 5% between some runs: NOISY, not SLOWER
    assert sum(p["NOISY"] for p in doc["pairs"]) >= 1


def test_a_run_that_really_differs_is_a_false_alarm_and_fails_the_gate(tmp_path):
    files = [str(write_run(tmp_path / "a.csv", 0)), str(write_run(tmp_path / "b.csv", 0)),
             str(write_run(tmp_path / "c.csv", 0, slower=1.03))]
    result = CliRunner().invoke(cli, ["calibrate", *files])
    text = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    # a-c and b-c: pingpong 3% slower: 2 false alarms of 6 timed cases, 2 gates failed
    assert "false alarms: 2 of 6 timed case(s) (33.3%)" in text
    assert "the regression gate failed in 2 of 3" in text


def test_measuring_gives_each_run_its_own_file_and_one_seed(tmp_path, monkeypatch):
    import reducebench.measuring.repeat as command

    calls = []

    def fake_repeats(options, folder, count, seed, device, announce=None):
        calls.append((tuple(options), count, device))
        runs = []
        for index, path in enumerate(repeat_paths(folder, count)):
            write_run(path, index)
            runs.append(DeviceRun(device, path, 0))
        return runs

    monkeypatch.setattr(command, "run_repeats", fake_repeats)
    monkeypatch.setattr("reducebench.device.gpu_count", lambda: 1)
    result = CliRunner().invoke(cli, ["calibrate", "--runs", "3", "--out",
                                      str(tmp_path / "aa"), "--", "--size", "2^24"])
    assert result.exit_code == 0, result.output
    assert calls == [(("--size", "2^24"), 3, 0)]
    assert sorted(p.name for p in (tmp_path / "aa").glob("*.csv")) == [
        "run1.csv", "run2.csv", "run3.csv"]
    argv = repeat_argv(["--size", "2^24"], tmp_path / "run1.csv", 77, 1)
    assert argv[-9:] == ["run", "--size", "2^24", "--device", "1", "--out",
                         str(tmp_path / "run1.csv"), "--seed", "77"]


def test_measuring_without_a_gpu_is_one_line_before_any_folder_or_run(tmp_path):
    result = CliRunner().invoke(cli, ["calibrate", "--runs", "2", "--out",
                                      str(tmp_path / "aa"), "--", "--size", "2^20"])
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "aa").exists()


def test_options_calibrate_sets_itself_are_refused(tmp_path):
    for own in (["--out", "x.csv"], ["--seed", "3"], ["--device", "1"]):
        result = CliRunner().invoke(cli, ["calibrate", "--runs", "2", "--out",
                                          str(tmp_path / "d"), "--", *own])
        assert result.exit_code == 2, result.output
        assert len(result.output.strip().splitlines()) == 1 and own[0] in result.output


def test_one_file_is_not_enough(tmp_path):
    path = write_run(tmp_path / "a.csv", 0)
    result = CliRunner().invoke(cli, ["calibrate", str(path)])
    assert result.exit_code == 2 and "two results files or more" in result.output


def test_the_repeats_run_in_turn_each_into_its_own_file_with_one_seed(tmp_path):
    import sys

    from test_every_device import FakeChild, launcher
    from reducebench.measuring.repeat import run_repeats

    launch, launched = launcher([FakeChild(), FakeChild(code=1), FakeChild()])
    runs = run_repeats(["--size", "2^20"], tmp_path, 3, seed=42, device=1, launch=launch)
    assert [r.path for r in runs] == [tmp_path / f"run{i}.csv" for i in (1, 2, 3)]
    assert [r.device for r in runs] == [1, 1, 1] and [r.exit_code for r in runs] == [0, 1, 0]
    assert launched[0] == [sys.executable, "-m", "reducebench", "run", "--size", "2^20",
                           "--device", "1", "--out", str(tmp_path / "run1.csv"),
                           "--seed", "42"]
    assert {a[a.index("--seed") + 1] for a in launched} == {"42"}
    announced = []
    launch, _ = launcher([FakeChild(), FakeChild()])
    run_repeats([], tmp_path, 2, seed=1, device=0, launch=launch, announce=announced.append)
    assert [r.path.name for r in announced] == ["run1.csv", "run2.csv"]
