"""`list` and `show`: the ladder as the registry describes it, every rung in a table, or
one rung's facts, notes and kernel source."""

from __future__ import annotations

from rich.markup import escape
from rich.syntax import Syntax

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.geometry import SPLIT_ATOMIC, SPLIT_CLUSTER, SPLIT_TWO_PASS
from reducebench.ladder.registry import ROW_RUNGS, ROWS, RUNGS, Rung
from reducebench.ladder.sources import local_includes, source_path
from reducebench.render.flex import FlexColumn, FlexTable


def _blocks(rung: Rung) -> str:
    if rung.is_library:
        return "own"
    return f"{rung.blocks[0]}-{rung.blocks[-1]}"


def rung_table() -> FlexTable:
    """Every rung, the row ladder's after the 1-D ladder: names, dtypes and parameters
    stay whole; the description wraps."""
    columns = (FlexColumn("rung"), FlexColumn("finish"), FlexColumn("deterministic", short="determ-\ninistic"),
               FlexColumn("dtypes", prose=True), FlexColumn("blocks"),
               FlexColumn("params", prose=True), FlexColumn("what", prose=True))
    rows = []
    for rung in (*RUNGS, *ROW_RUNGS):
        params = " ".join(f"{k}={v}" for k, v in rung.params.items())
        dtypes = ", ".join(DTYPES[d].short for d in rung.dtypes)  # names --dtype accepts
        rows.append((rung.name, rung.finish, "yes" if rung.deterministic else "no",
                     dtypes, _blocks(rung), escape(params), escape(rung.title)))
    return FlexTable("", columns, rows)


def rung_page(rung: Rung) -> list:
    """One rung: its title, facts, notes and kernel source, syntax highlighted."""
    out: list = [f"[bold]{rung.name}[/]: {escape(rung.title)}"]
    facts = [("finish", rung.finish), ("dtypes", ", ".join(rung.dtypes)),
             ("blocks", _blocks(rung)),
             ("deterministic", "yes" if rung.deterministic else "no (float atomics)")]
    if rung.grid is not None:
        facts.append(("grid", rung.grid.describe(rung.params)))
    if rung.finish == ROWS and rung.is_library:
        facts.append(("grid", "the library's own, one value a row; --shape ROWSxCOLS"))
    elif rung.finish == ROWS and rung.dispatch:
        facts.append(("grid", "the chosen row rung's, per shape; --shape ROWSxCOLS"))
    elif rung.finish == ROWS:
        facts.append(("grid", f"{_row_grid(rung)}; --shape ROWSxCOLS"))
    if rung.min_cc is not None:
        need = ".".join(map(str, rung.min_cc))
        facts.append(("needs", f"compute capability {need} or later ({rung.min_cc_for}); "
                      "skipped on an older GPU"))
    if rung.params:
        facts.append(("params", ", ".join(f"{k}={v}" for k, v in rung.params.items())))
    if rung.in_place:
        facts.append(("in place", "reduces a scratch copy made outside the timed region"))
    facts.append(("reads", "every input element once: rows x cols x element size bytes, "
                  "and writes one value a row" if rung.finish == ROWS else
                  "every input element once: n x element size bytes"))
    out += [f"  [dim]{key}:[/] {value}" for key, value in facts]
    if rung.notes:  # plain text: out[row] is an index, not markup
        out += ["", escape(rung.notes)]
    if rung.source:
        text = source_path(rung.source).read_text()
        out += ["", f"[dim]cuda_src/{rung.source}[/]",
                Syntax(text, "cuda", line_numbers=True, word_wrap=False)]
        headers = local_includes(text)
        if headers:
            out.append(f"[dim]includes {', '.join(headers)} "
                       f"(rb::warp_sum, rb::block_sum, rb::to_acc live there)[/]")
    return out


def _row_grid(rung: Rung) -> str:
    """How a row rung's grid covers the rows, in words."""
    if rung.row_split == SPLIT_ATOMIC:
        return ("blocks_per_sm x SMs / ROWS blocks a row (at least one), each adding its "
                "part with one atomicAdd into sums the previous launch zeroed, one launch")
    if rung.row_split == SPLIT_TWO_PASS:
        return ("blocks_per_sm x SMs / ROWS blocks a row (at least one), each writing its "
                "part's sum, then a launch of a block a row over those partials")
    if rung.tiled:
        return ("as many whole rows a block as fit its tile of block x `loads` 16-byte "
                "vectors, read as one span into shared memory, one launch")
    if rung.row_split == SPLIT_CLUSTER:
        return ("a thread-block cluster of `cluster` blocks a row, its parts added in "
                "distributed shared memory, one launch")
    return f"{_lanes(rung)} a row, one launch"


def _lanes(rung: Rung) -> str:
    """Who shares a row of a row rung, in words."""
    lanes = rung.lanes_per_row
    if lanes == 1:
        return "a thread"
    if lanes == 32:
        return "a warp (32 lanes)"
    if isinstance(lanes, str) and lanes in rung.params:
        return f"a group of `{lanes}` lanes"
    return "a block"
