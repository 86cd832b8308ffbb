"""`calibrate`: the false-alarm rate of `compare` on this machine: runs of the same code,
every pair compared. Only parsing here: the runs come from measuring/repeat.py, the
verdicts from analysis/compare/calibration.py, the table from render/compare_table.py."""

from __future__ import annotations

import math
from pathlib import Path

import click

from reducebench.analysis.compare.calibration import calibrate
from reducebench.render.console import make_console
from reducebench.core.errors import UsageError
from reducebench.core.interrupt import EXIT_CODE as INTERRUPTED_EXIT, Interrupted
from reducebench.measuring.repeat import OWN_OPTIONS, run_repeats
from reducebench.render import compare_table as render
from reducebench.results.files import read_results
from reducebench.results.naming import RESULTS_DIR, check_results_path, default_path
from reducebench.results.samples import load_samples
from reducebench.verify.inputs import new_seed


@click.command("calibrate", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="[FILES... | -- RUN OPTIONS]")
@click.option("--runs", type=click.IntRange(2, 20), default=None,
              help="Measure first: this many runs of `reducebench run` with the options "
                   "after --, one process each, the same seed [default: 3].")
@click.option("--out", "folder", type=click.Path(path_type=Path), default=None,
              help="Folder for the runs' files (default: a new one under results/).")
@click.option("--device", default=0, show_default=True, type=click.IntRange(0),
              help="The GPU the runs measure.")
@click.option("--threshold", default=2.0, show_default=True, type=float, metavar="PCT",
              help="compare's --threshold.")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]),
              default="table", show_default=True,
              help="table on screen; json to stdout (every pair's counts).")
@click.pass_context
def calibrate_command(ctx: click.Context, args: tuple[str, ...], runs: int | None,
                      folder: Path | None, device: int, threshold: float,
                      output_format: str) -> None:
    """How often `compare` calls unchanged code FASTER or SLOWER on this machine:
    every pair of runs of the same code compared, each FASTER or SLOWER a false alarm,
    each failed regression gate a CI job that would have failed for nothing. Exit 1 if
    a gate failed.

    \b
    reducebench calibrate --runs 3 -- --size 2^20,2^24,2^28   measure 3 runs, then judge
    reducebench calibrate a.csv b.csv c.csv                   judge runs already made
    """
    if not (threshold >= 0 and math.isfinite(threshold)):
        raise UsageError(f"--threshold {threshold:g}: expected a percentage of 0 or more")
    measuring = runs is not None or any(not a.endswith(".csv") for a in args) or not args
    if measuring:
        paths = _measure(args, runs or 3, folder, device)
    else:
        if folder is not None:
            raise UsageError("--out is where measured runs go; files given are judged as "
                             "they are")
        if len(args) < 2:
            raise UsageError("give two results files or more, or --runs N to measure them")
        paths = [check_results_path(a) for a in args]
    frames = [(path, read_results(path)) for path in paths]
    loaded = {path: load_samples(path) for path in paths}
    for run in loaded.values():
        if run.frame is None and not run.missing:  # a missing file: each row says so
            click.echo(f"reducebench: note: {run.note}; its rows are judged by the ratio "
                       "rule", err=True)
    samples = {path: run.by_case() for path, run in loaded.items()}
    cal = calibrate(frames, threshold, samples)
    if output_format == "json":
        click.echo(render.calibration_json(cal))
    else:
        make_console().print(render.calibration_table(cal))
    if not cal.passed:
        ctx.exit(1)


def _measure(options: tuple[str, ...], count: int, folder: Path | None,
             device: int) -> list[Path]:
    own = [o for o in options if o.split("=")[0] in OWN_OPTIONS]
    if own:
        raise UsageError(f"{', '.join(own)}: calibrate sets each run's own "
                         "--out, --seed and --device; leave them out")
    from reducebench.device import gpu_count

    if gpu_count() < 1:  # before any folder or child: measuring needs a GPU
        raise UsageError("calibrate --runs: no CUDA GPU here; give results files made "
                         "elsewhere to judge them (reducebench calibrate A.csv B.csv ...)")
    if device >= gpu_count():
        raise UsageError(f"--device {device}: this machine has {gpu_count()} GPU(s)")
    folder = folder or default_path(RESULTS_DIR, "calibrate").with_suffix("")
    if folder.exists() and any(folder.iterdir()):
        raise UsageError(f"--out {folder}: the folder is not empty; give a new one")
    folder.mkdir(parents=True, exist_ok=True)
    seed = new_seed()
    console = make_console(stderr=True)
    console.print(f"{count} runs of `reducebench run {' '.join(options)}`, seed {seed}, "
                  f"one process each, into {folder}/")
    try:
        runs = run_repeats(options, folder, count, seed, device,
                           announce=lambda run: console.print(f"[bold]{run.path}[/]"))
    except Interrupted as exc:
        done = [str(r.path) for r in getattr(exc, "runs", []) if r.path.exists()]
        console.print(f"[yellow]interrupted[/] ({exc}): saved {', '.join(done) or 'nothing'}")
        raise click.exceptions.Exit(INTERRUPTED_EXIT) from None
    bad = next((r for r in runs if r.exit_code == 2), None)
    if bad is not None:
        raise UsageError(f"`reducebench run` refused the options (its line above); "
                         f"nothing was measured in {bad.path}")
    missing = [r for r in runs if not r.path.exists()]
    if missing:
        raise UsageError(f"run {missing[0].path} wrote no results (exit code "
                         f"{missing[0].exit_code})")
    return [r.path for r in runs]


COMMANDS = [calibrate_command]
