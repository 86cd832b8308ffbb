"""`compare`: two runs row by row, or every rung of one run against one rung. Only
parsing here: the figures and verdicts come from reducebench.analysis.compare, the
outputs from reducebench.render.compare_table."""

from __future__ import annotations

from pathlib import Path

import click

from reducebench.analysis.compare import baseline_ratios, compare_runs
from reducebench.analysis.compare.reading import (check_threshold, refuse_gates_with_baseline,
                                                  samples_by_case)
from reducebench.cli._options import is_given, option, options
from reducebench.core.errors import UsageError
from reducebench.render import compare_table as render
from reducebench.render.printers import show
from reducebench.results.files import newest_results, read_results
from reducebench.results.naming import RESULTS_DIR, check_results_path

FORMATS = ("table", "csv", "json", "markdown")
NEWEST = ("the newest single-GPU run under {}/ and the newest earlier one of the same GPU, "
          "L2 mode, timing, inputs, dtypes and rungs")


@click.command("compare")
@click.argument("files", nargs=-1, metavar="[BASE NEW | FILE]",
                type=click.Path(dir_okay=True, path_type=Path))
@click.option("--baseline", "baseline", metavar="RUNG", default=None,
              help="One file: every rung's median as a ratio to RUNG's, at every size and "
                   "dtype (e.g. --baseline cub).")
@options("threshold")
@click.option("--fail-on-regression", is_flag=True,
              help="BASE NEW: exit 1 if a case is SLOWER beyond the threshold, or was "
                   "verified in BASE and is FAIL, error, skipped, suspect or missing in "
                   "NEW (each named, with the reason); exit 2 if no row was timed on both "
                   "sides.")
@options(option("format", type=click.Choice(FORMATS),
                help="table on screen; csv, json or markdown to stdout."))
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
    check_threshold(threshold)
    if baseline is not None:
        refuse_gates_with_baseline(fail_on_regression, is_given(ctx, "threshold"))
        if len(files) > 1:
            raise UsageError("--baseline compares within one file; give one FILE (or none "
                             "for the newest under results/)")
        path = check_results_path(files[0]) if files else newest_results(RESULTS_DIR, 1)[0]
        try:
            ratios = baseline_ratios(read_results(path), baseline)
        except UsageError as exc:
            raise UsageError(f"{path}: {exc}") from None
        return show(render.baseline_view(ratios, path, baseline), output_format)
    if len(files) == 1:
        check_results_path(files[0])  # a typo in the name is said first
        raise UsageError(f"one file given ({files[0]}): compare needs BASE and NEW, or "
                         "--baseline RUNG to compare rungs within one file")
    if len(files) > 2:
        raise UsageError(f"{len(files)} files given; compare takes BASE and NEW")
    paths = [check_results_path(f) for f in files] or newest_results(RESULTS_DIR, 2)
    (base_path, base), (new_path, new) = ((p, read_results(p)) for p in paths)
    if not files:
        click.echo(f"comparing BASE {base_path} ({render.run_summary(base)}) with NEW "
                   f"{new_path} ({render.run_summary(new)}): {NEWEST.format(RESULTS_DIR)}",
                   err=True)
    samples = samples_by_case(paths, lambda line: click.echo(line, err=True))
    result = compare_runs(base, new, threshold, samples[base_path], samples[new_path])
    if not len(result.rows):
        raise UsageError(f"{base_path} and {new_path} have no case in common (the same "
                         "rung, dtype, n, block and params): nothing was compared")
    show(render.comparison_view(result, base_path, new_path), output_format)
    if fail_on_regression and len(result.gate_failures):
        click.echo("reducebench: " + render.gate_report(result, base_path, new_path), err=True)
        ctx.exit(1)
    if fail_on_regression and not len(result.timed):
        raise UsageError(f"--fail-on-regression: no case of {new_path} and {base_path} was "
                         "timed on both sides, so nothing was judged")


COMMANDS = [compare_command]
