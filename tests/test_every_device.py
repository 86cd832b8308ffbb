"""`run --device all` without a GPU: which devices a spec names, each GPU's own results
file, the child command lines (the same options and seed for every GPU), children run
one after the other (a failed child does not stop the next; an interrupted one stops
them all, its rows kept), and the GPUs side by side, matched case by case. The children
run in this process with a fake device per index (fakes.FakeCliBackend)."""

import signal
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import reducebench.device
from reducebench.measuring import each_device as every_device
from reducebench.cli import cli
from reducebench.core.errors import UsageError
from reducebench.measuring.each_device import (DeviceRun, child_argv, device_path, device_spec,
                                      devices_to_run, exit_code, run_each_device,
                                      side_by_side, single_device)
from reducebench.core.interrupt import Interrupted
from reducebench.results.files import read_results

from fakes import FakeCliBackend


# -- specs, devices and paths ------------------------------------------------------------------

@pytest.mark.parametrize("given, spec", [(0, "0"), ("3", "3"), (" All ", "all"),
                                         ("1, 0", "1,0")])
def test_a_device_spec_is_normalised(given, spec):
    assert device_spec(given) == spec


@pytest.mark.parametrize("bad, said", [("x", "expected a device index"),
                                       ("-1", "expected a device index"),
                                       ("1;2", "expected a device index"),
                                       ("all,0", "expected a device index"),
                                       ("", "empty device index"),
                                       ("0,,1", "empty device index"),
                                       ("2,2", "device 2 given more than once"),
                                       ("1, 0,1", "device 1 given more than once")])
def test_a_malformed_device_spec_is_refused(bad, said):
    with pytest.raises(UsageError, match=said):
        device_spec(bad)


def test_only_a_single_index_is_a_single_device():
    assert single_device("0") == 0 and single_device("7") == 7
    assert single_device("all") is None and single_device("0,1") is None


def test_devices_to_run():
    assert devices_to_run("all", 3) == [0, 1, 2]
    assert devices_to_run("1,0", 2) == [1, 0]
    assert devices_to_run(" 1 ", 2) == [1]
    with pytest.raises(UsageError, match="this machine has 2 GPU"):
        devices_to_run("2", 2)
    with pytest.raises(UsageError, match="no CUDA GPU"):
        devices_to_run("all", 0)


def test_each_gpu_writes_its_own_file_beside_the_given_one():
    assert device_path(Path("results/run.csv"), 1) == Path("results/run.gpu1.csv")
    assert device_path(Path("out/sweep.CSV"), 0) == Path("out/sweep.gpu0.csv")
    assert device_path(Path("noext"), 3) == Path("noext.gpu3.csv")


def test_a_child_repeats_the_options_then_takes_its_device_file_and_seed():
    argv = child_argv(["--size", "2^20", "--warm"], 1, Path("r/x.gpu1.csv"), 77)
    assert argv[1:4] == ["-m", "reducebench", "run"]
    assert argv[4:] == ["--size", "2^20", "--warm", "--device", "1", "--out",
                        "r/x.gpu1.csv", "--seed", "77"]


# -- children in turn, with fake processes -----------------------------------------------------

class FakeChild:
    """A finished child process: its exit code; `interrupt_first` makes the first wait
    raise Interrupted, as a signal arriving while the parent waits does."""

    def __init__(self, code=0, interrupt_first=None, ends_by_itself=True):
        self.returncode = None
        self.code, self.interrupt_first = code, interrupt_first
        self.ends_by_itself = ends_by_itself
        self.sent: list[int] = []

    def communicate(self, timeout=None):
        if self.interrupt_first is not None:
            signum, self.interrupt_first = self.interrupt_first, None
            raise Interrupted(signum)
        if timeout is not None and not self.ends_by_itself:
            raise subprocess.TimeoutExpired("child", timeout)
        self.returncode = self.code
        return "", None

    def poll(self):
        return self.returncode

    def send_signal(self, signum):
        self.sent.append(signum)


