"""`check`: every chosen case run three times, untimed, and verified: the same path as `run`
(runner.run with timing off). What `sanitize` runs under each compute-sanitizer tool."""

from __future__ import annotations

from pathlib import Path

import click

from reducebench.cli._console import end
from reducebench.cli._kernels import kernel_options, open_device
from reducebench.cli._options import is_given, option, options
from reducebench.core import defaults
from reducebench.measuring.lifecycle import measure_cases
from reducebench.measuring.settings import extent_values, settings_from, user_values
from reducebench.render.console import make_console
from reducebench.results.naming import check_new_results
from reducebench.results.schema import OK, SKIPPED
from reducebench.results.store import ResultsStore


@click.command("check")
@options(option("size", default=str(defaults.CHECK_SIZE)), "shape", "dtype", "rung", "block",
         "inputs", "device", option("seed", default=defaults.CHECK_SEED, show_default=True,
                                    help="Input seed."),
         option("out", type=click.Path(), help="Also write the verdicts as a results CSV."))
@kernel_options
@click.pass_context
def check(ctx: click.Context, size: str, shape: str | None, dtype: str, rung: str,
          block: str, inputs: str, device: int, seed: int, out: str | None,
          **kernel_args) -> None:
    """Run each case three times (to catch state left behind) and verify every result,
    without timing. Exit code 1 if any case fails."""
    settings = settings_from({**extent_values(size, shape, is_given(ctx, "size")),
                              "dtype": dtype, "rung": rung, "block": block,
                              "inputs": inputs, "seed": seed, "device": device,
                              **user_values(kernel_args), "timed": False})
    if out is not None:
        check_new_results(out)
    console = make_console()
    ending = measure_cases(settings, None, lambda: open_device(settings),
                           lambda backend: ResultsStore(Path(out)) if out is not None else None,
                           on_record=lambda record: console.print(verdict_line(record)),
                           quiet=True)
    end(ending, console)


def verdict_line(record) -> str:
    extent = f"shape={record.rows}x{record.cols}" if record.finish == "rows" else f"n={record.n}"
    label = f"{record.rung} {record.dtype} {extent}" + \
        (f" block={record.block}" if record.block else "") + \
        (f" {record.params}" if record.params else "")
    if record.status == OK:
        return f"{label}: ok {record.result!r} (reference {record.reference!r})"
    if record.status == SKIPPED:
        return f"{label}: skipped ({record.error})"
    return f"{label}: [red]{record.status}[/] {record.error}"


COMMANDS = [check]
