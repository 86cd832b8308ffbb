"""`compare`'s outputs: a Comparison (two runs) or a baseline frame (one run's rungs
against one rung) as a rich table that fits the terminal, markdown, CSV or JSON. Only
formats; the figures and verdicts come from reducebench.analysis.compare."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from reducebench.analysis.compare import (FAILED, FASTER, NOISY, ONLY_BASE, ONLY_NEW,
                                          RATIO_RULE, ROUNDS_RULE, SAMPLES_RULE, SAME,
                                          SKIPPED, SLOWER, SUSPECT, TIMED_VERDICTS,
                                          Comparison)
from reducebench.analysis.significance import format_p
from reducebench.results.schema import OK
from reducebench.core.sizes import format_size
from reducebench.core.numbers import number
from reducebench.render.run_tables import Column, FittedTable

_STYLE = {FASTER: "bold green", SLOWER: "bold red", SAME: "dim", NOISY: "yellow",
          FAILED: "bold red",
          SKIPPED: "yellow", SUSPECT: "bold magenta", ONLY_BASE: "yellow",
          ONLY_NEW: "yellow"}
_GROUP_COLUMNS = (("dtype", lambda r: r.dtype), ("n", lambda r: format_size(int(r.n))))


# ---- two runs ---------------------------------------------------------------------------

def comparison_table(c: Comparison, base: Path, new: Path) -> Group:
    """The table on screen: warnings, the rows (fitted to the width), the geometric
    means, one-sided rows, every row's note, the counts and the rules used."""
    parts: list[RenderableType] = [Text.from_markup(f"[bold yellow]warning:[/] {escape(w)}")
                                   for w in c.warnings]
    parts.append(FittedTable(
        title=f"NEW {new}  vs  BASE {base}", rows=list(c.rows.itertuples()),
        columns=_COMPARISON_COLUMNS, name=lambda r: r.rung, params=lambda r: r.params,
        block=lambda r: int(r.block), status=_verdict, status_header=("verdict", "verdict"),
        group_columns=_GROUP_COLUMNS, group_title=_group_title))
    if len(c.geomean):
        parts.append(_geomean_table(c))
    for label, frame in (("only in BASE", c.only_base), ("only in NEW", c.only_new)):
        if len(frame):
            parts.append(Text.from_markup(f"[yellow]{label}[/] ({len(frame)}): " + escape(
                ", ".join(case_label(r) for r in frame.itertuples()))))
    parts += [Text.from_markup(line) for line in note_lines(c)]
    parts += [Text(counts_line(c)), Text(rules_line(c))]
    return Group(*parts)


# The start of a samples- or rounds-decided note (significance.SampleVerdict.describe,
# rounds.RoundVerdict.describe): the p-value (and interval) the table's columns show.
_P_AND_CI = re.compile(r"^p=[^,:]+(, [\d.]+% CI [\d.]+-[\d.]+| over rounds): ")


def note_lines(c: Comparison) -> list[str]:
    """Every matched row's note, under the table (a column of prose would not fit a
    terminal): one line per distinct note, naming its rows, or "every row". A
    samples-decided note leaves out the p-value and interval the p and CI columns show."""
    by_note: dict[str, list] = {}
    for r in c.rows.itertuples():
        if r.note:
            by_note.setdefault(_P_AND_CI.sub("", r.note), []).append(r)
    if not by_note:
        return []
    # rows that all share dtype, n and block are named by rung and parameters alone
    shared = len(c.rows[["dtype", "n"]].drop_duplicates()) == 1 and \
        len(set(c.rows["block"]) - {0}) <= 1
    timed = set(c.timed.index)
    lines = ["[bold]notes[/]"]
    for note, rows in by_note.items():
        which = {r.Index for r in rows}
        if len(rows) == len(c.rows) > 1:
            named = f"every row ({len(rows)})"
        elif which == timed and len(rows) > 1:
            named = f"every timed row ({len(rows)})"
        else:
            named = ", ".join(_note_label(r, shared) for r in rows)
        lines.append(f"  {escape(named)}: [dim]{escape(note)}[/]")
    return lines


