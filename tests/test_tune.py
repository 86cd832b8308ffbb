"""`reducebench tune` without a GPU: the search runs every candidate through runner.run on
the host executor (plans really executed in numpy, results verified), with sample
times the test chooses per variant, so the winner, the pruning, the tie-breaking and the
verification rule can be checked against times worked out here."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

import reducebench.device
from reducebench.cli.tune import tune_command
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import OutOfDeviceMemory
from reducebench.ladder.auto import choose, load_table
from reducebench.ladder.geometry import GridRule
from reducebench.ladder.registry import LADDER, Rung
from reducebench.measuring.backend_protocol import Measurement
from reducebench.measuring.hostexec import HostBackend
from reducebench.tune import search as tune
from reducebench.tune.search import (
    CUB,
    SearchSettings,
    SizeBand,
    Variant,
    pick,
    runner_measure,
    search,
    table_from,
)

FLOAT32 = DTYPES["float32"]
FAST = SearchSettings()  # stop rules do not matter: the fake's samples are fixed

# The one-block rung as the registry will list it; a stand-in until it does (one block
# covering all n with a grid-stride loop, which the host executor runs as such).
ONE_BLOCK = LADDER.get("one_block") or Rung(
    "one_block", "stand-in", "relaunch", "18_one_block.cu", "reduce_one_block",
    template="{T}, {Acc}, {block}, {loads}", grid=GridRule(blocks_per_sm=1, work=2**40),
    params={"loads": 4})
TEST_LADDER = {**LADDER, "one_block": ONE_BLOCK}

TINY = SizeBand("tiny", 1, 2**12, (2**10, 2**12), ("one_block", "pingpong"))
REST = SizeBand("rest", 2**12 + 1, None, (2**14, 2**16), ("pingpong",))
PINGPONG_BASE = Variant.of("pingpong", 256, blocks_per_sm=8, loads=4, l2_prefetch=0)


def variant_of(case) -> Variant:
    return Variant(case.rung.name, case.block, tuple(sorted(case.params.items())))


class ChosenTimes(HostBackend):
    """The host executor with every sample of a variant taking time_of(variant, n) us,
    and wrong results for the variants in `wrong`."""

    def __init__(self, time_of, wrong=()):
        super().__init__()
        self.time_of, self.wrong = time_of, set(wrong)
        self.timed: list[tuple[Variant, int]] = []

    def execute(self, case, plan, handle, sampling):
        measured = super().execute(case, plan, handle, sampling)
        variant = variant_of(case)
        if variant in self.wrong:
            measured = Measurement([v + 1 for v in measured.values], measured.times_us)
        if sampling is not None:
            self.timed.append((variant, case.n))
            measured.times_us = [self.time_of(variant, case.n)] * 3
        return measured


def run_search(backend, bands, settings=FAST, **kwargs):
    measure = runner_measure(backend, FLOAT32, ladder=TEST_LADDER)
    return search(measure, settings, bands=bands, **kwargs)


def bowl(variant: Variant, n: int) -> float:
    """Fastest at blocks_per_sm=2 and loads=8 together (two axes away from the base);
    one block and CUB slow; the finishes a little slower than pingpong."""
    if variant == CUB:
        return 30.0
    if variant.rung == "one_block":
        return 20.0
    p = variant.param_dict
    return (10.0 + 0.5 * abs(math.log2(p["blocks_per_sm"]) - 1) + 0.1 * abs(p["loads"] - 8)
            + 0.3 * (variant.block != 256) + 0.2 * p["l2_prefetch"]
            + {"pingpong": 0.0, "vector_load": 0.7, "single_pass": 1.0}[variant.rung])


def test_the_search_reaches_an_optimum_two_axes_from_the_defaults():
    (result,) = run_search(ChosenTimes(bowl), (REST,))
    assert result.winner == Variant.of("pingpong", 256, blocks_per_sm=2, loads=8, l2_prefetch=0)
    assert result.winner_us == (10.0, 10.0)
    # the runner-up is the best of the rest: one step away on the cheapest axis
    assert result.runner_up == Variant.of("pingpong", 256, blocks_per_sm=2, loads=8,
                                          l2_prefetch=1)
    assert result.runner_up_us == (10.2, 10.2)
    assert result.cub_us == (30.0, 30.0)


def tile_valley(variant: Variant, n: int) -> float:
    """one_shot fastest with 2^11-vector tiles cut as 1024 threads x 2 loads: a one-axis
    move away from any 2^11 tile changes the tile (1 us worse), so from the base 256 x 4
    one-axis moves stop at 512 x 4."""
    if variant == CUB:
        return 30.0
    block, p = variant.block, variant.param_dict
    return (10.0 + abs(math.log2(block * p["loads"]) - 11) + 0.1 * abs(math.log2(block) - 10)
            + 0.2 * p["l2_prefetch"])


ONE_SHOT_ONLY = SizeBand("one_shot", 2**12 + 1, None, (2**14,), ("one_shot",))


def test_the_search_trades_threads_for_loads_within_a_tile():
    (result,) = run_search(ChosenTimes(tile_valley), (ONE_SHOT_ONLY,))
    assert result.winner == Variant.of("one_shot", 1024, loads=2, l2_prefetch=0)
    assert result.winner_us == (10.0,)


def test_a_trade_off_the_end_of_an_axis_is_not_a_candidate():
    family = tune.FAMILIES["one_shot"]
    corner = Variant.of("one_shot", 1024, loads=1, l2_prefetch=0)
    star = family.star(corner)
    # block has no step above 1024 and loads none below 1: only 512 x 2 trades
    assert Variant.of("one_shot", 512, loads=2, l2_prefetch=0) in star
    assert all(v.block <= 1024 and v.param_dict["loads"] >= 1 for v in star)
    assert len(star) == 1 + 4 + 3 + 1 + 1  # centre, loads 2..16, blocks 128..512, prefetch, trade
    # loads 1 has no step below it: 512 x 1 trades only to 256 x 2, never round to 16
    star = family.star(Variant.of("one_shot", 512, loads=1, l2_prefetch=0))
    assert Variant.of("one_shot", 256, loads=2, l2_prefetch=0) in star
    assert Variant.of("one_shot", 1024, loads=16, l2_prefetch=0) not in star


def test_a_trade_of_an_axis_the_family_does_not_search_is_refused():
    with pytest.raises(ValueError, match="does not search"):
        tune.Family(Variant.of("one_shot", 256, loads=4, l2_prefetch=0),
                    (("block", (128, 256)),), tune.TILE_TRADE)


def test_each_octave_band_gets_the_variant_best_at_its_own_size():
    """The best loads double with each octave (1 at 2^13 .. 8 at 2^16): one band per
    octave chooses each, where one band over 2^13..2^16 could choose only one."""
    def loads_grow_with_n(variant, n):
        if variant == CUB:
            return 30.0
        p = variant.param_dict
        return (10.0 + 0.1 * abs(math.log2(p["loads"]) - (math.log2(n) - 13))
                + 0.3 * (variant.block != 256) + 0.2 * p["l2_prefetch"])

    bands = tune.octave_bands(13, 16, ("one_shot",))
    assert [(b.n_min, b.n_max, b.sizes) for b in bands] == [
        (4097, 8192, (8192,)), (8193, 16384, (16384,)), (16385, 32768, (32768,)),
        (32769, 65536, (65536,))]
    first = SizeBand("first", 1, 2**12, (2**12,), ("one_shot",))
    results = run_search(ChosenTimes(loads_grow_with_n), (first,) + bands)
    table = table_from(results, {"gpu": "Fake GPU", "sm_count": 132}, FLOAT32)
    chosen = {n: choose(table, n, "float32").param_dict["loads"]
              for n in (5000, 2**13, 2**13 + 1, 2**14, 20000, 2**15, 2**16)}
    assert chosen == {5000: 1, 2**13: 1, 2**13 + 1: 2, 2**14: 2, 20000: 4, 2**15: 4, 2**16: 8}


def test_the_finishes_are_tried_with_the_best_pingpong_geometry():
    def single_pass_faster(variant, n):
        if variant.rung == "single_pass":
            return bowl(Variant("pingpong", variant.block, variant.params), n) - 0.5
        return bowl(variant, n)

    (result,) = run_search(ChosenTimes(single_pass_faster), (REST,))
    assert result.winner == Variant.of("single_pass", 256, blocks_per_sm=2, loads=8,
                                       l2_prefetch=0)
    assert result.winner_us == (9.5, 9.5)


def test_the_search_is_pruned_far_below_the_full_product():
    backend = ChosenTimes(bowl)
    (result,) = run_search(backend, (REST,))
    full_product = 5 * 3 * 3 * 2  # blocks_per_sm x loads x block x l2_prefetch
    searched = {v for v, n in backend.timed if v.rung == "pingpong"}
    assert len(searched) == result.candidates - 2  # the two finishes are the rest
    assert len(searched) <= full_product // 2


def test_a_faster_variant_that_does_not_verify_is_never_chosen():
    best = Variant.of("pingpong", 256, blocks_per_sm=2, loads=8, l2_prefetch=0)
    (result,) = run_search(ChosenTimes(bowl, wrong=[best]), (REST,))
    assert result.winner != best
    # the search goes on around it: the same tile with half the threads (10.3 us) beats
    # the last centre before it (256 threads, 4 loads: 10.4 us)
    assert result.winner == Variant.of("pingpong", 128, blocks_per_sm=2, loads=8,
                                       l2_prefetch=0)


def test_ties_go_to_the_simpler_variant():
    def flat(variant, n):
        return 30.0 if variant == CUB else 10.0

    tiny, rest = run_search(ChosenTimes(flat), (TINY, REST))
    assert tiny.winner == Variant.of("one_block", 256, loads=4)  # one block, its defaults
    # deterministic single_pass before pingpong, with the defaults' geometry
    assert rest.winner == Variant.of("single_pass", 256, blocks_per_sm=8, loads=4,
                                     l2_prefetch=0)


def test_the_winner_is_the_best_at_both_ends_of_its_band():
    spiky = Variant.of("pingpong", 256, blocks_per_sm=1, loads=4, l2_prefetch=0)
    steady = Variant.of("pingpong", 256, blocks_per_sm=2, loads=4, l2_prefetch=0)

    def times(variant, n):
        if variant == spiky:
            return 9.0 if n == 2**14 else 30.0     # best at one end, worst at the other
        if variant == steady:
            return 9.2 if n == 2**14 else 19.0
        return 10.0 if n == 2**14 else 20.0

    (result,) = run_search(ChosenTimes(times), (REST,))
    assert result.winner == steady


def test_one_block_wins_the_tiny_band_when_it_is_fastest_there():
    def times(variant, n):
        if variant == CUB:
            return 4.16
        if variant.rung == "one_block":
            return 4.0 - 0.1 * (variant.param_dict["loads"] == 2) - 0.05 * (variant.block == 512)
        return 4.9

    (result,) = run_search(ChosenTimes(times), (TINY,))
    assert result.winner == Variant.of("one_block", 512, loads=2)
    assert result.winner_us == (3.85, 3.85) and result.cub_us == (4.16, 4.16)


def test_no_new_search_round_starts_after_the_budget():
    ticks = iter([0.0] + [1e9] * 1000)  # the deadline passes right after round 1
    (result,) = run_search(ChosenTimes(bowl), (REST,), clock=lambda: next(ticks))
    # round 1 finds blocks_per_sm=2 alone; the second axis needed round 2
    assert result.winner == Variant.of("pingpong", 256, blocks_per_sm=2, loads=4,
                                       l2_prefetch=0)


def test_quick_measures_one_size_per_band():
    backend = ChosenTimes(bowl)
    (result,) = run_search(backend, (REST,), settings=tune.quick_settings())
    assert result.sizes == (2**16,)
    assert {n for _, n in backend.timed} == {2**16}


def test_a_band_where_nothing_verifies_is_an_error_naming_it():
    def everything(variant, n):
        return 10.0

    backend = ChosenTimes(everything)
    backend.wrong = _AllVariants()
    with pytest.raises(tune.TuneError, match="no candidate verified in band rest"):
        run_search(backend, (REST,))


# -- confirming with float16 at the same bytes ------------------------------------------

FLOAT16 = DTYPES["float16"]
HALF_AT_2_15 = SizeBand("one_shot", 1, None, (2**14,), ("one_shot",))
WIDE = Variant.of("one_shot", 1024, loads=4, l2_prefetch=0)
DEEP = Variant.of("one_shot", 256, loads=16, l2_prefetch=0)


def wide_or_deep(variant: Variant, n: int) -> float:
    """float32 2^14 (the band's size): DEEP 10.0 us, WIDE 10.1, every other one_shot
    tile 13 or more. float16 of the same bytes (2^15): DEEP 12.0, WIDE 10.5, the rest
    13 or more. Without a read the ratios are over the fastest finalist at each size:
    DEEP 1.0 and 12.0 / 10.5 = 1.143 (worst 1.143), WIDE 1.01 and 1.0 (worst 1.01)."""
    if variant == CUB:
        return 30.0
    float16 = n == 2**15
    if variant == DEEP:
        return 12.0 if float16 else 10.0
    if variant == WIDE:
        return 10.5 if float16 else 10.1
    return 13.0 + 0.1 * variant.param_dict["loads"] + variant.block / 1e4


class WrongInFloat16(ChosenTimes):
    """Wrong results for `wrong_in_half` only when the input is float16."""

    def __init__(self, time_of, wrong_in_half):
        super().__init__(time_of)
        self.wrong_in_half = wrong_in_half  # anything `in` works
        self.dtypes_timed: set[str] = set()

    def execute(self, case, plan, handle, sampling):
        measured = super().execute(case, plan, handle, sampling)
        if sampling is not None:
            self.dtypes_timed.add(case.dtype.name)
        if case.dtype.name == "float16" and variant_of(case) in self.wrong_in_half:
            measured = Measurement([v + 1 for v in measured.values], measured.times_us)
        return measured


def search_with_float16(backend, bands):
    half = tune.SameBytes("float16", 2, runner_measure(backend, FLOAT16, ladder=TEST_LADDER))
    return run_search(backend, bands, same_bytes=half)


def test_the_finalists_are_judged_with_float16_at_the_same_bytes_too():
    backend = WrongInFloat16(wide_or_deep, ())
    (result,) = search_with_float16(backend, (HALF_AT_2_15,))
    assert result.winner == WIDE and result.runner_up == DEEP
    assert result.winner_us == (10.1,) and result.runner_up_us == (10.0,)
    assert result.same_bytes_dtype == "float16" and result.same_bytes_us == (10.5,)
    assert backend.dtypes_timed == {"float32", "float16"}
    # float16 is measured only when confirming: the three finalists, not the search
    halves = [v for v, n in backend.timed if n == 2**15]
    assert len(halves) == tune.FINALISTS and DEEP in halves and WIDE in halves
    # without it, the float32 figures alone choose DEEP
    (alone,) = run_search(ChosenTimes(wide_or_deep), (HALF_AT_2_15,))
    assert alone.winner == DEEP and alone.same_bytes_dtype == "" and alone.same_bytes_us == ()


def test_the_third_fastest_in_float32_is_a_finalist_too():
    # MID (512 x 8) 10.05 us in float32 and 12.0 in float16 puts WIDE third in float32;
    # confirmed, WIDE's worst ratio (10.1 / 10.0 = 1.01) is still the best over both.
    mid = Variant.of("one_shot", 512, loads=8, l2_prefetch=0)

    def three_close(variant, n):
        if variant == mid:
            return 12.0 if n == 2**15 else 10.05
        return wide_or_deep(variant, n)

    (result,) = search_with_float16(WrongInFloat16(three_close, ()), (HALF_AT_2_15,))
    assert result.winner == WIDE


def test_a_finalist_wrong_in_float16_is_not_chosen():
    (result,) = search_with_float16(WrongInFloat16(wide_or_deep, [WIDE]), (HALF_AT_2_15,))
    assert result.winner == DEEP


def test_no_finalist_right_in_float16_stops_the_tune_naming_the_band():
    backend = WrongInFloat16(wide_or_deep, _AllVariants())
    with pytest.raises(tune.TuneError, match="no finalist of band one_shot verified with "
                                             "float16; the first failure: FAIL"):
        search_with_float16(backend, (HALF_AT_2_15,))


def test_the_float16_figures_go_into_the_table_and_read_back(tmp_path):
    from reducebench.ladder.auto import write_table

    results = search_with_float16(WrongInFloat16(wide_or_deep, ()), (HALF_AT_2_15,))
    back = load_table(write_table(table_from(results, {"gpu": "G", "sm_count": 1}, FLOAT32),
                                  tmp_path / "g.toml"))
    (band,) = back.bands
    assert band.variant == WIDE and band.same_bytes_dtype == "float16"
    assert band.same_bytes_us == (10.5,)


# -- the confirm step over fixed figures --------------------------------------------------

def fixed_measure(time_of, read_of, wrong=(), wrong_when_confirming=(), stops=None):
    """A Measure over chosen figures: time_of(variant, n) us, read_of(n) us (None: no
    read); (variant, n) in `wrong` never verifies, in `wrong_when_confirming` not with the
    confirm stop rule; `stops` collects (sizes, stop rule) of every call."""
    def measure(variants, sizes, stop):
        if stops is not None:
            stops.append((tuple(sizes), stop))
        found = tune.Measured()
        for n in sizes:
            if read_of(n) is not None:
                found.reads[n] = read_of(n)
            for v in variants:
                bad = (v, n) in wrong or (stop == FAST.confirm_stop
                                          and (v, n) in wrong_when_confirming)
                if bad:
                    found.errors[(v, n)] = f"FAIL {v.describe()} at n = {n}"
                else:
                    found.times[(v, n)] = time_of(v, n)
        return found
    return measure


def deep_or_wide_by_read(variant: Variant, n: int) -> float:
    """float32 2^14: DEEP 10.0 us, WIDE 10.2; float16 2^15: DEEP 10.1, WIDE 10.0; the
    rest 13 or more. With the reads below (10.0 and 9.0 us) the ratios are DEEP 1.0 and
    1.122, WIDE 1.02 and 1.111: WIDE has the better worst case. Over the fastest finalist
    instead of float16's own read, DEEP's worst would be 1.01 and WIDE's 1.02."""
    if variant == CUB:
        return 30.0
    if variant in (DEEP, WIDE):
        return {(DEEP, 2**14): 10.0, (WIDE, 2**14): 10.2,
                (DEEP, 2**15): 10.1, (WIDE, 2**15): 10.0}[(variant, n)]
    return 13.0 + 0.1 * variant.param_dict["loads"] + variant.block / 1e4


def read_10_then_9(n: int) -> float:
    return {2**14: 10.0, 2**15: 9.0}[n]


def search_fixed(time_of=deep_or_wide_by_read, read_of=read_10_then_9, half_wrong=(),
                 wrong_when_confirming=(), half_measure=None, on_stage=None, stops=None):
    half = tune.SameBytes("float16", 2, half_measure or fixed_measure(
        time_of, read_of, wrong=half_wrong, stops=stops))
    main = fixed_measure(time_of, read_of, wrong_when_confirming=wrong_when_confirming)
    return tune.search(main, FAST, bands=(HALF_AT_2_15,), same_bytes=half, on_stage=on_stage)


def test_float16_is_judged_by_its_own_read_which_goes_into_the_table(tmp_path):
    from reducebench.ladder.auto import write_table

    (result,) = search_fixed()
    assert result.winner == WIDE
    assert result.read_us == (10.0,) and result.same_bytes_read_us == (9.0,)
    assert result.same_bytes_us == (10.0,)
    back = load_table(write_table(table_from([result], {"gpu": "G", "sm_count": 1}, FLOAT32),
                                  tmp_path / "g.toml"))
    assert back.bands[0].same_bytes_read_us == (9.0,) and back.bands[0].read_us == (10.0,)


def test_float16_is_measured_with_the_confirm_stop_rule():
    stops = []
    search_fixed(stops=stops)
    assert stops and all(stop == FAST.confirm_stop for _, stop in stops)


class EveryVariantAt:
    """(variant, n) for every variant but `spared` at size n."""

    def __init__(self, n: int, spared=()):
        self.n, self.spared = n, set(spared)

    def __contains__(self, key) -> bool:
        variant, n = key
        return n == self.n and variant != CUB and variant not in self.spared


def test_the_float16_failure_is_the_one_named():
    # WIDE also fails in float32 when confirming; the error still names float16's failure
    with pytest.raises(tune.TuneError, match=r"verified with float16; the first failure: "
                                             r"FAIL .* at n = 32768"):
        search_fixed(half_wrong=EveryVariantAt(2**15), wrong_when_confirming=[(WIDE, 2**14)])


def test_when_no_finalist_verifies_again_the_search_figures_decide_among_those_right_in_float16():
    # Every finalist fails float32 in the confirm step; only WIDE is right in float16,
    # though DEEP was faster in the float32 search.
    (result,) = search_fixed(half_wrong=EveryVariantAt(2**15, spared=[WIDE]),
                             wrong_when_confirming=EveryVariantAt(2**14))
    assert result.winner == WIDE and result.winner_us == (10.2,)  # the search's figure
    assert result.cub_us == (30.0,)                # CUB from the confirm step all the same
    assert result.same_bytes_dtype == "float16" and result.same_bytes_us == (10.0,)


def test_float16_inputs_too_big_for_the_gpu_leave_the_band_confirmed_without_them():
    def too_big(variants, sizes, stop):
        raise OutOfDeviceMemory("2^15 float16 elements")

    stages = []
    (result,) = search_fixed(half_measure=too_big, on_stage=stages.append)
    assert result.winner == DEEP  # float32 alone
    assert result.same_bytes_dtype == "" and result.same_bytes_us == ()
    assert any("not confirmed with float16" in stage for stage in stages)


def test_within_a_rung_the_mean_ranks_before_the_worst_case():
    # Reads of 1.0 us. A: 1.002 and 1.000 (worst 1.002, mean 1.001); B: 1.0015 at both
    # (worst and mean 1.0015). Both tie on the worst case and on the mean (0.3%); A's
    # mean is the better, B's worst case the better: the mean decides.
    a = Variant.of("one_shot", 512, loads=4, l2_prefetch=0)
    b = Variant.of("one_shot", 256, loads=4, l2_prefetch=0)  # the defaults
    measured = tune.Measured({(a, 1): 1.002, (a, 2): 1.000, (b, 1): 1.0015, (b, 2): 1.0015},
                             reads={1: 1.0, 2: 1.0})
    assert pick([a, b], measured, (1, 2))[0] == a


class _AllVariants:
    def __contains__(self, variant):
        return variant != CUB


def test_pick_needs_every_size_and_breaks_ties_toward_the_defaults():
    a = PINGPONG_BASE
    b = Variant.of("pingpong", 128, blocks_per_sm=8, loads=4, l2_prefetch=0)
    c = Variant.of("pingpong", 512, blocks_per_sm=8, loads=4, l2_prefetch=0)
    measured = tune.Measured({(a, 1): 10.0, (a, 2): 10.0, (b, 1): 10.0, (b, 2): 10.02,
                              (c, 1): 5.0})  # c missed size 2: out
    winner, runner_up = pick([a, b, c], measured, (1, 2))
    assert winner == a and runner_up == b
    measured.times[(b, 2)] = 9.0  # now b is faster by 10%: no tie
    assert pick([a, b, c], measured, (1, 2))[0] == b


TINY_BAND = (2**10, 2**12)


def at_the_h200s_tiny_band(times: dict[Variant, tuple[float, float]]) -> tune.Measured:
    """Each variant's medians at 2^10 and 2^12, over the reads of the H200's tiny band at
    2967bf7 (results/h200/tune_candidates_2967bf7.csv): 3.616 and 3.744 us."""
    return tune.Measured({(variant, n): us for variant, pair in times.items()
                          for n, us in zip(TINY_BAND, pair)},
                         reads=dict(zip(TINY_BAND, (3.616, 3.744))))


def test_a_tie_in_the_worst_case_goes_to_the_better_mean_before_the_simpler_variant():
    # The H200's tiny band at 2967bf7 (results/h200/tune_candidates_2967bf7.csv): reads
    # 3.616 us at 2^10 and 3.744 at 2^12; one_shot 256 x 1 (one setting off the defaults)
    # took 3.744 and 3.840, 128 x 2 (two off) 3.744 and 3.776. Worst cases: both
    # 3.744 / 3.616 = 1.0354. Geometric means: sqrt(1.0354 * 1.0256) = 1.0305 and
    # sqrt(1.0354 * 1.0085) = 1.0219, 0.8% apart: more than the 0.3% tie.
    simpler = Variant.of("one_shot", 256, loads=1, l2_prefetch=0)
    faster = Variant.of("one_shot", 128, loads=2, l2_prefetch=0)
    measured = at_the_h200s_tiny_band({simpler: (3.744, 3.840), faster: (3.744, 3.776)})
    assert pick([simpler, faster], measured, TINY_BAND) == (faster, simpler)


def test_a_tie_in_the_mean_too_goes_to_the_simpler_rung():
    # The same reads; pingpong (state between launches, no atomic per tile) ranks before
    # one_shot. pingpong 3.744 and 3.840 us: worst 1.0354, mean 1.0305; one_shot 3.744
    # and 3.830: worst 1.0354, mean sqrt(1.0354 * 1.0230) = 1.0292, 0.13% better: a tie.
    simpler = Variant.of("pingpong", 256, blocks_per_sm=8, loads=4, l2_prefetch=0)
    one_shot = Variant.of("one_shot", 128, loads=2, l2_prefetch=0)
    measured = at_the_h200s_tiny_band({simpler: (3.744, 3.840), one_shot: (3.744, 3.830)})
    assert pick([simpler, one_shot], measured, TINY_BAND) == (simpler, one_shot)


def test_a_tie_between_tiles_of_one_rung_goes_to_the_faster_tile():
    # The H200's 2^27 band at ba6d03e (`git show ba6d03e:configs/tuning/nvidia-h200.toml`,
    # the confirming medians): read 117.344 us; one_shot 256 x 16 took 118.016 and 1024 x 4 117.760.
    # Ratios 1.00573 and 1.00355: 0.22% apart, inside the 0.3% tie (in the mean too, one
    # size), and 256 x 16 is the smaller block with as many settings changed (one).
    # Eight ticks of the event clock: the faster tile is kept.
    small_block = Variant.of("one_shot", 256, loads=16, l2_prefetch=0)
    faster = Variant.of("one_shot", 1024, loads=4, l2_prefetch=0)
    measured = tune.Measured({(small_block, 2**27): 118.016, (faster, 2**27): 117.760},
                             reads={2**27: 117.344})
    assert pick([small_block, faster], measured, (2**27,)) == (faster, small_block)
    # An exact tie still goes to the fewer settings changed, then the smaller block.
    measured.times[(faster, 2**27)] = 118.016
    assert pick([small_block, faster], measured, (2**27,))[0] == small_block


def test_a_better_mean_does_not_beat_a_better_worst_case():
    # Reads of 1.0 us: `spiky` is 1.10 and 0.90 of them (worst 1.10, geometric mean
    # sqrt(0.99) = 0.995), `steady` 1.05 at both (worst and mean 1.05). The worst cases
    # are 4.8% apart, outside the 0.3% tie: steady wins though spiky's mean is better.
    spiky = Variant.of("one_shot", 256, loads=4, l2_prefetch=0)  # the defaults: simplest
    steady = Variant.of("one_shot", 128, loads=2, l2_prefetch=0)
    measured = tune.Measured({(spiky, 1): 1.10, (spiky, 2): 0.90,
                              (steady, 1): 1.05, (steady, 2): 1.05}, reads={1: 1.0, 2: 1.0})
    assert pick([spiky, steady], measured, (1, 2)) == (steady, spiky)


def test_the_runner_up_is_chosen_by_the_same_rule_as_the_winner():
    # After the winner (2.0 worst), b and c tie on their worst case (2.2 against 2.2) and
    # c's mean is better (sqrt(2.2 * 1.1) = 1.556 against sqrt(2.2 * 2.2) = 2.2): c is
    # the runner-up though b is the simpler of the two.
    a = Variant.of("one_shot", 256, loads=2, l2_prefetch=0)
    b = Variant.of("one_shot", 256, loads=1, l2_prefetch=0)
    c = Variant.of("one_shot", 128, loads=8, l2_prefetch=1)
    measured = tune.Measured({(a, 1): 2.0, (a, 2): 2.0, (b, 1): 2.2, (b, 2): 2.2,
                              (c, 1): 2.2, (c, 2): 1.1}, reads={1: 1.0, 2: 1.0})
    assert pick([a, b, c], measured, (1, 2)) == (a, c)


def test_the_table_of_a_search_reads_back_and_chooses_the_winners(tmp_path):
    results = run_search(ChosenTimes(bowl), (TINY, REST))
    device = {"gpu": "Fake GPU", "sm_count": 132, "compute_capability": "9.0",
              "cupy": "14.2.0", "driver": "13.0", "runtime": "13.2"}
    table = table_from(results, device, FLOAT32)
    from reducebench.ladder.auto import write_table

    back = load_table(write_table(table, tmp_path / "fake.toml"))
    assert back.gpu == "Fake GPU" and back.sm_count == 132
    assert dict(back.versions)["cupy"] == "14.2.0"
    assert choose(back, 2**11, "float32") == results[0].winner
    assert choose(back, 2**20, "float32") == results[1].winner
    assert back.bands[1].cub_us == (30.0, 30.0)


def test_the_tune_command_writes_the_file_and_every_candidate(tmp_path, monkeypatch):
    backend = ChosenTimes(bowl)
    backend.device_info = lambda: {**HostBackend.device_info(backend), "gpu": "Fake GPU"}
    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: backend)
    monkeypatch.setattr(tune, "BANDS", (SizeBand("all", 1, None, REST.sizes, REST.families),))
    # (an --out folder must exist, as for every other --out: test_option_checks.py)
    out, records = tmp_path / "fake.toml", tmp_path / "candidates.csv"
    result = CliRunner().invoke(tune_command, ["--out", str(out), "--records", str(records)])
    assert result.exit_code == 0, result.output
    assert "tuning file written to" in result.output
    assert choose(load_table(out), 2**20, "float32") == \
        Variant.of("pingpong", 256, blocks_per_sm=2, loads=8, l2_prefetch=0)
    rows = records.read_text().strip().splitlines()
    assert len(rows) - 1 == len(backend.timed)  # a header, then one row per timed case
    assert sum(",float16," in row for row in rows) == 6  # 3 finalists at 2^15 and 2^17
    assert load_table(out).bands[0].same_bytes_dtype == "float16"


