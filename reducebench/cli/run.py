"""`run`: measure rungs over sizes, dtypes and block sizes; a table on screen, a CSV kept."""

from __future__ import annotations

import json
import math
import signal
from pathlib import Path

import click
from click.core import ParameterSource
from rich.console import Console

from reducebench.cli._console import make_console
from reducebench.cli._kernels import compile_user_kernels, kernel_options, kernel_specs
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from reducebench.config import load_config, settings_from
from reducebench.errors import UsageError
from reducebench.report import tables
from reducebench.results import (ResultsWriter, check_writable, completed_keys,
                                 default_path, read_results)
from reducebench.runner import ContextLost, expand_cases, missing_cases, run

RESULTS_DIR = Path("results")
# option name -> config key (same meaning in a TOML file)
_CONFIG_KEYS = {"size": "size", "dtype": "dtype", "rung": "rung", "block": "block",
                "out": "out", "device": "device", "seed": "seed", "param": "params",
                "min_samples": "min_samples", "max_noise": "max_noise",
                "max_time": "max_time"}


def _merged_values(ctx: click.Context, options: dict) -> dict:
    """Config values, overridden by options given on the command line."""
    values = dict(load_config(options["config"])) if options["config"] else {}
    values.pop("description", None)
    for option, key in _CONFIG_KEYS.items():
        given = ctx.get_parameter_source(option) != ParameterSource.DEFAULT
        if given or key not in values:
            value = options[option]
            if option == "param":
                value = list(value)
                if not value:
                    continue
            if value is not None:
                values[key] = value
    if ctx.get_parameter_source("cold") != ParameterSource.DEFAULT or "mode" not in values:
        values["mode"] = "cold" if options["cold"] else "warm"
    values["profile"] = options["profile"]
    values["kernels"] = kernel_specs(options, values, options["config"])
    values.pop("kernel", None)
    return values


class _Interrupted(Exception):
    pass


def _raise_interrupted(signum, frame):  # SIGTERM behaves like Ctrl-C: keep what is saved
    raise _Interrupted()


@click.command("run")
@click.option("--size", default="2^24", show_default=True,
              help="Elements: 2^24, 1<<24, 16M, 16777216, comma lists, ranges 2^10..2^28[:step].")
@click.option("--dtype", default="float32", show_default=True,
              help="float32, float64, int32, float16, bfloat16 (comma list).")
@click.option("--rung", default="all", show_default=True, help="Rung names (comma list) or all.")
@click.option("--block", default="256", show_default=True,
              help="Threads per block: powers of two 32..1024 (comma list).")
@click.option("--cold/--warm", default=True, show_default=True,
              help="Flush L2 (by reading) before every sample, or not.")
@click.option("--config", type=click.Path(dir_okay=False), default=None,
              help="TOML file setting any of these options (see configs/).")
@click.option("--out", default=None, help="CSV path; default: a new file under results/.")
@click.option("--device", default=0, show_default=True, type=int, help="CUDA device index.")
@click.option("--seed", default=None, type=int, help="Input seed (default: random, recorded).")
@click.option("--param", multiple=True,
              help="Rung parameter values to sweep, e.g. --param unroll=2,4,8 (repeatable).")
@click.option("--min-samples", default=10, show_default=True, type=int)
@click.option("--max-noise", default=0.005, show_default=True, type=float,
              help="Stop sampling once stdev/mean is below this (fraction).")
@click.option("--max-time", default=0.5, show_default=True, type=float,
              help="Seconds of sampling per case at most.")
@click.option("--profile", is_flag=True,
              help="Run each case 3 times without the statistics loop (clean Nsight timeline).")
@click.option("--resume", type=click.Path(dir_okay=False), default=None,
              help="Finish an interrupted sweep: measure only the cases missing from FILE "
                   "(same options as the interrupted run), appending to it.")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]),
              default="table", show_default=True, help="json: print the records to stdout.")
@kernel_options
@click.pass_context
def run_command(ctx: click.Context, **options) -> None:
    """Measure the ladder: compile, verify and time every rung."""
    settings = settings_from(_merged_values(ctx, options))
    cases = expand_cases(settings)
    resume = Path(options["resume"]) if options["resume"] else None
    if resume is not None:
        if settings.out is not None:
            raise UsageError("--resume appends to its own file; leave out --out")
        cases, settings.seed = _resume(resume, cases, settings.seed)
        settings.out = resume
        if not cases:
            click.echo(f"nothing to do: {resume} holds every case", err=True)
            return
    elif settings.out is not None:
        check_writable(settings.out)

    from reducebench.device import open_backend

    console = make_console(stderr=options["output_format"] == "json")
    backend = open_backend(settings.device)
    backend.timer.hold = not settings.profile
    compile_user_kernels(settings, backend)
    path = settings.out or default_path(RESULTS_DIR, backend.info.name)
    if settings.out is None:
        RESULTS_DIR.mkdir(exist_ok=True)
    writer = ResultsWriter(path, append=resume is not None)
    records = []
    previous_term = signal.signal(signal.SIGTERM, _raise_interrupted)
    progress = Progress(TextColumn("{task.description}"), BarColumn(),
                        TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                        TextColumn("left"), TimeRemainingColumn(), console=console,
                        transient=True)
    try:
        with progress:
            task = progress.add_task("starting", total=len(cases))

            def on_case(case, index, total):
                progress.update(task, completed=index, description=case.label)

            def write(record):
                writer.write(record)
                records.append(record)

            run(settings, backend, write, on_case, cases=cases)
            progress.update(task, completed=len(cases))
    except (KeyboardInterrupt, _Interrupted):
        _render(console, records, options["output_format"])
        console.print(f"[yellow]interrupted[/]: {writer.rows} case(s) saved in {path}")
        ctx.exit(130)
    except ContextLost as exc:
        _render(console, records, options["output_format"])
        console.print(f"[red]the CUDA context was lost[/] in {exc}; "
                      f"{writer.rows} case(s) saved in {path}")
        abandon_lost_context(backend)
        ctx.exit(1)
    finally:
        signal.signal(signal.SIGTERM, previous_term)
    _render(console, records, options["output_format"])
    failed = [r for r in records if r.status in ("FAIL", "error")]
    console.print(f"{writer.rows} case(s) written to {path}")
    if failed:
        console.print(f"[bold red]{len(failed)} case(s) failed[/]: "
                      + ", ".join(f"{r.rung} {r.dtype} n={r.n}" for r in failed[:10]))
        ctx.exit(1)


def abandon_lost_context(backend, exit_code: int = 1) -> None:
    """A real device ends the process here (its teardown would only print tracebacks);
    a fake one has nothing to abandon."""
    abandon = getattr(backend, "abandon", None)
    if abandon is not None:
        abandon(exit_code)


def _resume(path: Path, cases, seed):
    """The cases still to measure, and the seed the interrupted run drew its inputs from."""
    frame = read_results(path)
    done = completed_keys(frame)
    remaining = missing_cases(cases, done)
    seeds = frame["seed"].dropna().unique() if "seed" in frame else []
    if seed is None and len(seeds):
        seed = int(seeds[0])
    click.echo(f"resuming {path}: {len(cases) - len(remaining)} of {len(cases)} case(s) "
               f"already measured, {len(remaining)} to go", err=True)
    return remaining, seed


def _render(console: Console, records, output_format: str) -> None:
    if output_format == "json":
        rows = [r.as_row() for r in records]
        click.echo(json.dumps(rows, default=_json_default, indent=1))
        return
    for t in tables(records):
        console.print(t)


def _json_default(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


COMMANDS = [run_command]
