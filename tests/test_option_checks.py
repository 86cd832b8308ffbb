"""Options that check themselves before any GPU is needed: a stop rule that could never
stop (or never sample), from the command line or a config, and a --param that no chosen
rung takes, are one line and exit code 2."""

from pathlib import Path

import pytest
from click.testing import CliRunner

import reducebench.device
from reducebench.cli import cli
from cli_runner import invoke, one_error_line


pytestmark = pytest.mark.usefixtures("no_gpu_allowed")  # conftest.py


def refused(args, *fragments) -> str:
    """`reducebench ARGS` refused in one error line holding every fragment."""
    return one_error_line(invoke(*args), *fragments)


@pytest.mark.parametrize("option, value", [("--min-samples", "0"), ("--min-samples", "-3"),
                                           ("--max-time", "-1"), ("--max-time", "0"),
                                           ("--max-noise", "-0.5"), ("--max-noise", "0")])
def test_a_stop_rule_that_cannot_work_is_refused(option, value):
    refused(["run", option, value], option)


@pytest.mark.parametrize("line, named", [("min_samples = 0", "--min-samples"),
                                         ("max_time = -1.0", "--max-time"),
                                         ("max_noise_pct = -0.5", "--max-noise")])
def test_the_same_from_a_config(tmp_path, line, named):
    config = tmp_path / "bad.toml"
    config.write_text(line + "\n")
    refused(["run", "--config", config], named)


def test_max_noise_is_in_percent_like_the_noise_column():
    text = CliRunner().invoke(cli, ["run", "--help"]).stdout
    assert "--max-noise PCT" in text and "percent" in text


def test_a_param_no_chosen_rung_takes_is_refused_naming_the_rungs_that_do():
    refused(["run", "--rung", "shfl", "--param", "loads=4"], "--param loads",
            "vector_load")


# ---- issue 26: options checked before any GPU ------------------------------------------

@pytest.fixture
def no_multigpu_allowed(monkeypatch):
    import reducebench.device.one_process

    def forbidden(*args, **kwargs):
        raise AssertionError("the multi-GPU device layer was reached")

    monkeypatch.setattr(reducebench.device.one_process, "open_multigpu", forbidden)


def test_a_dtype_no_chosen_rung_takes_is_refused_naming_the_rungs_that_do():
    # gmem takes float32, float64 and int32 (reducebench/ladder/registry.py)
    line = refused(["run", "--rung", "gmem", "--dtype", "f16"], "--dtype float16",
                   "gmem takes float32, float64, int32", "shfl")
    assert "rungs that do: " in line and "gmem," not in line.split("rungs that do: ")[1]
    refused(["check", "--rung", "gmem,cub", "--dtype", "bf16"], "--dtype bfloat16")


def test_a_dtype_some_chosen_rungs_take_still_runs_with_skipped_rows():
    from reducebench.measuring.settings import settings_from

    s = settings_from({"rung": "gmem,shfl", "dtype": "f16"})   # shfl takes float16
    assert [r.name for r in s.rungs] == ["gmem", "shfl"]


@pytest.mark.parametrize("command", ["info", "tune"])
def test_a_negative_device_is_refused_before_the_gpu(command):
    refused([command, "--device", "-1"], "--device -1: a CUDA device index is 0 or more")


def test_tune_out_in_a_missing_folder_is_refused_before_the_gpu(tmp_path):
    refused(["tune", "--out", tmp_path / "nonexistent" / "x.toml"],
            "does not exist")


@pytest.mark.parametrize("value", ["0", "-4", "2^0..", "1Q"])
def test_multigpu_bad_bytes_is_refused_before_the_gpu(no_multigpu_allowed, value):
    refused(["multigpu", "--bytes", value], "--bytes")


@pytest.mark.parametrize("size", ["\u0663\u0662", "\uff12^24", "2^\u0663", "\uff11\uff16M",
                                  "2^10..2^20:\u0662"])
def test_non_ascii_digits_are_refused(size):
    line = refused(["run", "--size", size])
    assert any(not c.isascii() and c in line for c in size), line


# ---- folders where a file is expected: one line ------------------------------------------

@pytest.mark.parametrize("args", [["run", "--config", "{d}"], ["run", "--resume", "{d}"],
                                  ["explain", "--from", "{d}"],
                                  ["plot", "{csv}", "-o", "{d}"],
                                  ["run", "--out", "{d}"], ["check", "--out", "{d}"],
                                  ["tune", "--out", "{d}"]],
                         ids=lambda a: " ".join(a[:2]))
def test_a_folder_where_a_file_is_expected_is_one_line(tmp_path, args):
    csv = Path(__file__).resolve().parent.parent / "results" / "h100" / "sweep_a487ea9.csv"
    line = refused([a.format(d=tmp_path, csv=csv) for a in args], str(tmp_path))
    assert "folder" in line
    assert "already exists" not in line     # a folder is not a results file to protect


def test_multigpu_out_folder_is_one_line(no_multigpu_allowed, tmp_path):
    refused(["multigpu", "--out", tmp_path], "is a folder")


