"""Sample statistics, the stopping rule, and the tolerance that decides FAIL: it must catch
one dropped or doubled element, and must never flag a correct summation order."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.verify.inputs import make_input
from reducebench.ladder.registry import LADDER, RUNGS
from reducebench.core.stats import StopRule, summarize
from reducebench.ladder.plan import Plan
from reducebench.ladder.registry import library_chain
from reducebench.verify.tolerance import tolerance, wrap_int32
from reducebench.verify.verdict import verify


def check(result, reference, n, dtype, abs_sum, chain=1, atomics=0):
    """(verified, |error|, tolerance) from the one verification path, for a random-input
    reference of n elements (ints are always exact)."""
    host = SimpleNamespace(data=SimpleNamespace(size=n), reference=reference,
                           abs_sum=abs_sum, exact=not dtype.is_float)
    verdict = verify([result], host, dtype, Plan(chain=chain, atomics=atomics))
    return verdict.ok, verdict.abs_error, verdict.tolerance

F32, F64, I32 = DTYPES["float32"], DTYPES["float64"], DTYPES["int32"]
SM = 132
BIG = 2**24
SEED = 20240607


# -- statistics -------------------------------------------------------------------------

def test_summarize_median_min_max_mean_noise():
    s = summarize([12.0, 10.0, 11.0])
    assert (s.samples, s.median, s.min, s.max, s.mean) == (3, 11.0, 10.0, 12.0, 11.0)
    assert s.stdev == pytest.approx(1.0)
    assert s.noise == pytest.approx(1.0 / 11.0)


def test_summarize_median_of_an_even_count_and_outliers():
    s = summarize([1.0, 2.0, 3.0, 100.0])
    assert s.median == 2.5
    assert s.min == 1.0 and s.max == 100.0


def test_summarize_one_sample_has_no_noise():
    s = summarize([5.0])
    assert s.median == 5.0 and s.stdev == 0.0 and s.noise == 0.0


def test_summarize_refuses_no_samples():
    with pytest.raises(ValueError, match="^no samples to summarize$"):
        summarize([])


def test_two_samples_have_a_standard_deviation():
    s = summarize([1.0, 3.0])                      # (1 + 1) / (2 - 1) = 2: sqrt(2)
    assert s.stdev == pytest.approx(2 ** 0.5) and s.noise == pytest.approx(2 ** 0.5 / 2)


RULE = StopRule(min_samples=5, max_noise=0.01, max_time=1.0, max_samples=100)


def test_stop_rule_waits_for_min_samples_even_when_time_is_up():
    assert not RULE.done([10.0] * 4, elapsed=50.0)


def test_stop_rule_stops_once_quiet_after_min_samples():
    assert RULE.done([10.0] * 5, elapsed=0.0)
    assert RULE.done([10.0, 10.01, 9.99, 10.0, 10.02], elapsed=0.0)


def test_stop_rule_keeps_sampling_while_noisy_and_time_remains():
    assert not RULE.done([10.0, 20.0] * 5, elapsed=0.5)


def test_a_noise_of_zero_allowed_is_never_under_it():
    rule = StopRule(min_samples=2, max_noise=0.0, max_time=1.0, max_samples=100)
    assert not rule.done([10.0] * 5, elapsed=0.5)      # noise 0: not under 0
    assert rule.done([10.0] * 5, elapsed=1.0)


def test_stop_rule_stops_noisy_cases_when_time_is_up():
    assert RULE.done([10.0, 20.0] * 5, elapsed=1.0)


def test_stop_rule_stops_at_max_samples():
    assert not RULE.done([10.0, 20.0] * 49 + [10.0], elapsed=0.0)   # 99
    assert RULE.done([10.0, 20.0] * 50, elapsed=0.0)                # 100


# -- integers ---------------------------------------------------------------------------

def test_int_check_is_exact():
    assert check(1234, 1234, 1000, I32, 5000.0) == (True, 0.0, 0.0)
    ok, error, tol = check(1235, 1234, 1000, I32, 5000.0)
    assert not ok and error == 1.0 and tol == 0.0
    assert tolerance(2**24, I32, 2**26, 2**20) == 0.0


def test_int32_check_compares_modulo_2_to_the_32():
    reference = 2**31 + 5                     # the exact sum overflows int32
    assert wrap_int32(reference) == -2**31 + 5
    assert check(-2**31 + 5, reference, 2**28, I32, 2.0**31)[0]
    assert not check(-2**31 + 6, reference, 2**28, I32, 2.0**31)[0]
    assert check(2**31 - 1, -2**31 - 1, 2**28, I32, 2.0**31)[0]
    assert wrap_int32(-2**31) == -2**31 and wrap_int32(2**31 - 1) == 2**31 - 1


# -- NaN and inf ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("result", [math.nan, math.inf, -math.inf])
def test_nan_and_inf_never_pass(dtype, result):
    ok, error, _ = check(result, 10.0, 1000, DTYPES[dtype], 1000.0, chain=10**6, atomics=10**6)
    assert not ok and error == math.inf


# -- one element more or less -----------------------------------------------------------

@pytest.fixture(scope="module", params=["float32", "float16", "bfloat16"])
def big_input(request):
    dtype = DTYPES[request.param]
    host = make_input(BIG, dtype, SEED, "random")
    values = _as_float64(host.data, dtype)
    return dtype, host, float(np.abs(values).min()), float(values.max())


def _as_float64(data, dtype):
    if dtype.name == "bfloat16":
        return (data.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return data.astype(np.float64)


def test_exact_reference_passes(big_input):
    dtype, host, _, _ = big_input
    assert check(host.reference, host.reference, BIG, dtype, host.abs_sum)[0]


def test_dropping_the_smallest_element_fails_a_tree(big_input):
    dtype, host, smallest, _ = big_input
    assert smallest >= 0.5
    for wrong in (host.reference + smallest, host.reference - smallest):
        ok, error, tol = check(wrong, host.reference, BIG, dtype, host.abs_sum, 1, 0)
        assert not ok, (dtype.name, error, tol)
        assert tol < smallest / 4   # by a margin, not by luck


def test_double_counting_the_largest_element_fails_a_tree(big_input):
    dtype, host, _, largest = big_input
    assert not check(host.reference + largest, host.reference, BIG, dtype, host.abs_sum,
                     1, 0)[0]


def test_one_dropped_element_fails_every_rung_but_warp_atomic_at_2_24(big_input):
    dtype, host, smallest, _ = big_input
    for rung in RUNGS:
        if rung.name == "warp_atomic" or rung.dispatch or dtype.name not in rung.dtypes:
            continue
        plan = rung.plan(BIG, dtype, 0 if rung.is_library else 256, SM)
        chain, atomics = plan.chain, plan.atomics
        ok, error, tol = check(host.reference - smallest, host.reference, BIG, dtype,
                               host.abs_sum, chain, atomics)
        assert not ok, (rung.name, tol)


def _cancelling_input(rng, pairs=2**19, extra=(0.75, -1.25, 1.0625)):
    """Equal numbers of +x and -x, shuffled, plus a few extra elements: sum near zero."""
    x = (rng.random(pairs) + 0.5).astype(np.float32)
    values = np.concatenate([x, -x, np.array(extra, dtype=np.float32)])
    rng.shuffle(values)
    return values


def test_cancellation_input_still_catches_a_dropped_element():
    values = _cancelling_input(np.random.default_rng(SEED))
    exact = values.astype(np.float64)
    n, reference, abs_sum = values.size, math.fsum(exact), float(np.abs(exact).sum())
    assert abs(reference) < 1.0
    assert check(reference, reference, n, F32, abs_sum)[0]
    smallest = float(np.abs(exact).min())
    for wrong in (reference + smallest, reference - smallest, reference - 0.75):
        assert not check(wrong, reference, n, F32, abs_sum, 1, 0)[0]


def test_tolerance_grows_with_atomics_and_chain():
    args = (BIG, F32, float(BIG), 0.001 * BIG)
    by_atomics = [tolerance(*args, chain=1, atomics=a) for a in (0, 1, 100, 10**4, 10**6)]
    assert by_atomics == sorted(by_atomics) and len(set(by_atomics)) == len(by_atomics)
    by_chain = [tolerance(*args, chain=c, atomics=0) for c in (1, 4, 64, 4096)]
    assert by_chain == sorted(by_chain) and len(set(by_chain)) == len(by_chain)


def test_tolerance_scales_with_the_accumulator_precision():
    f64 = tolerance(BIG, F64, float(BIG), 0.001 * BIG, chain=4, atomics=100)
    f32 = tolerance(BIG, F32, float(BIG), 0.001 * BIG, chain=4, atomics=100)
    assert f64 == pytest.approx(f32 * 2.0**-29)


def test_tree_tolerance_at_2_24_matches_the_documented_size():
    tol = tolerance(BIG, F32, float(BIG), 14000.0)
    assert 0.005 < tol < 0.02


# -- correct summation orders are never flagged -----------------------------------------
# float32 arithmetic throughout (numpy float32 adds round exactly like the GPU's).

N_SIM = 2**20


def _tree_rows(rows):
    """Pairwise sums along axis 1 (a shared-memory or shuffle tree), in float32."""
    rows = rows.astype(np.float32)
    while rows.shape[1] > 1:
        if rows.shape[1] % 2:
            rows = np.concatenate([rows, np.zeros((rows.shape[0], 1), np.float32)], axis=1)
        rows = rows[:, 0::2] + rows[:, 1::2]
    return rows[:, 0]


def _tree(values):
    return _tree_rows(values.reshape(1, -1))[0]


def _sequential(values):
    return np.cumsum(values, dtype=np.float32)[-1]


def _per_thread_then_blocks(values, threads, block):
    """Each of `threads` threads adds a strided chain in sequence, then a tree per block."""
    chain = -(-values.size // threads)
    padded = np.zeros(chain * threads, np.float32)
    padded[:values.size] = values
    per_thread = np.cumsum(padded.reshape(chain, threads), axis=0, dtype=np.float32)[-1]
    return _tree_rows(per_thread.reshape(-1, block)), chain


def _sim_inputs():
    f32 = make_input(N_SIM, F32, SEED, "random")
    yield "float32", f32.data.astype(np.float32), f32
    h = make_input(N_SIM, DTYPES["float16"], SEED, "random")
    yield "float16", h.data.astype(np.float32), h
    # a seed whose sum lands near zero: the atomics' own random walk dominates there
    near_zero = make_input(N_SIM, F32, 176, "random")
    yield "float32 near-zero sum", near_zero.data.astype(np.float32), near_zero


@pytest.fixture(scope="module")
def sim_inputs():
    return list(_sim_inputs())


def _assert_passes(result, host, dtype_name, chain, atomics, label):
    dtype = DTYPES[dtype_name.split()[0]]
    ok, error, tol = check(float(result), host.reference, N_SIM, dtype, host.abs_sum,
                           chain, atomics)
    assert ok, f"{label} on {dtype_name}: error {error:.4g} > tolerance {tol:.4g}"


def test_pairwise_tree_passes(sim_inputs):
    plan = LADDER["shfl"].plan(N_SIM, F32, 256, SM)
    for name, values, host in sim_inputs:
        _assert_passes(_tree(values), host, name, plan.chain, plan.atomics, "tree")


def test_sequential_chunks_of_64_then_pairwise_pass_with_chain_64(sim_inputs):
    for name, values, host in sim_inputs:
        chunks = np.cumsum(values.reshape(-1, 64), axis=1, dtype=np.float32)[:, -1]
        _assert_passes(_tree(chunks), host, name, 64, 0, "chunks of 64")


def test_grid_stride_then_block_trees_then_relaunch_passes(sim_inputs):
    plan = LADDER["multi_elem"].plan(N_SIM, F32, 256, SM)
    for name, values, host in sim_inputs:
        partials, chain = _per_thread_then_blocks(values, plan.grid * 256, 256)
        assert chain == plan.chain
        _assert_passes(_tree(partials), host, name, plan.chain, plan.atomics, "multi_elem")


def test_grid_stride_then_one_atomic_per_block_passes(sim_inputs):
    plan = LADDER["gridstride_atomic"].plan(N_SIM, F32, 256, SM)
    for name, values, host in sim_inputs:
        partials, _ = _per_thread_then_blocks(values, plan.grid * 256, 256)
        for order in range(3):
            np.random.default_rng(order).shuffle(partials)   # blocks finish in any order
            _assert_passes(_sequential(partials), host, name, plan.chain, plan.atomics,
                           f"gridstride_atomic (order {order})")


def test_one_atomic_per_warp_passes(sim_inputs):
    plan = LADDER["warp_atomic"].plan(N_SIM, F32, 256, SM)
    assert plan.atomics == N_SIM // 32
    for name, values, host in sim_inputs:
        warps = _tree_rows(values.reshape(-1, 32))
        for order in range(3):
            np.random.default_rng(order).shuffle(warps)
            _assert_passes(_sequential(warps), host, name, plan.chain, plan.atomics,
                           f"warp_atomic (order {order})")


@pytest.mark.parametrize("seed", range(5))
def test_one_atomic_per_warp_passes_on_a_cancelling_input(seed):
    values = _cancelling_input(np.random.default_rng(seed), pairs=N_SIM // 2, extra=())
    exact = values.astype(np.float64)
    reference, abs_sum = math.fsum(exact), float(np.abs(exact).sum())
    plan = LADDER["warp_atomic"].plan(values.size, F32, 256, SM)
    warps = _tree_rows(values.reshape(-1, 32))
    np.random.default_rng(seed).shuffle(warps)
    ok, error, tol = check(float(_sequential(warps)), reference, values.size, F32, abs_sum,
                           plan.chain, plan.atomics)
    assert ok, (error, tol)


def test_library_chain_covers_a_sequential_run_of_sqrt_n(sim_inputs):
    chain = library_chain(N_SIM)
    assert chain == 1024
    for name, values, host in sim_inputs:
        chunks = np.cumsum(values.reshape(-1, chain), axis=1, dtype=np.float32)[:, -1]
        _assert_passes(_tree(chunks), host, name, chain, 0, "library")


# -- the tolerance's formula, at sizes worked out by hand ---------------------------------
# tolerance.py's docstring: tol = 5 u (walk + mean) with rms r = 1.05 sum|x| / n,
# walk = r sqrt(n (chain + log2(n) + 1 + atomics / 2)), and
# mean = |S| (1 + chain / sqrt(3n) + sqrt(atomics / 3)); u = 2^-24 for float32.

U32 = 2.0**-24


def test_tolerance_of_an_atomic_rung_whose_sum_is_far_from_zero():
    # n = 2^20, sum|x| = 2^20 (r = 1.05), S = 2^20, chain 4, atomics 3072:
    # walk = 1.05 * sqrt(2^20 (4 + 20 + 1 + 1536)) = 1.05 * 1024 * sqrt(1561)
    # mean = 2^20 (1 + 4 / (1024 sqrt 3) + sqrt(1024)) = 2^20 (33 + 1 / (256 sqrt 3))
    # The mean part is 800 times the walk: simulations whose sums are near zero (above)
    # cannot see it shrink.
    walk = 1.05 * 1024 * math.sqrt(1561)
    mean = 2**20 * (33 + 1 / (256 * math.sqrt(3)))
    expected = 5 * U32 * (walk + mean)          # 10.32...
    got = tolerance(2**20, F32, float(2**20), float(2**20), chain=4, atomics=3072)
    assert got == pytest.approx(expected, rel=1e-12)
    assert 10.3 < got < 10.4
    # the sign of the sum does not matter
    assert tolerance(2**20, F32, float(2**20), -float(2**20), chain=4, atomics=3072) == got


def test_tolerance_of_a_tree_with_a_zero_sum_is_the_walk_alone():
    # n = 2^16, sum|x| = 2^16 / 1.05 (r = 1), the defaults S = 0, chain 1, atomics 0:
    # walk = sqrt(2^16 (1 + 16 + 1)) = 256 sqrt(18), tol = 5 * 2^-24 * 256 sqrt(18)
    expected = 5 * math.sqrt(18) / 2**16
    assert tolerance(2**16, F32, 2**16 / 1.05) == pytest.approx(expected, rel=1e-12)
    # atomics alone: + 2^16 * 1000 / 2 under the root
    assert tolerance(2**16, F32, 2**16 / 1.05, atomics=1000) == pytest.approx(
        5 * U32 * 256 * math.sqrt(18 + 500), rel=1e-12)


def test_tolerance_of_one_element():
    # n = 1: r = 1.05 * 1.5, depth log2(1) + 1 = 1, walk = 1.575 sqrt(1 + 1),
    # mean = 1.5 (1 + 1 / sqrt 3); n = 0 is read as 1
    expected = 5 * U32 * (1.575 * math.sqrt(2) + 1.5 * (1 + 1 / math.sqrt(3)))
    assert tolerance(1, F32, 1.5, 1.5) == pytest.approx(expected, rel=1e-12)
    assert tolerance(0, F32, 1.5, 1.5) == pytest.approx(expected, rel=1e-12)
    assert tolerance(1, I32, 1.5, 1.5) == 0.0
