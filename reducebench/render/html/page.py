"""The page: every section of the report for whatever the files hold, through one Jinja2
template (page.html.j2), with Plotly's JavaScript, the styles and the data inline, so the
file opens anywhere without a network.

    build_report([Path("results/run.csv")])   -> the HTML text
    write_report([...], Path("run.html"))     -> ReportInfo (and the file)"""

from __future__ import annotations

import datetime as _dt
import functools
from dataclasses import dataclass, field
from pathlib import Path

from reducebench.core.errors import ReducebenchError
from reducebench.core.numbers import number
from reducebench.core.version import __version__
from reducebench.results.naming import check_writable
from reducebench.render.html.cells import Table
from reducebench.render.html.run_files import (LADDER, MULTIGPU, UNREADABLE_SAMPLES, RunFile,
                                           load_runs)

TEMPLATE = "page.html.j2"
SUFFIXES = (".html", ".htm")


def require_libraries() -> None:
    """Plotly and Jinja2 are an optional extra: one clear line where they are missing."""
    try:
        import jinja2  # noqa: F401
        import plotly  # noqa: F401
    except ImportError as exc:
        raise ReducebenchError(f"report needs plotly and jinja2 ({exc.name} is not "
                               "installed): pip install 'reducebench[report]'") from None


@dataclass
class RunView:
    """One file's sections."""

    run: RunFile
    metadata: list[tuple[str, str]]
    options: str
    gpu_warning: str = ""
    table: Table | None = None
    failures: list[tuple[str, str]] = field(default_factory=list)
    chart: str | None = None
    chart_note: str = ""
    samples_chart: str | None = None
    samples_note: str = ""
    counters: Table | None = None
    explain: list = field(default_factory=list)
    multigpu_tables: list[Table] = field(default_factory=list)
    floors: list[str] = field(default_factory=list)
    multigpu_charts: list[str] = field(default_factory=list)
    shape_charts: list[tuple[str, str]] = field(default_factory=list)  # (title, chart)

    @property
    def id(self) -> str:
        return f"run-{self.run.index}"


@dataclass(frozen=True)
class ReportInfo:
    path: Path
    files: int
    cases: int        # rows over every file
    charts: int
    comparisons: int
    bytes: int
    gpus: tuple[str, ...]
    unreadable_samples: tuple[str, ...] = ()   # the notes of unreadable samples files


def gpu_warning(runs: list[RunFile]) -> str:
    """A sentence when the files were measured on different GPUs ("" otherwise)."""
    by_gpu: dict[str, list[str]] = {}
    for run in runs:
        for gpu in run.gpus() or ["an unrecorded GPU"]:
            by_gpu.setdefault(gpu, []).append(run.name)
    if len(by_gpu) < 2:
        return ""
    listed = "; ".join(f"{gpu}: {', '.join(names)}" for gpu, names in by_gpu.items())
    return (f"These files were measured on {len(by_gpu)} different GPUs ({listed}). "
            "Their timings are not comparable with each other.")


def build_report(paths: list[Path], title: str | None = None) -> tuple[str, dict]:
    """The page's HTML, and what it holds (for ReportInfo and the tests)."""
    require_libraries()
    from plotly.offline import get_plotlyjs

    from reducebench.render.html import charts, verdicts

    runs = load_runs([Path(p) for p in paths])
    colours = charts.rung_colours([r for r in runs if r.kind == LADDER])
    views = [_run_view(run, colours) for run in runs]
    ladder_runs = [r for r in runs if r.kind == LADDER]
    comparisons = []
    for new in ladder_runs[1:]:  # every later run against the first
        view = verdicts.comparison(ladder_runs[0], new, colours)
        view.chart = (charts.compare_chart(view.rows, view.threshold_pct, colours,
                                           f"chart-{view.id}") if view.table else None)
        comparisons.append(view)
    warning = gpu_warning(runs)
    names = ", ".join(r.name for r in runs)
    html = _template().render(
        title=title or f"reducebench report: {names}", runs=views, comparisons=comparisons,
        gpu_warning=warning, plotly_js=get_plotlyjs(), version=__version__,
        generated=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        outcome_class=verdicts.OUTCOME_CLASS)
    charts_drawn = html.count('class="plotly-graph-div"')
    held = {"runs": views, "comparisons": comparisons, "gpu_warning": warning,
            "charts": charts_drawn, "colours": colours,
            "gpus": tuple(dict.fromkeys(g for r in runs for g in r.gpus()))}
    return html, held