@pytest.mark.parametrize("args, message", [
    (["--budget", "0"], "--budget 0.0: seconds above 0, e.g. 240"),
    (["--out", "{tmp}"], "--out {tmp}: is a folder; give a file name in it"),
    (["--records", "{tmp}"], "--records {tmp}: is a folder"),
    (["--records", "{tmp}/taken.csv"], "--records {tmp}/taken.csv already exists"),
    (["--records", "{tmp}/none/x.csv"], "--records {tmp}/none/x.csv: folder {tmp}/none does"),
])
def test_bad_options_are_one_line_before_the_device_is_touched(monkeypatch, tmp_path, args,
                                                                  message):
    monkeypatch.setattr(reducebench.device, "open_backend",
                        lambda device=0: pytest.fail("the device was reached"))
    from reducebench.cli import ReducebenchGroup

    (tmp_path / "taken.csv").write_text("a run's rows")
    cli = ReducebenchGroup(commands={"tune": tune_command})  # as the CLI registers it
    result = CliRunner().invoke(cli, ["tune", *[a.format(tmp=tmp_path) for a in args]])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert result.output.startswith("reducebench: error: ")
    assert message.format(tmp=tmp_path) in result.output


def test_a_lost_context_ends_tune_with_exit_1_and_no_file(tmp_path, monkeypatch):
    from reducebench.core.errors import ContextLost

    class Loses(ChosenTimes):
        def execute(self, case, plan, handle, sampling):
            if case.params.get("blocks_per_sm") == 2:
                raise ContextLost("an illegal memory access was encountered")
            return super().execute(case, plan, handle, sampling)

    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: Loses(bowl))
    monkeypatch.setattr(tune, "BANDS", (SizeBand("all", 1, None, REST.sizes, REST.families),))
    out = tmp_path / "fake.toml"
    result = CliRunner().invoke(tune_command, ["--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "context was lost" in result.output and "no tuning file written" in result.output
    assert not out.exists()


def test_the_families_search_only_what_auto_can_run():
    from reducebench.ladder.auto import AUTO_RUNGS

    rungs = {family.base.rung for family in tune.FAMILIES.values()}
    assert rungs | set(tune.FINISH_RUNGS) <= set(AUTO_RUNGS)
    for name, family in tune.FAMILIES.items():
        if name in LADDER:  # the bases are the registry's defaults
            assert family.base.param_dict == LADDER[name].params, name
        # every value searched is one the rung accepts (blocks of one warp included)
        for variant in family.star(family.base):
            assert variant.block in LADDER[variant.rung].blocks, variant


def warps_win_below_2_to_the_17(variant: Variant, n: int) -> float:
    """A bowl over one_shot's tile with its bottom at 256 x 4 (0.1 us per step of block or
    loads away), but blocks of 32 threads 0.45 us faster than that at n <= 2^16 (the
    barrier-free block sum, few atomics) and 5 us slower above (the atomics queue)."""
    if variant == CUB:
        return 30.0
    if variant.rung != "one_shot":
        return 20.0
    p = variant.param_dict
    base = (10.0 + 0.1 * abs(math.log2(variant.block) - 8) + 0.1 * abs(math.log2(p["loads"]) - 2)
            + 0.05 * p["l2_prefetch"])
    if variant.block == 32:
        return base - 0.45 if n <= 2**16 else base + 5.0
    return base


def test_the_warps_family_finds_one_warp_blocks_that_moves_from_256_never_reach():
    """From one_shot 256 x 4 every move is slower (128 x 4 by 0.1 us), so 32 x 4 (9.85 us)
    is found only because its family starts there; a band that does not search that
    family keeps 256 x 4 and never measures a 32-thread block."""
    small = SizeBand("small", 1, 2**16, (2**14,), ("one_shot", "one_shot_warps"))
    large = SizeBand("large", 2**16 + 1, None, (2**18,), ("one_shot",))
    backend = ChosenTimes(warps_win_below_2_to_the_17)
    results = run_search(backend, (small, large))
    assert results[0].winner == Variant.of("one_shot", 32, loads=4, l2_prefetch=0)
    assert results[0].winner_us == pytest.approx((9.85,))
    assert results[1].winner == Variant.of("one_shot", 256, loads=4, l2_prefetch=0)
    assert not any(v.rung == "one_shot" and v.block < 128 for v, n in backend.timed if n > 2**16)
    assert any(v.block == 32 for v, n in backend.timed if n <= 2**16)


def best_two_moves_from_32_x_4(variant: Variant, n: int) -> float:
    """one_shot 256 x 4 at 9.85 us, other wide tiles 10.5; in one-warp blocks a bowl whose
    bottom, 32 x 8 with the L2 prefetch (9.8), is two settings from 32 x 4: after round 1
    the best one_shot overall is 256 x 4, the best one-warp one 32 x 8 or 32 x 4 with
    the prefetch (9.9)."""
    if variant == CUB:
        return 30.0
    if variant.rung != "one_shot":
        return 20.0
    p = variant.param_dict
    if variant.block >= 128:
        return 9.85 if (variant.block, p["loads"], p["l2_prefetch"]) == (256, 4, 0) else 10.5
    return (9.8 + 0.1 * abs(math.log2(variant.block) - 5) + 0.1 * abs(math.log2(p["loads"]) - 3)
            + 0.1 * (1 - p["l2_prefetch"]))


def test_each_family_searches_on_around_its_own_best_not_the_rungs():
    """Round 2 centres the one-warp family on its own best (32 x 8 or 32 x 4 with the
    prefetch), whose star holds 32 x 8 with the prefetch; centred on the rung's best,
    256 x 4, it would never measure it."""
    band = SizeBand("small", 1, 2**16, (2**14,), ("one_shot", "one_shot_warps"))
    (result,) = run_search(ChosenTimes(best_two_moves_from_32_x_4), (band,))
    assert result.winner == Variant.of("one_shot", 32, loads=8, l2_prefetch=1)


def test_the_warps_family_starts_at_32_x_4_and_trades_threads_for_loads():
    """Round 1 of one_shot_warps: 32 x 4 itself, loads 1, 2, 8, 16, block 64, the
    prefetch, and the same tile as 64 x 2 (block up, loads down): 8 variants, every one
    counted from 32 x 4 for the tie-break."""
    family = tune.FAMILIES["one_shot_warps"]
    base = Variant.of("one_shot", 32, loads=4, l2_prefetch=0)
    assert family.base == base and tune.departures(base) == 0
    star = family.star(base)
    assert len(star) == 8
    assert Variant.of("one_shot", 64, loads=2, l2_prefetch=0) in star
    assert tune.departures(Variant.of("one_shot", 64, loads=2, l2_prefetch=0)) == 2


def test_blocks_of_one_or_two_warps_are_searched_up_to_2_to_the_20_only():
    for band in tune.BANDS:
        searched = "one_shot_warps" in band.families
        assert searched == (band.n_max is not None and band.n_max <= 2**20), band.name


def test_a_family_holds_only_its_own_rung_and_axis_values():
    warps, wide = tune.FAMILIES["one_shot_warps"], tune.FAMILIES["one_shot"]
    assert warps.holds(Variant.of("one_shot", 64, loads=16, l2_prefetch=1))
    assert not warps.holds(Variant.of("one_shot", 128, loads=4, l2_prefetch=0))
    assert not wide.holds(Variant.of("one_shot", 32, loads=4, l2_prefetch=0))
    assert not warps.holds(Variant.of("pingpong", 32, loads=4, l2_prefetch=0,
                                      blocks_per_sm=8))


def test_the_shipped_bands_cover_every_size_once_and_search_one_shot_everywhere():
    for previous, band in zip(tune.BANDS, tune.BANDS[1:]):
        assert band.n_min == previous.n_max + 1
    assert tune.BANDS[0].n_min == 1 and tune.BANDS[-1].n_max is None
    assert all("one_shot" in band.families for band in tune.BANDS)
    assert all(min(band.sizes) >= band.n_min and
               (band.n_max is None or max(band.sizes) <= band.n_max) for band in tune.BANDS)


def test_sizes_past_2_to_the_28_are_tuned_at_a_size_past_2_to_the_28():
    """The streaming rate decides there (a persistent grid fell 1.2 to 2.8% behind the read
    at 2^29..2^32): a band measured at 2^26 and 2^28 must not choose for 2^30."""
    band = next(b for b in tune.BANDS if b.n_min <= 2**30 and (b.n_max is None or 2**30 <= b.n_max))
    assert min(band.sizes) > 2**28


def test_a_band_too_big_for_the_gpu_is_covered_by_the_band_before_it():
    """A small GPU cannot hold the giant band's 2^30 input: that band is not searched,
    and the band before it reaches to every larger n instead of the tune failing."""
    backend = ChosenTimes(bowl)
    backend.free = 2**27                  # 2^16 float32 (and CUB) fit, 2^26 does not
    rest = SizeBand("rest", 2**12 + 1, 2**16, (2**14, 2**16), ("pingpong",))
    big = SizeBand("big", 2**16 + 1, None, (2**26,), ("pingpong",))
    stages = []
    results = run_search(backend, (rest, big), on_stage=stages.append)
    assert [(r.band.n_min, r.band.n_max) for r in results] == [(2**12 + 1, None)]
    assert any(stage.startswith("big: not searched") for stage in stages), stages
    assert all(n <= 2**16 for _, n in backend.timed)


def test_a_first_band_too_big_for_the_gpu_stops_the_tune():
    backend = ChosenTimes(bowl)
    backend.free = 2**10
    with pytest.raises(OutOfDeviceMemory):
        run_search(backend, (REST,))
