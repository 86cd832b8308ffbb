"""`compare`: two runs row by row, or every rung of one run against one rung.
Only formatting here; the figures and verdicts come from reducebench.analysis.compare."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click
import pandas as pd
from click.core import ParameterSource
from rich.console import Console
from rich.table import Table

from reducebench.cli._console import make_console
from reducebench.analysis.compare import (FAILED, FASTER, ONLY_BASE, ONLY_NEW, RATIO_RULE,
                                 SAMPLES_RULE, SAME, SKIPPED, SLOWER, Comparison,
                                 baseline_ratios, compare_runs)
from reducebench.core.errors import UsageError
from reducebench.render.tables import Column, FittedTable
from reducebench.results.samples import samples_for_results
from reducebench.analysis.significance import format_p
from reducebench.results.naming import check_results_path
from reducebench.results.files import newest_results, read_results
from reducebench.core.sizes import format_size

RESULTS_DIR = Path("results")  # where `run` writes, relative to the working directory
FORMATS = ("table", "csv", "json", "markdown")
_STYLE = {FASTER: "bold green", SLOWER: "bold red", SAME: "dim", FAILED: "bold red",
          SKIPPED: "yellow", ONLY_BASE: "yellow", ONLY_NEW: "yellow"}


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
              help="BASE NEW: exit 1 if a row is SLOWER beyond the threshold, or fails in "
                   "NEW after passing in BASE; exit 2 if no row was timed on both sides.")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="table",
              show_default=True, help="table on screen; csv, json or markdown to stdout.")
@click.pass_context
def compare_command(ctx: click.Context, files: tuple[Path, ...], baseline: str | None,
                    threshold: float, fail_on_regression: bool, output_format: str) -> None:
    """Compare two results CSVs, or one file's rungs against --baseline RUNG. Without
    files: the newest run under results/ against the newest earlier run of the same GPU,
    L2 mode and timing that shares a case with it (by the time recorded in the files).

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
        raise UsageError(f"one file given ({files[0]}): compare needs BASE and NEW, or "
                         "--baseline RUNG to compare rungs within one file")
    if len(files) > 2:
        raise UsageError(f"{len(files)} files given; compare takes BASE and NEW")
    if files:
        base_path, new_path = (check_results_path(f) for f in files)
    else:
        base_path, new_path = newest_results(RESULTS_DIR, 2)
        click.echo(f"comparing the newest run under {RESULTS_DIR}/ with the newest earlier "
                   f"one of the same GPU, L2 mode and timing: BASE {base_path}, NEW "
                   f"{new_path}", err=True)
    base, new = read_results(base_path), read_results(new_path)
    result = compare_runs(base, new, threshold, samples_for_results(base_path),
                          samples_for_results(new_path))
    if not len(result.rows):
        raise UsageError(f"{base_path} and {new_path} have no case in common (the same "
                         "rung, dtype, n, block and params): nothing was compared")
    _render_comparison(result, base_path, new_path, output_format)
    regressions = result.regressions
    if fail_on_regression and len(regressions):
        click.echo(f"reducebench: {len(regressions)} regression(s) in {new_path} against "
                   f"{base_path}: " + ", ".join(_label(r) for r in regressions.itertuples()),
                   err=True)
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


# ---- two runs ---------------------------------------------------------------------------

def _render_comparison(c: Comparison, base: Path, new: Path, output_format: str) -> None:
    if output_format == "table":
        _comparison_table(make_console(), c, base, new)
        return
    for warning in c.warnings:
        click.echo(f"warning: {warning}", err=True)
    if output_format == "csv":
        click.echo(c.all_rows().to_csv(index=False), nl=False)
    elif output_format == "json":
        doc = {"base": str(base), "new": str(new), "threshold_pct": c.threshold_pct,
               "warnings": c.warnings, "counts": c.counts(),
               "geomean_ratio": _clean(c.overall_geomean),
               "rows": _records(c.rows), "geomean": _records(c.geomean),
               "only_base": _records(c.only_base), "only_new": _records(c.only_new),
               "failed": _records(c.failed)}
        click.echo(json.dumps(doc, indent=1))
    else:
        click.echo(_comparison_markdown(c, base, new))


