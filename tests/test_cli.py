"""The command line without a GPU: help, list, show, and every bad input to `run` caught
with one clear line and exit code 2 before any GPU is needed."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from reducebench.cli import cli
from reducebench.ladder.sources import source_path
from reducebench.ladder.registry import RUNGS
from cli_runner import invoke

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def without_cupy(monkeypatch):
    """`import cupy` fails in this process, as where CuPy is not installed (the documented
    set-up installs it, so these tests hide it rather than skip)."""
    from importlib import metadata

    monkeypatch.setitem(sys.modules, "cupy", None)
    installed = metadata.distributions
    monkeypatch.setattr(metadata, "distributions", lambda: [
        d for d in installed() if not (d.metadata["Name"] or "").lower().startswith("cupy")])


def hidden_cupy_env(tmp_path) -> dict:
    """The environment of a child process in which `import cupy` fails: a `cupy` package
    first on its path that raises ImportError, as a missing one would."""
    package = tmp_path / "hide" / "cupy"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('raise ImportError("No module named cupy")\n')
    path = os.pathsep.join(p for p in (str(package.parent), os.environ.get("PYTHONPATH"))
                           if p)
    return {**os.environ, "PYTHONPATH": path}


def assert_one_error_line(result, *fragments):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("reducebench: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def test_help_lists_the_commands():
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("run", "list", "show", "info"):
        assert command in result.output


def test_run_help_documents_the_options():
    result = invoke("run", "--help")
    assert result.exit_code == 0
    for option in ("--size", "--dtype", "--rung", "--block", "--config", "--out", "--param"):
        assert option in result.output


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0 and "0.1.0" in result.output


def test_list_shows_every_rung():
    result = invoke("list")
    assert result.exit_code == 0, result.output
    for rung in RUNGS:
        assert rung.name in result.output, rung.name


def test_show_prints_the_kernel_and_its_source():
    result = invoke("show", "shfl")
    assert result.exit_code == 0, result.output
    assert "reduce_shfl" in result.output
    assert "cuda_src/10_shfl.cu" in result.output
    assert "__global__ void reduce_shfl" in result.output
    assert "#include" in result.output and "common.cuh" in result.output
    assert "relaunch" in result.output


def test_show_a_library_rung_has_no_source():
    result = invoke("show", "cub")
    assert result.exit_code == 0, result.output
    assert "cub" in result.output and "cuda_src/" not in result.output


@pytest.mark.parametrize("rung", [r for r in RUNGS if r.source], ids=lambda r: r.name)
def test_show_works_for_every_kernel_rung(rung):
    result = invoke("show", rung.name)
    assert result.exit_code == 0, result.output
    assert rung.kernel in result.output
    assert source_path(rung.source).read_text().splitlines()[0].strip() in result.output


@pytest.mark.parametrize("args, fragments", [
    (["run", "--sise", "2^20"], ["No such option '--sise'", "--size",
                                 "`reducebench run --help`"]),
    (["runn"], ["unknown command 'runn' (did you mean run?)"]),
    (["run", "--inputs", "foo"], ["Invalid value for '--inputs'", "'exact', 'random'"]),
    (["run", "--size", "2^20", "extra"], ["unexpected extra argument (extra)"]),
    (["run", "--size"], ["'--size' requires an argument",
                         "`reducebench run --help`"]),
    (["compare", "--threshold", "x", "a.csv", "b.csv"], ["`reducebench compare --help`",
                                                         "'x' is not a valid float"]),
    (["--bogus"], ["No such option '--bogus'", "`reducebench --help`"]),
])
def test_a_mistyped_command_line_is_one_line_and_exit_2(no_gpu_allowed, args, fragments):
    assert_one_error_line(CliRunner().invoke(cli, args, prog_name="reducebench"), *fragments)


@pytest.mark.parametrize("args", [["run", "--sise", "2^20"], ["run", "--size"], ["--bogus"]])
def test_a_command_line_error_names_the_program_once_before_the_message(no_gpu_allowed, args):
    result = CliRunner().invoke(cli, args, prog_name="reducebench")
    line = result.output.strip()
    assert line.startswith("reducebench: error: ") and line.count("reducebench") == 2, line
    assert line.endswith("--help`)"), line


def test_bare_reducebench_still_shows_the_help():
    result = CliRunner().invoke(cli, [], prog_name="reducebench")
    assert result.output.startswith("Usage: reducebench")
    assert "\nCommands:\n" in result.output and "error" not in result.output


def test_show_unknown_rung_is_one_line_and_exit_2():
    assert_one_error_line(invoke("show", "nosuch"), "'nosuch'", "shfl")


@pytest.mark.parametrize("size, named", [
    ("0", "'0'"), ("-1", "'-1'"), ("2^", "'2^'"), ("2^99", "'2^99'"), ("abc", "'abc'"),
    ("1.5", "'1.5'"), ("16Q", "'16Q'"), ("", "empty size"), ("2^10,,2^12", "empty size"),
    ("2^16..2^10", "runs backwards"), ("1000..2^16", "'1000' must be a power of two")])
def test_run_rejects_a_bad_size(no_gpu_allowed, size, named):
    assert_one_error_line(invoke("run", f"--size={size}"), named)


def test_run_rejects_a_negative_size_given_as_a_separate_argument(no_gpu_allowed):
    assert_one_error_line(invoke("run", "--size", "-1"), "'-1'")


@pytest.mark.parametrize("dtype", ["int8", "float8", "half,int8"])
def test_run_rejects_a_bad_dtype(no_gpu_allowed, dtype):
    assert_one_error_line(invoke("run", "--dtype", dtype), "int8" if "int8" in dtype
                          else "float8", "float32")


@pytest.mark.parametrize("rung", ["nosuch", "shfl,nosuch", ","])
def test_run_rejects_a_bad_rung(no_gpu_allowed, rung):
    assert_one_error_line(invoke("run", "--rung", rung), "rung")


@pytest.mark.parametrize("block", ["48", "2048", "0", "abc", "256,100"])
def test_run_rejects_a_bad_block(no_gpu_allowed, block):
    assert_one_error_line(invoke("run", "--block", block), "block size", "32, 64")


@pytest.mark.parametrize("param", ["nosuch=2", "unroll", "unroll=0", "unroll=x"])
def test_run_rejects_a_bad_param(no_gpu_allowed, param):
    assert_one_error_line(invoke("run", "--param", param), "param")


@pytest.mark.parametrize("text, fragment", [
    ('size = "2^20"\nblocks = 256\n', "unknown key 'blocks'"),
    ("block = true\n", "block = True"),
    ("size = 1.5\n", "size = 1.5"),
    ('mode = "hot"\n', "mode"),
    ('size = "2^20\n', "invalid TOML"),
    ("size = [\n", "invalid TOML"),
    ("size = 0\n", "'0'"),
    ('rung = ["shfl", "nosuch"]\n', "'nosuch'"),
])
def test_run_rejects_a_bad_config(no_gpu_allowed, tmp_path, text, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    result = invoke("run", "--config", str(path))
    if "invalid TOML" in fragment or "key" in fragment or " = " in fragment:
        assert_one_error_line(result, fragment, str(path))
    else:
        assert_one_error_line(result, fragment)


def test_run_rejects_a_config_that_is_not_text(no_gpu_allowed, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_bytes(b'size = "2^20"\n\xff\xfe = 1\n')
    assert_one_error_line(invoke("run", "--config", str(path)), str(path))


def test_run_rejects_a_missing_config(no_gpu_allowed, tmp_path):
    assert_one_error_line(invoke("run", "--config", str(tmp_path / "nope.toml")),
                          "no such file")


def test_run_command_line_overrides_a_bad_config_value(no_gpu_allowed, tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text('size = "2^20"\nblock = 48\n')
    assert_one_error_line(invoke("run", "--config", str(path)), "block size 48")
    # the same config with --block given: the config's block is never used, so the
    # run gets as far as the device layer
    result = invoke("run", "--config", str(path), "--block", "128")
    assert isinstance(result.exception, AssertionError)
    assert "device layer" in str(result.exception)


def test_run_rejects_out_in_a_missing_folder(no_gpu_allowed, tmp_path):
    out = tmp_path / "missing" / "run.csv"
    assert_one_error_line(invoke("run", "--out", str(out)), "does not exist")
    assert not out.parent.exists()


def test_run_refuses_to_overwrite_results(no_gpu_allowed, tmp_path):
    out = tmp_path / "run.csv"
    out.write_text("precious")
    assert_one_error_line(invoke("run", "--out", str(out)), "already exists")
    assert out.read_text() == "precious"


def test_run_without_cupy_says_so_in_one_line(without_cupy, tmp_path):
    out = tmp_path / "run.csv"
    result = invoke("run", "--size", "2^20", "--rung", "shfl", "--out", str(out))
    assert_one_error_line(result, "CuPy")
    assert not out.exists()


def test_run_with_defaults_without_cupy_says_so_in_one_line(without_cupy, tmp_path,
                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_one_error_line(invoke("run"), "CuPy")
    assert not (tmp_path / "results").exists()


def test_info_without_cupy_prints_the_versions_then_says_so_in_one_line(without_cupy):
    result = invoke("info")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Python" in result.stdout and "not installed" in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reducebench: error: ")
    assert "CuPy" in lines[0]


def test_python_dash_m_reducebench_help():
    done = subprocess.run([sys.executable, "-m", "reducebench", "--help"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout and "run" in done.stdout


def test_the_hidden_cupy_is_hidden(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import cupy"], capture_output=True,
                          text=True, timeout=60, env=hidden_cupy_env(tmp_path))
    assert done.returncode == 1 and "ImportError" in done.stderr


def test_python_dash_m_reducebench_bad_size_exits_2_with_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "reducebench", "run", "--size", "16Q"],
                          cwd=REPO, capture_output=True, text=True, timeout=60,
                          env=hidden_cupy_env(tmp_path))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "'16Q'" in done.stderr and "Traceback" not in done.stderr


def test_run_resume_of_a_missing_file_is_one_line(no_gpu_allowed, tmp_path):
    assert_one_error_line(invoke("run", "--resume", str(tmp_path / "nope.csv")),
                          "no such file")


def test_run_resume_refuses_out(no_gpu_allowed, tmp_path):
    assert_one_error_line(invoke("run", "--resume", str(tmp_path / "a.csv"), "--out",
                                 str(tmp_path / "b.csv")), "--resume")


@pytest.mark.filterwarnings("error")      # pandas: an all-empty params column is float
def test_run_resume_of_a_finished_sweep_needs_no_gpu(no_gpu_allowed, tmp_path):
    from reducebench.results.schema import SCHEMA_VERSION, Record
    from reducebench.results.files import RowWriter

    path = tmp_path / "done.csv"
    writer = RowWriter(path)
    swept = _Options({"size": "2^10", "rung": "shfl,smem_sequential"})
    for rung in ("shfl", "smem_sequential"):
        writer.write(Record(rung, "float32", 1024, 256, samples=3, median_us=1.0,
                            meta={"schema_version": SCHEMA_VERSION, "seed": 9,
                                  "options": swept.options_json()}))
    before = path.read_text()
    result = invoke("run", "--size", "2^10", "--rung", "shfl,smem_sequential",
                    "--resume", str(path))
    assert result.exit_code == 0, result.output
    assert "nothing to do" in result.output
    assert path.read_text() == before


class _Options:
    """The `options` a results file records for a sweep given as config values."""

    def __init__(self, values: dict) -> None:
        self.values = values

    def options_json(self) -> str:
        import json

        from reducebench.measuring.settings import settings_from

        return json.dumps(settings_from(self.values).options(), sort_keys=True)
