"""Hardware counters without a GPU: ncu's raw CSV (captured on an H100), the command line,
the aggregation rules on rows worked out by hand, and every failure message."""

from __future__ import annotations

import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from reducebench.measuring import counters as metrics
from reducebench.core.errors import UsageError
from reducebench.results.schema import METRIC_COLUMNS, blank_metrics
from reducebench.measuring.counters import (CounterPermissionError, Kernel, MetricsError, NcuFailed, NoKernelsProfiled)

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"
STRIDED = (FIXTURES / "raw_smem_strided_h100.txt").read_text()
NO_KERNELS = (FIXTURES / "no_kernels_profiled_h100.txt").read_text()
STRIDED_LABEL = "smem_strided float32 n=16777216 block=256"
N = 2**24


# ---- the real H100 output: smem_strided, 3 samples x 3 passes ----
def test_every_profiled_kernel_is_read_past_the_programs_own_output():
    kernels = metrics.parse_raw_csv(STRIDED)
    assert [k.cells["ID"] for k in kernels] == [str(i) for i in range(9)]
    assert [k.grid for k in kernels] == ["(65536, 1, 1)", "(256, 1, 1)", "(1, 1, 1)"] * 3
    assert all("reduce_smem_strided<float, float, 256>" in k.name for k in kernels)


def test_numbers_with_thousands_separators_are_read_whole():
    first = metrics.parse_raw_csv(STRIDED)[0]
    assert first.number(metrics.DRAM_READ) == 67_115_264      # "67,115,264" in the file
    assert first.number(metrics.TIME) == 93_248               # ns
    assert first.number(metrics.REGISTERS) == 16


def test_the_last_sample_is_the_last_three_launches():
    kernels = metrics.parse_raw_csv(STRIDED)
    sample = metrics.last_sample(kernels, 3)
    assert [k.cells["ID"] for k in sample] == ["6", "7", "8"]


def test_without_a_launch_count_the_repeating_pattern_gives_the_sample():
    kernels = metrics.parse_raw_csv(STRIDED)
    assert [k.cells["ID"] for k in metrics.last_sample(kernels, None)] == ["6", "7", "8"]


def test_a_kernel_count_that_is_not_whole_samples_is_refused():
    kernels = metrics.parse_raw_csv(STRIDED)
    with pytest.raises(MetricsError, match="9 kernels.*2 launches per sample"):
        metrics.last_sample(kernels, 2)


def test_the_strided_case_aggregates_to_the_sums_of_its_last_sample():
    sample = metrics.last_sample(metrics.parse_raw_csv(STRIDED), 3)
    row = metrics.aggregate(sample, N, 4)
    # Rows 6, 7 and 8 of the fixture, added by hand.
    assert row["ncu_kernels"] == 3
    assert row["ncu_time_us"] == pytest.approx((93_152 + 3_328 + 3_008) / 1000)
    assert row["ncu_kernel_us"] == "93.2+3.3+3.0 us"
    assert row["ncu_grids"] == "65536+256+1"
    assert row["ncu_dram_read_bytes"] == 67_114_752 + 266_240 + 5_120
    assert row["ncu_dram_read_per_input"] == pytest.approx(67_386_112 / (N * 4), abs=1e-4)
    assert row["ncu_smem_ld_conflicts"] == 4_202_751 + 15_872 + 62
    assert row["ncu_smem_st_conflicts"] == 2_353_722 + 8_960 + 35
    assert row["ncu_registers"] == 16
    assert row["ncu_smem_per_block"] == 1024          # 256 floats, static
    thread_inst = 1_392_902_144 + 5_441_024 + 21_254
    warp_inst = 43_909_120 + 171_520 + 670
    assert row["ncu_threads_per_inst"] == pytest.approx(thread_inst / warp_inst, abs=1e-3)
    assert row["ncu_inst_per_elem"] == pytest.approx(thread_inst / N, abs=1e-3)
    dram_pct = (22.30 * 93_152 + 2.39 * 3_328 + 0.05 * 3_008) / 99_488
    assert row["ncu_dram_pct"] == pytest.approx(dram_pct, abs=0.01)
    # short_scoreboard 12.93 warps per issue in the main kernel, next long_scoreboard 8.37
    assert row["ncu_stall_top"] == "short_scoreboard"


# ---- aggregation rules on two small kernels worked out by hand ----
def kernel(**cells: str) -> Kernel:
    names = {"time": metrics.TIME, "dram_pct": metrics.DRAM_PCT, "threads": metrics.THREAD_INST,
             "warps": metrics.WARP_INST, "regs": metrics.REGISTERS,
             "smem_static": metrics.SMEM_STATIC, "smem_dynamic": metrics.SMEM_DYNAMIC,
             "grid": metrics.GRID_SIZE, "read": metrics.DRAM_READ}
    mapped = {names.get(k, metrics.stall_metric(k)): v for k, v in cells.items()}
    return Kernel("k", "", {"ID": "0", **mapped}, {})


