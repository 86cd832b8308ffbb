"""`sanitize`: each rung once under compute-sanitizer's memcheck, racecheck and synccheck,
the checked program making every buffer its own exact allocation (verify/sanitize.py)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sys
from pathlib import Path

import click
from rich.table import Table

from reducebench.render.console import make_console
from reducebench.core.children import run_child
from reducebench.core.interrupt import EXIT_CODE as INTERRUPTED_EXIT, Interrupted, stop_on_signals
from reducebench.cli._kernels import callable_specs, kernel_options, kernel_specs
from reducebench.measuring.settings import settings_from
from reducebench.core.choices import check_choice, comma_list
from reducebench.core.errors import DeviceUnavailable
from reducebench.results.naming import check_writable
from reducebench.verify.sanitize import TOOLS, checked_environment, parse_report


@click.command("sanitize")
@click.option("--size", default="1000003", show_default=True, help="An awkward size.")
@click.option("--dtype", default="float32", show_default=True,
              help="Element types (as for run).")
@click.option("--rung", default="all", show_default=True,
              help="Rung names (comma list), all, or none (only your --kernel).")
@click.option("--block", default="256", show_default=True,
              help="Threads per block (as for run).")
@click.option("--tool", "tools", default=",".join(TOOLS), show_default=True,
              help="compute-sanitizer tools, comma list: memcheck, racecheck, synccheck.")
@click.option("--out", default=None, help="Report path (markdown); default under results/.")
@kernel_options
@click.pass_context
def sanitize(ctx: click.Context, size: str, dtype: str, rung: str, block: str, tools: str,
             out: str | None, **kernel_args) -> None:
    """Report, per rung and tool, whether compute-sanitizer finds anything."""
    settings = settings_from({"size": size, "dtype": dtype, "rung": rung, "block": block,
                              "kernels": kernel_specs(kernel_args),
                              "callables": callable_specs(kernel_args)})
    chosen = [check_choice(tool, TOOLS, "tool") for tool in comma_list(tools, "tool")]
    if out is not None:
        check_writable(out, "--out", replace=True)
    sanitizer = shutil.which("compute-sanitizer")
    if sanitizer is None:
        raise DeviceUnavailable("compute-sanitizer is not on the PATH (it ships with the "
                                "CUDA toolkit)")
    # the child `check` is given the rungs by name: a ladder rung that takes none of the
    # blocks (a skipped row under --rung all) would be refused there, so it is left out
    runs = [r for r in settings.rungs if not r.is_library and (
        r.origin != "ladder" or r.dispatch or any(b in r.blocks for b in settings.blocks))]
    kernel_rungs = [r.name for r in runs]
    ladder_rungs = [r.name for r in runs if r.origin == "ladder"]
    user_args = [arg for spec in kernel_args["kernels"] for arg in ("--kernel", spec)]
    user_args += [arg for spec in kernel_args["callables"] for arg in ("--callable", spec)]
    for option in ("finish", "grid"):
        if kernel_args[option]:
            user_args += [f"--{option}", kernel_args[option]]
    console = make_console()
    reports, logs = [], []
    for tool in chosen:
        console.print(f"running {tool} ...")
        command = [sanitizer, "--tool", tool, "--print-limit", "50", sys.executable, "-m",
                   "reducebench", "check", "--size", size, "--dtype", dtype, "--rung",
                   ",".join(ladder_rungs) or "none", "--block", block, *user_args]
        try:
            with stop_on_signals():  # the tool and its program stop with us
                done = run_child(command, env=checked_environment(os.environ))
        except Interrupted as exc:
            console.print(f"[yellow]interrupted[/] ({exc}) while {tool} ran; no report written")
            ctx.exit(INTERRUPTED_EXIT)
        text = done.stdout + done.stderr
        logs.append(f"## {tool}\n\n$ {' '.join(command)}\n\n```\n{text}\n```\n")
        reports.append(parse_report(tool, text, settings.rungs))
    table = Table(title=f"compute-sanitizer, n={size} {dtype} block={block}",
                  title_justify="left")
    table.add_column("rung")
    for report in reports:
        table.add_column(report.tool)
    rows = []
    for name in kernel_rungs:
        verdicts = [r.verdict(name) for r in reports]
        table.add_row(name, *verdicts)
        rows.append(f"| {name} | " + " | ".join(verdicts) + " |")
    console.print(table)
    path = Path(out) if out is not None else Path("results") / \
        f"sanitize_{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%SZ}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "| rung | " + " | ".join(r.tool for r in reports) + " |\n|---|" + \
        "---|" * len(reports)
    path.write_text(f"# compute-sanitizer report\n\nn={size}, {dtype}, block {block}, "
                    f"{dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}\n\n"
                    + header + "\n" + "\n".join(rows) + "\n\n" + "\n".join(logs))
    console.print(f"report written to {path}")
    if any(r.total_errors for r in reports) or any(r.total_errors is None for r in reports):
        ctx.exit(1)


COMMANDS = [sanitize]
