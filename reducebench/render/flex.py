"""A table of names, numbers and prose that fits the width it is printed at without
cutting anything: `list`, `explain`, `tune` and `multigpu` print one.

Cells are plain strings (rich markup allowed). A column is either whole (names and
numbers: never wrapped, never cut) or prose (wrapped at spaces, never narrower than its
longest word). rich's own shrinking, when a table is too wide, cuts cells with "…"; a
FlexTable instead works out the prose columns' widths itself, so rich never has to
shrink. Layouts are tried in order (with borders, then without); where none fits, each
row is printed as wrapped lines of "header: value". The plain-text form (`as_text`)
is the same rows for a file or a pipe that wants every word on one line. A table
without rows prints nothing: no header over nothing."""

from __future__ import annotations

import textwrap

from dataclasses import dataclass, field
from typing import Sequence

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

UNBOUNDED = 10**6
LAYOUTS = ((True, False), (False, False), (False, True))   # (borders, short headers)


@dataclass(frozen=True)
class FlexColumn:
    header: str
    prose: bool = False        # wraps at spaces; otherwise the cells stay whole
    justify: str = "left"
    short: str = ""            # the header on narrow terminals (may hold a line break)
    weight: float = 0          # a prose column's share of the room; 0: its natural width


@dataclass
class FlexTable:
    title: str
    columns: Sequence[FlexColumn]
    rows: Sequence[Sequence[str]]
    notes: Sequence[str] = field(default_factory=list)   # markup lines under the table
    show_lines: bool = False   # a rule between rows (rows of several lines)
    show_header: bool = True

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.rows:  # a header over nothing (a run stopped before its first row)
            return
        for borders, short in LAYOUTS:
            widths = self.prose_widths(console, options, borders, short)
            if widths is not None:
                yield self._table(borders, short, widths)
                if self.notes:
                    yield Text.from_markup("\n".join(self.notes))
                return
        yield self.as_lines(options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)

    def _table(self, borders: bool, short: bool,
               widths: dict[int, int] | None = None) -> Table:
        style = dict(box=box.HEAVY_HEAD, show_lines=self.show_lines) if borders else dict(
            box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 0),
            show_lines=self.show_lines)
        t = Table(title=escape(self.title) if self.title else None, title_justify="left",
                  header_style="bold", show_header=self.show_header, **style)
        for index, column in enumerate(self.columns):
            width = (widths or {}).get(index)
            header = column.short if short and column.short else column.header
            t.add_column(header, justify=column.justify, no_wrap=not column.prose,
                         overflow="fold", width=width)
        for row in self.rows:
            t.add_row(*row)
        return t

    def prose_widths(self, console: Console, options: ConsoleOptions, borders: bool,
                     short: bool) -> dict[int, int] | None:
        """Each prose column's width for this layout, or None where even every prose
        column at its longest word leaves the table wider than the console."""
        wide = options.update_width(UNBOUNDED)
        natural = [self._measure(console, wide, i, short) for i in range(len(self.columns))]
        table_width = Measurement.get(console, wide, self._table(borders, short)).maximum
        overhead = table_width - sum(m.maximum for m in natural)
        prose = [i for i, c in enumerate(self.columns) if c.prose]
        fixed = sum(natural[i].maximum for i in range(len(natural)) if i not in prose)
        room = options.max_width - overhead - fixed
        if not prose:
            return {} if room >= 0 else None
        least = {i: natural[i].minimum for i in prose}
        if room < sum(least.values()):
            return None
        if sum(natural[i].maximum for i in prose) <= room:
            return {i: natural[i].maximum for i in prose}
        return _share(room, {i: (least[i], natural[i].maximum,
                                 self.columns[i].weight or natural[i].maximum)
                             for i in prose})

    def _measure(self, console: Console, options: ConsoleOptions, index: int,
                 short: bool) -> Measurement:
        column = self.columns[index]
        header = column.short if short and column.short else column.header
        cells = [header] * self.show_header + [row[index] for row in self.rows]
        found = [Measurement.get(console, options, Text.from_markup(cell)) for cell in cells]
        return Measurement(max(m.minimum for m in found), max(m.maximum for m in found))

    def as_lines(self, width: int | None = None) -> Text:
        """Every cell of every row as lines: the first cell and the whole cells ("header:
        value") on one line, then each prose cell, its own line breaks kept. With a
        width, each line is wrapped between words to it, its continuation indented two
        spaces past the line's own indent (so a wrapped cell still reads as one)."""
        lines = [self.title] if self.title else []
        for row in self.rows:
            cells = [(c, Text.from_markup(v).plain.strip()) for c, v in zip(self.columns, row)]
            (_, first), rest = cells[0], cells[1:]
            whole = [f"{_flat(c.header)}: {v}" for c, v in rest if v and not c.prose]
            lines.append("; ".join([" ".join(first.split()), *whole]))
            for column, value in rest:
                if value and column.prose:
                    parts = value.splitlines()
                    lines.append(f"  {_flat(column.header)}: {parts[0]}")
                    lines += [f"    {part}" for part in parts[1:]]
        lines += [Text.from_markup(note).plain for note in self.notes]
        if width:
            lines = [wrapped for line in lines for wrapped in _hanging(line, width)]
        return Text("\n".join(lines))

    def as_text(self) -> str:
        """The rows as plain text, every cell whole on its own line: for a file."""
        return self.as_lines().plain + "\n"

    def as_markdown(self) -> str:
        """The rows as a markdown table (line breaks in a cell become <br>)."""
        def cell(value: str) -> str:
            plain = Text.from_markup(value).plain
            return plain.replace("|", "\\|").replace("\n", "<br>")

        head = [c.header.replace("\n", " ") for c in self.columns]
        out = [f"**{self.title}**", ""] if self.title else []
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join("---" for _ in head) + "|")
        out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in self.rows]
        out += [""] + [Text.from_markup(note).plain for note in self.notes] if self.notes \
            else []
        return "\n".join(out) + "\n"


def _hanging(line: str, width: int) -> list[str]:
    """One line wrapped between words to `width`, continuations indented two spaces
    past its own indent; a word longer than the room stays whole."""
    indent = len(line) - len(line.lstrip(" "))
    return textwrap.wrap(line, width, subsequent_indent=" " * (indent + 2),
                         break_long_words=False, break_on_hyphens=False) or [line]


def _flat(header: str) -> str:
    """A header on one line ("determ-\ninistic" -> "deterministic")."""
    return header.replace("-\n", "").replace("\n", " ")


def _share(room: int, columns: dict[int, tuple[int, int, float]]) -> dict[int, int]:
    """Widths for prose columns given (least, natural, weight) each, summing to at most
    `room` (which is at least the sum of the least): each its weighted share, never
    under its longest word nor over its natural width; what a column does not need goes
    to the others."""
    total = sum(weight for _, _, weight in columns.values())
    widths = {i: max(least, min(natural, int(room * weight / total)))
              for i, (least, natural, weight) in columns.items()}
    by_weight = sorted(columns, key=lambda i: -columns[i][2])
    while sum(widths.values()) < room:
        growing = [i for i in by_weight if widths[i] < columns[i][1]]
        if not growing:
            break
        for i in growing[:room - sum(widths.values())]:
            widths[i] += 1
    while sum(widths.values()) > room:
        i = max((i for i in widths if widths[i] > columns[i][0]), key=lambda i: widths[i])
        widths[i] -= 1
    return widths
