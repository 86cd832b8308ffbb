"""`check`: every chosen case run three times, untimed, and verified: the same path as `run`
(runner.run with timing off). What `sanitize` runs under each compute-sanitizer tool."""

from __future__ import annotations

from pathlib import Path

import click

from reducebench.cli._console import make_console
from reducebench.cli._kernels import (callable_specs, compile_user_kernels, kernel_options,
                                      kernel_specs, open_device)
from reducebench.core.interrupt import EXIT_CODE as INTERRUPTED_EXIT, Interrupted, stop_on_signals
from reducebench.measuring.session import Outcome, abandon_lost_context, measure
from reducebench.measuring.settings import settings_from
from reducebench.results.naming import check_new_results
from reducebench.results.store import ResultsStore
from reducebench.verify.inputs import DEFAULT_INPUTS, INPUT_KINDS


@click.command("check")
@click.option("--size", default="1000003", show_default=True, metavar="SIZES",
              help="Elements (as for run); an awkward size by default.")
@click.option("--dtype", default="float32", show_default=True, metavar="DTYPES",
              help="Element types (as for run).")
@click.option("--rung", default="all", show_default=True, metavar="RUNGS",
              help="Rung names (comma list), all, or none (only your --kernel or "
                   "--callable).")
@click.option("--block", default="256", show_default=True, metavar="THREADS",
              help="Threads per block (as for run).")
@click.option("--inputs", type=click.Choice(INPUT_KINDS), default=DEFAULT_INPUTS,
              show_default=True, help="exact: the result must equal the exact sum.")
@click.option("--device", default=0, show_default=True, type=int, help="CUDA device index.")
@click.option("--seed", default=1234, show_default=True, type=int, help="Input seed.")
@click.option("--out", default=None, type=click.Path(),
              help="Also write the verdicts as a results CSV.")
@kernel_options
@click.pass_context
def check(ctx: click.Context, size: str, dtype: str, rung: str, block: str, inputs: str,
          device: int, seed: int, out: str | None, **kernel_args) -> None:
    """Run each case three times (to catch state left behind) and verify every result,
    without timing. Exit code 1 if any case fails."""
    settings = settings_from({"size": size, "dtype": dtype, "rung": rung, "block": block,
                              "inputs": inputs, "seed": seed, "device": device,
                              "kernels": kernel_specs(kernel_args),
                              "callables": callable_specs(kernel_args), "timed": False})
    if out is not None:
        check_new_results(out)
    console = make_console()
    store, outcome = None, Outcome()
    with stop_on_signals():
        try:
            backend = open_device(settings, device)
            compile_user_kernels(settings, backend)
            store = ResultsStore(Path(out)) if out is not None else None
            outcome = measure(settings, backend, store,
                              on_record=lambda record: console.print(verdict_line(record)))
        except Interrupted as exc:  # while opening the device or compiling
            outcome.interrupted = exc
    if outcome.interrupted is not None:
        saved = f": {store.saved()}" if store is not None else ""
        console.print(f"[yellow]interrupted[/] ({outcome.interrupted}){saved}")
        ctx.exit(INTERRUPTED_EXIT)
    if outcome.lost is not None:
        abandon_lost_context(backend)
        ctx.exit(1)
    if outcome.failed:
        ctx.exit(1)


def verdict_line(record) -> str:
    label = f"{record.rung} {record.dtype} n={record.n}" + \
        (f" block={record.block}" if record.block else "") + \
        (f" {record.params}" if record.params else "")
    if record.status == "ok":
        return f"{label}: ok {record.result!r} (reference {record.reference!r})"
    if record.status == "skipped":
        return f"{label}: skipped ({record.error})"
    return f"{label}: [red]{record.status}[/] {record.error}"


COMMANDS = [check]
