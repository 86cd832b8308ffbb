"""The --kernel, --finish, --grid and --callable options that `run`, `check` and
`sanitize` share, and the device those commands open."""

from __future__ import annotations

import click

from reducebench.core.errors import DeviceUnavailable
from reducebench.ladder.custom import (DEFAULT_FINISH, DEFAULT_GRID, FINISHES, GRID_FORMS,
                                       preflight, preflight_without_gpu)


def kernel_options(command):
    """Adds the user-kernel options to a command."""
    for option in reversed((
        click.option("--kernel", "kernels", multiple=True, metavar="FILE.cu:NAME",
                     help="Your own kernel, measured like a rung (repeatable); see "
                          "docs/custom-kernels.md."),
        click.option("--finish", default=None, metavar="|".join(FINISHES),
                     help=f"How your kernel's partials become one value "
                          f"[default: {DEFAULT_FINISH}]."),
        click.option("--grid", default=None, metavar="RULE",
                     help=f"Your kernel's grid: {GRID_FORMS} [default: {DEFAULT_GRID}]."),
        click.option("--callable", "callables", multiple=True, metavar="FILE.py:FUNCTION",
                     help="Your Python function (or MODULE:FUNCTION) that sums a CuPy, torch "
                          "or JAX array, measured like a rung (repeatable); see "
                          "docs/callables.md."),
    )):
        command = option(command)
    return command


def open_device(settings):
    """The backend of settings.device, the user's kernels compiled on it before anything
    is measured (a compile error stops the run at once, exit 2, with the log). Without a
    GPU, a --kernel that does not compile with NVRTC is the error shown."""
    from reducebench import device as device_layer  # looked up now: tests replace it

    try:
        backend = device_layer.open_backend(settings.device)
    except DeviceUnavailable:
        preflight_without_gpu(settings.rungs, settings.dtypes)
        raise
    backend.with_ceiling = settings.timed and not settings.profile
    preflight(settings.rungs, settings.dtypes, backend.compile_log)
    return backend