MAIN = kernel(time="300", dram_pct="80", threads="6,400", warps="200", regs="32",
              smem_static="1024", smem_dynamic="512", grid="1056", read="3000",
              long_scoreboard="3", barrier="1", selected="1")
TAIL = kernel(time="100", dram_pct="40", threads="800", warps="100", regs="16",
              smem_static="128", smem_dynamic="0", grid="1", read="1000",
              long_scoreboard="0", barrier="8", selected="1")


def test_percentages_are_weighted_by_kernel_duration():
    # (80 * 300 + 40 * 100) / 400, not the plain mean 60
    assert metrics.aggregate([MAIN, TAIL], 1000, 4)["ncu_dram_pct"] == 70


def test_threads_per_instruction_is_the_ratio_of_the_summed_counts():
    # (6400 + 800) / (200 + 100) = 24; a mean of the kernels' ratios (32, 8) would be 20
    assert metrics.aggregate([MAIN, TAIL], 1000, 4)["ncu_threads_per_inst"] == 24


def test_instructions_and_bytes_are_per_input_element():
    row = metrics.aggregate([MAIN, TAIL], 1000, 4)
    assert row["ncu_inst_per_elem"] == pytest.approx(7.2)       # 7200 thread inst / 1000
    assert row["ncu_warp_inst_per_elem"] == pytest.approx(0.3)  # 300 warp inst / 1000
    assert row["ncu_dram_read_per_input"] == pytest.approx(1.0)  # 4000 bytes / (1000 * 4)


def test_the_dominant_stall_counts_stall_cycles_and_leaves_out_selected():
    # cycles = warps stalled per issue x warp instructions: long_scoreboard 3*200 = 600,
    # barrier 1*200 + 8*100 = 1000; barrier's share of the 1600 stall cycles is 62.5%
    row = metrics.aggregate([MAIN, TAIL], 1000, 4)
    assert row["ncu_stall_top"] == "barrier"
    assert row["ncu_stall_top_pct"] == 62.5


def test_launch_facts_come_from_the_first_kernel_and_durations_from_each():
    row = metrics.aggregate([MAIN, TAIL], 1000, 4)
    assert row["ncu_registers"] == 32
    assert row["ncu_smem_per_block"] == 1536
    assert row["ncu_kernel_us"] == "0.3+0.1 us"
    assert row["ncu_grids"] == "1056+1"
    assert row["ncu_time_us"] == pytest.approx(0.4)


def test_n_a_cells_are_missing_values_not_zeros():
    blank = kernel(time="100", dram_pct="n/a", threads="n/a", warps="n/a")
    row = metrics.aggregate([MAIN, blank], 1000, 4)
    assert row["ncu_dram_pct"] == 80  # only MAIN has a value
    assert metrics.parse_number("n/a") != metrics.parse_number("n/a")  # NaN


def test_values_in_scaled_units_are_brought_to_bytes_and_nanoseconds():
    scaled = Kernel("k", "", {"ID": "0", metrics.DRAM_READ: "1.5", metrics.TIME: "2"},
                    {metrics.DRAM_READ: "Mbyte", metrics.TIME: "usecond"})
    assert scaled.number(metrics.DRAM_READ) == 1_500_000
    assert scaled.number(metrics.TIME) == 2_000


def test_blank_metrics_has_every_column():
    assert list(blank_metrics()) == list(METRIC_COLUMNS)


# ---- the command line ----
def test_the_command_line_profiles_only_the_cases_range_in_the_raw_csv_page():
    argv = metrics.command_line("/opt/ncu", STRIDED_LABEL, ["run", "--profile"])
    assert argv[0] == "/opt/ncu"
    assert argv[argv.index("--nvtx-include") + 1] == f"reducebench@{STRIDED_LABEL}/"
    assert "--nvtx" in argv and "--csv" in argv
    assert argv[argv.index("--page") + 1] == "raw"
    assert argv[argv.index("--clock-control") + 1] == "none"
    requested = argv[argv.index("--metrics") + 1].split(",")
    for metric in ("gpu__time_duration.sum", "dram__bytes_read.sum",
                   "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                   "smsp__thread_inst_executed.sum",
                   "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"):
        assert metric in requested
    assert argv[-5:] == [sys.executable, "-m", "reducebench", "run", "--profile"]


@pytest.mark.parametrize("label", ["mine/v2 float32 n=1", "a@b float32 n=1"])
def test_a_label_ncu_cannot_filter_on_is_refused(label):
    with pytest.raises(UsageError, match="NVTX filter"):
        metrics.command_line("ncu", label, ["run"])


