"""Exact inputs at every band edge (docs/verification.md, "Band edges"): a kernel that
drops one element or adds one twice must fail verification, in the accumulator's own
arithmetic, whatever the order of its additions.

A "kernel" here is a float sum over the stored values (the half types widened to float32,
their accumulator), with one element dropped or doubled, added in one of four orders:
- `descending`: every element sorted largest first, one after another. The running sum
  passes through the largest partial sum any order can form (all positives, and the
  doubled element, before any negative): the worst case for a positive overflow of the
  accumulator's exact integers.
- `ascending`: the same from the most negative end: the worst case for the negatives.
- `index`: one after another in memory order (a single chain, or a series of atomics).
- `pairwise`: numpy's pairwise sum, representative of a tree.
Worst placements: the doubled element is the largest (or, ascending, the most negative)
and is added where the running sum is farthest from 0; the dropped one is the largest or
the smallest, and in the balanced regime a -1 (whose loss the worst order rounds away).

The expected shapes below are worked out by hand from the rules in docs/verification.md,
not read back from reducebench.verify.inputs."""

from functools import lru_cache

import numpy as np
import pytest

from exact_cases import LAST_GUARANTEED, largest_guaranteed
from reducebench.core.dtypes import DTYPES
from reducebench.verify.inputs import (bfloat16_bits_to_float32, case_inputs, every_order_exact,
                                       exact_inputs, exact_shape)
from reducebench.verify.verdict import error_of, expected

F32, F16, BF16, F64 = (DTYPES[n] for n in ("float32", "float16", "bfloat16", "float64"))
HALF_AND_FLOAT = [F32, F16, BF16]      # accumulated in float32: exact integers up to 2^24
L = 2**24
ORDERS = ("descending", "ascending", "index", "pairwise")

# (n, dtype names, inputs, positive shape, signed shape): the hand-worked table.
# positive: ("positive", M) elements 1..M | ("negatives", count of +1, count of -1) |
#           ("balanced",) +-1, one or two more +1 per 2^24 chunk
# signed:   ("signed", M') magnitudes 1..M' with random signs | None (no companion)
ALL3 = ("float32", "float16", "bfloat16")
TABLE = [
    # the half types' caps: M = cap until (n + 1) * cap = 2^24, then 2^24 // (n + 1)
    (2**12 - 1, ("float32",), 1, ("positive", 4096), None),
    (2**12, ("float32",), 1, ("positive", 4095), None),
    (2**13 - 1, ("float16",), 1, ("positive", 2048), None),
    (2**13, ("float16",), 1, ("positive", 2047), None),
    (2**16 - 1, ("bfloat16",), 1, ("positive", 256), None),
    (2**16, ("bfloat16",), 1, ("positive", 255), None),
    # fewer than 16 magnitudes: the signed companion appears, M' = 2^24 // (2^19 + 4)
    (2**20 - 1, ALL3, 1, ("positive", 16), None),
    (2**20, ALL3, 2, ("positive", 15), ("signed", 31)),
    # the 2^24 edges
    (L - 1, ALL3, 2, ("positive", 1), ("signed", 1)),
    (L, ALL3, 2, ("negatives", L - 1, 1), ("signed", 1)),
    (L + 1, ALL3, 2, ("negatives", L - 1, 2), ("signed", 1)),
    # the signed companion's last size (n // 2 + 4 = 2^24), then none
    (2**25 - 7, ALL3, 2, ("negatives", L - 1, L - 6), ("signed", 1)),
    (2**25 - 6, ALL3, 1, ("negatives", L - 1, L - 5), None),
    # the last size every order is exact, then balanced chunks
    (2**25 - 3, ALL3, 1, ("negatives", L - 1, L - 2), None),
    (2**25 - 2, ALL3, 1, ("balanced",), None),
]


def _rows():
    for n, names, count, positive, signed in TABLE:
        for name in names:
            yield pytest.param(n, DTYPES[name], count, positive, signed, id=f"{name}-{n}")


@pytest.mark.parametrize("n, dtype, count, positive, signed", list(_rows()))
def test_each_band_edge_has_the_shape_worked_out_on_paper(n, dtype, count, positive, signed):
    assert len(exact_inputs(n, dtype)) == count
    shape = exact_shape(n, dtype, "positive")
    if positive[0] == "positive":
        assert (shape.regime, shape.magnitude) == positive
    elif positive[0] == "negatives":
        assert (shape.regime, n - shape.negatives, shape.negatives) == positive
    else:
        assert shape.regime == "balanced"
    if signed is not None:
        companion = exact_shape(n, dtype, "signed")
        assert (companion.regime, companion.magnitude) == signed
    assert every_order_exact(n, dtype) == (positive[0] != "balanced")


