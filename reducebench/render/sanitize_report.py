"""`sanitize`'s report: per rung and tool, whether compute-sanitizer found anything; a
table on screen and a markdown file with every tool's log."""

from __future__ import annotations

import datetime as dt

from rich.table import Table


def extent_text(extent: dict) -> str:
    """`n=2^20` for a --size run, `shape=1000x33` for a --shape one, as given."""
    return " ".join(f"{'n' if key == 'size' else key}={value}" for key, value in extent.items())


def sanitize_table(reports: list, rungs: list[str], extent: dict, dtype: str,
                   block: str) -> Table:
    table = Table(title=f"compute-sanitizer, {extent_text(extent)} {dtype} block={block}",
                  title_justify="left")
    table.add_column("rung")
    for report in reports:
        table.add_column(report.tool)
    for name in rungs:
        table.add_row(name, *[r.verdict(name) for r in reports])
    return table


def sanitize_markdown(reports: list, rungs: list[str], logs: list[str], extent: dict,
                      dtype: str, block: str) -> str:
    rows = [f"| {name} | " + " | ".join(r.verdict(name) for r in reports) + " |"
            for name in rungs]
    header = "| rung | " + " | ".join(r.tool for r in reports) + " |\n|---|" + \
        "---|" * len(reports)
    return (f"# compute-sanitizer report\n\n{extent_text(extent)}, {dtype}, block {block}, "
            f"{dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')}\n\n"
            + header + "\n" + "\n".join(rows) + "\n\n" + "\n".join(logs))
