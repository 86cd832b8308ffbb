"""The --kernel, --finish, --grid and --callable options that `run`, `check` and
`sanitize` share, and the device those commands open."""

from __future__ import annotations

import click

from reducebench.core.errors import DeviceUnavailable, UsageError
from reducebench.ladder.callables import CallableSpec, parse_callable_option
from reducebench.ladder.custom import (DEFAULT_FINISH, DEFAULT_GRID, FINISHES, GRID_FORMS,
                                       KernelSpec, parse_kernel_option, preflight,
                                       preflight_without_gpu)


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


def kernel_specs(options: dict) -> list[KernelSpec]:
    """The kernels given with --kernel (a config's [[kernel]] tables are read with it)."""
    if not options["kernels"] and (options["finish"] or options["grid"]):
        given = "--finish" if options["finish"] else "--grid"
        raise UsageError(f"{given} applies to kernels given with --kernel; none was given")
    return [parse_kernel_option(k, options["finish"], options["grid"])
            for k in options["kernels"]]


def callable_specs(options: dict) -> list[CallableSpec]:
    """The functions given with --callable (a config's [[callable]] tables come with it)."""
    return [parse_callable_option(text) for text in options.get("callables") or ()]


def user_rungs(options: dict) -> dict:
    """The settings values of the kernels and functions given, where any were."""
    return {key: specs for key, specs in (("kernels", kernel_specs(options)),
                                          ("callables", callable_specs(options))) if specs}


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
