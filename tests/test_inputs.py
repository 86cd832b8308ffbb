"""Host inputs: reproducible from the recorded seed, never degenerate, and references that
are the exact sums of the values as stored."""

import math

import numpy as np
import pytest

from reducebench.dtypes import DTYPES
from reducebench.inputs import (bfloat16_bits_to_float32, make_input, new_seed,
                                storage_dtype, to_bfloat16_bits)

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
    values = _values(make_input(100_000, dtype, 3), dtype)
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
    values = make_input(100_000, DTYPES["int32"], 3).data
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
def test_reference_is_the_exact_sum_of_the_stored_values(name, n):
    dtype = DTYPES[name]
    host = make_input(n, dtype, 11)
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
    f32 = make_input(1000, DTYPES["float32"], 5)
    half = make_input(1000, DTYPES["float16"], 5)
    assert half.reference == math.fsum(half.data.astype(np.float64).tolist())
    assert half.reference != f32.reference     # the rounding is not ignored


def test_new_seed_is_a_32_bit_integer():
    seeds = {new_seed() for _ in range(20)}
    assert all(isinstance(s, int) and 0 <= s < 2**32 for s in seeds)
    assert len(seeds) > 1


@pytest.mark.parametrize("name", ALL)
def test_inputs_made_in_chunks_cover_every_element(name, monkeypatch):
    import reducebench.inputs as inputs

    monkeypatch.setattr(inputs, "CHUNK", 1000)
    dtype = DTYPES[name]
    host = inputs.make_input(4500, dtype, 9)      # four whole chunks and half of one
    values = _values(host, dtype)
    assert np.all(values != 0)                    # np.empty leaves nothing unwritten
    assert len(np.unique(values[4000:])) > 5
    if name == "float64":
        assert host.reference == pytest.approx(math.fsum(values.tolist()), rel=1e-13)
    elif dtype.is_float:
        assert host.reference == math.fsum(values.tolist())
    else:
        assert host.reference == int(host.data.astype(np.int64).sum())