def _comparison_table(console: Console, c: Comparison, base: Path, new: Path) -> None:
    for warning in c.warnings:
        console.print(f"[bold yellow]warning:[/] {warning}")

    def verdict(r, full: bool) -> str:
        style = _STYLE.get(r.verdict, "")
        text = f"[{style}]{r.verdict}[/]" if style else r.verdict
        short = ", ".join(f"{side} {status}" for side, status in
                          (("base", r.base_status), ("new", r.new_status)) if status != "ok")
        if short and full:  # the errors themselves are listed under the table
            text += f" [dim]({short})[/]"
        return text

    columns = [
        Column("base us", "base\nus", lambda r: _num(r.base_us if r.base_status == "ok"
                                                     else math.nan, ".2f"), priority=90),
        Column("new us", "new\nus", lambda r: _num(r.new_us if r.new_status == "ok"
                                                   else math.nan, ".2f"), priority=100),
        Column("new/base", "new/\nbase", lambda r: _num(r.ratio, ".3f"), priority=70),
        Column("change", "change", lambda r: _num(r.change_pct, "+.1f", "%"), priority=80),
        Column("± band", "±\nband", lambda r: _num(r.band_pct, ".1f", "%"), priority=60),
        Column("p", "p", lambda r: format_p(r.p_value) if r.rule == SAMPLES_RULE else "",
               priority=65),
        Column("99% CI of ratio", "99% CI", lambda r: (f"{r.ci_low:.3f}-{r.ci_high:.3f}"
                                                        if r.rule == SAMPLES_RULE else ""),
               priority=50),
    ]
    console.print(FittedTable(
        title=f"NEW {new}  vs  BASE {base}", rows=list(c.rows.itertuples()), columns=columns,
        name=lambda r: r.rung, params=lambda r: r.params, block=lambda r: int(r.block),
        status=verdict, status_header=("verdict", "verdict"),
        group_columns=_GROUP_COLUMNS, group_title=_group_title))
    if len(c.geomean):
        g = Table(title="geometric mean of new/base per rung (timed rows)",
                  title_justify="left", header_style="bold")
        for column, justify in (("rung", "left"), ("rows", "right"), ("new/base", "right"),
                                ("change", "right")):
            g.add_column(column, justify=justify)
        for r in c.geomean.itertuples():
            g.add_row(r.rung, str(r.rows), _num(r.ratio, ".3f"), _num(r.change_pct, "+.1f", "%"))
        g.add_section()
        g.add_row("all", str(len(c.timed)), _num(c.overall_geomean, ".3f"),
                  _num(100 * (c.overall_geomean - 1), "+.1f", "%"))
        console.print(g)
    for label, frame in (("only in BASE", c.only_base), ("only in NEW", c.only_new)):
        if len(frame):
            console.print(f"[yellow]{label}[/] ({len(frame)}): "
                          + ", ".join(_label(r) for r in frame.itertuples()))
    if len(c.failed):
        console.print(f"[bold red]not timed on both sides[/] ({len(c.failed)}): "
                      + "; ".join(f"{_label(r)} ({r.note})" for r in c.failed.itertuples()))
    counts = c.counts()
    console.print(f"{counts[FASTER]} faster, {counts[SLOWER]} slower, {counts[SAME]} same; "
                  f"{counts[FAILED] + counts[SKIPPED]} not timed; {counts[ONLY_BASE]} only in "
                  f"BASE, {counts[ONLY_NEW]} only in NEW")
    console.print(rules_line(c))


def rules_line(c: Comparison) -> str:
    """Which rule decided how many rows: the samples' test, or the ratio rule."""
    rules = c.rules()
    parts = []
    if rules[SAMPLES_RULE]:
        parts.append(f"{rules[SAMPLES_RULE]} decided from the raw samples (Mann-Whitney "
                     f"p < 0.01, a 99% bootstrap interval of the ratio, and the "
                     f"{c.threshold_pct:g}% threshold)")
    if rules[RATIO_RULE]:
        parts.append(f"{rules[RATIO_RULE]} by the ratio of medians against "
                     f"{c.threshold_pct:g}% or the noise, where larger (no samples on a "
                     "side, or too few; see each row's note)")
    return "; ".join(parts) or "no row timed on both sides"


