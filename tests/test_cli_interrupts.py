"""Interrupted and broken sweeps through `reducebench run`, with a fake device: SIGINT or
SIGTERM at any stage (compiling, uploading, running and verifying, sampling, writing)
stops the sweep with exit code 130, the case in progress is not written, every finished
row is kept in a valid CSV, and --resume then measures exactly the missing cases; a lost
CUDA context ends the run with the rows so far saved and the rung named. In one round,
so that each case is committed as it completes (tests/test_rounds.py: several rounds)."""

import os
import signal

import pytest
from click.testing import CliRunner

from reducebench.cli import cli
from reducebench.results.files import completed_keys, read_results


SWEEP = ["--size", "2^10,2^12", "--rung", "shfl,single_pass,cub", "--seed", "5",
         "--rounds", "1"]  # 6 cases
ALL_CASES = 6


def signal_at(count: int, signum: int):
    """A stage hook that sends the signal the `count`-th time the stage is entered."""
    def hook(entered: int) -> None:
        if entered == count:
            os.kill(os.getpid(), signum)
    return hook


def run_cli(*args):
    result = CliRunner().invoke(cli, ["run", *args])
    return result, " ".join(result.output.split())


# stage -> (the time it is entered when the signal comes, rows finished by then)
STAGES = {"upload": (2, 3),     # the second size's input: the first size's 3 rows are done
          "execute": (3, 2),    # the third case starts running
          "sample": (3, 2),     # the third case is being timed
          "write": (5, 3)}      # each case syncs its row, then its samples: the fifth sync
                                # is the third row's, which is completed first


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("stage", list(STAGES))
def test_a_signal_at_any_stage_stops_the_sweep_keeping_finished_rows(
        fake_device, tmp_path, monkeypatch, stage, signum):
    settings, opened = fake_device.settings, fake_device.opened
    at, finished = STAGES[stage]
    if stage == "write":
        real_fsync, calls = os.fsync, []

        def fsync_then_signal(fd):
            calls.append(fd)
            real_fsync(fd)
            if len(calls) == at:
                os.kill(os.getpid(), signum)
        monkeypatch.setattr(os, "fsync", fsync_then_signal)
    else:
        settings["hooks"] = {stage: signal_at(at, signum)}
    out = tmp_path / "sweep.csv"
    result, text = run_cli(*SWEEP, "--out", str(out))
    assert result.exit_code == 130, result.output
    assert f"{finished} case(s) saved in {out}" in text and "interrupted" in text
    frame = read_results(out)  # a complete, readable file holding whole rows only
    assert len(frame) == finished and set(frame["status"]) == {"ok"}
    assert opened[0].counts["execute"] <= finished + 1   # the sweep did not go on

    monkeypatch.setattr(os, "fsync", os.fsync)
    settings.pop("hooks", None)
    result, text = run_cli("--resume", str(out))
    assert result.exit_code == 0, result.output
    assert opened[1].counts["execute"] == ALL_CASES - finished
    assert len(completed_keys(read_results(out))) == ALL_CASES == len(read_results(out))


def test_a_signal_while_compiling_a_user_kernel_saves_nothing_and_exits_130(
        fake_device, tmp_path):
    settings = fake_device.settings
    settings["hooks"] = {"compile": signal_at(1, signal.SIGTERM)}
    out = tmp_path / "sweep.csv"
    result, text = run_cli("--size", "1000", "--rung", "shfl", "--kernel",
                           "examples/grid_stride_sum.cu:grid_stride_sum", "--out", str(out))
    assert result.exit_code == 130, result.output
    assert "interrupted" in text and "nothing saved" in text
    assert not out.exists()


def test_the_signal_handlers_are_put_back_after_the_run(fake_device, tmp_path):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    run_cli(*SWEEP, "--out", str(tmp_path / "a.csv"))
    assert {s: signal.getsignal(s) for s in before} == before


def test_resume_refuses_options_that_change_the_recorded_sweep(fake_device, tmp_path):
    settings = fake_device.settings
    settings["hooks"] = {"execute": signal_at(2, signal.SIGINT)}
    out = tmp_path / "sweep.csv"
    run_cli(*SWEEP, "--out", str(out))
    settings.pop("hooks")
    for extra, named in ((["--size", "2^14"], "size"), (["--rung", "shfl"], "rung"),
                         (["--inputs", "random"], "inputs"), (["--warm"], "mode")):
        result, text = run_cli("--resume", str(out), *extra)
        assert result.exit_code == 2, (extra, result.output)
        assert named in text and "differ" in text
    result, _ = run_cli("--resume", str(out), "--seed", "6")
    assert result.exit_code == 2 and "seed 5" in result.output
    result, _ = run_cli("--resume", str(out), *SWEEP, "--max-time", "0.1")
    assert result.exit_code == 0, result.output   # the same sweep, sampled differently


def test_a_lost_context_ends_the_run_with_the_rows_so_far(fake_device, tmp_path):
    settings = fake_device.settings
    settings["lose"] = {"single_pass"}
    out = tmp_path / "lost.csv"
    result, text = run_cli(*SWEEP, "--out", str(out))
    assert result.exit_code == 1
    assert "the CUDA context was lost in single_pass float32 n=1024" in text
    assert f"2 case(s) saved in {out}" in text
    frame = read_results(out)
    assert list(frame["rung"]) == ["shfl", "single_pass"]
    assert list(frame["status"]) == ["ok", "error"]


def test_a_signal_held_by_nested_deferred_blocks_is_raised_when_the_outer_one_ends():
    from reducebench.core.interrupt import Interrupted, deferred, stop_on_signals

    done = []
    with pytest.raises(Interrupted), stop_on_signals():
        with deferred():
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                done.append("inner")
            done.append("outer")   # still held: the outer block finishes its work
    assert done == ["inner", "outer"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_command_line_is_still_loading_is_one_line_and_130(signum):
    """Loading the command line takes most of a second here (pandas, rich, click): a
    signal then must not print a traceback, nor leave the exit code to the default
    handler. 0.15 s in, Python has long run the entry point, and is still importing."""
    import subprocess
    import sys
    import time

    process = subprocess.Popen([sys.executable, "-m", "reducebench", "list"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.15)
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert err.strip() == (f"reducebench: interrupted ({signal.Signals(signum).name}) while "
                           "starting; nothing was measured")
