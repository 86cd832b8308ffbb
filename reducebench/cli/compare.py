"""`compare`: two runs row by row, or every rung of one run against one rung. Only
parsing here: the figures and verdicts come from reducebench.analysis.compare, the
outputs from reducebench.render.compare_table."""

from __future__ import annotations

import math
from pathlib import Path

import click
from click.core import ParameterSource

from reducebench.analysis.compare import Comparison, baseline_ratios, compare_runs
from reducebench.render.console import make_console
from reducebench.core.errors import UsageError
from reducebench.render import compare_table as render
from reducebench.results.files import newest_results, read_results
from reducebench.results.naming import RESULTS_DIR, check_results_path
from reducebench.results.samples import load_samples

FORMATS = ("table", "csv", "json", "markdown")


@click.command("compare")
@click.argument("files", nargs=-1, metavar="[BASE NEW | FILE]",
                type=click.Path(dir_okay=True, path_type=Path))
@click.option("--baseline", "baseline", metavar="RUNG", default=None,
              help="One file: every rung's median as a ratio to RUNG's, at every size and "
                   "dtype (e.g. --baseline cub).")
@click.option("--threshold", default=2.0, show_default=True, type=float, metavar="PCT",
              help="BASE NEW: changes within PCT percent (or within the rows' noise, where "
                   "larger) are SAME.")
@click.option("--fail-on-regression", is_flag=True,
              help="BASE NEW: exit 1 if a case is SLOWER beyond the threshold, or was "
                   "verified in BASE and is FAIL, error, skipped, suspect or missing in "
                   "NEW (each named, with the reason); exit 2 if no row was timed on both "
                   "sides.")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="table",
              show_default=True, help="table on screen; csv, json or markdown to stdout.")
@click.pass_context
def compare_command(ctx: click.Context, files: tuple[Path, ...], baseline: str | None,
                    threshold: float, fail_on_regression: bool, output_format: str) -> None:
    """Compare two results CSVs, or one file's rungs against --baseline RUNG. Without
    files: the newest single-GPU run under results/ against the newest earlier run of the
    same GPU, L2 mode, timing, inputs, dtypes and rungs that shares a case with it (by the
    time recorded in the files); it says which two it took.

    \b
    reducebench compare BASE.csv NEW.csv         NEW against BASE, row by row
    reducebench compare BASE.csv NEW.csv --fail-on-regression --threshold 3
    reducebench compare FILE.csv --baseline cub  every rung against cub
    reducebench compare                          the two newest comparable runs
    """
    if not (threshold >= 0 and math.isfinite(threshold)):
        raise UsageError(f"--threshold {threshold:g}: expected a percentage of 0 or more")
    if baseline is not None:
        _refuse_gates_with_baseline(ctx, fail_on_regression)
        if len(files) > 1:
            raise UsageError("--baseline compares within one file; give one FILE (or none "
                             "for the newest under results/)")
        path = check_results_path(files[0]) if files else newest_results(RESULTS_DIR, 1)[0]
        _baseline(path, baseline, output_format)
        return
    if len(files) == 1:
        check_results_path(files[0])  # a typo in the name is said first
        raise UsageError(f"one file given ({files[0]}): compare needs BASE and NEW, or "
                         "--baseline RUNG to compare rungs within one file")
    if len(files) > 2:
        raise UsageError(f"{len(files)} files given; compare takes BASE and NEW")
    if files:
        base_path, new_path = (check_results_path(f) for f in files)
    else:
        base_path, new_path = newest_results(RESULTS_DIR, 2)
    base, new = read_results(base_path), read_results(new_path)
    if not files:
        click.echo(f"comparing BASE {base_path} ({render.run_summary(base)}) with NEW "
                   f"{new_path} ({render.run_summary(new)}): the newest single-GPU run "
                   f"under {RESULTS_DIR}/ and the newest earlier one of the same GPU, L2 "
                   "mode, timing, inputs, dtypes and rungs", err=True)
    base_samples, new_samples = load_samples(base_path), load_samples(new_path)
    for loaded in (base_samples, new_samples):
        if loaded.frame is None and not loaded.missing:  # a missing file: each row says so
            click.echo(f"reducebench: note: {loaded.note}; its rows are judged by the ratio "
                       "rule", err=True)
    result = compare_runs(base, new, threshold, base_samples.by_case(),
                          new_samples.by_case())
    if not len(result.rows):
        raise UsageError(f"{base_path} and {new_path} have no case in common (the same "
                         "rung, dtype, n, block and params): nothing was compared")
    _show_comparison(result, base_path, new_path, output_format)
    if fail_on_regression and len(result.gate_failures):
        click.echo("reducebench: " + render.gate_report(result, base_path, new_path), err=True)
        ctx.exit(1)
    if fail_on_regression and not len(result.timed):
        raise UsageError(f"--fail-on-regression: no case of {new_path} and {base_path} was "
                         "timed on both sides, so nothing was judged")


def _refuse_gates_with_baseline(ctx: click.Context, fail_on_regression: bool) -> None:
    """--fail-on-regression and --threshold judge NEW against BASE; with --baseline there
    is no second run, and a gate that silently judged nothing would always pass."""
    given = [name for name, used in (
        ("--fail-on-regression", fail_on_regression),
        ("--threshold", ctx.get_parameter_source("threshold") != ParameterSource.DEFAULT))
        if used]
    if given:
        raise UsageError(f"{' and '.join(given)} judge NEW against BASE; --baseline compares "
                         "rungs within one run and judges nothing. Give BASE NEW to gate on "
                         "regressions")


def _show_comparison(c: Comparison, base: Path, new: Path, output_format: str) -> None:
    if output_format == "table":
        make_console().print(render.comparison_table(c, base, new))
        return
    for warning in c.warnings:
        click.echo(f"warning: {warning}", err=True)
    if output_format == "csv":
        click.echo(render.comparison_csv(c), nl=False)
    elif output_format == "json":
        click.echo(render.comparison_json(c, base, new))
    else:
        click.echo(render.comparison_markdown(c, base, new))


def _baseline(path: Path, rung: str, output_format: str) -> None:
    try:
        ratios = baseline_ratios(read_results(path), rung)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None
    if output_format == "csv":
        click.echo(render.baseline_csv(ratios), nl=False)
    elif output_format == "json":
        click.echo(render.baseline_json(ratios, path, rung))
    elif output_format == "markdown":
        click.echo(render.baseline_markdown(ratios, path, rung))
    else:
        make_console().print(render.baseline_table(ratios, path, rung))


COMMANDS = [compare_command]
