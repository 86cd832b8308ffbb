"""`tune`: search the top rungs' parameters per size band on this GPU and write the
tuning file that the `auto` rung dispatches from (docs/tuning.md)."""

from __future__ import annotations

import click

from reducebench.cli._console import end
from reducebench.cli._options import options

EXAMPLES = """
\b
Examples:
  reducebench tune                      every band, written to your tuning folder
  reducebench tune --quick              one size per band, one round: about two minutes
  reducebench tune --out my.toml --records tune.csv
  reducebench tune --shapes sweep:rows@2^20..2^28:4   row_auto's bands at these shapes
"""


@click.command("tune", epilog=EXAMPLES)
@options("device")
@click.option("--shapes", default=None, metavar="SHAPES",
              help="Tune row_auto instead: the row rungs at these shapes (as --shape takes "
                   "them), per band of COLS and total, into the same file (docs/tuning.md).")
@click.option("--quick", is_flag=True,
              help="One sample size per band, one search round, shorter sampling.")
@click.option("--out", default=None, metavar="FILE",
              help="Tuning file to write, in a folder that exists; default: "
                   "$XDG_CONFIG_HOME/reducebench/tuning/<gpu>.toml (~/.config without it; "
                   "that folder is made when missing).")
@click.option("--records", default=None, metavar="FILE.csv",
              help="Also write every measured candidate to this results CSV.")
@click.option("--budget", type=float, default=None, metavar="SECONDS",
              help="No search round starts after this many seconds (confirming goes on); "
                   "default 240.")
def tune_command(device: int, shapes: str | None, quick: bool, out: str | None,
                 records: str | None, budget: float | None) -> None:
    """Find the fastest verified variant per size band on this GPU for `auto`."""
    from reducebench.device import open_backend
    from reducebench.render.console import make_console
    from reducebench.render.progress import stage_progress
    from reducebench.render.tune_table import summary
    from reducebench.tune.tuning import checked_options, search_settings, tune_gpu

    records_path = checked_options(out, records, budget, device, shapes)
    settings = search_settings(quick, budget)
    console = make_console()
    backend = open_backend(device)
    device_info = backend.device_info()
    with stage_progress(console) as (on_stage, on_case):
        ending = tune_gpu(backend, device_info, settings, out, records_path, on_stage,
                          on_case, shapes)
    if ending.records:
        console.print(summary(ending.records, device_info["gpu"]))
    end(ending, console)


COMMANDS = [tune_command]
