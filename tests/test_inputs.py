"""Host inputs: reproducible from the recorded seed, never degenerate, and references that
are the exact sums of the values as stored. Exact inputs (the default) keep every
partial sum in any order exact; random inputs are real-valued."""

import math

import numpy as np
import pytest

from exact_cases import LAST_GUARANTEED
from exact_cases import largest_guaranteed as made_once
from reducebench.core.dtypes import DTYPES
from reducebench.verify.inputs import (bfloat16_bits_to_float32, case_inputs, every_order_exact,
                                make_input, new_seed, storage_dtype, to_bfloat16_bits)

ALL = list(DTYPES)
FLOATS = [d for d in ALL if DTYPES[d].is_float]


def _values(host, dtype):
    """The stored elements as float64 (bfloat16 from its bits)."""
    if dtype.name == "bfloat16":
        return bfloat16_bits_to_float32(host.data).astype(np.float64)
    return host.data.astype(np.float64)


@pytest.mark.parametrize("name", ALL)
def test_input_is_reproducible_from_the_seed(name):
    dtype = DTYPES[name]
    a, b = make_input(5000, dtype, 42), make_input(5000, dtype, 42)
    assert np.array_equal(a.data, b.data)
    assert a.reference == b.reference and a.abs_sum == b.abs_sum and a.seed == 42
    assert not np.array_equal(a.data, make_input(5000, dtype, 43).data)


@pytest.mark.parametrize("name", ALL)
def test_input_has_the_storage_dtype_and_size(name):
    dtype = DTYPES[name]
    host = make_input(1001, dtype, 1)
    assert host.data.dtype == storage_dtype(dtype) and host.data.shape == (1001,)
    assert host.data.itemsize == dtype.itemsize


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("n", [1, 2, 31, 1000])
def test_input_is_never_all_zeros_and_never_contains_zero(name, n):
    dtype = DTYPES[name]
    values = _values(make_input(n, dtype, 7), dtype)
    assert np.all(values != 0)


@pytest.mark.parametrize("name", FLOATS)
def test_float_magnitudes_lie_in_half_to_one_and_a_half(name):
    dtype = DTYPES[name]
    values = _values(make_input(100_000, dtype, 3, "random"), dtype)
    magnitudes = np.abs(values)
    assert magnitudes.min() >= 0.5
    if name == "float64":
        assert magnitudes.max() < 1.5
    else:
        # rounding to a narrower type may land exactly on 1.5, never above
        assert magnitudes.max() <= 1.5
    assert (values > 0).any() and (values < 0).any()
    assert abs(values.mean()) < 0.02          # both signs, nearly balanced
    assert len(np.unique(values)) > 100


def test_ints_are_small_and_never_zero():
    values = make_input(100_000, DTYPES["int32"], 3, "random").data
    assert values.min() >= -7 and values.max() <= 8
    assert not (values == 0).any()
    assert set(np.unique(values)) == set(range(-7, 0)) | set(range(1, 9))


@pytest.mark.parametrize("value", [0.5, 1.0, -1.0, 1.5, 0.75, -1.25, 3.0, 1.0078125,
                                   2.0**-10, 65536.0])
def test_bfloat16_exact_values_round_trip(value):
    bits = to_bfloat16_bits(np.array([value], dtype=np.float32))
    assert bits.dtype == np.uint16
    assert bfloat16_bits_to_float32(bits)[0] == value


def test_bfloat16_rounds_to_nearest():
    # 1 + 2^-9 lies between bf16 1.0 and 1.0078125, a quarter of the way: rounds down;
    # 1 + 3 * 2^-9 is three quarters of the way: rounds up.
    values = np.array([1 + 2.0**-9, 1 + 3 * 2.0**-9, -(1 + 3 * 2.0**-9)], dtype=np.float32)
    assert bfloat16_bits_to_float32(to_bfloat16_bits(values)).tolist() == \
        [1.0, 1.0078125, -1.0078125]


def test_bfloat16_ties_go_to_even():
    ulp = 2.0**-7                           # bf16 spacing in [1, 2)
    values = np.array([1 + ulp / 2,         # tie between 1.0 (even) and 1 + ulp (odd)
                       1 + 1.5 * ulp,       # tie between 1 + ulp (odd) and 1 + 2 ulp (even)
                       1 + 2.5 * ulp],      # tie between 1 + 2 ulp (even) and 1 + 3 ulp
                      dtype=np.float32)
    assert to_bfloat16_bits(values).tolist() == [0x3F80, 0x3F82, 0x3F82]
    assert bfloat16_bits_to_float32(to_bfloat16_bits(values)).tolist() == \
        [1.0, 1 + 2 * ulp, 1 + 2 * ulp]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("n", [1, 7, 1000, 4097])