def _note_label(r, shared: bool) -> str:
    label = " ".join(filter(None, (r.rung, r.params))) if shared else case_label(r)
    return label if r.verdict in TIMED_VERDICTS else f"{label} ({r.verdict})"


def counts_line(c: Comparison) -> str:
    counts = c.counts()
    untimed = counts[FAILED] + counts[SKIPPED] + counts[SUSPECT]
    suspect = f" ({counts[SUSPECT]} suspect)" if counts[SUSPECT] else ""
    noisy = f", {counts[NOISY]} noisy" if counts[NOISY] else ""
    return (f"{counts[FASTER]} faster, {counts[SLOWER]} slower, {counts[SAME]} same{noisy}; "
            f"{untimed} not timed{suspect}; {counts[ONLY_BASE]} only in BASE, "
            f"{counts[ONLY_NEW]} only in NEW")


def rules_line(c: Comparison) -> str:
    """Which rule decided how many rows: the samples' test, or the ratio rule."""
    rules = c.rules()
    parts = []
    if rules[ROUNDS_RULE]:
        parts.append(f"{rules[ROUNDS_RULE]} decided from the rounds (the "
                     f"{number(c.threshold_pct, 'g', '%')} threshold, and an exact rank test of "
                     "the round medians at p < 0.01; "
                     "NOISY: beyond the threshold, within what the rounds vary by)")
    if rules[SAMPLES_RULE]:
        parts.append(f"{rules[SAMPLES_RULE]} decided from the raw samples (Mann-Whitney "
                     f"p < 0.01, a 99% bootstrap interval of the ratio, and the "
                     f"{number(c.threshold_pct, 'g', '%')} threshold)")
    if rules[RATIO_RULE]:
        parts.append(f"{rules[RATIO_RULE]} by the ratio of medians against "
                     f"{number(c.threshold_pct, 'g', '%')} or the noise, where larger (no "
                     "samples on a side, or too few; see each row's note)")
    return "; ".join(parts) or "no row timed on both sides"


def comparison_markdown(c: Comparison, base: Path, new: Path) -> str:
    lines = [f"## NEW `{new}` vs BASE `{base}`", ""]
    if c.warnings:
        lines += [f"- **warning:** {w}" for w in c.warnings] + [""]
    rows = [[r.rung, r.params, r.dtype, format_size(int(r.n)), _block(r.block),
             number(r.base_us if r.base_status == OK else math.nan, ".2f"),
             number(r.new_us if r.new_status == OK else math.nan, ".2f"),
             number(r.ratio, ".3f"), number(r.change_pct, "+.1f", "%"),
             number(r.band_pct, ".1f", "%"),
             f"**{r.verdict}**" if r.verdict in (SLOWER, FAILED, SUSPECT) else r.verdict,
             format_p(r.p_value) if r.rule in (SAMPLES_RULE, ROUNDS_RULE) else "",
             number(r.round_spread_pct, ".1f", "%"), r.note]
            for r in c.all_rows().itertuples()]
    lines += md_table(["rung", "params", "dtype", "n", "block", "base us", "new us",
                       "new/base", "change", "± band", "verdict", "p", "round spread",
                       "note"], rows)
    if len(c.geomean):
        lines += ["", "### Geometric mean of new/base per rung", ""]
        geo = [[r.rung, str(r.rows), number(r.ratio, ".3f"), number(r.change_pct, "+.1f", "%")]
               for r in c.geomean.itertuples()]
        geo.append(["**all**", str(len(c.timed)), number(c.overall_geomean, ".3f"),
                    number(100 * (c.overall_geomean - 1), "+.1f", "%")])
        lines += md_table(["rung", "rows", "new/base", "change"], geo)
    counts = c.counts()
    untimed = counts[FAILED] + counts[SKIPPED] + counts[SUSPECT]
    suspect = f" ({counts[SUSPECT]} suspect)" if counts[SUSPECT] else ""
    lines += ["", rules_line(c)]
    noisy = f", {counts[NOISY]} noisy" if counts[NOISY] else ""
    lines += ["", f"{counts[FASTER]} faster, {counts[SLOWER]} slower, {counts[SAME]} same{noisy} "
              f"(threshold {number(c.threshold_pct, 'g', '%')}, or the noise where larger); "
              f"{untimed} not timed{suspect}; {counts[ONLY_BASE]} only in BASE, "
              f"{counts[ONLY_NEW]} only in NEW"]
    return "\n".join(lines)


