"""`explain`: why each rung is faster, from a results file with hardware counters.
Parsing and rendering only; the steps, counters and verdicts come from reducebench.analysis.ladder_steps."""

from __future__ import annotations

from pathlib import Path

import click

from reducebench.analysis.ladder_steps import explain
from reducebench.cli._options import option, options
from reducebench.core.dtypes import get_dtype
from reducebench.core.errors import UsageError
from reducebench.core.sizes import parse_size
from reducebench.render import printers
from reducebench.render.explain_table import explain_table
from reducebench.results.files import read_results


def measure_for_explain(rungs: tuple[str, ...], size: int | None, dtype: str | None):
    """The hook for explaining without --from: measure the rungs with counters and return
    their results as a DataFrame (what read_results returns). Not wired yet."""
    raise UsageError("explain needs a results file with hardware counters: run "
                     "`reducebench run --size 2^24 --metrics --out FILE.csv`, then "
                     "`reducebench explain --from FILE.csv`")


@click.command("explain")
@click.argument("rungs", nargs=-1, metavar="[RUNG...]")
@click.option("--from", "from_file", type=click.Path(path_type=Path),
              default=None, metavar="FILE.csv",
              help="A results file written by `reducebench run --metrics`.")
@options(option("size", default=None, show_default=False, metavar="N",
                help="Which size to explain, if the file holds several (e.g. 2^24)."),
         option("shape", metavar="ROWSxCOLS", help="Which shape of a --shape run to explain."),
         option("dtype", default=None, show_default=False, metavar="DTYPE",
                help="Which dtype to explain, if the file holds several."),
         option("format", type=click.Choice(["table", "text", "markdown"]),
                help="table: fits the terminal (narrow ones get one block per step); text: "
                     "one block per step; markdown: a table for a document. Every word in "
                     "each."))
def explain_command(rungs: tuple[str, ...], from_file: Path | None, size: str | None,
                    shape: str | None, dtype: str | None, output_format: str) -> None:
    """Why each rung is faster: the source change next to the counter change.

    \b
    reducebench explain --from FILE.csv                  every textbook step in FILE
    reducebench explain smem_strided --from FILE.csv     the step into smem_strided
    reducebench explain shfl vector_load --from FILE.csv any rungs, in the order given
    """
    n = parse_size(size) if size is not None else None
    dtype = get_dtype(dtype).name if dtype is not None else None
    if from_file is None:
        frame, where = measure_for_explain(rungs, n, dtype), "the measured rows"
    else:
        frame, where = read_results(from_file), str(from_file)
    table = explain_table(explain(frame, rungs, n, dtype, where, shape))
    printers.show(printers.flex_view(table), output_format)


COMMANDS = [explain_command]