def launcher(children):
    launched = []

    def launch(argv, capture):
        launched.append(argv)
        return children[len(launched) - 1]
    return launch, launched


def test_every_device_runs_in_turn_with_one_seed(tmp_path):
    launch, launched = launcher([FakeChild(), FakeChild()])
    runs = run_each_device(["--size", "2^10"], [1, 0], tmp_path / "r.csv", 5, launch=launch)
    assert [r.device for r in runs] == [1, 0] and exit_code(runs) == 0
    assert [a[a.index("--device") + 1] for a in launched] == ["1", "0"]
    assert [a[a.index("--out") + 1] for a in launched] == [str(tmp_path / "r.gpu1.csv"),
                                                             str(tmp_path / "r.gpu0.csv")]
    assert {a[a.index("--seed") + 1] for a in launched} == {"5"}


def test_a_failed_gpu_does_not_stop_the_next_and_its_code_is_the_result(tmp_path):
    launch, launched = launcher([FakeChild(code=1), FakeChild(code=0)])
    runs = run_each_device([], [0, 1], tmp_path / "r.csv", 5, launch=launch)
    assert len(launched) == 2
    assert [r.exit_code for r in runs] == [1, 0] and exit_code(runs) == 1


def test_an_interrupted_child_stops_the_later_gpus(tmp_path):
    launch, launched = launcher([FakeChild(code=130), FakeChild()])
    with pytest.raises(Interrupted) as info:
        run_each_device([], [0, 1], tmp_path / "r.csv", 5, launch=launch)
    assert len(launched) == 1
    assert [r.exit_code for r in info.value.runs] == [130, None]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_this_process_alone_is_passed_to_the_child(tmp_path, monkeypatch, signum):
    monkeypatch.setattr(every_device, "GRACE_S", 0.01)
    stubborn = FakeChild(code=130, interrupt_first=signum, ends_by_itself=False)
    launch, launched = launcher([stubborn, FakeChild()])
    with pytest.raises(Interrupted):
        run_each_device([], [0, 1], tmp_path / "r.csv", 5, launch=launch)
    assert stubborn.sent == [signum] and len(launched) == 1


def test_a_child_that_stops_on_its_own_is_not_signalled_again(tmp_path):
    child = FakeChild(code=130, interrupt_first=signal.SIGINT, ends_by_itself=True)
    launch, _ = launcher([child])
    with pytest.raises(Interrupted):
        run_each_device([], [0], tmp_path / "r.csv", 5, launch=launch)
    assert child.sent == []


# -- side by side ------------------------------------------------------------------------------

def frame(rows):
    return pd.DataFrame(rows, columns=["rung", "dtype", "n", "block", "params", "status",
                                       "median_us"])


def test_cases_are_matched_by_key_across_gpus():
    gpu0 = frame([["pingpong", "float32", 1024, 256, "loads=4", "ok", 4.0],
                  ["cub", "float32", 1024, 0, float("nan"), "ok", 5.0]])
    gpu1 = frame([["cub", "float32", 1024, 0, float("nan"), "ok", 6.0],
                  ["pingpong", "float32", 1024, 256, "loads=4", "FAIL", 3.0],
                  ["pingpong", "float32", 1024, 256, "loads=2", "ok", 2.0]])
    rows = side_by_side({0: gpu0, 1: gpu1})
    assert [(r.rung, r.params) for r in rows] == [("pingpong", "loads=4"), ("cub", ""),
                                                  ("pingpong", "loads=2")]
    pingpong, cub, only_on_1 = rows
    assert cub.medians == {0: 5.0, 1: 6.0} and cub.ratio(1, 0) == pytest.approx(1.2)
    assert pingpong.statuses == {0: "ok", 1: "FAIL"}
    assert pingpong.medians[0] == 4.0 and pd.isna(pingpong.ratio(1, 0))  # a FAIL has no time
    assert pd.isna(only_on_1.ratio(1, 0))


# -- through `reducebench run` -------------------------------------------------------------------