def comparison_csv(c: Comparison) -> str:
    return c.all_rows().to_csv(index=False)


def comparison_json(c: Comparison, base: Path, new: Path) -> str:
    doc = {"base": str(base), "new": str(new), "threshold_pct": c.threshold_pct,
           "warnings": c.warnings, "counts": c.counts(),
           "geomean_ratio": _clean(c.overall_geomean),
           "rows": records(c.rows), "geomean": records(c.geomean),
           "only_base": records(c.only_base), "only_new": records(c.only_new),
           "failed": records(c.failed), "gate_failures": records(c.gate_failures)}
    return json.dumps(doc, indent=1)


def gate_report(c: Comparison, base: Path, new: Path) -> str:
    """What --fail-on-regression prints when NEW lost against BASE: one line per case,
    with the reason."""
    failures = c.gate_failures
    lines = [f"{len(failures)} regression(s) in {new} against {base}:"]
    lines += [f"  {case_label(r)}: {r.reason}" for r in failures.itertuples()]
    return "\n".join(lines)


def _verdict(r, full: bool) -> str:
    style = _STYLE.get(r.verdict, "")
    text = f"[{style}]{r.verdict}[/]" if style else r.verdict
    short = ", ".join(f"{side} {status}" for side, status in
                      (("base", r.base_status), ("new", r.new_status)) if status != OK)
    if short and full:  # the errors themselves are listed under the table
        text += f" [dim]({escape(short)})[/]"
    return text


def _any_samples(rows) -> bool:
    """The samples' interval only where a row was decided from samples."""
    return any(r.rule == SAMPLES_RULE for r in rows)


def _any_tested(rows) -> bool:
    """The p column where a row was decided by a test (samples or rounds)."""
    return any(r.rule in (SAMPLES_RULE, ROUNDS_RULE) for r in rows)


def _any_rounds(rows) -> bool:
    return any(r.rule == ROUNDS_RULE for r in rows)


_COMPARISON_COLUMNS = (
    Column("base us", "base\nus", lambda r: number(r.base_us if r.base_status == OK
                                                   else math.nan, ".2f"), priority=90),
    Column("new us", "new\nus", lambda r: number(r.new_us if r.new_status == OK
                                                 else math.nan, ".2f"), priority=100),
    Column("new/base", "new/\nbase", lambda r: number(r.ratio, ".3f"), priority=70),
    Column("change", "change", lambda r: number(r.change_pct, "+.1f", "%"), priority=80),
    Column("± band", "±\nband", lambda r: number(r.band_pct, ".1f", "%"), priority=60),
    Column("p", "p", lambda r: format_p(r.p_value) if r.rule in (SAMPLES_RULE, ROUNDS_RULE)
           else "", priority=65, wanted=_any_tested),
    Column("round spread", "round\nspread", lambda r: number(r.round_spread_pct, ".1f", "%")
           if r.rule == ROUNDS_RULE else "", priority=66, wanted=_any_rounds),
    Column("99% CI of ratio", "99% CI",
           lambda r: (f"{number(r.ci_low, '.3f')}-{number(r.ci_high, '.3f')}"
                      if r.rule == SAMPLES_RULE else ""),
           priority=50, wanted=_any_samples),
)


