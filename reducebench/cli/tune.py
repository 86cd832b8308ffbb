"""`tune`: search the top rungs' parameters per size band on this GPU and write the
tuning file that the `auto` rung dispatches from (docs/tuning.md)."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.markup import escape

from reducebench.render.console import make_console
from reducebench.core.dtypes import DTYPES
from reducebench.core.interrupt import EXIT_CODE as INTERRUPTED_EXIT, Interrupted, stop_on_signals
from reducebench.core.sizes import format_size
from reducebench.render.flex import FlexColumn, FlexTable
from reducebench.render.numbers import number
from reducebench.render.progress import progress_bar

# The finalists of each band are confirmed with float16 too, at the band's bytes:
# auto serves the half types from the same table (search.SameBytes).
SAME_BYTES_DTYPE = "float16"

EXAMPLES = """
\b
Examples:
  reducebench tune                      every band, written to your tuning folder
  reducebench tune --quick              one size per band, one round: about two minutes
  reducebench tune --out my.toml --records tune.csv
"""


@click.command("tune", epilog=EXAMPLES)
@click.option("--device", default=0, show_default=True, type=int, help="CUDA device index.")
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
@click.pass_context
def tune_command(ctx: click.Context, device: int, quick: bool, out: str | None,
                 records: str | None, budget: float | None) -> None:
    """Find the fastest verified variant per size band on this GPU for `auto`."""
    from reducebench.tune import search as tune
    from reducebench.measuring.session import abandon_lost_context
    from reducebench.device import open_backend
    from reducebench.core.errors import ContextLost
    from reducebench.results.store import ResultsStore
    from reducebench.ladder.auto import user_path, write_table

    records_path = _checked_options(out, records, budget, device)
    settings = tune.quick_settings() if quick else tune.SearchSettings()
    if budget is not None:
        settings.budget_s = budget
    console = make_console()
    backend = open_backend(device)
    device_info = backend.device_info()
    path = Path(out) if out else user_path(device_info["gpu"])
    dtype = DTYPES["float32"]
    writer = ResultsStore(records_path) if records_path else None
    began = time.monotonic()
    try:
        with stop_on_signals(), progress_bar(console) as progress:
            task = progress.add_task("starting", total=None)

            def on_stage(text: str) -> None:
                progress.update(task, description=text, completed=0, total=None)

            def on_case(case, index: int, total: int) -> None:
                progress.update(task, completed=index, total=total)

            write = writer.commit if writer else _ignore
            measure = tune.runner_measure(backend, dtype, write, on_case)
            half = DTYPES[SAME_BYTES_DTYPE]
            same_bytes = tune.SameBytes(half.name, dtype.itemsize // half.itemsize,
                                        tune.runner_measure(backend, half, write, on_case))
            results = tune.search(measure, settings, bands=tune.BANDS, on_stage=on_stage,
                                  same_bytes=same_bytes)
    except Interrupted as exc:
        kept = f"; {writer.saved()}" if writer is not None else ""
        console.print(f"[yellow]interrupted[/] ({exc}): no tuning file written{kept}")
        ctx.exit(INTERRUPTED_EXIT)
    except ContextLost as exc:
        console.print(f"[red]the CUDA context was lost[/] in {exc}; no tuning file written")
        abandon_lost_context(backend)
        ctx.exit(1)
    table = tune.table_from(results, device_info, dtype)
    write_table(table, path)
    console.print(summary(results, device_info["gpu"]))
    kept = f"; every candidate in {records_path}" if records_path else ""
    console.print(f"tuning file written to {path} in {time.monotonic() - began:.0f} s{kept}")


def _checked_options(out: str | None, records: str | None, budget: float | None,
                   device: int = 0) -> Path | None:
    """Refuse bad options before the GPU is touched, not after minutes of measuring;
    returns the records path."""
    from reducebench.core.errors import UsageError
    from reducebench.results.naming import check_new_results, check_writable

    if device < 0:
        raise UsageError(f"--device {device}: a CUDA device index is 0 or more")
    if budget is not None and not budget > 0:
        raise UsageError(f"--budget {budget}: seconds above 0, e.g. 240")
    if out is not None:
        check_writable(out, "--out", replace=True)  # a tuning file is replaced
    return check_new_results(records, "--records") if records is not None else None


def _ignore(record) -> None:
    pass


def summary(results, gpu: str) -> FlexTable:
    """One row per band: the chosen variant, the runner-up and CUB at each sample size."""
    columns = (FlexColumn("band"), FlexColumn("n (float32)", prose=True),
               FlexColumn("at n"), FlexColumn("chosen", prose=True),
               FlexColumn("us", justify="right"), FlexColumn("runner-up", prose=True),
               FlexColumn("us", justify="right"), FlexColumn("cub us", justify="right"),
               FlexColumn("vs cub", justify="right"), FlexColumn("% read", justify="right"),
               FlexColumn("same bytes", prose=True, justify="right"))
    rows = []
    for r in results:
        upper = "and up" if r.band.n_max is None else format_size(r.band.n_max)
        span = f"{format_size(r.band.n_min)} .. {upper}"
        for i, n in enumerate(r.sizes):
            first = i == 0
            chosen_us, cub_us = r.winner_us[i], r.cub_us[i]
            rows.append((r.band.name if first else "", span if first else "", format_size(n),
                         escape(r.winner.describe()) if first else "",
                         number(chosen_us, ".2f"),
                         (escape(r.runner_up.describe()) if r.runner_up else "-")
                         if first else "",
                         number(r.runner_up_us[i], ".2f") if r.runner_up_us else "",
                         number(cub_us, ".2f"), _ratio(chosen_us, cub_us),
                         _pct(r.read_us[i] if r.read_us else float("nan"), chosen_us),
                         _same_bytes(r, i)))
    return FlexTable(f"auto on {gpu}: the variant per size band", columns, rows)


def _same_bytes(result, i: int) -> str:
    """The chosen variant's pct_read with the other dtype at these bytes."""
    if not result.same_bytes_us:
        return ""
    pct = _pct(result.same_bytes_read_us[i], result.same_bytes_us[i])
    return f"{result.same_bytes_dtype} {pct}" if pct else ""


def _pct(read: float, mine: float) -> str:
    """pct_read: the same-size read's time over the chosen variant's."""
    return f"{100 * read / mine:.1f}" if read > 0 and mine > 0 else ""


def _ratio(mine: float, cub: float) -> str:
    return number(mine / cub, ".3f") if cub > 0 else ""


COMMANDS = [tune_command]