def _comparison_markdown(c: Comparison, base: Path, new: Path) -> str:
    lines = [f"## NEW `{new}` vs BASE `{base}`", ""]
    if c.warnings:
        lines += [f"- **warning:** {w}" for w in c.warnings] + [""]
    rows = [[r.rung, r.params, r.dtype, format_size(int(r.n)), _block(r.block),
             _num(r.base_us if r.base_status == "ok" else math.nan, ".2f"),
             _num(r.new_us if r.new_status == "ok" else math.nan, ".2f"),
             _num(r.ratio, ".3f"), _num(r.change_pct, "+.1f", "%"),
             _num(r.band_pct, ".1f", "%"), f"**{r.verdict}**" if r.verdict in (SLOWER, FAILED)
             else r.verdict, format_p(r.p_value) if r.rule == SAMPLES_RULE else "", r.note]
            for r in c.all_rows().itertuples()]
    lines += _md_table(["rung", "params", "dtype", "n", "block", "base us", "new us",
                        "new/base", "change", "± band", "verdict", "p", "note"], rows)
    if len(c.geomean):
        lines += ["", "### Geometric mean of new/base per rung", ""]
        geo = [[r.rung, str(r.rows), _num(r.ratio, ".3f"), _num(r.change_pct, "+.1f", "%")]
               for r in c.geomean.itertuples()]
        geo.append(["**all**", str(len(c.timed)), _num(c.overall_geomean, ".3f"),
                    _num(100 * (c.overall_geomean - 1), "+.1f", "%")])
        lines += _md_table(["rung", "rows", "new/base", "change"], geo)
    counts = c.counts()
    lines += ["", rules_line(c)]
    lines += ["", f"{counts[FASTER]} faster, {counts[SLOWER]} slower, {counts[SAME]} same "
              f"(threshold {c.threshold_pct:g}%, or the noise where larger); "
              f"{counts[FAILED] + counts[SKIPPED]} not timed; {counts[ONLY_BASE]} only in BASE, "
              f"{counts[ONLY_NEW]} only in NEW"]
    return "\n".join(lines)


# ---- one run against a baseline rung -------------------------------------------------------

def _baseline(path: Path, rung: str, output_format: str) -> None:
    frame = read_results(path)
    try:
        ratios = baseline_ratios(frame, rung)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None
    if output_format == "csv":
        click.echo(ratios.to_csv(index=False), nl=False)
    elif output_format == "json":
        click.echo(json.dumps({"file": str(path), "baseline": rung,
                               "rows": _records(ratios)}, indent=1))
    elif output_format == "markdown":
        lines = [f"## `{path}`: every rung against {rung}", "",
                 f"ratio = median / {rung}'s median at the same n and dtype "
                 f"(< 1: faster than {rung})", ""]
        lines += _md_table(["dtype", "n", "rung", "params", "block", "median us",
                            f"{rung} us", "ratio", "speedup", "status"],
                           [[r.dtype, format_size(int(r.n)), r.rung, r.params, _block(r.block),
                             _num(r.median_us if r.status == "ok" else math.nan, ".2f"),
                             _num(r.baseline_us, ".2f"), _num(r.ratio, ".3f"),
                             _num(r.speedup, ".2f", "x"), r.status]
                            for r in ratios.itertuples()])
        click.echo("\n".join(lines))
    else:
        columns = [
            Column("median us", "median\nus", lambda r: _num(
                r.median_us if r.status == "ok" else math.nan, ".2f"), priority=100),
            Column(f"{rung} us", f"{rung}\nus", lambda r: _num(r.baseline_us, ".2f"),
                   priority=80),
            Column("ratio", "ratio", lambda r: _num(r.ratio, ".3f"), priority=90),
            Column("speedup", "speed\nup", lambda r: _num(r.speedup, ".2f", "x"),
                   priority=70),
        ]

        def status(r, full: bool) -> str:
            return "[green]ok[/]" if r.status == "ok" else f"[bold red]{r.status}[/]"

        make_console().print(FittedTable(
            title=f"{path}: every rung against {rung} (ratio < 1: faster than {rung})",
            rows=list(ratios.itertuples()), columns=columns,
            name=lambda r: f"[bold]{r.rung}[/]" if r.rung == rung else r.rung,
            params=lambda r: r.params, block=lambda r: int(r.block), status=status,
            status_header=("status", "status"), group_columns=_GROUP_COLUMNS,
            group_title=_group_title))


# ---- helpers ------------------------------------------------------------------------------

_GROUP_COLUMNS = (("dtype", lambda r: r.dtype), ("n", lambda r: format_size(int(r.n))))


def _group_title(r) -> str:
    return f"{r.dtype} · n = {format_size(int(r.n))}"


def _num(value, fmt: str, unit: str = "") -> str:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(value) else format(value, fmt) + unit


def _block(block) -> str:
    return str(int(block)) if int(block) else "-"


def _label(r) -> str:
    text = f"{r.rung} {r.dtype} n={format_size(int(r.n))}"
    if int(r.block):
        text += f" block={int(r.block)}"
    if r.params:
        text += f" {r.params}"
    return text


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def cell(text) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def _clean(value):
    """A JSON-safe Python value: NaN becomes null, numpy scalars plain numbers."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: _clean(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


COMMANDS = [compare_command]
