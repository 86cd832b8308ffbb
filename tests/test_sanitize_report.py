"""Reading compute-sanitizer's reports (verify/compute_sanitizer.py) without a GPU: each kind of
error line starts a block, a block belongs to the rung whose kernel it names, the
summary gives the total, and a report without one is a tool that did not finish; and
the pipeline around them: the rungs checked, the tool found, each tool's run logged."""

from __future__ import annotations

import os
import sys

import pytest

from reducebench.verify.compute_sanitizer import parse_report

AT_SHFL = "=========     at reduce_shfl(const float *, float *, long long)+0x1b0"


def report(*lines: str, summary: str = "========= ERROR SUMMARY: 1 error") -> str:
    return "\n".join(["========= COMPUTE-SANITIZER", *lines, summary]) + "\n"


@pytest.mark.parametrize("first", [
    "========= Invalid __global__ read of size 4 bytes",
    "========= Error: Potential RAW hazard detected at __shared__ 0x10 in block (0,0,0)",
    "========= Program hit error 719 on CUDA API call to cudaDeviceSynchronize",
    "========= Race reported between Write access and Read access at __shared__ 0x10",
    "========= Barrier divergence detected in block (0,0,0)",
    "========= Potential WAW Hazard detected at __shared__ 0x10 in block (0,0,0)"])
def test_each_kind_of_error_line_starts_a_block_of_the_rung_it_names(first):
    parsed = parse_report("memcheck", report(first, AT_SHFL, "=========     by thread (3,0,0)"))
    assert parsed.per_rung == {"shfl": [first.removeprefix("========= ")]}
    assert parsed.verdict("shfl") == "dirty (1)" and parsed.verdict("gmem") == "clean"
    assert parsed.unattributed == []


def test_blocks_are_counted_by_rung_each_with_its_first_line():
    text = report("========= Invalid __global__ read of size 4 bytes", AT_SHFL,
                  "=========     Invalid address 0x10 (not a new block: indented)",
                  "=========", "program output between the tool's lines",
                  "========= Invalid __global__ write of size 8 bytes",
                  "=========     at reduce_gmem(const float *, float *)+0x20",
                  "========= Invalid __shared__ read of size 4 bytes", AT_SHFL,
                  "========= Program hit error 1 on CUDA API call to cudaMemcpy",
                  "=========     Saved host backtrace up to driver entry point",
                  summary="========= ERROR SUMMARY: 4 errors")
    parsed = parse_report("memcheck", text)
    assert parsed.total_errors == 4
    assert parsed.per_rung == {"shfl": ["Invalid __global__ read of size 4 bytes",
                                        "Invalid __shared__ read of size 4 bytes"],
                               "gmem": ["Invalid __global__ write of size 8 bytes"]}
    assert parsed.unattributed == ["Program hit error 1 on CUDA API call to cudaMemcpy"]
    assert parsed.verdict("shfl") == "dirty (2)" and parsed.verdict("gmem") == "dirty (1)"


def test_racecheck_counts_its_errors_not_its_hazards():
    text = report("========= Error: Race reported between Write access at reduce_shfl+0x10",
                  summary="========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, "
                          "1 warning)")
    parsed = parse_report("racecheck", text)
    assert parsed.tool == "racecheck" and parsed.total_errors == 2
    assert parsed.per_rung["shfl"] == ["Error: Race reported between Write access at "
                                       "reduce_shfl+0x10"]


def test_a_report_without_a_summary_is_a_tool_that_did_not_finish():
    parsed = parse_report("synccheck", report("========= Barrier error detected", AT_SHFL,
                                              summary="========= Target application crashed"))
    assert parsed.total_errors is None
    assert parsed.verdict("shfl") == "not run" and parsed.verdict("gmem") == "not run"


def test_a_clean_report():
    parsed = parse_report("memcheck", report(summary="========= ERROR SUMMARY: 0 errors"))
    assert parsed.total_errors == 0 and parsed.per_rung == {} and parsed.unattributed == []
    assert parsed.verdict("shfl") == "clean"