def test_random_reference_is_the_exact_sum_of_the_stored_values(name, n):
    dtype = DTYPES[name]
    host = make_input(n, dtype, 11, "random")
    values = _values(host, dtype)
    if name == "float64":
        # float64 elements use all 53 bits: numpy's pairwise float64 sum is within its
        # rounding bound of the exact sum, not equal to it
        bound = (math.log2(n) + 1) * 2.0**-53 * host.abs_sum
        assert abs(host.reference - math.fsum(values.tolist())) <= bound
    elif dtype.is_float:
        # every stored value is a multiple of 2^-24 below 2: float64 sums them exactly
        assert host.reference == math.fsum(values.tolist())
        assert isinstance(host.reference, float)
    else:
        assert host.reference == sum(int(v) for v in host.data)
        assert isinstance(host.reference, int)
    assert host.abs_sum == pytest.approx(math.fsum(np.abs(values).tolist()), rel=1e-15)


def test_half_type_references_sum_the_rounded_values():
    f32 = make_input(1000, DTYPES["float32"], 5, "random")
    half = make_input(1000, DTYPES["float16"], 5, "random")
    assert half.reference == math.fsum(half.data.astype(np.float64).tolist())
    assert half.reference != f32.reference     # the rounding is not ignored


def test_new_seed_is_a_32_bit_integer():
    seeds = {new_seed() for _ in range(20)}
    assert all(isinstance(s, int) and 0 <= s < 2**32 for s in seeds)
    assert len(seeds) > 1


@pytest.mark.parametrize("name", ALL)
def test_inputs_made_in_chunks_cover_every_element(name, monkeypatch):
    import reducebench.verify.inputs as inputs

    monkeypatch.setattr(inputs, "CHUNK", 1000)
    dtype = DTYPES[name]
    host = inputs.make_input(4500, dtype, 9, "random")  # four whole chunks and half of one
    values = _values(host, dtype)
    assert np.all(values != 0)                    # np.empty leaves nothing unwritten
    assert len(np.unique(values[4000:])) > 5
    if name == "float64":
        assert host.reference == pytest.approx(math.fsum(values.tolist()), rel=1e-13)
    elif dtype.is_float:
        assert host.reference == math.fsum(values.tolist())
    else:
        assert host.reference == int(host.data.astype(np.int64).sum())


def test_random_inputs_are_those_of_earlier_versions_for_the_same_seed():
    """Committed results of earlier sessions stay reproducible: magnitudes from
    rng.random() + 0.5, then signs from a second draw, positive below 0.5005."""
    rng = np.random.default_rng(42)
    magnitude = rng.random(6) + 0.5
    sign = np.where(rng.random(6) < 0.5005, 1.0, -1.0)
    expected = (magnitude * sign).astype(np.float32)
    assert np.array_equal(make_input(6, DTYPES["float32"], 42, "random").data, expected)


# -- exact inputs ---------------------------------------------------------------------------

F32, F16, BF16 = DTYPES["float32"], DTYPES["float16"], DTYPES["bfloat16"]
FLOAT_ACC = [F32, F16, BF16]   # accumulated in float: exact integers up to 2^24


def signs_and_magnitudes(values):
    return int((values > 0).sum()), int((values < 0).sum()), np.abs(values)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("n", [1, 2, 3, 31, 1000, 4097])
def test_small_exact_inputs_are_positive_integers_summed_exactly(name, n):
    dtype = DTYPES[name]
    (host,) = case_inputs(n, dtype, 11)
    values = _values(host, dtype)
    assert np.all(values == np.round(values)) and np.all(values >= 1)
    assert isinstance(host.reference, int) and host.exact and host.name == "positive"
    assert host.reference == int(values.astype(np.int64).sum())
    assert host.abs_sum == float(np.abs(values).sum())


@pytest.mark.parametrize("name, largest", [("float32", 4096), ("float16", 2048),
                                           ("bfloat16", 256), ("float64", 2**20),
                                           ("int32", 2**20)])
def test_small_exact_inputs_use_many_values_each_type_stores_exactly(name, largest):
    """Varied values: a misread element rarely reads the value it should."""
    values = _values(make_input(20_000, DTYPES[name], 2), DTYPES[name])
    assert values.max() <= largest and len(np.unique(values)) >= 16
    if name == "bfloat16":
        assert set(np.unique(values)) == set(range(1, 257))


@pytest.mark.parametrize("dtype", FLOAT_ACC, ids=lambda d: d.name)
@pytest.mark.parametrize("n", [2**20, 2**22 + 1, 2**24 - 1])
def test_a_positive_input_plus_any_element_stays_within_float_integers(dtype, n):
    """Every partial sum of any order, with any element doubled, is at most the whole
    sum plus the largest element: within 2^24, so exact."""
    values = _values(make_input(n, dtype, 5), dtype)
    assert values.min() >= 1 and values.sum() + values.max() <= 2**24
    assert every_order_exact(n, dtype)