SWEEP = ["--size", "2^10", "--rung", "shfl,cub"]


class SlowerByDevice(FakeCliBackend):
    """Device i takes (i + 1) times the base sample times, and says which it is."""

    def __init__(self, device):
        super().__init__(times=[10.0 * (device + 1)] * 3)
        self.device = device
        self.info.name = f"Fake GPU {device}"

    def device_info(self):
        return {**super().device_info(), "device": self.device, "gpu": self.info.name}


@pytest.fixture
def two_fake_gpus(monkeypatch):
    """Two GPUs; each child runs in this process through CliRunner, on its own fake."""
    opened: list[int] = []

    def open_fake(device=0):
        opened.append(device)
        return SlowerByDevice(device)

    def launch(argv, capture):
        result = CliRunner().invoke(cli, argv[3:])
        child = FakeChild(code=result.exit_code)
        child.communicate = lambda timeout=None: (setattr(child, "returncode", child.code)
                                                  or (result.stdout if capture else "", None))
        launch.outputs.append(result.output)
        return child

    launch.outputs = []
    monkeypatch.setattr(reducebench.device, "open_backend", open_fake)
    monkeypatch.setattr(reducebench.device, "gpu_count", lambda: 2)
    monkeypatch.setattr(every_device, "popen", launch)
    return opened, launch


def test_run_on_every_gpu_writes_a_file_per_gpu_and_shows_them_side_by_side(tmp_path,
                                                                          two_fake_gpus):
    opened, launch = two_fake_gpus
    out = tmp_path / "all.csv"
    result = CliRunner().invoke(cli, ["run", *SWEEP, "--device", "all", "--out", str(out)],
                                terminal_width=200)
    assert result.exit_code == 0, result.output
    assert opened == [0, 1]
    files = {d: read_results(tmp_path / f"all.gpu{d}.csv") for d in (0, 1)}
    for device, rows in files.items():
        assert list(rows["device"]) == [device, device]
        assert set(rows["gpu"]) == {f"Fake GPU {device}"}
    seeds = {int(s) for rows in files.values() for s in rows["seed"]}
    assert len(seeds) == 1  # the same inputs on every GPU
    text = " ".join(result.output.split())
    assert "the GPUs side by side: GPU 0 Fake GPU 0, GPU 1 Fake GPU 1" in text
    assert "GPU 1 / GPU 0" in text and "2.000" in text  # device 1 takes twice as long


def test_a_list_of_gpus_runs_those_in_the_order_given(tmp_path, two_fake_gpus):
    opened, _ = two_fake_gpus
    result = CliRunner().invoke(cli, ["run", *SWEEP, "--device", "1,0", "--seed", "3",
                                      "--out", str(tmp_path / "x.csv")])
    assert result.exit_code == 0, result.output
    assert opened == [1, 0]
    assert set(read_results(tmp_path / "x.gpu1.csv")["seed"]) == {3}


def test_json_from_every_gpu_is_one_list(tmp_path, two_fake_gpus):
    import json

    result = CliRunner().invoke(cli, ["run", *SWEEP, "--device", "all", "--format", "json",
                                      "--out", str(tmp_path / "j.csv")])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert sorted({(r["device"], r["rung"]) for r in rows}) == [
        (0, "cub"), (0, "shfl"), (1, "cub"), (1, "shfl")]


def test_a_device_given_twice_is_refused_before_any_gpu_runs(tmp_path, two_fake_gpus):
    opened, launch = two_fake_gpus
    result = CliRunner().invoke(cli, ["run", *SWEEP, "--device", "1,1",
                                      "--out", str(tmp_path / "one.csv")])
    assert result.exit_code == 2, result.output
    assert "device 1 given more than once" in result.stderr
    assert opened == [] and launch.outputs == [] and not (tmp_path / "one.csv").exists()


