"""`calibrate --runs` before and around its runs (measuring/repeat.measure_repeats), with
the runs themselves faked: every refusal in its exact words before any folder or child,
what it says, and what it returns when the runs end, fail or are interrupted."""

from __future__ import annotations

import pytest

import reducebench.measuring.repeat as repeat
from reducebench.core.errors import UsageError
from reducebench.core.interrupt import Interrupted
from reducebench.measuring.each_device import DeviceRun


def measure(folder, options=("--size", "2^20"), count=3, device=0, gpus=2, said=None):
    return repeat.measure_repeats(list(options), count, folder, device, lambda: gpus,
                                  (said if said is not None else []).append)


@pytest.fixture
def runs(monkeypatch):
    """The runs' exit codes, and whether each writes its file; run_repeats faked."""
    plan = {"codes": [0, 0, 0], "writes": [True, True, True], "calls": []}
    monkeypatch.setattr("reducebench.verify.inputs.new_seed", lambda: 77)

    def fake(options, folder, count, seed, device, announce):
        plan["calls"].append((list(options), count, seed, device))
        made = []
        for index, path in enumerate(repeat.repeat_paths(folder, count)):
            run = DeviceRun(device, path, plan["codes"][index])
            announce(run)
            if plan["writes"][index]:
                path.write_text("x\n")
            made.append(run)
        return made

    monkeypatch.setattr(repeat, "run_repeats", fake)
    return plan


def refusal(*args, **kwargs) -> str:
    with pytest.raises(UsageError) as refused:
        measure(*args, **kwargs)
    return str(refused.value)


def test_options_each_run_sets_itself_are_refused(tmp_path, runs):
    said = refusal(tmp_path / "c", options=["--size", "2^20", "--out=x.csv", "--seed", "3"])
    assert said == ("--out=x.csv, --seed: calibrate sets each run's own --out, --seed and "
                    "--device; leave them out")
    assert not (tmp_path / "c").exists() and runs["calls"] == []


def test_no_gpu_or_a_device_not_there_is_refused_before_any_folder(tmp_path, runs):
    assert refusal(tmp_path / "c", gpus=0) == (
        "calibrate --runs: no CUDA GPU here; give results files made elsewhere to judge "
        "them (reducebench calibrate A.csv B.csv ...)")
    assert refusal(tmp_path / "c", device=2) == "--device 2: this machine has 2 GPU(s)"
    assert not (tmp_path / "c").exists() and runs["calls"] == []


def test_a_folder_with_files_in_it_is_refused(tmp_path, runs):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "old.csv").write_text("x\n")
    assert refusal(folder) == f"--out {folder}: the folder is not empty; give a new one"


def test_the_runs_are_said_and_their_files_returned(tmp_path, runs):
    said = []
    folder = tmp_path / "new" / "c"                   # made, parents and all
    paths, stopped = measure(folder, device=1, said=said)
    assert stopped is None
    assert paths == [folder / "run1.csv", folder / "run2.csv", folder / "run3.csv"]
    assert runs["calls"] == [(["--size", "2^20"], 3, 77, 1)]
    assert said == [f"3 runs of `reducebench run --size 2^20`, seed 77, one process each, "
                    f"into {folder}/",
                    *[f"[bold]{p}[/]" for p in paths]]
    empty = tmp_path / "empty"
    empty.mkdir()                                      # an empty folder is fine
    assert measure(empty, count=3)[0][0] == empty / "run1.csv"


def test_a_run_that_refused_its_options_or_wrote_nothing_is_one_line(tmp_path, runs):
    runs["codes"] = [0, 2, 0]
    assert refusal(tmp_path / "a") == (
        "`reducebench run` refused the options (its line above); nothing was measured in "
        f"{tmp_path / 'a' / 'run2.csv'}")
    runs["codes"], runs["writes"] = [0, 0, 1], [True, True, False]
    assert refusal(tmp_path / "b") == (f"run {tmp_path / 'b' / 'run3.csv'} wrote no results "
                                       "(exit code 1)")


def test_an_interrupt_keeps_the_files_written_and_says_so(tmp_path, monkeypatch):
    folder = tmp_path / "c"
    written = folder / "run1.csv"

    def interrupted(options, folder, count, seed, device, announce):
        written.write_text("x\n")
        exc = Interrupted(2)
        exc.runs = [DeviceRun(0, written, 0), DeviceRun(0, folder / "run2.csv", None)]
        raise exc

    monkeypatch.setattr(repeat, "run_repeats", interrupted)
    paths, stopped = measure(folder)
    assert paths == [] and stopped.kept == f"saved {written}"
    assert isinstance(stopped.interrupted, Interrupted) and stopped.resumable is None

    def after_two(options, folder, count, seed, device, announce):
        first, second = folder / "run1.csv", folder / "run2.csv"
        first.write_text("x\n")
        second.write_text("x\n")
        exc = Interrupted(2)
        exc.runs = [DeviceRun(0, first, 0), DeviceRun(0, second, 0)]
        raise exc

    monkeypatch.setattr(repeat, "run_repeats", after_two)
    folder = tmp_path / "e"
    assert measure(folder)[1].kept == f"saved {folder / 'run1.csv'}, {folder / 'run2.csv'}"

    def at_once(options, folder, count, seed, device, announce):
        raise Interrupted(2)

    monkeypatch.setattr(repeat, "run_repeats", at_once)
    assert measure(tmp_path / "d")[1].kept == "saved nothing"


def test_without_a_folder_the_runs_go_to_a_new_one_under_results(tmp_path, runs, monkeypatch):
    import re

    import reducebench.measuring.lifecycle as lifecycle

    monkeypatch.setattr(lifecycle, "RESULTS_DIR", tmp_path / "results")
    paths, _ = measure(None, count=2)
    folder = paths[0].parent
    assert folder.parent == tmp_path / "results"
    assert re.fullmatch(r"\d{8}T\d{6}Z_calibrate", folder.name), folder.name
    assert [p.name for p in paths] == ["run1.csv", "run2.csv"]