# ---- finding ncu ----
def fake_ncu(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "ncu"
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def no_default_folders(monkeypatch, tmp_path):
    monkeypatch.setattr(metrics, "NCU_FOLDERS", (str(tmp_path / "none"),))
    monkeypatch.setattr(metrics, "NCU_GLOBS", (str(tmp_path / "nsight" / "*" / "ncu"),))
    return tmp_path


def test_ncu_on_path_is_found(tmp_path, no_default_folders):
    path = fake_ncu(tmp_path / "bin")
    assert metrics.find_ncu({"PATH": str(tmp_path / "bin")}) == str(path)


def test_ncu_under_cuda_home_is_found(tmp_path, no_default_folders):
    path = fake_ncu(tmp_path / "cuda" / "bin")
    assert metrics.find_ncu({"PATH": "", "CUDA_HOME": str(tmp_path / "cuda")}) == str(path)


def test_the_newest_nsight_compute_install_is_preferred(tmp_path, no_default_folders):
    fake_ncu(tmp_path / "nsight" / "2024.1.0")
    newest = fake_ncu(tmp_path / "nsight" / "2025.3.1")
    fake_ncu(tmp_path / "nsight" / "2025.10.0").chmod(0o644)  # not executable: skipped
    assert metrics.find_ncu({"PATH": ""}) == str(newest)


def test_missing_ncu_is_one_usage_error(no_default_folders):
    with pytest.raises(UsageError) as error:
        metrics.find_ncu({"PATH": ""})
    assert error.value.exit_code == 2
    assert "ncu" in str(error.value) and "\n" not in str(error.value)


# ---- failures, from fake subprocess results ----
@dataclass
class Done:
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""


def runner_giving(result: Done | Exception, version: str = "Version 2025.3.1.0 (build 1)"):
    calls: list[tuple[list[str], float]] = []

    def run(argv, timeout):
        calls.append((list(argv), timeout))
        if argv[-1] == "--version":
            return Done(0, f"NVIDIA (R) Nsight Compute Command Line Profiler\n{version}\n")
        if isinstance(result, Exception):
            raise result
        return result

    run.calls = calls
    return run


def collect_with(result, argv=("run", "--profile"), launches=3):
    return metrics.collect(STRIDED_LABEL, list(argv), launches, N, 4, 5, ncu="/x/ncu",
                           runner=runner_giving(result))


def test_collect_returns_exactly_the_metric_columns_with_version_and_clocks():
    run = runner_giving(Done(0, STRIDED))
    row = metrics.collect(STRIDED_LABEL, ["run", "--rung", "smem_strided"], 3, N, 4, 120,
                          ncu="/x/ncu", runner=run)
    assert list(row) == list(METRIC_COLUMNS)
    assert row["ncu_version"] == "2025.3.1.0"
    assert row["ncu_clock_control"] == "none"
    assert row["ncu_dram_read_bytes"] == 67_386_112
    profiled = next(argv for argv, _ in run.calls if argv[-1] != "--version")
    assert profiled[-6:] == [sys.executable, "-m", "reducebench", "run", "--rung",
                             "smem_strided"]
    assert (profiled, 120) in run.calls


PERMISSION = ("==PROF== Connected to process 9012 (/usr/bin/python3)\n"
              "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
              "NVIDIA GPU Performance Counters on the target device 0. For instructions on "
              "enabling permissions and to get more information see "
              "https://developer.nvidia.com/ERR_NVGPUCTRPERM\n")


@pytest.mark.parametrize("returncode", [0, 1])
def test_no_permission_for_counters_says_how_to_get_it(returncode):
    with pytest.raises(CounterPermissionError) as error:
        collect_with(Done(returncode, "table\n", PERMISSION))
    message = str(error.value)
    assert "ERR_NVGPUCTRPERM" in message and "NVreg_RestrictProfilingToAdminUsers" in message


def test_a_range_that_matched_nothing_names_the_range():
    with pytest.raises(NoKernelsProfiled) as error:
        collect_with(Done(0, NO_KERNELS))
    assert f"reducebench@{STRIDED_LABEL}/" in str(error.value)


def test_a_crash_shows_the_exit_status_and_the_last_lines():
    with pytest.raises(NcuFailed) as error:
        collect_with(Done(139, "==PROF== Connected\n", "Segmentation fault (core dumped)\n"))
    assert "status 139" in str(error.value) and "Segmentation fault" in str(error.value)


def test_output_without_a_table_or_a_reason_is_a_failure_too():
    with pytest.raises(NcuFailed, match="no CSV rows.*something odd"):
        collect_with(Done(0, "something odd\n"))


def test_a_profile_that_runs_too_long_is_stopped_with_a_message():
    with pytest.raises(NcuFailed, match="within 5 s"):
        collect_with(subprocess.TimeoutExpired(["ncu"], 5))


def test_every_failure_is_one_line_with_exit_code_2():
    failures = [Done(0, "x", PERMISSION), Done(0, NO_KERNELS), Done(3, "a\nb\nc\nd\n")]
    for result in failures:
        with pytest.raises(MetricsError) as error:
            collect_with(result)
        assert "\n" not in str(error.value) and error.value.exit_code == 2


def test_an_unreadable_version_is_unknown_not_an_error():
    run = runner_giving(Done(0, STRIDED), version="garbled")
    row = metrics.collect(STRIDED_LABEL, ["run"], 3, N, 4, 5, ncu="/x/ncu", runner=run)
    assert row["ncu_version"] == "unknown"
