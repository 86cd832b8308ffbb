"""`calibrate`: the false-alarm rate of `compare` on this machine: runs of the same code,
every pair compared. Only parsing here: the runs come from measuring/repeat.py, the
verdicts from analysis/compare/calibration.py, the table from render/compare_table.py."""

from __future__ import annotations

from pathlib import Path

import click

from reducebench.analysis.compare.calibration import calibrate
from reducebench.analysis.compare.reading import check_threshold, samples_by_case
from reducebench.cli._console import end
from reducebench.cli._options import option, options
from reducebench.core.errors import UsageError
from reducebench.measuring.repeat import measure_repeats
from reducebench.render.compare_table import calibration_view
from reducebench.render.console import make_console
from reducebench.render.printers import show
from reducebench.results.files import read_results
from reducebench.results.naming import check_results_path


@click.command("calibrate", context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="[FILES... | -- RUN OPTIONS]")
@click.option("--runs", type=click.IntRange(2, 20), default=None,
              help="Measure first: this many runs of `reducebench run` with the options "
                   "after --, one process each, the same seed [default: 3].")
@click.option("--out", "folder", type=click.Path(path_type=Path), default=None,
              help="Folder for the runs' files (default: a new one under results/).")
@options(option("device", type=click.IntRange(0), help="The GPU the runs measure."))
@options(option("threshold", help="compare's --threshold."))
@options(option("format", help="table on screen; json to stdout (every pair's counts)."))
def calibrate_command(args: tuple[str, ...], runs: int | None, folder: Path | None,
                      device: int, threshold: float, output_format: str) -> None:
    """How often `compare` calls unchanged code FASTER or SLOWER on this machine:
    every pair of runs of the same code compared, each FASTER or SLOWER a false alarm,
    each failed regression gate a CI job that would have failed for nothing. Exit 1 if
    a gate failed.

    \b
    reducebench calibrate --runs 3 -- --size 2^20,2^24,2^28   measure 3 runs, then judge
    reducebench calibrate a.csv b.csv c.csv                   judge runs already made
    """
    check_threshold(threshold)
    if runs is not None or any(not a.endswith(".csv") for a in args) or not args:
        from reducebench import device as device_layer

        console = make_console(stderr=True)
        paths, stopped = measure_repeats(args, runs or 3, folder, device,
                                         lambda: device_layer.gpu_count(), console.print)
        if stopped is not None:
            end(stopped, console)
    else:
        if folder is not None:
            raise UsageError("--out is where measured runs go; files given are judged as "
                             "they are")
        if len(args) < 2:
            raise UsageError("give two results files or more, or --runs N to measure them")
        paths = [check_results_path(a) for a in args]
    frames = [(path, read_results(path)) for path in paths]
    samples = samples_by_case(paths, lambda line: click.echo(line, err=True))
    cal = calibrate(frames, threshold, samples)
    show(calibration_view(cal), output_format)
    if not cal.passed:
        raise click.exceptions.Exit(1)


COMMANDS = [calibrate_command]