def _geomean_table(c: Comparison) -> Table:
    g = Table(title="geometric mean of new/base per rung (timed rows)",
              title_justify="left", header_style="bold")
    g.add_column("rung", overflow="fold")   # a name wraps on a narrow terminal, whole
    for column in ("rows", "new/base", "change"):
        g.add_column(column, justify="right", no_wrap=True)
    for r in c.geomean.itertuples():
        g.add_row(r.rung, str(r.rows), number(r.ratio, ".3f"),
                  number(r.change_pct, "+.1f", "%"))
    g.add_section()
    g.add_row("all", str(len(c.timed)), number(c.overall_geomean, ".3f"),
              number(100 * (c.overall_geomean - 1), "+.1f", "%"))
    return g


# ---- one run against a baseline rung -------------------------------------------------------

def baseline_table(ratios: pd.DataFrame, path: Path, rung: str) -> FittedTable:
    columns = [
        Column("median us", "median\nus", lambda r: number(
            r.median_us if r.status == OK else math.nan, ".2f"), priority=100),
        Column(f"{rung} us", f"{rung}\nus", lambda r: number(r.baseline_us, ".2f"),
               priority=80),
        Column("ratio", "ratio", lambda r: number(r.ratio, ".3f"), priority=90),
        Column("speedup", "speed\nup", lambda r: number(r.speedup, ".2f", "x"), priority=70),
    ]

    def status(r, full: bool) -> str:
        return "[green]ok[/]" if r.status == OK else f"[bold red]{escape(r.status)}[/]"

    return FittedTable(
        title=f"{path}: every rung against {rung} (ratio < 1: faster than {rung})",
        rows=list(ratios.itertuples()), columns=columns,
        name=lambda r: f"[bold]{r.rung}[/]" if r.rung == rung else r.rung,
        params=lambda r: r.params, block=lambda r: int(r.block), status=status,
        status_header=("status", "status"), group_columns=_GROUP_COLUMNS,
        group_title=_group_title)


def baseline_markdown(ratios: pd.DataFrame, path: Path, rung: str) -> str:
    lines = [f"## `{path}`: every rung against {rung}", "",
             f"ratio = median / {rung}'s median at the same n and dtype "
             f"(< 1: faster than {rung})", ""]
    lines += md_table(["dtype", "n", "rung", "params", "block", "median us",
                       f"{rung} us", "ratio", "speedup", "status"],
                      [[r.dtype, format_size(int(r.n)), r.rung, r.params, _block(r.block),
                        number(r.median_us if r.status == OK else math.nan, ".2f"),
                        number(r.baseline_us, ".2f"), number(r.ratio, ".3f"),
                        number(r.speedup, ".2f", "x"), r.status]
                       for r in ratios.itertuples()])
    return "\n".join(lines)


def baseline_csv(ratios: pd.DataFrame) -> str:
    return ratios.to_csv(index=False)


def baseline_json(ratios: pd.DataFrame, path: Path, rung: str) -> str:
    return json.dumps({"file": str(path), "baseline": rung, "rows": records(ratios)},
                      indent=1)


def run_summary(frame: pd.DataFrame) -> str:
    """One run in a few words: GPU, L2 mode, timing, inputs, dtypes, rungs, when."""
    def values(column: str, missing: str) -> str:
        if column not in frame:
            return missing
        found = sorted({str(v).strip() for v in frame[column].dropna() if str(v).strip()})
        return " / ".join(found) or missing

    rungs = frame["rung"].nunique() if "rung" in frame else 0
    times = pd.to_datetime(frame["utc_time"] if "utc_time" in frame else pd.Series([]),
                           errors="coerce", utc=True).dropna()
    when = times.max().strftime("%Y-%m-%d %H:%M UTC") if len(times) else "time not recorded"
    return ", ".join((values("gpu", "unknown GPU"), values("mode", "unknown") + " L2",
                      values("timing", "single") + " timing",
                      values("inputs", "exact") + " inputs", values("dtype", "no dtype"),
                      f"{rungs} rung(s)", when))


# ---- helpers ------------------------------------------------------------------------------

