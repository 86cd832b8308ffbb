"""Reading compute-sanitizer's reports (verify/compute_sanitizer.py) without a GPU: each kind of
error line starts a block, a block belongs to the rung whose kernel it names, the
summary gives the total, and a report without one is a tool that did not finish."""

from __future__ import annotations

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
