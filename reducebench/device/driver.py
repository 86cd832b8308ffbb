"""The NVIDIA driver and CuPy as this process finds them, without a GPU if need be.

When there is no GPU, `import_cupy` says why: no CuPy, no NVIDIA driver, a driver too
old for CuPy's CUDA runtime, or a driver that sees no GPU. CuPy reports the first two
alike (cudaErrorInsufficientDriver), so the driver is looked at directly: whether
libcuda loads, which CUDA version it supports (cuDriverGetVersion, which needs no GPU),
and the kernel module's version (/proc/driver/nvidia/version). A command that needs a
GPU stops with one short line (the cause, and what to try instead); `reducebench info`
prints the whole reason, its fix, and everything that works without a GPU."""


from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass

from reducebench.core.errors import DeviceUnavailable

WITHOUT_GPU = ("list, show, compare, plot, show-samples, explain --from FILE, report, "
               "shfl --model-only, shfl --explain OP, and every option and config check of "
               "run and check (and a --kernel's compile errors, where NVRTC is installed); "
               "README.md, 'Without a GPU'")
# The line a command that needs a GPU stops with: short enough to read at a glance (under
# 160 characters with "reducebench: error: "), naming what to try instead.
NO_GPU_LINE = ("no CUDA GPU: {cause}; try `reducebench list` (README: Without a GPU); "
               "`reducebench info` says why")
KERNEL_MODULE_FILE = "/proc/driver/nvidia/version"


@dataclass(frozen=True)
class DriverFacts:
    """What can be learnt about the NVIDIA driver without a GPU or CuPy."""

    library: bool                 # libcuda (the driver's user-space library) loads
    cuda_version: int = 0         # the newest CUDA it supports, e.g. 12020; 0 unknown
    kernel_module: str = ""       # e.g. 535.104.05, from /proc/driver/nvidia/version

    def describe(self) -> str:
        if not self.library:
            return "none found (libcuda cannot be loaded)"
        parts = []
        if self.kernel_module:
            parts.append(self.kernel_module)
        if self.cuda_version:
            parts.append(f"supports CUDA {cuda_version_text(self.cuda_version)}")
        return ", ".join(parts) or "libcuda loads, version unknown"


def cuda_version_text(version: int) -> str:
    """12020 -> 12.2 (CUDA's major * 1000 + minor * 10)."""
    return f"{version // 1000}.{(version % 1000) // 10}"


def _driver_library_names() -> tuple[str, ...]:
    return ("nvcuda.dll",) if sys.platform == "win32" else ("libcuda.so.1", "libcuda.so")


def driver_facts() -> DriverFacts:
    """The driver as seen from this process: a library load and a version query, both
    safe without a GPU."""
    library = None
    for name in _driver_library_names():
        try:
            library = ctypes.CDLL(name)
            break
        except OSError:
            continue
    version = 0
    if library is not None:
        value = ctypes.c_int(0)
        try:
            if library.cuDriverGetVersion(ctypes.byref(value)) == 0:
                version = value.value
        except (AttributeError, OSError):
            pass
    return DriverFacts(library=library is not None, cuda_version=version,
                       kernel_module=kernel_module_version())


def kernel_module_version(path: str | None = None) -> str:
    """The loaded NVIDIA kernel module's version, or "" (not Linux, or not loaded)."""
    try:
        with open(path or KERNEL_MODULE_FILE) as handle:
            first = handle.readline()
    except OSError:
        return ""
    words = first.split()
    for index, word in enumerate(words):  # "... Kernel Module  535.104.05  Thu ..."
        if word == "Module" and index + 1 < len(words):
            return words[index + 1]
    return ""


def no_gpu_reason(facts: DriverFacts, runtime_version: int, error: str,
                  visible_devices: str | None = None) -> str:
    """Why CUDA has no usable GPU, from the driver's facts, the CUDA runtime version CuPy
    carries (0 unknown) and the error CuPy raised: the whole reason, with its fix."""
    return _diagnosis(facts, runtime_version, error, visible_devices)[1]


def no_gpu_cause(facts: DriverFacts, runtime_version: int, error: str,
                 visible_devices: str | None = None) -> str:
    """The same, in a few words."""
    return _diagnosis(facts, runtime_version, error, visible_devices)[0]


