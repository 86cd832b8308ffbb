"""`plot`: a results CSV as a PNG or SVG (bandwidth and latency against n). Needs
matplotlib."""

from __future__ import annotations

from pathlib import Path

import click

from reducebench.cli._options import option, options

from reducebench.results.naming import check_results_path
from reducebench.results.files import read_results


@click.command("plot")
@click.argument("results", metavar="RESULTS.csv...", nargs=-1, required=True,
                type=click.Path(path_type=Path))
@options(option("written",
               help="The figure to write, PNG or SVG by its suffix (an existing file is "
                   "replaced). Default: the first CSV's name with a .png suffix, in the "
                   "current folder (never next to the CSV), under a new name if that file "
                   "exists (run_2.png, ...)."))
@click.option("--y", "y", type=click.Choice(["gbps", "pct_read"]), default="gbps",
              show_default=True,
              help="The left panel: bandwidth, or pct_read (the same-size read's time over "
                   "each row's: 100 is as fast as reading the input).")
def plot_command(results: tuple[Path, ...], out: Path | None, y: str) -> None:
    """Plot GB/s and median time against n, one line per rung (verified rows only); a
    file of one size gets one bar per rung. Several files are drawn together (e.g. a
    sweep timed both ways: each rung's single and graph lines share a colour).

    \b
    reducebench plot results/run.csv                 ./run.png (or ./run_2.png, ...)
    reducebench plot results/run.csv -o /tmp/sweep.svg    an SVG
    reducebench plot single.csv graph.csv -o both.png
    reducebench plot run.csv --y pct_read            % of the same-size read against n

    A file of row cases (--shape) gets a shape sweep's heatmaps and lines (docs/rows.md).
    """
    import pandas as pd

    from reducebench.render.figure_files import check_figure
    from reducebench.render.plots import default_output
    from reducebench.render.shape_plots import plot_lines

    frame = pd.concat([read_results(check_results_path(path)) for path in results],
                      ignore_index=True)
    out = check_figure(out if out is not None else default_output(results[0]))
    for line in plot_lines(frame, out, results[0] if len(results) == 1 else None, y):
        click.echo(line)


COMMANDS = [plot_command]
