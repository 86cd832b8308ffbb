"""The Python API: measure a reduction from a notebook or a script, exactly as `reducebench
run` would, and get the rows the CLI writes.

    import reducebench
    result = reducebench.measure(my_sum, size=2**24, dtype="float32")
    result.record.median_us, result.record.verified
    result.to_pandas()          # one row per case, the CSV's columns

`measure` builds RunSettings from its arguments (checked as the CLI checks them: one
UsageError for anything wrong, before the GPU is touched) and calls reducebench.measuring.runner.run
on reducebench.device.open_backend(device), the function the CLI runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from reducebench.ladder.user_callables import parse_callable_option, spec_for_object
from reducebench.core import defaults
from reducebench.measuring.settings import settings_from
from reducebench.core.errors import DeviceUnavailable, UsageError
from reducebench.measuring.each_device import single_device
from reducebench.results.schema import COLUMNS, Record

KERNEL_SUFFIXES = (".cu", ".cuh")


@dataclass
class Result:
    """What `measure` returns: one Record per case (size x dtype x block)."""

    records: list[Record]

    @property
    def record(self) -> Record:
        """The one record of a single-case measurement."""
        if len(self.records) != 1:
            raise ValueError(f"{len(self.records)} records; use .records or .to_pandas()")
        return self.records[0]

    @property
    def verified(self) -> bool:
        return bool(self.records) and all(r.verified for r in self.records)

    def to_pandas(self):
        """The rows `reducebench run` writes to its CSV (Record.as_row), as a DataFrame."""
        import pandas as pd

        return pd.DataFrame([r.as_row() for r in self.records], columns=list(COLUMNS))


def measure(fn_or_kernel: Callable | str, size: int | str | list = defaults.SIZE,
            dtype: str | list = defaults.DTYPE, *, cold: bool = defaults.COLD,
            inputs: str = defaults.INPUTS, block: int | str | list = defaults.BLOCK,
            finish: str | None = None, grid: str | None = None, seed: int | None = None,
            device: int = defaults.DEVICE, label: str | None = None,
            min_samples: int = defaults.MIN_SAMPLES,
            max_noise_pct: float = defaults.MAX_NOISE_PCT,
            max_time: float = defaults.MAX_TIME_S, rounds: int = defaults.ROUNDS,
            timing: str = defaults.TIMING, timed: bool = True,
            shape: str | list | None = None) -> Result:
    """Verify and time one reduction like a rung of `reducebench run`.

    fn_or_kernel: a Python function taking the input array and returning its sum
    (docs/callables.md), "path/to/file.py:function", "module:function", a rung name
    ("cub", "vector_load", a comma list), or "FILE.cu:KERNEL" with `finish` and `grid`
    as for --kernel. size, dtype, block and timing take what --size, --dtype, --block
    and --timing take; timed=False only checks (as `reducebench check`). shape takes
    what --shape takes ("1000x33,2^20x8"), instead of size, with a row rung's name
    ("row_warp", "all" for every row rung; docs/rows.md). Raises UsageError for bad
    arguments, DeviceUnavailable without a GPU."""
    values = {"size": size, "dtype": dtype, "block": block, "inputs": inputs,
              "mode": "cold" if cold else "warm", "seed": seed, "device": device,
              "min_samples": min_samples, "max_noise_pct": max_noise_pct,
              "max_time": max_time, "rounds": rounds, "timing": timing, "timed": timed, "rung": "none",
              **_what(fn_or_kernel, finish, grid, label)}
    if shape is not None:
        values["shape"] = shape
        if size == defaults.SIZE:  # size left at its default: the shape says what to sum
            del values["size"]
    settings = settings_from(values)
    if single_device(settings.devices) is None:
        raise UsageError(f"device {device!r}: measure runs on one GPU; give its index "
                         "(`reducebench run --device all` measures every GPU)")
    backend = _open(settings.device)
    if any(r.origin == "user" for r in settings.rungs):
        from reducebench.ladder.custom import preflight

        preflight(settings.rungs, settings.dtypes, backend.compile_log)
    from reducebench.measuring.runner import run

    records: list[Record] = []
    run(settings, backend, records.append)
    return Result(records)


def _open(device: int):
    """The device's backend; without a GPU, a DeviceUnavailable worded for a Python
    caller (the command line's list of what works without a GPU is left out)."""
    from reducebench import device as device_layer  # looked up now: tests replace it

    try:
        return device_layer.open_backend(device)
    except DeviceUnavailable as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        raise DeviceUnavailable(f"reducebench.measure needs a CUDA GPU (through CuPy): "
                                f"{reason}") from None


def _what(target: Callable | str, finish: str | None, grid: str | None,
          label: str | None) -> dict:
    """The settings values that say what to measure."""
    if isinstance(target, str) and ":" in target and \
            target.rpartition(":")[0].endswith(KERNEL_SUFFIXES):
        from reducebench.ladder.custom import make_spec, spec_defaults

        path, _, name = target.rpartition(":")
        spec = make_spec(path, name.strip(), *spec_defaults(finish, grid), label,
                         f"reducebench.measure({target!r})")
        return {"kernels": [spec]}
    if finish is not None or grid is not None:
        raise UsageError("reducebench.measure: finish and grid apply to a CUDA kernel given "
                         "as 'FILE.cu:KERNEL'")
    if isinstance(target, str) and ":" in target:
        return {"callables": [parse_callable_option(target, label,
                                                    f"reducebench.measure({target!r})")]}
    if isinstance(target, str):
        if label is not None:
            raise UsageError("reducebench.measure: label applies to your own kernels and "
                             "functions, not to the built-in rungs")
        return {"rung": target}
    return {"callables": [spec_for_object(target, label)]}
