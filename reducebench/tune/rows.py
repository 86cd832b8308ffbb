"""`reducebench tune --shapes`, device-free: the row rungs searched per shape band, and the
row bands `row_auto` reads. Everything here is read from the registry: one family per row
rung of ours (its block sizes and each of its parameters as axes), the library references
(every row rung with a library) confirmed beside the finalists; no rung is named.

A shape's band is the octave of its COLS and the octave of its total (ladder/auto.py
shape_band): the shapes given are grouped by band, and each band is searched as a size
band of `tune` is (search.search_band: a star around each family's best, rounds until
nothing new or the budget is spent, the finalists confirmed), at its shapes, the worst
ratio to the same-size read over them deciding. A case whose lanes would each add more
than the chain limit in sequence is skipped, as a sweep skips it; a band where every
candidate was skipped, or whose inputs do not fit, is left out and says so (`row_auto`
gives its shapes the nearest band)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reducebench.core.errors import OutOfDeviceMemory
from reducebench.core.sizes import format_size
from reducebench.ladder.auto import RowBand, Variant, rows_aligned, shape_band
from reducebench.ladder.registry import DEFAULT_BLOCK, PARAM_RANGES, ROW_RUNGS, Rung
from reducebench.tune.search import (BandResult, Family, Measure, NothingRan, SearchSettings,
                                     SearchSpace, TuneError, search_band)


def param_values(name: str) -> tuple[int, ...]:
    """What the search tries for a parameter: its lowest value, every power of two
    above it, and its highest (PARAM_RANGES: width 2..16 gives 2, 4, 8, 16)."""
    low, high = PARAM_RANGES[name]
    values, power = {low, high}, 1
    while power < high:
        if power > low:
            values.add(power)
        power *= 2
    return tuple(sorted(values))


def row_families(rungs: Sequence[Rung] = ROW_RUNGS) -> dict[str, Family]:
    """One family per row rung of ours, in the row ladder's order: its base the
    registry's defaults (block 256 where the rung takes it), its axes every block size it
    takes and each of its parameters' values."""
    families = {}
    for rung in rungs:
        if rung.is_library or rung.dispatch:
            continue
        block = DEFAULT_BLOCK if DEFAULT_BLOCK in rung.blocks else rung.blocks[0]
        axes = (("block", tuple(rung.blocks)),
                *((name, param_values(name)) for name in rung.params))
        families[rung.name] = Family(Variant.of(rung.name, block, **rung.params), axes)
    return families


def row_space(rungs: Sequence[Rung] = ROW_RUNGS) -> SearchSpace:
    """The row rungs' search space: their families, every library row rung as a
    reference, and ties going to the earlier rung of the row ladder."""
    families = row_families(rungs)
    references = tuple(Variant(r.name, 0) for r in rungs if r.is_library)
    return SearchSpace(families, references, simpler=tuple(families), finishes=())


@dataclass(frozen=True)
class ShapeBand:
    """The shapes of one band (the octave of COLS and of the total, and whether the rows
    start on 16-byte boundaries), measured at `sizes` (rows, cols), searching
    `families`."""

    name: str
    cols_min: int
    cols_max: int
    total_min: int
    total_max: int
    sizes: tuple[tuple[int, int], ...]
    families: tuple[str, ...]
    rows_aligned: bool | None = None


def shape_bands(shapes: Sequence[tuple[int, int]], families: Sequence[str]
                ) -> list[ShapeBand]:
    """The bands the shapes fall in, by COLS then total, rows off 16-byte boundaries
    before rows on them, each with its shapes (by total, then COLS). Rows of 33 and of 64
    floats share a COLS octave but not a band."""
    grouped: dict[tuple[int, int, int, int, bool], list[tuple[int, int]]] = {}
    for rows, cols in shapes:
        key = (*shape_band(cols, rows * cols), rows_aligned(cols))
        grouped.setdefault(key, []).append((rows, cols))
    return [ShapeBand(f"COLS {format_size(key[1])}, total {format_size(key[3])}"
                      + ("" if key[4] else ", rows off 16-byte boundaries"), *key[:4],
                      tuple(sorted(members, key=lambda s: (s[0] * s[1], s[1]))),
                      tuple(families), rows_aligned=key[4])
            for key, members in sorted(grouped.items())]


def search_rows(measure: Measure, settings: SearchSettings, bands: Sequence[ShapeBand],
                space: SearchSpace, clock: Callable[[], float] = time.monotonic,
                on_stage: Callable[[str], None] | None = None,
                on_band: Callable[[BandResult], None] | None = None) -> list[BandResult]:
    """Every band's result, each also given to `on_band` as it is decided (so that an
    interrupted tune keeps the bands it finished); a band where nothing could run, or
    whose inputs do not fit, is left out (the stage says why). TuneError where no band
    could be tuned at all."""
    deadline = clock() + settings.budget_s
    results: list[BandResult] = []
    left_out: list[str] = []
    for band in bands:
        try:
            result = search_band(band, measure, settings, deadline, clock, on_stage,
                                 space=space)
        except (NothingRan, OutOfDeviceMemory) as exc:
            left_out.append(f"{band.name}: {exc}")
            if on_stage:
                on_stage(f"{band.name}: not tuned ({exc}); row_auto gives its shapes the "
                         "nearest band's choice")
            continue
        results.append(result)
        if on_band:
            on_band(result)
    if not results:
        raise TuneError("tune: no shape band could be tuned; "
                        + (left_out[0] if left_out else "no shapes given"))
    return results


def row_bands(results: Sequence[BandResult]) -> tuple[RowBand, ...]:
    """The row bands of a search: each band's range, variant and what was measured, with
    the fastest library reference there (the best geometric mean over its shapes)."""
    bands = []
    for r in results:
        band: ShapeBand = r.band
        library, library_us = best_library(r)
        bands.append(RowBand(band.cols_min, band.cols_max, band.total_min, band.total_max,
                             r.winner, rows_aligned=band.rows_aligned,
                             shapes=tuple(r.sizes), median_us=r.winner_us,
                             runner_up=r.runner_up.describe() if r.runner_up else "",
                             runner_up_us=r.runner_up_us, library=library,
                             library_us=library_us,
                             read_us=r.read_us if any(t > 0 for t in r.read_us) else ()))
    return tuple(bands)


def best_library(result: BandResult) -> tuple[str, tuple[float, ...]]:
    """The reference with the best geometric mean over the band's shapes, among those
    measured at every one of them; ("", ()) where none was (no PyTorch, ...)."""
    timed = [(math.prod(us) ** (1 / len(us)), variant.rung, us)
             for variant, us in result.references if us and all(t > 0 for t in us)]
    if not timed:
        return "", ()
    _, name, us = min(timed)
    return name, us
