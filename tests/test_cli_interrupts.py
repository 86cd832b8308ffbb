"""Interrupted and broken sweeps through `reducebench run`, with a fake device: Ctrl-C
(SIGINT) or SIGTERM mid-sweep leaves a valid CSV holding every case measured so far and
says where it is; --resume then measures only the rest; a lost CUDA context ends the run
with the rows so far saved and the rung named."""

import os
import signal

import pytest
from click.testing import CliRunner

import reducebench.device
from reducebench.cli import cli
from reducebench.results import completed_keys, read_results

from fakes import FakeCliBackend

SWEEP = ["--size", "2^10,2^12", "--rung", "shfl,single_pass,cub", "--seed", "5"]  # 6 cases


@pytest.fixture
def fake_device(monkeypatch):
    """Opens a FakeCliBackend made with the keyword arguments in `settings`."""
    settings: dict = {}
    opened = []

    def open_fake(device=0):
        opened.append(FakeCliBackend(**settings))
        return opened[-1]

    monkeypatch.setattr(reducebench.device, "open_backend", open_fake)
    return settings, opened


def send_on(count: int, signum: int):
    def before_measure(measured: int) -> None:
        if measured == count:
            os.kill(os.getpid(), signum)
    return before_measure


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_sweep_leaves_a_valid_csv_of_what_was_measured(fake_device, tmp_path,
                                                                     signum):
    settings, _ = fake_device
    settings["before_measure"] = send_on(3, signum)
    out = tmp_path / "sweep.csv"
    result = CliRunner().invoke(cli, ["run", *SWEEP, "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert f"interrupted: 2 case(s) saved in {out}" in " ".join(result.output.split())
    frame = read_results(out)  # a complete, readable file: header and two whole rows
    assert list(frame["rung"]) == ["shfl", "single_pass"]
    assert set(frame["status"]) == {"ok"}


def test_the_sigterm_handler_is_put_back_after_the_run(fake_device, tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    CliRunner().invoke(cli, ["run", *SWEEP, "--out", str(tmp_path / "a.csv")])
    assert signal.getsignal(signal.SIGTERM) is before


def test_resume_after_an_interrupt_measures_only_the_missing_cases(fake_device, tmp_path):
    settings, opened = fake_device
    settings["before_measure"] = send_on(4, signal.SIGTERM)
    out = tmp_path / "sweep.csv"
    CliRunner().invoke(cli, ["run", *SWEEP, "--out", str(out)])
    assert len(read_results(out)) == 3

    settings["before_measure"] = None
    result = CliRunner().invoke(cli, ["run", *SWEEP, "--resume", str(out)])
    assert result.exit_code == 0, result.output
    measured = [event[1] for event in opened[-1].events if event[0] == "measure"]
    assert measured == ["shfl float32 n=4096 block=256",
                        "single_pass float32 n=4096 block=256 blocks_per_sm=8 l2_prefetch=0 "
                        "loads=4", "cub float32 n=4096"]
    frame = read_results(out)
    assert len(frame) == 6 and len(completed_keys(frame)) == 6
    assert set(frame["seed"]) == {5}


def test_a_lost_context_ends_the_run_with_the_rows_saved_and_the_rung_named(fake_device,
                                                                             tmp_path):
    settings, opened = fake_device
    settings["lose"] = {"single_pass"}
    out = tmp_path / "sweep.csv"
    result = CliRunner().invoke(cli, ["run", *SWEEP, "--out", str(out)])
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "the CUDA context was lost in single_pass float32 n=1024" in text
    assert f"2 case(s) saved in {out}" in text
    frame = read_results(out)
    assert list(frame["rung"]) == ["shfl", "single_pass"]
    assert list(frame["status"]) == ["ok", "error"]
    assert frame["error"].iloc[1].startswith("context lost")
    assert len([e for e in opened[0].events if e[0] == "measure"]) == 2  # nothing after it
