"""The device layer: the only package that imports CuPy. Everything here runs on a GPU;
everything it decides (plans, tolerances, statistics) comes from the device-free core.

The driver and CuPy as found (driver.py) are re-exported here; `open_backend` and
`gpu_count` are what the rest of the program calls, and what tests replace."""

from __future__ import annotations

from reducebench.device.driver import (KERNEL_MODULE_FILE, WITHOUT_GPU, DriverFacts,
                                       cuda_version_text, driver_facts, host_facts,
                                       import_cupy, kernel_module_version, no_gpu_cause,
                                       no_gpu_reason)

__all__ = ["KERNEL_MODULE_FILE", "WITHOUT_GPU", "DriverFacts", "cuda_version_text",
           "driver_facts", "gpu_count", "host_facts", "import_cupy", "kernel_module_version",
           "no_gpu_cause", "no_gpu_reason", "open_backend"]


def gpu_count() -> int:
    """How many GPUs this process sees (CUDA_VISIBLE_DEVICES applies), or one clear
    DeviceUnavailable."""
    return int(import_cupy().cuda.runtime.getDeviceCount())


def open_backend(device: int = 0):
    from reducebench.device.cupy_backend import CupyBackend

    return CupyBackend(device)
