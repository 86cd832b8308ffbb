"""`reducebench tune`, device-free: the size bands, the candidate variants, a coordinate
search over their parameters, and choosing each band's winner. Every measurement goes
through runner.run (verified, then timed exactly like `reducebench run`) on whatever
backend is given: the GPU, or a fake with chosen times in the tests. What a band is
searched among is a SearchSpace (its families, the references confirmed beside the
finalists, the order ties go to): `auto`'s here (ONE_D), the row rungs' in rows.py.

Per band (BANDS: n in float32 elements; one per octave from 2^13 to 2^28), at its sample
sizes:
 1. round 1: each searched family's base variant (the registry's defaults; up to 2^20
    also one_shot in blocks of one warp, a family of its own: FAMILIES), every
    variant that changes one axis of it, and the same tile cut another way (block one
    step up and loads one step down, and the reverse): a star, not the full product;
 2. later rounds: a star around each family's best so far, only points not measured
    yet, until nothing new is left, `rounds` is reached, or the time budget is spent;
 3. the finishes: vector_load and single_pass with the best pingpong geometry;
 4. the winner: the best worst-case pct_read over the sample sizes (the same-size
    read, runner.ReadReference, over its median; without a read, the fastest
    candidate's median over its own); among worst cases within TIE_FRACTION, the best
    geometric mean over the sizes, and a tie in that too (within TIE_FRACTION) goes to
    the simpler variant; a candidate that did not verify at every size is never chosen;
 5. confirm: the FINALISTS best (winner first, each the winner of the rest) and CUB
    again with more samples, and the finalists also with float16 at the band's bytes
    (SameBytes: `auto` looks every dtype up by bytes); the best by the same rule over
    both dtypes' ratios is the band's variant, and these medians are recorded."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace

from reducebench.core.dtypes import DType
from reducebench.core.errors import OutOfDeviceMemory, ReducebenchError
from reducebench.core.stats import StopRule
from reducebench.core.version import __version__
from reducebench.ladder.auto import Band, TuningTable, Variant, today, variant_case
from reducebench.ladder.case import Case
from reducebench.ladder.registry import LADDER, PARAM_RANGES, Rung
from reducebench.measuring.settings import RunSettings
from reducebench.results.schema import OK, SKIPPED

TIE_FRACTION = 0.003          # scores this close are a tie (see choose)
TUNE_SEED = 20261122          # the same inputs in every round and every tune
CUB = Variant("cub", 0)

SEARCH_STOP = StopRule(min_samples=10, max_noise=0.005, max_time=0.05)
CONFIRM_STOP = StopRule(min_samples=30, max_noise=0.002, max_time=0.3)
QUICK_SEARCH_STOP = StopRule(min_samples=5, max_noise=0.01, max_time=0.02)
QUICK_CONFIRM_STOP = StopRule(min_samples=10, max_noise=0.005, max_time=0.1)
DEFAULT_BUDGET_S = 240.0      # search rounds stop starting after this; confirming goes on
FINALISTS = 3                 # variants confirmed per band (with CUB)


class TuneError(ReducebenchError):
    """No candidate of a band verified: the kernels, not the search, need attention."""

    exit_code = 1


class NothingRan(TuneError):
    """Every candidate of a band was skipped (none could run there, e.g. every chain over
    a sweep's limit): nothing to choose from, and nothing wrong with the kernels."""


@dataclass(frozen=True)
class Family:
    """A rung's search space: its base variant and the values each axis may take
    ("block" or a parameter name)."""

    base: Variant
    axes: tuple[tuple[str, tuple[int, ...]], ...]
    # Pairs of axes moved one step each in opposite directions (block up, loads down):
    # the same tile cut another way, which one-axis moves reach only through a worse
    # tile (the H100's best at 2^24, 512 x 2, is 256 x 4's tile: two axes away).
    trades: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        names = {axis for axis, _ in self.axes}
        for pair in self.trades:
            if not set(pair) <= names:
                raise ValueError(f"{self.base.rung}: trade {pair} moves an axis it does not "
                                 f"search ({sorted(names)})")

    def star(self, centre: Variant) -> list[Variant]:
        """The centre, every variant one axis away from it, and its trades."""
        found = [centre]
        moves = [with_axis(centre, axis, value) for axis, values in self.axes for value in values]
        for moved in moves + self.traded(centre):
            if moved not in found and within_ranges(moved):
                found.append(moved)
        return found

    def holds(self, variant: Variant) -> bool:
        """Whether the variant is in this family's space (its rung, each axis a value
        the family searches)."""
        return variant.rung == self.base.rung and all(
            axis_value(variant, axis) in values for axis, values in self.axes)

    def traded(self, centre: Variant) -> list[Variant]:
        values = dict(self.axes)
        found = []
        for up, down in self.trades:
            for step in (1, -1):
                a, b = (neighbour(values[up], axis_value(centre, up), step),
                        neighbour(values[down], axis_value(centre, down), -step))
                if a is not None and b is not None:
                    found.append(with_axis(with_axis(centre, up, a), down, b))
        return found


def axis_value(variant: Variant, axis: str) -> int | None:
    return variant.block if axis == "block" else variant.param_dict.get(axis)


def neighbour(values: tuple[int, ...], value: int | None, step: int) -> int | None:
    """The value `step` places from `value` in the axis's sorted values (None: off the
    end, or `value` not among them)."""
    ordered = sorted(values)
    if value not in ordered:
        return None
    index = ordered.index(value) + step
    return ordered[index] if 0 <= index < len(ordered) else None


def with_axis(variant: Variant, axis: str, value: int) -> Variant:
    if axis == "block":
        return Variant(variant.rung, value, variant.params)
    return Variant.of(variant.rung, variant.block, **{**variant.param_dict, axis: value})


def within_ranges(variant: Variant) -> bool:
    return all(PARAM_RANGES[k][0] <= v <= PARAM_RANGES[k][1] for k, v in variant.params)


GRID_AXES = (("blocks_per_sm", (1, 2, 4, 8, 16)), ("loads", (2, 4, 8)), ("block", (128, 256, 512)),
             ("l2_prefetch", (0, 1)))
GRID_BASE = {"blocks_per_sm": 8, "loads": 4, "l2_prefetch": 0}  # the registry's defaults
TILE_TRADE = (("block", "loads"),)
FAMILIES: dict[str, Family] = {
    "one_block": Family(Variant.of("one_block", 256, loads=4),
                        (("block", (128, 256, 512, 1024)), ("loads", (1, 2, 4, 8))), TILE_TRADE),
    "pingpong": Family(Variant.of("pingpong", 256, **GRID_BASE), GRID_AXES, TILE_TRADE),
    "one_shot": Family(Variant.of("one_shot", 256, loads=4, l2_prefetch=0),
                       (("loads", (1, 2, 4, 8, 16)), ("block", (128, 256, 512, 1024)),
                        ("l2_prefetch", (0, 1))), TILE_TRADE),
    # one_shot in blocks of one or two warps, searched from a base of its own: a
    # block sum with no barrier (one warp) or one exchange (two), for one atomicAdd per
    # warp or pair. Where there are few tiles the atomics hardly queue and the barrier
    # was the larger cost: on the H200, float32, 32 x 4 was never slower than the table's
    # 128- and 256-thread tiles up to 2^17 and up to 0.224 us faster (2^13, 2^14 in one
    # of two rounds; results/h200/probe_small_r1_c0e8693.csv and _r2_). From the
    # 256-thread base they are three worse moves away.
    "one_shot_warps": Family(Variant.of("one_shot", 32, loads=4, l2_prefetch=0),
                             (("loads", (1, 2, 4, 8, 16)), ("block", (32, 64)),
                              ("l2_prefetch", (0, 1))), TILE_TRADE),
}
# Tried with the best pingpong geometry: the same body, finished another way.
FINISH_RUNGS = ("vector_load", "single_pass")
# Simpler first (what a tie goes to): one block and deterministic, deterministic, no
# state between launches, state between launches, and that with an atomic per tile.
SIMPLICITY = ("one_block", "single_pass", "vector_load", "pingpong", "one_shot")


@dataclass(frozen=True)
class SearchSpace:
    """What a search chooses among: the families searched (by name), the references
    measured beside the finalists (libraries: block 0), the order of rungs a tie goes to
    (simplest first), and the finishes tried with the best pingpong geometry."""

    families: Mapping[str, Family]
    references: tuple[Variant, ...] = (CUB,)
    simpler: tuple[str, ...] = SIMPLICITY
    finishes: tuple[str, ...] = FINISH_RUNGS


ONE_D = SearchSpace(FAMILIES)   # `tune`: the variants `auto` runs


@dataclass(frozen=True)
class SizeBand:
    """Sizes n_min..n_max (None: every larger n), in float32 elements, measured at
    `sizes`, searching `families`."""

    name: str
    n_min: int
    n_max: int | None
    sizes: tuple[int, ...]
    families: tuple[str, ...]


def octave_bands(first: int, last: int, families: tuple[str, ...]) -> tuple[SizeBand, ...]:
    """One band per octave, (2^(k-1), 2^k] for k = first..last, measured at 2^k: inside a
    wider band the best variant moves with n (on the H100 a band measured at 2^21 and 2^24
    chose 256 x 4, 24.864 us at 2^24, where 512 x 2 took 24.672:
    results/h100/tune_candidates_3c23647.csv)."""
    return tuple(SizeBand(f"2^{k}", 2**(k - 1) + 1, 2**k, (2**k,), families)
                 for k in range(first, last + 1))


# One block streams at what one SM can keep in flight, so it is searched only where CUB
# itself uses one (2^12) and a little above. Below 2^12 every candidate sits on the launch
# floor: one band, measured at 2^10 and 2^12. Above 2^28 the rate at which a grid streams
# decides (a persistent grid fell 1.2 to 2.8% behind the one-shot read at 2^29..2^32 in
# BENCHMARKS.md), so those sizes are a band of their own, measured at 2^30 alone (its
# inputs take about half a minute per round to make).
# Blocks of one or two warps pay an atomicAdd per warp or pair, which queue on the one
# address once there are many tiles: in the H200 probe 32 x 4 fell behind from 2^18
# (0.1 to 0.2 us, 2.4 us at 2^20) and the best of them tied at 2^18 and 2^19 and lost
# by 0.2 us at 2^20. They are searched up to 2^20, the top of the 0.3 us target's
# range, where measuring them costs a few seconds; above it they cannot win.
ALL_FAMILIES = ("one_block", "pingpong", "one_shot")
GRID_FAMILIES = ("pingpong", "one_shot")
WARPS = ("one_shot_warps",)
BANDS: tuple[SizeBand, ...] = (
    SizeBand("tiny", 1, 2**12, (2**10, 2**12), ALL_FAMILIES + WARPS),
    *octave_bands(13, 16, ALL_FAMILIES + WARPS),
    *octave_bands(17, 20, GRID_FAMILIES + WARPS),
    *octave_bands(21, 28, GRID_FAMILIES),
    SizeBand("giant", 2**28 + 1, None, (2**30,), GRID_FAMILIES),
)


@dataclass
class SearchSettings:
    rounds: int = 3
    stop: StopRule = SEARCH_STOP
    confirm_stop: StopRule = CONFIRM_STOP
    upper_size_only: bool = False   # --quick: one sample size per band
    budget_s: float = DEFAULT_BUDGET_S


def quick_settings() -> SearchSettings:
    return SearchSettings(rounds=1, stop=QUICK_SEARCH_STOP, confirm_stop=QUICK_CONFIRM_STOP,
                          upper_size_only=True)


@dataclass
class Measured:
    """Medians (us) of the variants that verified, per (variant, n); why others did not."""

    # Keyed by n, or (dtype, n) for another dtype's sizes (see merged).
    times: dict[tuple[Variant, Hashable], float] = field(default_factory=dict)
    errors: dict[tuple[Variant, Hashable], str] = field(default_factory=dict)
    # The same-size read per n (us): the first one measured is kept, so every candidate
    # at that n is divided by the same figure, whichever round measured it.
    reads: dict[Hashable, float] = field(default_factory=dict)

    def add(self, other: Measured) -> None:
        self.times.update(other.times)
        self.errors.update(other.errors)
        for n, read in other.reads.items():
            self.reads.setdefault(n, read)

    def pct_read(self, variant: Variant, n: int) -> float:
        """100 * read / median (NaN without a read or a time)."""
        read, mine = self.reads.get(n, float("nan")), self.times.get((variant, n))
        return 100 * read / mine if mine and read > 0 else float("nan")

    def measured(self, variant: Variant, sizes: tuple[int, ...]) -> bool:
        return all((variant, n) in self.times or (variant, n) in self.errors for n in sizes)


# (variants, sizes, stop rule) -> what they measured
Measure = Callable[[list[Variant], tuple[int, ...], StopRule], Measured]


@dataclass(frozen=True)
class SameBytes:
    """Another element type the finalists are confirmed with, at the band's bytes
    (`scale` of its elements per element of the searched type). `auto` looks every dtype
    up by bytes, so a band's variant runs float16 and bfloat16 inputs of those bytes
    too, and the searched type alone does not see how a tile fares there: on the H200
    the tile chosen for float32 2^27 (256 x 16) was 0.8% further from the read for the
    half types at 2^28 than the one before it (docs/tuning.md)."""

    dtype: str
    scale: int
    measure: Measure

    def __post_init__(self) -> None:
        if self.scale < 1:
            raise ValueError(f"SameBytes({self.dtype!r}): scale {self.scale}; its elements "
                             "must not be wider than the searched type's")

    def keys(self, sizes: tuple[int, ...]) -> tuple[tuple[str, int], ...]:
        """Its sample sizes as keys beside the searched type's: (dtype, n)."""
        return tuple((self.dtype, n * self.scale) for n in sizes)


def merged(first: Measured, other: Measured, dtype: str) -> Measured:
    """Both measurements in one, the other's sizes keyed (dtype, n)."""
    result = Measured(dict(first.times), dict(first.errors), dict(first.reads))
    result.times.update({(v, (dtype, n)): t for (v, n), t in other.times.items()})
    result.errors.update({(v, (dtype, n)): e for (v, n), e in other.errors.items()})
    result.reads.update({(dtype, n): r for n, r in other.reads.items()})
    return result


@dataclass(frozen=True)
class BandResult:
    band: SizeBand
    sizes: tuple[int, ...]
    winner: Variant
    winner_us: tuple[float, ...]
    runner_up: Variant | None
    runner_up_us: tuple[float, ...]
    cub_us: tuple[float, ...]
    candidates: int               # variants measured in the search
    read_us: tuple[float, ...] = ()  # the same-size read at each size (confirm's run)
    same_bytes_dtype: str = ""    # the other type confirmed with, if any, and
    same_bytes_us: tuple[float, ...] = ()       # the winner's medians with it at the
    same_bytes_read_us: tuple[float, ...] = ()  # band's bytes, and its read there
    # every reference confirmed beside the finalists, with its medians at the sizes
    references: tuple[tuple[Variant, tuple[float, ...]], ...] = ()


# -- choosing ----------------------------------------------------------------------------

def ratios(variant: Variant, measured: Measured, sizes: tuple[Hashable, ...],
           pool: list[Variant]) -> list[float] | None:
    """The variant's median over the same-size read (1 / pct_read: what tune optimises)
    at each sample size, or over the fastest of `pool` at a size measured without a read;
    None unless it verified at every size."""
    found = []
    for n in sizes:
        mine = measured.times.get((variant, n))
        if mine is None:
            return None
        base = measured.reads.get(n, float("nan"))
        if not base > 0:
            base = min(measured.times[(v, n)] for v in pool if (v, n) in measured.times)
        found.append(mine / base)
    return found


def score(variant: Variant, measured: Measured, sizes: tuple[Hashable, ...],
          pool: list[Variant]) -> float | None:
    """The variant's worst ratio over the sample sizes (see ratios)."""
    found = ratios(variant, measured, sizes, pool)
    return max(found) if found else None


def departures(variant: Variant, space: SearchSpace | None = None) -> int:
    """How many settings differ from the base of the family that holds the variant (the
    registry's defaults, or one_shot_warps' 32 x 4); a finish rung counts from pingpong's."""
    families = (space or ONE_D).families
    family = next((f for f in families.values() if f.holds(variant)),
                  families.get(variant.rung) or families.get("pingpong"))
    if family is None:
        return 0
    base = family.base
    changed = int(variant.block != base.block)
    defaults = base.param_dict
    return changed + sum(1 for k, v in variant.params if defaults.get(k) != v)


def simplicity(variant: Variant, space: SearchSpace | None = None) -> tuple:
    simpler = (space or ONE_D).simpler
    rank = simpler.index(variant.rung) if variant.rung in simpler else len(simpler)
    return (rank, departures(variant, space), variant.block, variant.params)


def pick(candidates: list[Variant], measured: Measured, sizes: tuple[Hashable, ...],
         space: SearchSpace | None = None) -> tuple[Variant | None, Variant | None]:
    """(winner, runner-up) among the candidates that verified at every size (see
    ranking)."""
    best = ranking(candidates, measured, sizes, 2, space)
    return (best[0] if best else None), (best[1] if len(best) > 1 else None)


def ranking(candidates: list[Variant], measured: Measured, sizes: tuple[Hashable, ...],
            count: int, space: SearchSpace | None = None) -> list[Variant]:
    """The `count` best of the candidates that verified at every size, best first, each
    chosen by `choose` as the winner of the ones not yet taken."""
    pool = [v for v in candidates if score(v, measured, sizes, candidates) is not None]
    found = {v: ratios(v, measured, sizes, pool) for v in pool}
    scores = {v: max(r) for v, r in found.items()}
    means = {v: math.prod(r) ** (1 / len(r)) for v, r in found.items()}  # geometric
    best: list[Variant] = []
    while pool and len(best) < count:
        best.append(choose(pool, scores, means, space))
        pool = [v for v in pool if v != best[-1]]
    return best


def choose(pool: list[Variant], scores: dict[Variant, float],
           means: dict[Variant, float], space: SearchSpace | None = None) -> Variant:
    """The best worst case; among worst cases within TIE_FRACTION of it, the best mean;
    among means within TIE_FRACTION of that, the simplest rung, and of its variants the
    one with the best mean (then the worst case, then the fewest settings changed, then
    the smaller block). The mean comes second: at the tiny band's 2^10, a few
    event-clock ticks above the read, many tiles tie on the worst case, and the worst
    case alone let the H200's tune keep one 0.064 us slower at 2^12. A tie goes to the
    simpler rung (deterministic, no state between launches), but never to the slower
    tile of the same rung: a tile's shape is not simpler for anyone, and at 2^27 0.3%
    is eight ticks of the event clock, which the confirming medians resolve (a tie rule
    that preferred the smaller block kept one_shot 256 x 16 at 118.016 us over 1024 x 4
    at 117.760 on the H200)."""
    best = min(scores[v] for v in pool)
    tied = [v for v in pool if scores[v] <= best * (1 + TIE_FRACTION)]
    best_mean = min(means[v] for v in tied)
    tied = [v for v in tied if means[v] <= best_mean * (1 + TIE_FRACTION)]
    simplest_rung = min(tied, key=lambda v: simplicity(v, space)).rung
    same_rung = [v for v in tied if v.rung == simplest_rung]
    return min(same_rung, key=lambda v: (means[v], scores[v], simplicity(v, space)))


# -- searching ---------------------------------------------------------------------------

def band_sizes(band: SizeBand, settings: SearchSettings) -> tuple[int, ...]:
    return band.sizes[-1:] if settings.upper_size_only else band.sizes


def search_band(band: SizeBand, measure: Measure, settings: SearchSettings,
                deadline: float, clock: Callable[[], float] = time.monotonic,
                on_stage: Callable[[str], None] | None = None,
                same_bytes: SameBytes | None = None,
                space: SearchSpace | None = None) -> BandResult:
    """One band searched (see the module's steps) in `space` (default: `auto`'s)."""
    space = space or ONE_D
    families = space.families
    sizes = band_sizes(band, settings)
    measured = Measured()
    tried: list[Variant] = []

    def run_round(stage: str, variants: list[Variant]) -> None:
        new = [v for v in dict.fromkeys(variants) if v not in tried]
        if not new:
            return
        if on_stage:
            on_stage(f"{band.name}: {stage}, {len(new)} variant(s) x {len(sizes)} size(s)")
        tried.extend(new)
        measured.add(measure(new, sizes, settings.stop))

    centres = {name: families[name].base for name in band.families}
    for round_number in range(1, settings.rounds + 1):
        if round_number > 1 and clock() > deadline:
            break
        before = len(tried)
        run_round(f"round {round_number}",
                  [v for name, centre in centres.items() for v in families[name].star(centre)])
        if round_number > 1 and len(tried) == before:
            break  # every neighbour of every centre is measured: a local optimum
        centres = {name: best_of_family(name, tried, measured, sizes, space) or centre
                   for name, centre in centres.items()}
    if "pingpong" in centres and space.finishes:
        geometry = centres["pingpong"]
        run_round("finishes", [Variant(r, geometry.block, geometry.params)
                               for r in space.finishes])

    finalists = ranking(tried, measured, sizes, FINALISTS, space)
    if not finalists:
        errors = list(measured.errors.values())
        first_error = next(iter(errors), "no result")
        kind = NothingRan if errors and all(e.startswith(SKIPPED) for e in errors) \
            else TuneError
        raise kind(f"tune: no candidate verified in band {band.name} "
                   f"({len(tried)} tried); the first failure: {first_error}")
    if on_stage:
        also = f", and with {same_bytes.dtype}" if same_bytes else ""
        on_stage(f"{band.name}: confirming {len(finalists)} finalist(s){also}")
    confirmed, keys = confirm(band, finalists, sizes, measure, settings, on_stage, same_bytes,
                              space.references)
    half_keys = keys[len(sizes):]
    final, second = pick(finalists, confirmed, keys, space)
    figures = confirmed
    if final is None:
        final, second = fall_back(band, finalists, measured, confirmed, sizes, half_keys,
                                  space)
        figures = measured
    references = tuple((r, times_at(confirmed, r, sizes)) for r in space.references)
    return BandResult(band, sizes, final, times_at(figures, final, sizes), second,
                      times_at(figures, second, sizes) if second else (),
                      references[0][1] if references else (), len(tried),
                      tuple(figures.reads.get(n, float("nan")) for n in sizes),
                      same_bytes.dtype if same_bytes and half_keys else "",
                      times_at(confirmed, final, half_keys),
                      tuple(confirmed.reads.get(k, float("nan")) for k in half_keys),
                      references)


def confirm(band: SizeBand, finalists: list[Variant], sizes: tuple[int, ...],
            measure: Measure, settings: SearchSettings,
            on_stage: Callable[[str], None] | None,
            same_bytes: SameBytes | None,
            references: tuple[Variant, ...] = (CUB,)) -> tuple[Measured, tuple[Hashable, ...]]:
    """The finalists and the references (CUB) measured with the confirm stop rule, and
    the finalists with the same-bytes dtype too (its sizes keyed (dtype, n)); the keys to
    judge them by. Where that dtype's inputs do not fit in device memory the band is
    confirmed without it, and the stage says so."""
    confirmed = measure(finalists + list(references), sizes, settings.confirm_stop)
    if not same_bytes:
        return confirmed, sizes
    half_keys = same_bytes.keys(sizes)
    try:
        other = same_bytes.measure(finalists, tuple(n for _, n in half_keys),
                                   settings.confirm_stop)
    except OutOfDeviceMemory as exc:
        if on_stage:
            on_stage(f"{band.name}: not confirmed with {same_bytes.dtype}, its inputs do "
                     f"not fit ({exc})")
        return confirmed, sizes
    return merged(confirmed, other, same_bytes.dtype), sizes + half_keys


def fall_back(band: SizeBand, finalists: list[Variant], measured: Measured,
              confirmed: Measured, sizes: tuple[int, ...],
              half_keys: tuple[Hashable, ...],
              space: SearchSpace | None = None) -> tuple[Variant, Variant | None]:
    """No finalist verified at every size of the confirm step. If none did with the
    same-bytes dtype, tune stops; otherwise those that did (every finalist, without
    that dtype) are ranked by the search's figures, which verified."""
    right = [v for v in finalists
             if not half_keys or ratios(v, confirmed, half_keys, finalists) is not None]
    if not right:
        dtype = half_keys[0][0]
        failure = next((e for (_, k), e in confirmed.errors.items() if k in half_keys),
                       "no result")
        raise TuneError(f"tune: no finalist of band {band.name} verified with {dtype}; "
                        f"the first failure: {failure}")
    final, second = pick(right, measured, sizes, space)
    return final, second


def best_of_family(name: str, tried: list[Variant], measured: Measured,
                   sizes: tuple[Hashable, ...], space: SearchSpace | None = None
                   ) -> Variant | None:
    space = space or ONE_D
    winner, _ = pick([v for v in tried if space.families[name].holds(v)], measured, sizes,
                     space)
    return winner


def times_at(measured: Measured, variant: Variant,
             sizes: tuple[Hashable, ...]) -> tuple[float, ...]:
    return tuple(measured.times.get((variant, n), float("nan")) for n in sizes)


def search(measure: Measure, settings: SearchSettings, bands: tuple[SizeBand, ...] = BANDS,
           clock: Callable[[], float] = time.monotonic,
           on_stage: Callable[[str], None] | None = None,
           same_bytes: SameBytes | None = None) -> list[BandResult]:
    """Every band's result (the finalists confirmed with `same_bytes` too, if given). A
    band after the first whose sample sizes do not fit in this GPU's memory (the giant
    band's 2^30 on a small GPU) is not searched: the band before it is extended to cover
    its sizes too, and the stage says so."""
    deadline = clock() + settings.budget_s
    results: list[BandResult] = []
    for band in bands:
        try:
            results.append(search_band(band, measure, settings, deadline, clock, on_stage,
                                       same_bytes))
        except OutOfDeviceMemory as exc:
            if not results:
                raise
            previous = results[-1]
            results[-1] = replace(previous, band=replace(previous.band, n_max=band.n_max))
            if on_stage:
                on_stage(f"{band.name}: not searched, its sizes do not fit ({exc}); "
                         f"{previous.band.name}'s variant covers them")
    return results


# -- measuring through the runner --------------------------------------------------------

def runner_measure(backend, dtype: DType, write=lambda record: None, on_case=None,
                   ladder: Mapping[str, Rung] | None = None, seed: int = TUNE_SEED,
                   max_chain: int | None = None) -> Measure:
    """A Measure that runs each variant's case through runner.run: verified (a
    candidate that is not status "ok" has no time), then timed with the stop rule. A
    size is n, or a shape (rows, cols) for the row ladder (then `ladder` is the row
    ladder's, and a row case over `max_chain` is skipped as a sweep skips it)."""
    from reducebench.measuring.runner import Carried, MadeInputs, run

    ladder = LADDER if ladder is None else ladder
    # a band's inputs made once for all its rounds; each read, the timing floor and the
    # clock warm-up once for the whole tune, not once a run
    carried = Carried(inputs=MadeInputs())

    def case_of(variant: Variant, size: Hashable) -> Case:
        rows, n = (size[0], size[0] * size[1]) if isinstance(size, tuple) else (1, size)
        rung = ladder.get(variant.rung)
        if rung is not None and rung.is_library:  # a reference: its own block
            return Case(rung, dtype, n, 0, {}, rows=rows)
        return replace(variant_case(variant, dtype, n, ladder), rows=rows)

    def measure(variants: list[Variant], sizes: tuple[Hashable, ...],
                stop: StopRule) -> Measured:
        keys = [(v, n) for n in sizes for v in variants]  # sizes outermost: one input each
        cases = [case_of(v, n) for v, n in keys]
        rungs = list({case.rung.name: case.rung for case in cases}.values())
        shapes = [n for n in sizes if isinstance(n, tuple)]
        extent = dict(shapes=shapes, sizes=[]) if shapes else dict(sizes=list(sizes))
        # One round: the candidates are ranked against each other within this process,
        # and the confirming stage measures the finalists again (rounds serve `compare`,
        # which sets two processes side by side).
        settings = RunSettings(**extent, dtypes=[dtype], rungs=rungs, seed=seed,
                               stop=stop, timed=True, rounds=1, max_chain=max_chain)
        records = run(settings, backend, write, on_case=on_case, cases=cases, carried=carried)
        result = Measured()
        for key, record in zip(keys, records):
            if record.status == OK and record.samples:
                result.times[key] = record.median_us
                if record.read_us > 0:  # NaN (no read reference) compares False
                    result.reads.setdefault(key[1], record.read_us)
            else:
                result.errors[key] = f"{record.status} {record.error}".strip()
        return result

    return measure


# -- the table ---------------------------------------------------------------------------

def table_from(results: list[BandResult], device: dict, dtype: DType) -> TuningTable:
    """The tuning table of a search: one band per size band, with what was measured."""
    bands = tuple(Band(r.band.n_min, r.band.n_max, r.winner, sizes=r.sizes,
                       median_us=r.winner_us,
                       runner_up=r.runner_up.describe() if r.runner_up else "",
                       runner_up_us=r.runner_up_us, cub_us=r.cub_us,
                       read_us=_if_measured(r.read_us),
                       same_bytes_dtype=r.same_bytes_dtype, same_bytes_us=r.same_bytes_us,
                       same_bytes_read_us=_if_measured(r.same_bytes_read_us))
                  for r in results)
    versions = (("cupy", str(device.get("cupy", ""))), ("driver", str(device.get("driver", ""))),
                ("reducebench", __version__), ("runtime", str(device.get("runtime", ""))))
    return TuningTable(gpu=str(device.get("gpu", "")), sm_count=int(device.get("sm_count", 0)),
                       bands=bands, compute_capability=str(device.get("compute_capability", "")),
                       date=today(), dtype=dtype.name, versions=versions)


def _if_measured(reads: tuple[float, ...]) -> tuple[float, ...]:
    """The reads, or none where no size had one (a backend without the read)."""
    return reads if any(t > 0 for t in reads) else ()
