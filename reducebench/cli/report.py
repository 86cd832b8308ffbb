"""`report`: results files as one self-contained HTML page (docs/report.md). Parsing
only; the page is assembled by reducebench.render.html."""

from __future__ import annotations

from pathlib import Path

import click

from reducebench.cli._options import option, options

from reducebench.results.naming import check_results_csv


@click.command("report")
@click.argument("files", nargs=-1, required=True, metavar="FILE.csv...",
                type=click.Path(path_type=Path))
@options(option("written", metavar="REPORT.html",
              help="The page to write (an existing file is replaced). Default: the first "
                   "CSV's name with a .html suffix, in the current folder, under a new name "
                   "if that file exists (run_2.html, ...)."))
def report_command(files: tuple[Path, ...], out: Path | None) -> None:
    """Write one HTML page for results files: a run, a sweep, two runs compared (the
    later files against the first), or a multi-GPU run. Everything is inside the file
    (Plotly's JavaScript, the data, the styles): it opens offline, attached or mailed.

    \b
    reducebench report results/run.csv                     ./run.html
    reducebench report BASE.csv NEW.csv -o compare.html     NEW judged against BASE
    reducebench report sharded.csv nccl.csv -o scaling.html
    """
    from reducebench.render.html.page import (check_output, report_line, require_libraries,
                                              write_report)
    from reducebench.render.plots import default_output

    require_libraries()
    paths = [check_results_csv(path) for path in files]
    out = out if out is not None else default_output(paths[0], ".html")
    check_output(out)
    existed = out.exists()
    info = write_report(paths, out)
    click.echo(report_line(info, existed))
    for note in info.unreadable_samples:
        click.echo(f"reducebench: note: {note}; the page shows those cases without their "
                   "samples", err=True)


COMMANDS = [report_command]
