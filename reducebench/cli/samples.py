"""`show-samples`: one run's raw samples, case by case: a summary line each, and figures
of the samples over time (and, for a few cases, as histograms). Formatting only; the
numbers come from reducebench.analysis.samples, the figures from
reducebench.render.samples_plot."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import click
from reducebench.render.console import make_console
from reducebench.core.errors import ResultsFileError, UsageError
from reducebench.core.sizes import format_size
from reducebench.render.tables import Column, FittedTable
from reducebench.analysis.samples import case_label, matches, summarize_samples
from reducebench.results.naming import SAMPLES_SUFFIX, check_results_path, check_writable
from reducebench.results.samples import KEY_COLUMNS, case_key, load_samples


def default_figure(samples_file: Path, count: int = 1) -> list[Path]:
    """Where `count` figures go by default, in the current folder (never beside the
    samples file, which may be in a repository): `run.samples.png`, or for several
    `run.samples_p1of3.png`, ...; `_1`, `_2`, ... after the stem until none of them is
    an existing file."""
    name = samples_file.name
    stem = name[:-len(".csv")] if name.endswith(".csv") else samples_file.stem
    suffix = 0
    while True:
        names = figure_names(Path(f"{stem}{f'_{suffix}' if suffix else ''}.png"), count)
        if not any(path.exists() for path in names):
            return names
        suffix += 1


def figure_names(first: Path, count: int) -> list[Path]:
    """`x.png` for one figure; `x_p1of3.png`, `x_p2of3.png`, ... for several."""
    if count == 1:
        return [first]
    return [first.with_name(f"{first.stem}_p{i}of{count}{first.suffix}")
            for i in range(1, count + 1)]


def _check_out(out: Path) -> None:
    check_writable(out, "--out", replace=True)
    if out.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"--out {out}: the figure is a PNG or SVG; give a name ending in "
                         ".png or .svg")


def _number(value: float, digits: int = 3) -> str:
    return "-" if not math.isfinite(value) else f"{value:.{digits}f}"


def _signed(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{value:+.2f}"


@click.command("show-samples")
@click.argument("file", metavar="FILE", type=click.Path(path_type=Path))
@click.option("--case", "patterns", multiple=True, metavar="TEXT",
              help="Only cases matching every word of TEXT: a rung or dtype, n=SIZE, "
                   "block=B, or a parameter k=v (e.g. --case 'vector_load n=2^20'). "
                   "Repeat for more cases.")
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              help="Figure to write, PNG or SVG by suffix (an existing file is replaced; "
                   "more than 30 cases make several, NAME_p1of2.png, ...); default: "
                   "<name>.samples.png in the current folder, never replacing a file.")
@click.option("--no-plot", is_flag=True, help="The summary only; no figure, no matplotlib.")
def show_samples_command(file: Path, patterns: tuple[str, ...], out: Path | None,
                         no_plot: bool) -> None:
    """A run's raw samples, case by case: count, kept, median, min, max, noise and drift
    (median of the last third over the first third), and a figure: up to 8 cases, each
    case's samples over time and as a histogram; more (a whole ladder), one panel of
    samples over time per case, 30 cases to a figure. FILE is a samples file
    (<run>.samples.csv) or the results CSV it belongs to."""
    from reducebench.render import samples_plot

    if not file.name.lower().endswith(SAMPLES_SUFFIX):
        check_results_path(file)  # the results CSV itself is there (or is said missing)
    loaded = load_samples(file)
    if loaded.frame is None:  # nothing else to show: the note is the error
        raise ResultsFileError(loaded.note)
    path, frame = loaded.path, loaded.frame
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

    make_console().print(summary_table(path, cases))
    if not no_plot:
        _draw(path, cases, out)


def _draw(path: Path, cases, out: Path | None) -> None:
    """Up to MAX_CASES cases: one figure with each case's samples and histogram; more
    (a whole ladder): overview figures, PER_OVERVIEW cases each."""
    from reducebench.render import samples_plot

    count = samples_plot.pages(len(cases))
    targets = figure_names(out, count) if out is not None else default_figure(path, count)
    labelled = [(case_label(k), rows) for k, rows in cases]
    for page, target in enumerate(targets):
        existed = target.exists()
        if len(cases) <= samples_plot.MAX_CASES:
            info = samples_plot.plot_samples(labelled, target, title=path.name)
        else:
            part = labelled[page * samples_plot.PER_OVERVIEW:
                            (page + 1) * samples_plot.PER_OVERVIEW]
            info = samples_plot.plot_overview(part, target, title=path.name)
        click.echo(f"{'replaced' if existed else 'wrote'} {info.path} ({info.cases} "
                   f"case(s), {info.samples} sample(s))")
    if len(cases) > samples_plot.MAX_CASES:
        click.echo(f"{len(cases)} cases: the samples in time order, one panel each; up to "
                   f"{samples_plot.MAX_CASES} cases (--case) also get their histograms")


def _summary_rows(cases) -> list[SimpleNamespace]:
    """One row per case and phase: the case key and its SampleSummary."""
    out = []
    for key, rows in cases:
        rows = rows.sort_values("index", kind="stable")
        phases = sorted(set(rows["phase"]))
        for phase in phases:
            part = rows[rows["phase"] == phase]
            rung, dtype, n, block, params = key
            out.append(SimpleNamespace(rung=rung, dtype=dtype, n=n, block=block,
                                       params=params.replace(";", " "),
                                       phase=str(phase) if len(phases) > 1 else "-",
                                       s=summarize_samples(part["time_us"], part["kept"])))
    return out


_SUMMARY_COLUMNS = (
    Column("count", "count", lambda r: str(r.s.count), priority=60),
    Column("kept", "kept", lambda r: str(r.s.kept), priority=70),
    Column("median us", "median\nus", lambda r: _number(r.s.median), priority=100),
    Column("min us", "min\nus", lambda r: _number(r.s.min), priority=50),
    Column("max us", "max\nus", lambda r: _number(r.s.max), priority=55),
    Column("noise %", "noise\n%", lambda r: _number(r.s.noise_pct, 2), priority=90),
    Column("drift %", "drift\n%", lambda r: _signed(r.s.drift_pct), priority=80),
)


def summary_table(path: Path, cases) -> FittedTable:
    """Every case (and phase): count, kept, median, min, max, noise, drift; a table that
    fits the terminal without cutting a number or a name (render.tables.FittedTable)."""
    return FittedTable(
        title=str(path), rows=_summary_rows(cases), columns=_SUMMARY_COLUMNS,
        name=lambda r: r.rung, params=lambda r: r.params, block=lambda r: int(r.block),
        status=lambda r, full: r.phase, status_header=("phase", "ph."),
        group_columns=(("dtype", lambda r: r.dtype), ("n", lambda r: format_size(int(r.n)))),
        group_title=lambda r: f"{r.dtype} · n = {format_size(int(r.n))}",
        elsewhere="a wider terminal has them")


COMMANDS = [show_samples_command]
