"""The --kernel, --finish, --grid and --callable options that `run`, `check` and
`sanitize` share."""

from __future__ import annotations

import click

from reducebench.ladder.callables import CallableSpec, parse_callable_option
from reducebench.ladder.custom import (DEFAULT_FINISH, DEFAULT_GRID, FINISHES, GRID_FORMS, KernelSpec,
                                parse_kernel_option)
from reducebench.core.errors import DeviceUnavailable, UsageError


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


def compile_user_kernels(settings, backend) -> None:
    """Compile the user's kernels on the device before anything is measured: a compile
    error is the user's to fix, so it stops the run at once (exit 2) with the log."""
    from reducebench.ladder.custom import preflight

    preflight(settings.rungs, settings.dtypes, backend.compile_log)


def open_device(settings, device: int):
    """The device's backend. Without a GPU, a --kernel that does not compile is the
    error shown (NVRTC compiles without a GPU, where installed), not the missing GPU:
    the user can fix it before finding one."""
    from reducebench import device as device_layer  # looked up now: tests replace it

    try:
        return device_layer.open_backend(device)
    except DeviceUnavailable:
        compile_without_gpu(settings)
        raise


def compile_without_gpu(settings) -> None:
    """Compile the user's kernels with NVRTC (no GPU needed); UsageError with the
    compiler's message on the first that fails. Nothing where NVRTC is missing."""
    from reducebench.ladder import nvrtc
    from reducebench.ladder.custom import preflight
    from reducebench.ladder.sources import rung_expressions, rung_source

    if not any(r.origin == "user" for r in settings.rungs) or not nvrtc.available():
        return

    def compile_log(rung, dtype) -> str | None:
        done = nvrtc.compile_source(rung_source(rung), rung_expressions(rung, dtype),
                                    file_name=str(rung.source))
        return None if done.ok else done.log

    preflight(settings.rungs, settings.dtypes, compile_log)
