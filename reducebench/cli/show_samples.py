"""`show-samples`: one run's raw samples, case by case: a summary line each, and figures
of the samples over time (and, for a few cases, as histograms). Parsing only; the
numbers come from reducebench.analysis.samples_summary, the table from render/samples_table.py,
the figures from render/samples_plot.py."""

from __future__ import annotations

from pathlib import Path

import click

from reducebench.cli._options import option, options

from reducebench.analysis.samples_summary import matches
from reducebench.core.errors import ResultsFileError, UsageError
from reducebench.render.console import make_console
from reducebench.render.figure_files import check_figure
from reducebench.render.samples_table import summary_table
from reducebench.results.naming import SAMPLES_SUFFIX, check_results_path
from reducebench.results.samples_file import KEY_COLUMNS, case_key, load_samples


@click.command("show-samples")
@click.argument("file", metavar="FILE", type=click.Path(path_type=Path))
@click.option("--case", "patterns", multiple=True, metavar="TEXT",
              help="Only cases matching every word of TEXT: a rung or dtype, n=SIZE, "
                   "block=B, or a parameter k=v (e.g. --case 'vector_load n=2^20'). "
                   "Repeat for more cases.")
@options(option("written",
               help="Figure to write, PNG or SVG by suffix (an existing file is replaced; "
                   "more than 30 cases make several, NAME_p1of2.png, ...); default: "
                   "<name>.samples.png in the current folder, never replacing a file."))
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
        check_figure(out)
    if not no_plot:
        samples_plot.require_matplotlib()
    cases = [(case_key(*key), rows) for key, rows in frame.groupby(list(KEY_COLUMNS), sort=False)
             if not patterns or any(matches(case_key(*key), p) for p in patterns)]
    if not cases:
        wanted = " or ".join(repr(p) for p in patterns)
        present = frame.groupby(list(KEY_COLUMNS)).ngroups
        raise UsageError(f"{path}: no case matches {wanted} ({present} case(s) in the file)")
    make_console().print(summary_table(path, cases))
    if not no_plot:
        for line in samples_plot.draw_pages(path, cases, out):
            click.echo(line)


COMMANDS = [show_samples_command]
