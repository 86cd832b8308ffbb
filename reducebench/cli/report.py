"""`report`: results files as one self-contained HTML page (docs/report.md). Parsing
only; the page is assembled by reducebench.render.html."""

from __future__ import annotations

from pathlib import Path

import click

from reducebench.core.errors import ResultsFileError
from reducebench.results.naming import check_results_path
from reducebench.results.naming import SAMPLES_SUFFIX


@click.command("report")
@click.argument("files", nargs=-1, required=True, metavar="FILE.csv...",
                type=click.Path(path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              metavar="REPORT.html",
              help="The page to write (an existing file is replaced). Default: the first "
                   "CSV's name with a .html suffix, in the current folder, under a new name "
                   "if that file exists (run_2.html, ...).")
def report_command(files: tuple[Path, ...], out: Path | None) -> None:
    """Write one HTML page for results files: a run, a sweep, two runs compared (the
    later files against the first), or a multi-GPU run. Everything is inside the file
    (Plotly's JavaScript, the data, the styles): it opens offline, attached or mailed.

    \b
    reducebench report results/run.csv                     ./run.html
    reducebench report BASE.csv NEW.csv -o compare.html     NEW judged against BASE
    reducebench report sharded.csv nccl.csv -o scaling.html
    """
    from reducebench.render.html.page import check_output, require_libraries, write_report
    from reducebench.render.plots import default_output

    require_libraries()
    paths = [_results_file(path) for path in files]
    out = out if out is not None else default_output(paths[0], ".html")
    check_output(out)
    existed = out.exists()
    info = write_report(paths, out)
    gpus = f"; files of {len(info.gpus)} different GPUs, the page says so" \
        if len(info.gpus) > 1 else ""
    compared = f", {info.comparisons} comparison(s)" if info.comparisons else ""
    click.echo(f"{'replaced' if existed else 'wrote'} {info.path} ({info.bytes / 1e6:.1f} MB, "
               f"{info.files} file(s), {info.cases} case(s), {info.charts} chart(s)"
               f"{compared}{gpus})")
    for note in info.unreadable_samples:
        click.echo(f"reducebench: note: {note}; the page shows those cases without their "
                   "samples", err=True)


def _results_file(path: Path) -> Path:
    """A results CSV, checked; a samples file given in its place is named as one."""
    path = check_results_path(path)
    if path.name.lower().endswith(SAMPLES_SUFFIX):
        results = path.name[:-len(SAMPLES_SUFFIX)] + ".csv"
        raise ResultsFileError(f"{path}: is a samples file; give its results CSV ({results}): "
                               "the report reads the samples from beside it")
    return path


COMMANDS = [report_command]
