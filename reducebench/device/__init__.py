"""The device layer: the only package that imports CuPy. Everything here runs on a GPU;
everything it decides (plans, tolerances, statistics) comes from the device-free core."""

from __future__ import annotations

from reducebench.errors import DeviceUnavailable


def import_cupy():
    """CuPy, or one clear DeviceUnavailable: no CuPy, no driver, or no GPU."""
    try:
        import cupy
    except ImportError:
        raise DeviceUnavailable(
            "CuPy is not installed: pip install 'reducebench[cuda12]' (or [cuda13])") from None
    except Exception as exc:  # a broken CUDA install raises other errors at import
        raise DeviceUnavailable(f"CuPy could not load CUDA: {exc}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise DeviceUnavailable(f"no usable CUDA GPU or driver: {_first_line(exc)}") from None
    if count == 0:
        raise DeviceUnavailable("no CUDA GPU found")
    return cupy


def open_backend(device: int = 0):
    from reducebench.device.backend import CupyBackend

    return CupyBackend(device)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