# ---- a user's kernel that does not compile, without a GPU ----------------------------------

@pytest.mark.parametrize("command", ["check", "run"])
def test_the_compile_error_is_shown_without_a_gpu(monkeypatch, tmp_path, command):
    from reducebench.core.errors import DeviceUnavailable
    from reducebench.ladder import nvrtc

    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")

    def no_gpu(*args, **kwargs):
        raise DeviceUnavailable("no NVIDIA driver")

    monkeypatch.setattr(reducebench.device, "open_backend", no_gpu)
    kernel = Path(__file__).parent / "fixtures" / "kernels" / "does_not_compile.cu"
    out = ["--out", str(tmp_path / "x.csv")]
    result = CliRunner().invoke(cli, [command, "--rung", "none", "--kernel",
                                      f"{kernel}:does_not_compile", *out])
    assert result.exit_code == 2, result.output
    assert "does not compile" in result.stderr and "undefined_value" in result.stderr
    assert "no NVIDIA driver" not in result.stderr


def test_check_of_a_kernel_that_compiles_still_says_there_is_no_gpu(monkeypatch):
    from reducebench.core.errors import DeviceUnavailable

    def no_gpu(*args, **kwargs):
        raise DeviceUnavailable("no NVIDIA driver")

    monkeypatch.setattr(reducebench.device, "open_backend", no_gpu)
    kernel = Path(__file__).resolve().parent.parent / "examples" / "grid_stride_sum.cu"
    result = CliRunner().invoke(cli, ["check", "--rung", "none", "--kernel",
                                      f"{kernel}:grid_stride_sum", "--finish", "atomic",
                                      "--grid", "per-sm=8"])
    assert result.exit_code == 2 and "no NVIDIA driver" in result.stderr, result.output


def test_a_bad_value_from_the_config_file_names_the_file_not_only_the_flag(tmp_path):
    config = tmp_path / "sweep.toml"
    config.write_text("max_time = -1\nsize = \"2^20\"\n")
    refused(["run", "--config", config], f"config {config}: max_time:",
                   "--max-time -1")
    # the same value typed on the command line is the command line's
    line = refused(["run", "--config", config, "--max-time", "-2"], "--max-time -2")
    assert "config" not in line


# ---- issue 40: refused before any GPU, one line each ---------------------------------------

@pytest.fixture
def reaches_the_device(monkeypatch):
    """Parsing and every check passed if the command gets as far as opening the GPU."""
    from reducebench.core.errors import ReducebenchError

    def opened(*args, **kwargs):
        raise ReducebenchError("reached the device (test)")

    monkeypatch.setattr(reducebench.device, "open_backend", opened)


@pytest.mark.parametrize("args", [["run", "--seed", "-1"], ["check", "--seed", "-1"],
                                  ["multigpu", "--seed", "-1"]], ids=lambda a: a[0])
def test_a_negative_seed_is_refused(no_multigpu_allowed, args):
    refused(args, "--seed -1: a seed is a whole number of 0 or more")


def test_a_negative_seed_from_a_config_names_the_file(tmp_path):
    config = tmp_path / "seed.toml"
    config.write_text("seed = -7\n")
    refused(["run", "--config", config], f"config {config}: seed:", "--seed -7")


# unroll_last_warp, complete_unroll and multi_elem take blocks 64-1024 (`reducebench list`)
@pytest.mark.parametrize("args, rung", [
    (["run", "--block", "32", "--rung", "unroll_last_warp"], "unroll_last_warp"),
    (["run", "--block", "32", "--rung", "shfl,complete_unroll"], "complete_unroll"),
    (["check", "--block", "32", "--rung", "multi_elem"], "multi_elem"),
    (["sanitize", "--block", "32", "--rung", "unroll_last_warp"], "unroll_last_warp"),
    (["multigpu", "--block", "32", "--rung", "unroll_last_warp"], "unroll_last_warp"),
], ids=lambda a: " ".join(a) if isinstance(a, list) else a)
def test_a_named_rung_that_takes_none_of_the_blocks_is_refused(no_multigpu_allowed, args,
                                                               rung):
    refused(args, "--block 32:", f"{rung} takes blocks 64-1024")


def test_the_same_from_a_config_names_the_file(tmp_path):
    config = tmp_path / "harris32.toml"
    config.write_text('rung = ["first_add", "unroll_last_warp"]\nblock = 32\n')
    refused(["run", "--config", config], f"config {config}: block:",
            "unroll_last_warp takes blocks 64-1024")


@pytest.mark.parametrize("args", [["--rung", "all", "--block", "32"],
                                  ["--block", "32"],
                                  ["--rung", "unroll_last_warp", "--block", "32,64"],
                                  ["--rung", "cub,auto", "--block", "32"]],
                         ids=lambda a: " ".join(a))
def test_blocks_some_cases_take_still_run_with_skipped_rows(reaches_the_device, args):
    # `all` names no rung by name; a rung that takes one of the blocks, a library and auto
    # (which choose their own) have their other rows say skipped
    refused(["run", *args], "reached the device")


