"""Shape sweeps as data: each is a declared set of ROWS x COLS shapes, not code. A sweep
names the total sizes it covers, COLS from MIN_COLS up to each total in powers of two, a
few odd COLS where they fit, and the longest chain a lane may add in sequence. It is asked
for wherever a shape is: `--shape sweep:rows` (`run`, `check`, `tune --shapes`, a config's
`shape`, reducebench.measure(shape=...)), `sweep:rows@2^24` for other totals (a size or a
range as --size takes it, e.g. `sweep:rows@2^20..2^28:4`).

ROWS = total / COLS; for an odd COLS, the nearest whole number of rows (at least one), so
such a shape holds about the total, not exactly it."""

from __future__ import annotations

from dataclasses import dataclass

from reducebench.core.choices import did_you_mean
from reducebench.core.errors import UsageError

PREFIX = "sweep:"
MIN_COLS = 4                          # 2^2: COLS from here up to the total
ODD_COLS = (33, 1000, 1000003)        # not powers of two: a warp's 33, a thousand, a prime
# A row case whose lanes would each add more than this many elements in sequence is
# skipped in a sweep, without running: a lane's chain costs tens of nanoseconds an element
# (one row of 2^24 by one thread took 0.6 s on an H100, results/h100/rows_landscape_ec8e5dd.csv),
# so a longer chain is milliseconds to seconds a run for a sum the other rungs do in
# microseconds.
MAX_CHAIN = 2**16


@dataclass(frozen=True)
class ShapeSweep:
    """A declared sweep: per total, the shapes (ROWS, COLS) with COLS from min_cols to
    the total in powers of two, and each odd COLS no larger than the total, by COLS."""

    name: str
    title: str
    totals: tuple[int, ...]
    min_cols: int = MIN_COLS
    odd_cols: tuple[int, ...] = ODD_COLS
    max_chain: int | None = MAX_CHAIN

    def shapes(self, totals: tuple[int, ...] | list[int] | None = None
               ) -> list[tuple[int, int]]:
        """Every shape of the sweep (at `totals` instead of its own, if given): totals in
        order, COLS ascending within each, no shape twice."""
        found: list[tuple[int, int]] = []
        for total in (self.totals if totals is None else totals):
            for cols in self.cols_at(total):
                shape = (nearest_rows(total, cols), cols)
                if shape not in found:
                    found.append(shape)
        return found

    def cols_at(self, total: int) -> list[int]:
        """The COLS of one total: powers of two from min_cols up to it, and the odd ones
        that fit, ascending."""
        powers, cols = [], self.min_cols
        while cols <= total:
            powers.append(cols)
            cols *= 2
        return sorted({*powers, *(c for c in self.odd_cols if c <= total)})


def nearest_rows(total: int, cols: int) -> int:
    """total / cols rounded to the nearest whole number (halves up), at least 1."""
    return max(1, (2 * total + cols) // (2 * cols))


SWEEPS: dict[str, ShapeSweep] = {
    "rows": ShapeSweep(
        "rows", "the row ladder's landscape: totals 2^20 to 2^28, COLS 2^2 to the total "
        "and 33, 1000, 1000003", totals=tuple(2**k for k in range(20, 29))),
}


@dataclass(frozen=True)
class ShapeRequest:
    """What a --shape value asks for: the shapes, and the chain limit of the sweeps among
    them (None: no sweep named, nothing skipped)."""

    shapes: list[tuple[int, int]]
    max_chain: int | None = None


def is_sweep(token: str) -> bool:
    return token.strip().lower().startswith(PREFIX)


def sweep_of(token: str, parse_totals) -> tuple[ShapeSweep, list[tuple[int, int]]]:
    """`sweep:NAME` or `sweep:NAME@TOTALS`: the sweep and its shapes. `parse_totals`
    reads the totals as --size reads sizes (core/sizes.parse_sizes)."""
    text = token.strip()
    name, at, totals_text = text[len(PREFIX):].partition("@")
    name = name.strip()
    if not name:
        raise UsageError(f"shape {text!r}: name a sweep after {PREFIX} ({_declared()})")
    if name not in SWEEPS:
        raise UsageError(f"shape {text!r}: unknown sweep {name!r}{did_you_mean(name, SWEEPS)}; "
                         f"{_declared()}")
    sweep = SWEEPS[name]
    if not at:
        return sweep, sweep.shapes()
    if not totals_text.strip():
        raise UsageError(f"shape {text!r}: give the totals after @, e.g. {PREFIX}{name}@2^24")
    try:
        totals = parse_totals(totals_text)
    except UsageError as exc:
        raise UsageError(f"shape {text!r}: its totals: {exc}") from None
    shapes = sweep.shapes(totals)
    if not shapes:
        raise UsageError(f"shape {text!r}: no shape of sweep {name} fits these totals "
                         f"(COLS start at {sweep.min_cols})")
    return sweep, shapes


def _declared() -> str:
    return "declared: " + "; ".join(f"{s.name} ({s.title})" for s in SWEEPS.values())
