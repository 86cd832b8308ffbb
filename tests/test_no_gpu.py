"""Without a GPU: why (no CuPy, no driver, a driver too old for CuPy's CUDA runtime, a
driver that sees no GPU), in one short line that names what to try instead, and `info`
printing what it can, the whole reason and what works without a GPU. CuPy is replaced
by a stand-in module that fails the way the real one does (CuPy reports a missing
driver and an old one with the same cudaErrorInsufficientDriver)."""

import sys
import types

import pytest
from click.testing import CliRunner

import reducebench.device.driver as device
from reducebench.cli import cli
from reducebench.device import DriverFacts, kernel_module_version, no_gpu_reason
from reducebench.core.errors import DeviceUnavailable

INSUFFICIENT = ("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA "
                "runtime version")
NO_DEVICE = "cudaErrorNoDevice: no CUDA-capable device is detected"
RUNTIME_12_9 = 12090
WITHOUT_GPU = ("list", "show", "compare", "plot", "show-samples", "explain --from FILE",
               "shfl --model-only", "shfl --explain")


def fake_cupy(error: str, runtime: int = RUNTIME_12_9) -> types.ModuleType:
    """A CuPy whose runtime raises `error` on the first device query."""
    class CUDARuntimeError(RuntimeError):
        pass

    def get_device_count():
        raise CUDARuntimeError(error)

    module = types.ModuleType("cupy")
    module.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(
        getDeviceCount=get_device_count, runtimeGetVersion=lambda: runtime))
    return module


@pytest.fixture
def cupy_failing(monkeypatch):
    """Install a failing CuPy and choose what the driver looks like."""
    def install(error: str, facts: DriverFacts):
        monkeypatch.setitem(sys.modules, "cupy", fake_cupy(error))
        monkeypatch.setattr(device, "driver_facts", lambda: facts)
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return install


# The most a command's no-GPU line may take, "reducebench: error: " included: read at a
# glance, on one line of a wide terminal.
SHORT_LINE = 160


def unavailable() -> DeviceUnavailable:
    with pytest.raises(DeviceUnavailable) as info:
        device.import_cupy()
    return info.value


def unavailable_message() -> str:
    """The whole reason, as `info` prints it."""
    return unavailable().reason


def assert_short_line_naming_a_command(line: str) -> None:
    assert len(line) <= SHORT_LINE, (len(line), line)
    assert "\n" not in line and "`reducebench list`" in line and "`reducebench info`" in line


def test_no_driver_at_all_is_named_as_such(cupy_failing):
    cupy_failing(INSUFFICIENT, DriverFacts(library=False))
    exc = unavailable()
    message = exc.reason
    assert "no NVIDIA driver" in message and "too old" not in message
    assert "insufficient" not in message.lower()   # CuPy's misleading wording is not repeated
    assert "no NVIDIA driver" in str(exc) and "insufficient" not in str(exc).lower()
    assert_short_line_naming_a_command(f"reducebench: error: {exc}")


def test_a_kernel_module_without_its_library_is_said(cupy_failing):
    cupy_failing(INSUFFICIENT, DriverFacts(library=False, kernel_module="535.104.05"))
    message = unavailable_message()
    assert "no NVIDIA driver" in message and "535.104.05" in message


def test_a_driver_too_old_names_both_versions(cupy_failing):
    cupy_failing(INSUFFICIENT, DriverFacts(library=True, cuda_version=11040,
                                           kernel_module="470.82.01"))
    exc = unavailable()
    message = exc.reason
    assert "too old" in message and "no NVIDIA driver" not in message
    assert "470.82.01" in message and "CUDA 11.4" in message and "CUDA 12.9" in message
    assert "too old" in str(exc) and "11.4" in str(exc) and "12.9" in str(exc)
    assert_short_line_naming_a_command(f"reducebench: error: {exc}")


def test_a_driver_that_sees_no_gpu(cupy_failing):
    cupy_failing(NO_DEVICE, DriverFacts(library=True, cuda_version=12080,
                                        kernel_module="570.86.15"))
    message = unavailable_message()
    assert "sees no GPU" in message and "570.86.15" in message
    assert "too old" not in message and "no NVIDIA driver" not in message


def test_a_newer_minor_runtime_on_a_driver_that_sees_no_gpu_is_not_called_too_old():
    # CUDA 12.x runtimes run on any 12.x driver: only CuPy's own complaint says "too old"
    reason = no_gpu_reason(DriverFacts(library=True, cuda_version=12020), RUNTIME_12_9,
                           NO_DEVICE)
    assert "too old" not in reason and "sees no GPU" in reason


def test_hidden_devices_are_named():
    reason = no_gpu_reason(DriverFacts(library=True, cuda_version=12080), RUNTIME_12_9,
                           NO_DEVICE, visible_devices="")
    assert "CUDA_VISIBLE_DEVICES" in reason