@functools.lru_cache(maxsize=1)
def _template():
    """The page's template, compiled once per process."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    return env.get_template(TEMPLATE)


def _run_view(run: RunFile, colours: dict[str, str]) -> RunView:
    from reducebench.render.html import charts, report_tables, verdicts
    from reducebench.render.html.shape_charts import shape_charts

    view = RunView(run, report_tables.metadata(run), report_tables.options_json(run))
    if len(run.gpus()) > 1:
        view.gpu_warning = (f"{run.name} holds rows of several GPUs ({', '.join(run.gpus())}); "
                            "their timings are not comparable")
    if run.kind == MULTIGPU:
        view.multigpu_tables = report_tables.multigpu_tables(run)
        view.floors = report_tables.timing_floors(run)
        view.multigpu_charts = [c for c in (charts.scaling_chart(run), charts.nccl_chart(run))
                                if c]
        return view
    view.table = report_tables.ladder_table(run, colours)
    view.failures = report_tables.failures(run)
    view.chart = charts.ladder_chart(run, colours)
    left_out = len(run.frame) - len(charts.verified_rows(run))
    if left_out:
        view.chart_note = (f"{left_out} row(s) left out of the chart: not verified, or "
                           "without a time")
    view.shape_charts = shape_charts(run, colours)
    view.samples_chart, drawn = charts.samples_chart(run, colours)
    if run.samples is None:
        view.samples_note = run.samples_note
    elif drawn < len(run.frame):
        view.samples_note = (f"{len(run.frame) - drawn} case(s) have no samples in the "
                             "samples file (failed or skipped cases have none)")
    view.counters = report_tables.counters_table(run, colours)
    if view.counters is not None:
        view.explain = verdicts.steps(run)
    return view


def check_output(out: Path) -> None:
    """Refuse, before any work, an output the page cannot or must not be written to."""
    check_writable(out, "-o", replace=True, suffixes=SUFFIXES,
                   wrong_suffix="the report is an HTML page; give a name ending in .html")


def write_report(paths: list[Path], out: Path, title: str | None = None) -> ReportInfo:
    out = Path(out)
    check_output(out)
    html, held = build_report(paths, title)
    out.write_text(html, encoding="utf-8")
    runs = held["runs"]
    return ReportInfo(path=out, files=len(runs), cases=sum(len(v.run.frame) for v in runs),
                      charts=held["charts"], comparisons=len(held["comparisons"]),
                      bytes=len(html.encode("utf-8")), gpus=held["gpus"],
                      unreadable_samples=tuple(
                          v.run.samples_note for v in runs
                          if v.run.samples_note.startswith(UNREADABLE_SAMPLES)))


def report_beside(path: Path) -> str:
    """`run --report`: the run's page beside its CSV (FILE.html), and the line that says
    so. A page that cannot be written is that line; the run's results stay what they
    are."""
    from reducebench.core.errors import ReducebenchError

    if not path.exists() or not path.stat().st_size:
        return f"no report: nothing was written to {path}"
    try:
        info = write_report([path], path.with_suffix(".html"))
    except ReducebenchError as exc:
        return f"[yellow]no report[/]: {exc}"
    return f"report: {info.path}"


def report_line(info: ReportInfo, existed: bool) -> str:
    """What `report` says it wrote."""
    gpus = f"; files of {len(info.gpus)} different GPUs, the page says so" \
        if len(info.gpus) > 1 else ""
    compared = f", {info.comparisons} comparison(s)" if info.comparisons else ""
    size = number(info.bytes / 1e6, ".1f", " MB")
    return (f"{'replaced' if existed else 'wrote'} {info.path} ({size}, "
            f"{info.files} file(s), {info.cases} case(s), {info.charts} chart(s)"
            f"{compared}{gpus})")