# -- the pipeline of `sanitize`: which rungs, which tool, each run's log and report ------------

def test_the_rungs_checked_leave_out_libraries_and_ladder_rungs_without_the_block():
    from dataclasses import replace

    from reducebench.ladder.registry import get_rung
    from reducebench.verify.compute_sanitizer import checked_rungs

    gmem, unroll, cub = get_rung("gmem"), get_rung("unroll_last_warp"), get_rung("cub")
    dispatching = replace(get_rung("auto"), blocks=(64,))        # picks its own block
    mine = replace(unroll, name="mine", origin="user")             # the user's: always
    chosen = checked_rungs([gmem, unroll, dispatching, mine, cub], [32])
    assert [r.name for r in chosen] == ["gmem", "auto", "mine"]
    assert [r.name for r in checked_rungs([unroll], [32, 64])] == ["unroll_last_warp"]


def test_no_compute_sanitizer_on_the_path_is_one_line(tmp_path, monkeypatch):
    from reducebench.core.errors import DeviceUnavailable
    from reducebench.verify.compute_sanitizer import find_sanitizer

    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DeviceUnavailable) as refused:
        find_sanitizer()
    assert str(refused.value) == ("compute-sanitizer is not on the PATH (it ships with the "
                                  "CUDA toolkit)")


@pytest.fixture
def sanitizer(tmp_path, monkeypatch):
    fake = tmp_path / "compute-sanitizer"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return str(fake)


MY_KERNEL_ERROR = report("========= Invalid __global__ read of size 4 bytes",
                         "=========     at my_kernel(const float *)+0x10")


def test_each_tool_runs_check_with_exact_allocations_and_is_logged_and_parsed(sanitizer,
                                                                              monkeypatch):
    from dataclasses import replace
    from types import SimpleNamespace

    import reducebench.verify.compute_sanitizer as cs
    from reducebench.ladder.registry import get_rung

    ran = []

    def fake_run(command, env=None):
        ran.append((command, env[cs.EXACT_ALLOCATIONS_ENV]))
        return SimpleNamespace(stdout=MY_KERNEL_ERROR, stderr="")

    monkeypatch.setattr(cs, "run_child", fake_run)
    mine = replace(get_rung("gmem"), name="mine", kernel="my_kernel", origin="user")
    announced = []
    done = cs.run_tools(["memcheck", "racecheck"], ["--rung", "mine"], [mine],
                        on_tool=announced.append)
    assert announced == ["memcheck", "racecheck"]
    command = [sanitizer, "--tool", "memcheck", "--print-limit", "50", sys.executable, "-m",
               "reducebench", "check", "--rung", "mine"]
    assert ran[0] == (command, "1") and ran[1][0][2] == "racecheck"
    assert done.logs[0] == (f"## memcheck\n\n$ {' '.join(command)}\n\n```\n"
                            f"{MY_KERNEL_ERROR}\n```\n")
    assert [r.tool for r in done.reports] == ["memcheck", "racecheck"]
    assert done.reports[0].per_rung == {"mine": ["Invalid __global__ read of size 4 bytes"]}
    assert done.interrupted is None and done.tool == ""


def test_a_signal_during_a_tool_stops_the_run_naming_the_tool(sanitizer, monkeypatch):
    from types import SimpleNamespace

    import reducebench.verify.compute_sanitizer as cs
    from reducebench.core.interrupt import Interrupted

    def fake_run(command, env=None):
        if command[2] == "racecheck":
            raise Interrupted(2)
        return SimpleNamespace(stdout=report(), stderr="")

    monkeypatch.setattr(cs, "run_child", fake_run)
    done = cs.run_tools(["memcheck", "racecheck", "synccheck"], [], [])
    assert isinstance(done.interrupted, Interrupted) and done.tool == "racecheck"
    assert len(done.reports) == 1 and len(done.logs) == 1