def test_no_cupy_says_how_to_install_it_and_what_works(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)   # import cupy raises ImportError
    exc = unavailable()
    assert "pip install 'reducebench[cuda12]'" in exc.reason
    assert "CuPy is not installed" in str(exc)
    assert_short_line_naming_a_command(f"reducebench: error: {exc}")


def test_the_driver_library_missing_is_seen_as_no_driver(monkeypatch, tmp_path):
    def no_library(name, *args, **kwargs):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(device.ctypes, "CDLL", no_library)
    monkeypatch.setattr(device, "KERNEL_MODULE_FILE", str(tmp_path / "absent"))
    facts = device.driver_facts()
    assert facts == DriverFacts(library=False, cuda_version=0, kernel_module="")


def test_the_kernel_module_version_is_read_from_proc(tmp_path):
    version = tmp_path / "version"
    version.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  "
                       "Sat Aug 19 01:15:15 UTC 2023\nGCC version:  gcc version 12.2.0\n")
    assert kernel_module_version(str(version)) == "535.104.05"
    assert kernel_module_version(str(tmp_path / "absent")) == ""


# ---- through the command line ---------------------------------------------------------------

def test_run_without_a_driver_is_one_line_naming_the_cause(cupy_failing, tmp_path):
    cupy_failing(INSUFFICIENT, DriverFacts(library=False))
    out = tmp_path / "run.csv"
    result = CliRunner().invoke(cli, ["run", "--size", "2^10", "--rung", "shfl", "--out",
                                      str(out)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reducebench: error: ")
    assert "no NVIDIA driver" in lines[0]
    assert_short_line_naming_a_command(lines[0])
    assert not out.exists()


def broken_cupy(monkeypatch):
    class Broken:  # a CUDA install that fails inside `import cupy` with a long message
        def find_spec(self, name, path=None, target=None):
            if name == "cupy":
                raise OSError("libcudart.so.12: cannot open shared object file: " + "x" * 300)
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Broken(), *sys.meta_path])


# Every cause import_cupy names, each with the longest details its facts can give.
CAUSES = {
    "no CuPy": lambda mp, fail: mp.setitem(sys.modules, "cupy", None),
    "CuPy cannot load CUDA": lambda mp, fail: broken_cupy(mp),
    "no driver": lambda mp, fail: fail(INSUFFICIENT, DriverFacts(
        library=False, kernel_module="535.104.05")),
    "driver too old": lambda mp, fail: fail(INSUFFICIENT, DriverFacts(
        library=True, cuda_version=11040, kernel_module="470.82.01")),
    "no GPU seen": lambda mp, fail: fail(NO_DEVICE, DriverFacts(
        library=True, cuda_version=12080, kernel_module="570.86.15")),
    "GPUs hidden": lambda mp, fail: (fail(NO_DEVICE, DriverFacts(library=True, cuda_version=12080)),
                                     mp.setenv("CUDA_VISIBLE_DEVICES", "none")),
    "another CUDA error": lambda mp, fail: fail("cudaErrorUnknown: " + "y" * 300,
                                                DriverFacts(library=True, cuda_version=12080)),
}


@pytest.mark.parametrize("cause", list(CAUSES))
def test_run_without_a_gpu_stops_with_a_short_line_that_names_what_to_try(
        monkeypatch, cupy_failing, cause):
    CAUSES[cause](monkeypatch, cupy_failing)
    result = CliRunner().invoke(cli, ["run", "--size", "2^10", "--rung", "shfl"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reducebench: error: no CUDA GPU: ")
    assert_short_line_naming_a_command(lines[0])


def test_info_without_a_gpu_prints_the_versions_then_one_line(cupy_failing):
    cupy_failing(INSUFFICIENT, DriverFacts(library=True, cuda_version=11040,
                                           kernel_module="470.82.01"))
    result = CliRunner(env={"COLUMNS": "400"}).invoke(cli, ["info"])  # no cell wraps
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    for fact in ("reducebench", "Python", "CuPy", "NVRTC", "nvcc", "NVIDIA driver",
                 "470.82.01", "supports CUDA 11.4"):
        assert fact in result.stdout, fact
    for whole_reason in ("too old", "CUDA 11.4", "CUDA 12.9", "update the driver"):
        assert whole_reason in result.stdout, whole_reason
    for command in WITHOUT_GPU:
        assert command in result.stdout, command
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reducebench: error: ")
    assert "GPU part" in lines[0] and "too old" in lines[0] and len(lines[0]) <= SHORT_LINE


def test_measure_without_a_gpu_is_worded_for_python(monkeypatch):
    import reducebench

    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(DeviceUnavailable) as info:
        reducebench.measure("cub", 2**20)
    message = str(info.value)
    assert message.startswith("reducebench.measure needs a CUDA GPU")
    assert "pip install 'reducebench[cuda12]'" in message
    for command_line_only in ("shfl --model-only", "explain --from", "these work"):
        assert command_line_only not in message