def test_a_resumed_sweep_of_all_rungs_at_block_32_is_not_refused():
    import json

    from reducebench.ladder.registry import RUNGS
    from reducebench.measuring.settings import recorded_values, settings_from

    # what a results file records for `--rung all --block 32`: every name `all` meant
    names = [r.name for r in RUNGS if r.in_all and r.origin == "ladder"]
    recorded = json.dumps({"size": [1024], "dtype": ["float32"], "rung": names,
                           "block": [32], "params": {}, "mode": "cold"})
    settings = settings_from(recorded_values(recorded))
    assert "unroll_last_warp" in [r.name for r in settings.rungs]


@pytest.mark.parametrize("device, repeated", [("0,0", "device 0"), ("1,0,1", "device 1")])
def test_a_device_given_twice_is_refused(device, repeated):
    refused(["run", "--device", device], f"{repeated} given more than once")


@pytest.mark.parametrize("args", [["run", "--max-time", "inf"], ["run", "--max-time", "nan"],
                                  ["run", "--max-time", "-inf"],
                                  ["multigpu", "--max-time", "inf"]],
                         ids=lambda a: " ".join(a))
def test_a_max_time_that_never_ends_sampling_is_refused(no_multigpu_allowed, args):
    refused(args, f"--max-time {args[-1]}")


def test_an_endless_max_time_from_a_config(tmp_path):
    config = tmp_path / "forever.toml"
    config.write_text("max_time = inf\n")
    refused(["run", "--config", config], f"config {config}: max_time:")


@pytest.mark.parametrize("command", ["run", "check", "multigpu", "tune", "sanitize"])
def test_an_empty_out_is_refused(no_multigpu_allowed, command):
    refused([command, "--out", ""], "--out '': give a file name")


def test_an_empty_out_from_a_config(tmp_path):
    config = tmp_path / "nowhere.toml"
    config.write_text('out = ""\n')
    refused(["run", "--config", config], "--out '': give a file name")


# ---- an output no file can be made at: the one check of every command that writes ----------

NOWHERE = Path("/proc/reducebench_issue40")   # a folder in which no file can be created


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("args", [
    ["run", "--out", NOWHERE / "x.csv"],
    ["run", "--out", Path("/proc") / "x.csv"],
    ["check", "--out", Path("/proc") / "x.csv"],
    ["multigpu", "--out", Path("/proc") / "x.csv"],
    ["tune", "--out", Path("/proc") / "x.toml"],
    ["tune", "--records", Path("/proc") / "x.csv"],
    ["sanitize", "--out", Path("/proc") / "x.md"],
    ["plot", "{csv}", "-o", Path("/proc") / "x.png"],
    ["report", "{csv}", "-o", Path("/proc") / "r.html"],
    ["show-samples", "{csv}", "-o", Path("/proc") / "x.png"],
], ids=lambda a: f"{a[0]} {a[-2]} {a[-1]}")
def test_an_output_that_cannot_be_made_is_one_line_up_front(no_multigpu_allowed, args):
    csv = Path(__file__).resolve().parent.parent / "results" / "h100" / "compare_a_6f78c21.csv"
    if args[0] == "report":
        pytest.importorskip("jinja2")
        pytest.importorskip("plotly")
    given = [str(a).format(csv=csv) for a in args]
    line = refused(given, given[-1])
    assert "not writable" in line or "does not exist" in line


def test_the_check_makes_and_removes_its_probe_and_never_changes_a_file(tmp_path):
    from reducebench.results.naming import check_writable

    check_writable(tmp_path / "new.png", "-o", replace=True)
    assert list(tmp_path.iterdir()) == []
    kept = tmp_path / "kept.png"
    kept.write_bytes(b"an older figure")
    check_writable(kept, "-o", replace=True)
    assert kept.read_bytes() == b"an older figure"


def test_sanitize_at_block_32_gives_its_check_only_rungs_that_take_it(tmp_path, monkeypatch,
                                                                      reaches_the_device):
    import json
    import os
    import sys

    # a stand-in compute-sanitizer that records the program it was given to run
    argv_file = tmp_path / "argv.json"
    fake = tmp_path / "compute-sanitizer"
    fake.write_text(f"#!{sys.executable}\nimport json, sys\n"
                    f"json.dump(sys.argv, open({str(argv_file)!r}, 'w'))\n"
                    "print('========= ERROR SUMMARY: 0 errors')\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    result = CliRunner().invoke(cli, ["sanitize", "--block", "32", "--tool", "memcheck",
                                      "--out", str(tmp_path / "report.md")])
    assert result.exit_code == 0, result.output
    argv = json.loads(argv_file.read_text())
    child = argv[argv.index("reducebench") + 1:]
    rungs = child[child.index("--rung") + 1].split(",")
    assert "shfl" in rungs and "unroll_last_warp" not in rungs   # it takes 64-1024
    refused(child, "reached the device")    # what `check` is given, it takes
