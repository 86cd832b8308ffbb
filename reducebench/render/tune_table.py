"""`tune`'s summary: per size band, the chosen variant, the runner-up and CUB at each
sample size, and how close the chosen variant comes to the same-size read; `tune
--shapes`' the same per shape band, beside the fastest library reference."""

from __future__ import annotations

from rich.markup import escape

from reducebench.core.sizes import format_shape, format_size
from reducebench.render.flex import FlexColumn, FlexTable
from reducebench.core.numbers import number
from reducebench.tune.rows import best_library


def summary(results, gpu: str) -> FlexTable:
    """One row per band: the chosen variant, the runner-up and CUB at each sample size
    (for shape bands, `tune --shapes`: row_summary)."""
    if results and hasattr(results[0].band, "cols_min"):
        return row_summary(results, gpu)
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
    return number(100 * read / mine, ".1f") if read > 0 and mine > 0 else ""


def _ratio(mine: float, cub: float) -> str:
    return number(mine / cub, ".3f") if cub > 0 else ""


def row_summary(results, gpu: str) -> FlexTable:
    """`tune --shapes`: one row per shape band and shape it was measured at: the chosen
    row rung, the runner-up, the fastest library reference and pct_read."""
    columns = (FlexColumn("band", prose=True), FlexColumn("at shape"),
               FlexColumn("chosen", prose=True), FlexColumn("us", justify="right"),
               FlexColumn("runner-up", prose=True), FlexColumn("us", justify="right"),
               FlexColumn("library", prose=True), FlexColumn("us", justify="right"),
               FlexColumn("vs library", justify="right"),
               FlexColumn("% read", justify="right"))
    rows = []
    for r in results:
        library, library_us = best_library(r)
        for i, (n_rows, cols) in enumerate(r.sizes):
            first = i == 0
            chosen_us = r.winner_us[i]
            lib_us = library_us[i] if library_us else float("nan")
            rows.append((r.band.name if first else "", format_shape(n_rows, cols),
                         escape(r.winner.describe()) if first else "",
                         number(chosen_us, ".2f"),
                         (escape(r.runner_up.describe()) if r.runner_up else "-")
                         if first else "",
                         number(r.runner_up_us[i], ".2f") if r.runner_up_us else "",
                         (library or "-") if first else "", number(lib_us, ".2f"),
                         _ratio(chosen_us, lib_us),
                         _pct(r.read_us[i] if r.read_us else float("nan"), chosen_us)))
    return FlexTable(f"row_auto on {gpu}: the row rung per shape band", columns, rows)