def test_float64_has_no_edge_below_the_size_limit():
    """M = min(2^20, 2^53 // (n + 1)): the worst partial sum (n + 1) * M reaches 2^53
    exactly at n = 2^33 - 1; beyond, M shrinks (8191 at 2^40) and one input suffices."""
    for n, magnitude in ((2**33 - 1, 2**20), (2**33, 2**20 - 1), (2**40, 8191)):
        shape = exact_shape(n, F64)
        assert (shape.regime, shape.magnitude) == ("positive", magnitude)
        assert (n + 1) * magnitude <= 2**53 and exact_inputs(n, F64) == ("positive",)


# -- the worst input a shape permits ------------------------------------------------

@pytest.mark.parametrize("n, dtype, count, positive, signed",
                         [row for row in _rows() if row.values[3][0] == "positive"
                          and row.values[0] <= 2**20])
def test_the_worst_input_a_shape_permits_sums_exactly_with_an_element_doubled(
        n, dtype, count, positive, signed):
    """Not the generated values but the worst ones the shape allows: every element at M
    but one odd element, the largest doubled, all added largest first. Its running sum
    peaks at n * M + 1, the first sum that could be odd above 2^24: within 2^24 it is
    exact. (A shape whose M were one step too large at a cap edge fails here.)"""
    magnitude = exact_shape(n, dtype).magnitude
    worst = np.full(n + 1, magnitude, dtype=np.float32)   # n elements and the doubled one
    worst[-1] = 1                                          # the odd one, added last
    assert _sequential(worst, np.float32) == n * magnitude + 1


def test_a_magnitude_one_step_above_the_cap_rule_would_round():
    """What the cap rule prevents: 2^12 float32 elements of 4096 (one more element than
    the rule allows at that magnitude), doubled, then an odd one: 2^24 + 1 rounds."""
    worst = np.full(2**12 + 1, 4096, dtype=np.float32)
    worst[-1] = 1
    assert _sequential(worst, np.float32) != 2**12 * 4096 + 1


# -- the generated inputs, with a dropped or doubled element --------------------------

SEEDS = {"float32": 3, "float16": 4, "bfloat16": 5}
LAST_EXACT = LAST_GUARANTEED   # the last size every order is exact


@lru_cache(maxsize=2)
def _case(n: int, name: str) -> tuple:
    """The case's inputs as verify/ uses them: the values widened to the accumulator."""
    dtype = DTYPES[name]
    if (n, name) == (LAST_EXACT, "float32"):   # made once for test_inputs.py too
        inputs = largest_guaranteed()
    else:
        inputs = case_inputs(n, dtype, SEEDS[name])
    return tuple((host, _accumulated(host, dtype)) for host in inputs)


def _accumulated(host, dtype) -> np.ndarray:
    if dtype.name == "bfloat16":
        return bfloat16_bits_to_float32(host.data)
    return host.data.astype(np.float64 if dtype.acc_name == "float64" else np.float32,
                            copy=False)


_SCRATCH: dict = {}


@pytest.fixture(scope="module", autouse=True)
def _free_memory():
    """Hand back the big arrays once this module is done (the rest of the suite runs in
    the same process)."""
    yield
    _SCRATCH.clear()
    _case.cache_clear()


def _running(values: np.ndarray, acc) -> np.ndarray:
    """The running sums, one addition after another in acc (np.cumsum adds in order), in
    a buffer kept between calls: fresh 128 MiB arrays cost more than the sums."""
    buffer = _SCRATCH.get(acc)
    if buffer is None or buffer.size < values.size:
        buffer = _SCRATCH[acc] = np.empty(max(values.size, 2**25), dtype=acc)
    return np.cumsum(values, dtype=acc, out=buffer[:values.size])


def _sequential(values: np.ndarray, acc) -> float:
    return float(_running(values, acc)[-1])


def _in_order(values: np.ndarray, order: str) -> np.ndarray:
    if order == "index":
        return values
    if values.min() == -1 and values.max() == 1:   # +-1 (no zeros): sorted by counting
        minus = int(np.count_nonzero(values < 0))
        ascending = np.repeat(np.array([-1, 1], dtype=values.dtype), [minus, values.size - minus])
    else:
        ascending = np.sort(values)
    return ascending[::-1].copy() if order == "descending" else ascending


def _kernels(values: np.ndarray, order: str) -> dict:
    """What a correct kernel (key None) and each buggy one returns, adding in this order.
    "first" and "last" are the element added first or last: descending, the largest and
    the most negative; ascending the reverse; index, memory order."""
    acc = values.dtype.type
    a = _in_order(values, order)
    if order == "pairwise":
        def tree(x):
            return float(np.add.reduce(x, dtype=acc))
        return {None: tree(a), ("drop", "first"): tree(a[1:]), ("drop", "last"): tree(a[:-1]),
                ("double", "first"): tree(np.concatenate([a[:1], a])),
                ("double", "last"): tree(np.append(a, a[-1]))}
    chain = _running(a, acc)
    results = {None: float(chain[-1]),
               ("drop", "last"): float(chain[-2]),                # one addition short
               ("double", "last"): float(chain[-1] + a[-1])}      # one more, in acc
    results[("drop", "first")] = _sequential(a[1:], acc)  # reuses the buffer: chain is spent
    first = a[0]
    a[0] = first + first     # v + v, the chain's first addition, is exact: 2v
    try:
        results[("double", "first")] = _sequential(a, acc)
    finally:
        a[0] = first         # the index order works on the cached values themselves
    return results