@pytest.mark.parametrize("dtype", FLOAT_ACC, ids=lambda d: d.name)
@pytest.mark.parametrize("n", [2**20, 2**24 + 3])
def test_a_signed_companion_keeps_each_signs_sum_within_float_integers(dtype, n):
    positive, signed = case_inputs(n, dtype, 5)
    assert (positive.name, signed.name) == ("positive", "signed")
    values = _values(signed, dtype)
    pos, neg, magnitudes = signs_and_magnitudes(values)
    assert pos >= 1 and neg >= 1 and pos + neg == n
    largest = magnitudes.max()
    assert values[values > 0].sum() + largest <= 2**24
    assert -values[values < 0].sum() + largest <= 2**24
    assert signed.reference == int(values.astype(np.int64).sum())


def test_one_input_where_its_values_are_varied_enough():
    assert [h.name for h in case_inputs(2**20 - 2, F32, 1)] == ["positive"]
    assert [h.name for h in case_inputs(2**24, F32, 1)] == ["positive", "signed"]
    assert [h.name for h in case_inputs(2**20, DTYPES["float64"], 1)] == ["positive"]
    assert [h.name for h in case_inputs(2**20, DTYPES["int32"], 1)] == ["positive"]
    assert [h.name for h in case_inputs(1000, F32, 1, "random")] == ["random"]


def test_just_past_2_24_the_positive_input_has_few_negatives_and_a_positive_sum():
    host = make_input(2**24 + 3, F32, 6)
    pos, neg, magnitudes = signs_and_magnitudes(host.data)
    assert set(np.unique(magnitudes)) == {1}
    assert pos == 2**24 - 1 and neg == 4 and host.reference == pos - neg


@pytest.fixture(scope="module")
def largest_guaranteed():
    return made_once()


def test_the_guarantee_ends_where_the_docs_say(largest_guaranteed):
    (host,) = largest_guaranteed   # the signed companion no longer fits: one input
    pos, neg, _ = signs_and_magnitudes(host.data)
    assert pos + 1 <= 2**24 and neg + 1 <= 2**24 and host.reference >= 1
    assert every_order_exact(LAST_GUARANTEED, F32)
    assert not every_order_exact(LAST_GUARANTEED + 1, F32)
    assert every_order_exact(2**40, DTYPES["float64"]) and every_order_exact(2**40, DTYPES["int32"])


def test_exact_inputs_sum_exactly_in_float32_in_the_worst_order(largest_guaranteed):
    """float32 adds, one after another, every positive element first (the largest
    partial sum any order can reach): still exact, and a dropped or doubled element
    shows. Also for the signed companion of 2^24 + 3."""
    inputs = [*largest_guaranteed, case_inputs(2**24 + 3, F32, 8)[1]]
    for host in inputs:
        values = host.data.astype(np.float32)
        worst = np.sort(values)[::-1]
        assert np.cumsum(worst, dtype=np.float32)[-1] == host.reference, host.name
        n = values.size
        for index in (0, n // 2, n - 1):
            dropped = np.delete(values, index)
            assert np.cumsum(dropped, dtype=np.float32)[-1] == host.reference - values[index]
        doubled = np.append(worst, worst[0])
        assert np.cumsum(doubled, dtype=np.float32)[-1] == host.reference + worst[0]


def test_any_dropped_set_of_a_positive_input_shows():
    """A positive input: dropping any elements, a range or a scattered set, lowers the
    sum, whatever the order of additions."""
    host = make_input(2**22, F32, 9)
    values = host.data.astype(np.float32)
    rng = np.random.default_rng(0)
    for drop in (np.arange(1000, 1256), rng.choice(values.size, 3000, replace=False)):
        kept = np.delete(values, drop)
        assert np.cumsum(np.sort(kept)[::-1], dtype=np.float32)[-1] < host.reference


def test_past_the_guarantee_every_chunk_sums_to_one_or_two(monkeypatch):
    """+-1 with one or two more +1 than -1 in every chunk: a dropped chunk shows."""
    import reducebench.verify.inputs as inputs

    chunk = 2**20
    monkeypatch.setattr(inputs, "CHUNK", chunk)
    (host,) = inputs.case_inputs(2**25 + 1001, F32, 4)
    values = host.data.astype(np.int64)
    assert set(np.unique(values)) == {-1, 1}
    sums = [values[start:start + chunk].sum() for start in range(0, values.size, chunk)]
    assert all(total in (1, 2) for total in sums)
    assert host.reference == sum(sums) and not every_order_exact(values.size, F32)


@pytest.mark.parametrize("name", ALL)
def test_an_exact_input_made_by_several_threads_is_the_one_made_by_one(name, monkeypatch):
    """Each chunk draws from its own stream (seed, chunk), so threads change nothing."""
    import reducebench.verify.inputs as inputs

    monkeypatch.setattr(inputs, "CHUNK", 1000)
    dtype = DTYPES[name]
    one, four = (inputs.make_input(9_501, dtype, 5, workers=w) for w in (1, 4))
    assert np.array_equal(one.data, four.data)
    assert one.reference == four.reference == int(_values(one, dtype).astype(np.int64).sum())
