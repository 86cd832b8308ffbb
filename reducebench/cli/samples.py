"""`show-samples`: one run's raw samples, case by case: a summary line each, and a figure
of the samples over time and as a histogram. Formatting only; the numbers come from
reducebench.analysis.samples, the figure from reducebench.render.samples_plot."""

from __future__ import annotations

import math
import os
from pathlib import Path

import click
from rich.table import Table

from reducebench.cli._console import make_console
from reducebench.core.errors import UsageError
from reducebench.analysis.samples import case_label, matches, summarize_samples
from reducebench.results.samples import (SAMPLES_SUFFIX, KEY_COLUMNS, case_key, read_samples,
                                         samples_path)


def _samples_file(path: Path) -> Path:
    """A samples file as given, or the samples file of a results CSV."""
    if path.name.lower().endswith(SAMPLES_SUFFIX):
        return path
    beside = samples_path(path)
    return beside if beside.exists() else path


def default_figure(samples_file: Path) -> Path:
    """`run.samples.csv` -> `run.samples.png`, or `run.samples_1.png`, ... : never an
    existing file."""
    stem = samples_file.name[:-len(".csv")] if samples_file.name.endswith(".csv") \
        else samples_file.stem
    candidate = samples_file.with_name(f"{stem}.png")
    suffix = 1
    while candidate.exists():
        candidate = samples_file.with_name(f"{stem}_{suffix}.png")
        suffix += 1
    return candidate


def _check_out(out: Path) -> None:
    if out.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"--out {out}: the figure is a PNG or SVG; give a name ending in "
                         ".png or .svg")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"--out {out}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise UsageError(f"--out {out}: not writable")


def _number(value: float, digits: int = 3) -> str:
    return "-" if not math.isfinite(value) else f"{value:.{digits}f}"


def _signed(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{value:+.2f}"


@click.command("show-samples")
@click.argument("file", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--case", "patterns", multiple=True, metavar="TEXT",
              help="Only cases matching every word of TEXT: a rung or dtype, n=SIZE, "
                   "block=B, or a parameter k=v (e.g. --case 'vector_load n=2^20'). "
                   "Repeat for more cases.")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Figure to write, PNG or SVG by suffix (an existing file is replaced); "
                   "default: next to FILE as <name>.samples.png, never replacing a file.")
@click.option("--no-plot", is_flag=True, help="The summary only; no figure, no matplotlib.")
def show_samples_command(file: Path, patterns: tuple[str, ...], out: Path | None,
                         no_plot: bool) -> None:
    """A run's raw samples, case by case: count, kept, median, min, max, noise and drift
    (median of the last third over the first third), and a figure of the samples over
    time and as a histogram. FILE is a samples file (<run>.samples.csv) or the results
    CSV it belongs to."""
    from reducebench.render import samples_plot

    path = _samples_file(file)
    frame = read_samples(path)
    if not len(frame):
        raise UsageError(f"{path}: no samples in the file (a header only)")
    if out is not None:
        if no_plot:
            raise UsageError("--out and --no-plot: choose one")
        _check_out(out)
    if not no_plot:
        samples_plot.require_matplotlib()

    cases = []
    for key, rows in frame.groupby(list(KEY_COLUMNS), sort=False):
        key = case_key(*key)
        if not patterns or any(matches(key, p) for p in patterns):
            cases.append((key, rows))
    if not cases:
        wanted = " or ".join(repr(p) for p in patterns)
        present = frame.groupby(list(KEY_COLUMNS)).ngroups
        raise UsageError(f"{path}: no case matches {wanted} ({present} case(s) in the file)")

    _print_summary(path, cases)
    if no_plot:
        return
    if len(cases) > samples_plot.MAX_CASES:
        if out is not None:
            raise UsageError(f"{len(cases)} cases match; a figure holds at most "
                             f"{samples_plot.MAX_CASES}: narrow them with --case")
        click.echo(f"no figure: {len(cases)} cases; choose at most "
                   f"{samples_plot.MAX_CASES} with --case")
        return
    target = out if out is not None else default_figure(path)
    existed = target.exists()
    info = samples_plot.plot_samples([(case_label(k), rows) for k, rows in cases], target,
                                     title=path.name)
    click.echo(f"{'replaced' if existed else 'wrote'} {info.path} ({info.cases} case(s), "
               f"{info.samples} sample(s))")


def _print_summary(path: Path, cases) -> None:
    table = Table(title=str(path), title_justify="left")
    for column in ("case", "phase", "count", "kept", "median us", "min us", "max us",
                   "noise %", "drift %"):
        table.add_column(column, justify="left" if column == "case" else "right")
    for key, rows in cases:
        rows = rows.sort_values("index", kind="stable")
        phases = sorted(set(rows["phase"]))
        for phase in phases:
            part = rows[rows["phase"] == phase]
            s = summarize_samples(part["time_us"], part["kept"])
            table.add_row(case_label(key), str(phase) if len(phases) > 1 else "-",
                          str(s.count), str(s.kept), _number(s.median), _number(s.min),
                          _number(s.max), _number(s.noise_pct, 2), _signed(s.drift_pct))
    make_console().print(table)


COMMANDS = [show_samples_command]
