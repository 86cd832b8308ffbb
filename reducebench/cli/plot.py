"""`plot`: a results CSV as a PNG (bandwidth and latency against n). Needs matplotlib."""

from __future__ import annotations

import os
from pathlib import Path

import click

from reducebench.errors import UsageError
from reducebench.results import read_results


@click.command("plot")
@click.argument("results", metavar="RESULTS.csv", type=click.Path(path_type=Path))
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="PNG to write; default: next to the CSV, with a .png suffix. An existing "
                   "PNG is replaced.")
def plot_command(results: Path, out: Path | None) -> None:
    """Plot GB/s and median time against n, one line per rung (verified rows only)."""
    from reducebench.plot import default_output, plot_results

    frame = read_results(results)
    out = out if out is not None else default_output(results)
    if out.suffix.lower() != ".png":
        raise UsageError(f"--out {out}: the plot is a PNG; give a name ending in .png")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"--out {out}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise UsageError(f"--out {out}: not writable")
    existed = out.exists()
    info = plot_results(frame, out, source=results)
    verb = "replaced" if existed else "wrote"
    note = f"; {info.skipped} unverified row(s) left out" if info.skipped else ""
    click.echo(f"{verb} {info.path} ({info.width_px}x{info.height_px} px, {info.lines} "
               f"line(s), {info.points} point(s){note})")


COMMANDS = [plot_command]