def _diagnosis(facts: DriverFacts, runtime_version: int, error: str,
               visible_devices: str | None) -> tuple[str, str]:
    """(cause in a few words, the whole reason)."""
    if not facts.library:
        loaded = (f"; the kernel module {facts.kernel_module} is loaded, but not its "
                  "user-space library" if facts.kernel_module else "")
        return ("no NVIDIA driver",
                f"no NVIDIA driver found (libcuda cannot be loaded{loaded}), so no GPU")
    insufficient = "InsufficientDriver" in error or "insufficient" in error.lower()
    older_major = facts.cuda_version // 1000 < runtime_version // 1000
    if (facts.cuda_version and runtime_version and facts.cuda_version < runtime_version
            and (insufficient or older_major)):
        driver = f"driver {facts.kernel_module}, " if facts.kernel_module else "driver "
        versions = (cuda_version_text(facts.cuda_version), cuda_version_text(runtime_version))
        return (f"the driver is too old (CUDA {versions[0]}, CuPy's {versions[1]})",
                f"the NVIDIA driver is too old for this CuPy's CUDA runtime ({driver}"
                f"CUDA {versions[0]}; runtime CUDA {versions[1]}): update the driver, or "
                "install the CuPy of the driver's CUDA (reducebench[cuda12] for CUDA 12)")
    if visible_devices is not None and visible_devices.strip() in ("", "-1", "none"):
        return (f"CUDA_VISIBLE_DEVICES={visible_devices!r} hides every GPU",
                f"no GPU visible: CUDA_VISIBLE_DEVICES={visible_devices!r} hides them "
                f"({error})")
    if "NoDevice" in error or "no CUDA-capable device" in error:
        return ("the NVIDIA driver sees no GPU",
                f"the NVIDIA driver ({facts.describe()}) sees no GPU ({error})")
    return ("CuPy found no usable GPU",
            f"no usable CUDA GPU or driver (driver: {facts.describe()}): {error}")


def _unavailable(cause: str, reason: str) -> DeviceUnavailable:
    """The short line as the message; the whole reason for `info` and for callers that
    add their own advice."""
    exc = DeviceUnavailable(NO_GPU_LINE.format(cause=cause))
    exc.cause, exc.reason = cause, reason
    return exc


def import_cupy():
    """CuPy, or one clear DeviceUnavailable: no CuPy, no driver, a driver too old, or no
    GPU; its line says what to try instead, its `reason` the whole story."""
    try:
        import cupy
    except ImportError:
        raise _unavailable("CuPy is not installed",
                           "CuPy is not installed: pip install 'reducebench[cuda12]' (or "
                           "[cuda13])") from None
    except Exception as exc:  # a broken CUDA install raises other errors at import
        raise _unavailable("CuPy could not load CUDA",
                           f"CuPy could not load CUDA: {_first_line(exc)}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        facts = (driver_facts(), _runtime_version(cupy), _first_line(exc),
                 os.environ.get("CUDA_VISIBLE_DEVICES"))
        raise _unavailable(*_diagnosis(*facts)) from None
    if count == 0:
        raise _unavailable("the NVIDIA driver sees no GPU",
                           f"the NVIDIA driver ({driver_facts().describe()}) sees no GPU")
    return cupy


def _runtime_version(cupy) -> int:
    try:
        return int(cupy.cuda.runtime.runtimeGetVersion())
    except Exception:
        return 0


def host_facts() -> list[tuple[str, str]]:
    """What `info` can say without a GPU, as (name, value) rows: versions of Python,
    CuPy (without importing it: importing would touch CUDA), NVRTC, nvcc and the driver."""
    import platform
    import shutil
    from importlib import metadata

    from reducebench.core.version import __version__
    from reducebench.ladder import nvrtc

    cupy = [f"{d.metadata['Name']} {d.version}" for d in metadata.distributions()
            if (d.metadata["Name"] or "").lower().startswith("cupy")]
    rows = [("reducebench", __version__),
            ("Python", f"{platform.python_version()} ({platform.system()} "
                       f"{platform.machine()})"),
            ("CuPy", ", ".join(sorted(set(cupy))) or "not installed (pip install "
                                                    "'reducebench[cuda12]')"),
            ("NVRTC (compiling without a GPU)",
             "found" if nvrtc.available() else "not found (tests that compile kernels skip)"),
            ("nvcc", _nvcc_version(shutil.which("nvcc"))),
            ("NVIDIA driver", driver_facts().describe())]
    return rows


def _nvcc_version(nvcc: str | None) -> str:
    if nvcc is None:
        return "not on PATH (not needed: CuPy compiles the kernels)"
    import subprocess

    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return nvcc
    release = next((line.split("release", 1)[1].split(",")[0].strip()
                    for line in out.splitlines() if "release" in line), "")
    return f"{nvcc} (CUDA {release})" if release else nvcc


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