def test_an_existing_gpu_file_is_refused_before_anything_runs(tmp_path, two_fake_gpus):
    opened, _ = two_fake_gpus
    (tmp_path / "r.gpu1.csv").write_text("taken")
    result = CliRunner().invoke(cli, ["run", *SWEEP, "--device", "all",
                                      "--out", str(tmp_path / "r.csv")])
    assert result.exit_code == 2 and "r.gpu1.csv already exists" in result.output
    assert opened == []


@pytest.mark.parametrize("args, message", [
    (["--device", "x"], "expected a device index"),
    (["--device", "0,3"], "--device 3: this machine has 2 GPU(s)"),
])
def test_bad_devices_are_one_line_and_exit_2(tmp_path, two_fake_gpus, args, message):
    opened, _ = two_fake_gpus
    result = CliRunner().invoke(cli, ["run", *SWEEP, *args, "--out", str(tmp_path / "b.csv")])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output
    assert opened == []


def test_resume_opens_the_device_its_file_was_measured_on(tmp_path, two_fake_gpus):
    opened, _ = two_fake_gpus
    out = tmp_path / "s.csv"
    first = CliRunner().invoke(cli, ["run", "--size", "2^10,2^11", "--rung", "shfl",
                                     "--device", "1", "--out", str(out)])
    assert first.exit_code == 0, first.output
    read_results(out).iloc[:1].to_csv(out, index=False)  # as if stopped after one case
    opened.clear()
    resumed = CliRunner().invoke(cli, ["run", "--resume", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert opened == [1]
    assert list(read_results(out)["device"]) == [1, 1]


def test_resume_refuses_several_devices(tmp_path, two_fake_gpus):
    out = tmp_path / "r.csv"
    assert CliRunner().invoke(cli, ["run", *SWEEP, "--out", str(out)]).exit_code == 0
    result = CliRunner().invoke(cli, ["run", "--resume", str(out), "--device", "all"])
    assert result.exit_code == 2 and "one GPU's file" in result.output


def test_metrics_children_profile_on_the_device_being_measured():
    from reducebench.measuring.counters import profile_argv
    from reducebench.measuring.settings import settings_from
    from reducebench.core.dtypes import DTYPES
    from reducebench.ladder.case import Case
    from reducebench.ladder.registry import LADDER

    settings = settings_from({"device": 1, "rung": "shfl"})
    argv = profile_argv(Case(LADDER["shfl"], DTYPES["float32"], 1024, 256), settings,
                        Path("case.csv"))
    assert argv[argv.index("--device") + 1] == "1"


def test_given_options_are_repeated_for_each_child(tmp_path, two_fake_gpus):
    _, launch = two_fake_gpus
    seen = []
    original = every_device.child_argv

    def spy(options, device, out, seed):
        seen.append(list(options))
        return original(options, device, out, seed)

    import unittest.mock as mock
    with mock.patch.object(every_device, "child_argv", spy):
        result = CliRunner().invoke(cli, [
            "run", "--size", "2^10", "--rung", "shfl_unroll", "--warm", "--block", "128",
            "--param", "unroll=2", "--max-time", "0.2", "--device", "all",
            "--out", str(tmp_path / "o.csv")])
    assert result.exit_code == 0, result.output
    assert seen[0] == seen[1]
    assert seen[0] == ["--size", "2^10", "--rung", "shfl_unroll", "--block", "128", "--warm",
                       "--param", "unroll=2", "--max-time", "0.2"]


def test_run_report_on_every_gpu_writes_each_gpus_page_beside_its_file(tmp_path,
                                                                       two_fake_gpus):
    pytest.importorskip("plotly")
    pytest.importorskip("jinja2")
    result = CliRunner().invoke(cli, ["run", *SWEEP, "--device", "all", "--report",
                                      "--out", str(tmp_path / "all.csv")])
    assert result.exit_code == 0, result.output
    for device in (0, 1):
        page = (tmp_path / f"all.gpu{device}.html").read_text(encoding="utf-8")
        assert f"Fake GPU {device}" in page and f"all.gpu{device}.csv" in page