def case_label(r) -> str:
    """A case in a line of text: `vector_load float32 n=2^24 block=256 loads=4`."""
    text = f"{r.rung} {r.dtype} n={format_size(int(r.n))}"
    if int(r.block):
        text += f" block={int(r.block)}"
    if r.params:
        text += f" {r.params}"
    return text


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def cell(text) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def records(frame: pd.DataFrame) -> list[dict]:
    """A frame as JSON-safe records."""
    return [{k: _clean(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def _group_title(r) -> str:
    return f"{r.dtype} · n = {format_size(int(r.n))}"


def _block(block) -> str:
    return str(int(block)) if int(block) else "-"


def _clean(value):
    """A JSON-safe Python value: NaN becomes null, numpy scalars plain numbers."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ---- several runs of the same code (calibrate) ------------------------------------------------

def calibration_table(cal) -> Group:
    """Each pair of runs: how many timed cases each verdict took, and whether the
    regression gate passed; then the false alarms over every pair."""
    table = Table(title="every pair of runs of the same code (threshold "
                        f"{number(cal.threshold_pct, 'g', '%')})",
                  title_justify="left", header_style="bold")
    for column in ("BASE", "NEW"):
        table.add_column(column, overflow="fold")
    for column in ("timed", "faster", "slower", "noisy", "same", "not timed", "gate"):
        table.add_column(column, justify="right", no_wrap=True)
    for r in cal.pairs.itertuples(index=False):
        gate = "[green]pass[/]" if r.gate == "pass" else f"[bold red]{r.gate} failed[/]"
        table.add_row(escape(Path(r.base).name), escape(Path(r.new).name), str(r.timed),
                      _alarm(r.FASTER), _alarm(r.SLOWER), str(r.NOISY), str(r.SAME),
                      str(r.untimed), gate)
    parts: list[RenderableType] = [Text.from_markup(f"[bold yellow]warning:[/] {escape(w)}")
                                   for w in cal.warnings]
    parts += [table, Text(calibration_line(cal))]
    return Group(*parts)


def _alarm(count) -> str:
    return f"[bold red]{count}[/]" if count else "0"


def calibration_line(cal) -> str:
    pairs = len(cal.pairs)
    share = 100 * cal.false_alarms / cal.cases if cal.cases else math.nan
    return (f"false alarms: {cal.false_alarms} of {cal.cases} timed case(s) "
            f"({number(share, '.1f', '%')}) called FASTER or SLOWER over {pairs} pair(s) "
            f"of runs of the same code; the regression gate failed in {cal.failed_gates} "
            f"of {pairs}")


def calibration_json(cal) -> str:
    return json.dumps({"threshold_pct": cal.threshold_pct, "warnings": cal.warnings,
                       "cases": cal.cases, "false_alarms": cal.false_alarms,
                       "failed_gates": cal.failed_gates, "pairs": records(cal.pairs)},
                      indent=1)


# ---- the printers: each output in every form --format offers -----------------------------

def comparison_view(c: Comparison, base: Path, new: Path):
    from reducebench.render.printers import TABLE, View, lines

    return View({TABLE: lambda: [comparison_table(c, base, new)],
                 "csv": lambda: comparison_csv(c),
                 "json": lambda: lines(comparison_json(c, base, new)),
                 "markdown": lambda: lines(comparison_markdown(c, base, new))},
                warnings=list(c.warnings))


def baseline_view(ratios: pd.DataFrame, path: Path, rung: str):
    from reducebench.render.printers import TABLE, View, lines

    return View({TABLE: lambda: [baseline_table(ratios, path, rung)],
                 "csv": lambda: baseline_csv(ratios),
                 "json": lambda: lines(baseline_json(ratios, path, rung)),
                 "markdown": lambda: lines(baseline_markdown(ratios, path, rung))})


def calibration_view(cal):
    from reducebench.render.printers import TABLE, View, lines

    return View({TABLE: lambda: [calibration_table(cal)],
                 "json": lambda: lines(calibration_json(cal))})