def _orders(values: np.ndarray) -> tuple[str, ...]:
    """Ascending matters only with negatives: otherwise its running sum never exceeds
    the descending one."""
    return ORDERS if values.min() < 0 else tuple(o for o in ORDERS if o != "ascending")


# Every edge of the table for float32, and for the half types up to 2^20. From 2^20 up
# the three types share one shape, so one seed gives them the same values, which they
# all add in float32: test_the_half_types_hold_the_float32_values_at_2_24 checks that
# at 2^24, the edge the bug report names, and the float32 cases stand for them.
EDGES = [(n, name) for n, names, *_ in TABLE for name in names
         if n not in (2**25 - 7, 2**25 - 6) and (name == "float32" or n <= 2**20)]


def _documented_exception(n: int, order: str) -> bool:
    """Balanced chunks (past 2^25 - 3) added largest first: 2^24 + 1 or more +1 before
    any -1, so float32 rounds (docs/verification.md)."""
    return n > LAST_EXACT and order == "descending"


@pytest.mark.parametrize("n, name", EDGES, ids=[f"{name}-{n}" for n, name in EDGES])
def test_a_dropped_or_doubled_element_is_caught_at_each_edge(n, name):
    """Every input of the case catches each bug in every order, so the case does, and a
    correct kernel passes; the one exception is the positive input past 2^25 - 3 added
    largest first, which alone is the whole case there."""
    dtype = DTYPES[name]
    reference = {host.name: expected(host, dtype) for host, _ in _case(n, name)}
    for host, values in _case(n, name):
        for order in _orders(values):
            results = _kernels(values, order)
            exception = _documented_exception(n, order)
            correct = results.pop(None)
            assert (correct == reference[host.name]) != exception, (order, host.name, correct)
            caught = {bug: error_of(result, reference[host.name], dtype) > 0
                      for bug, result in results.items()}
            if exception:  # largest first, a dropped -1 is rounded away: 2^24 + 4 - 2^24
                assert caught == {bug: bug != ("drop", "last") for bug in caught}, order
            else:
                assert all(caught.values()), (order, host.name, caught)


def test_past_2_25_the_sorted_order_hides_a_dropped_negative():
    """The documented exception, by hand: 2^25 - 2 balanced elements hold 2^24 + 1 of +1
    and 2^24 - 3 of -1 (sum 4). Largest first, float32 stops at 2^24 (2^24 + 1 rounds to
    even), so a correct kernel returns 3, and one that drops a -1 returns 4: the
    reference. In memory order the running sum is a random walk far below 2^24."""
    ((positive, values),) = _case(2**25 - 2, "float32")
    assert positive.reference == 4
    assert int(np.count_nonzero(values > 0)) == L + 1 and int(np.count_nonzero(values < 0)) == L - 3
    largest_first = _kernels(values, "descending")
    assert largest_first[None] == 3 and largest_first[("drop", "last")] == 4
    in_memory = _kernels(values, "index")
    assert in_memory[None] == 4
    assert in_memory[("drop", "last")] == 4 - values[-1]


@pytest.mark.parametrize("n", [L - 1, L])
def test_an_all_ones_input_would_hide_a_doubled_element_at_2_24(n):
    """The trap the generator avoids: n elements of +1 sum to n; with one doubled, float32
    returns n + 1 only while n + 1 <= 2^24. At n = 2^24 it returns 2^24, the reference,
    which is why the positive input of 2^24 elements holds a -1 (sum 2^24 - 2)."""
    doubled = _sequential(np.ones(n + 1, dtype=np.float32), np.float32)
    assert (doubled != n) == (n < L)
    if n == L:
        positive, _ = _case(n, "float32")[0]
        assert positive.reference == L - 2


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_the_half_types_hold_the_float32_values_at_2_24(name):
    """Why the edges from 2^24 on are simulated for float32 only: there the exact shapes
    of the three types agree, so one seed gives them the same values (checked at 2^24,
    where both inputs hold a -1), and the accumulator is float32 for all three."""
    for n in (L - 1, L, L + 1, 2**25 - 7, 2**25 - 6, 2**25 - 3, 2**25 - 2):
        for input_name in ("positive", "signed"):
            assert exact_shape(n, DTYPES[name], input_name) == exact_shape(n, F32, input_name)
    n = L
    ours = case_inputs(n, DTYPES[name], SEEDS["float32"])
    theirs = _case(n, "float32")
    for host, (reference_host, values) in zip(ours, theirs):
        assert np.array_equal(_accumulated(host, DTYPES[name]), values)
        assert host.reference == reference_host.reference
