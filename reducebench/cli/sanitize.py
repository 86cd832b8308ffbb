"""`sanitize`: each rung once under compute-sanitizer's memcheck, racecheck and synccheck,
the checked program making every buffer its own exact allocation (verify/compute_sanitizer.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from reducebench.cli._console import end
from reducebench.cli._kernels import kernel_options
from reducebench.cli._options import is_given, option, options
from reducebench.core import defaults
from reducebench.core.choices import check_choice, comma_list
from reducebench.measuring.lifecycle import Ending
from reducebench.measuring.settings import extent_values, settings_from, user_values
from reducebench.render.console import make_console
from reducebench.render.sanitize_report import sanitize_markdown, sanitize_table
from reducebench.results.naming import RESULTS_DIR, check_writable
from reducebench.verify.compute_sanitizer import (TOOLS, check_arguments, checked_rungs,
                                                  find_sanitizer, run_tools)


@click.command("sanitize")
@options(option("size", default=str(defaults.CHECK_SIZE)), "shape", "dtype",
         option("rung", help="Rung names (comma list), all, or none (only your --kernel)."),
         "block")
@click.option("--tool", "tools", default=",".join(TOOLS), show_default=True,
              help="compute-sanitizer tools, comma list: memcheck, racecheck, synccheck.")
@click.option("--out", default=None, help="Report path (markdown); default under results/.")
@kernel_options
@click.pass_context
def sanitize(ctx: click.Context, size: str, shape: str | None, dtype: str, rung: str,
             block: str, tools: str, out: str | None, **kernel_args) -> None:
    """Report, per rung and tool, whether compute-sanitizer finds anything."""
    extent = extent_values(size, shape, is_given(ctx, "size"))
    settings = settings_from({**extent, "dtype": dtype, "rung": rung, "block": block,
                              **user_values(kernel_args)})
    chosen = [check_choice(tool, TOOLS, "tool") for tool in comma_list(tools, "tool")]
    if out is not None:
        check_writable(out, "--out", replace=True)
    find_sanitizer()
    runs = checked_rungs(settings.rungs, settings.blocks)
    console = make_console()
    done = run_tools(chosen, check_arguments(extent, dtype, block, runs, kernel_args),
                     settings.rungs, lambda tool: console.print(f"running {tool} ..."))
    if done.interrupted is not None:
        end(Ending(interrupted=done.interrupted, resumable=None,
                   during=f" while {done.tool} ran; no report written"), console)
    names = [r.name for r in runs]
    console.print(sanitize_table(done.reports, names, extent, dtype, block))
    path = Path(out) if out is not None else RESULTS_DIR / \
        f"sanitize_{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%SZ}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sanitize_markdown(done.reports, names, done.logs, extent, dtype, block))
    console.print(f"report written to {path}")
    if any(r.total_errors for r in done.reports) or \
            any(r.total_errors is None for r in done.reports):
        raise click.exceptions.Exit(1)


COMMANDS = [sanitize]
