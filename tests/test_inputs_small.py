"""Host inputs (verify/inputs.py) in small: the shape arithmetic at each boundary worked
by hand, and inputs of a few elements with the chunk size and the exact-integer limit
made small (monkeypatch), so that chunking, -1 positions and balanced signs are seen
without 2^24-element arrays. tests/test_inputs.py and tests/test_input_boundaries.py
check the real sizes."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import reducebench.verify.inputs as inputs
from reducebench.core.dtypes import DTYPES
from reducebench.verify.inputs import (ExactShape, HostInput, bfloat16_bits_to_float32,
                                       case_inputs, derive_seed, every_order_exact,
                                       exact_inputs, exact_shape, make_input, storage_dtype,
                                       to_bfloat16_bits)

from fakes import CountingPool

F32, F64, I32 = DTYPES["float32"], DTYPES["float64"], DTYPES["int32"]
F16, BF16 = DTYPES["float16"], DTYPES["bfloat16"]
M = 2**24                        # the integers float holds exactly


# -- the shape of an exact input, worked by hand -----------------------------------------------

@pytest.mark.parametrize("n, shape", [
    (1, ExactShape("positive", 4096)),                 # the float32 cap, 2^12
    (4095, ExactShape("positive", 4096)),              # 2^24 // 4096
    (4096, ExactShape("positive", 4095)),              # 2^24 // 4097
    (M - 1, ExactShape("positive", 1)),                # n + 1 = 2^24 still fits
    (M, ExactShape("negatives", 1, 1)),                # 2^24 - 1 positives, one -1
    (2 * M - 3, ExactShape("negatives", 1, M - 2)),    # one more +1 than -1
    (2 * M - 2, ExactShape("balanced"))])
def test_the_positive_shape_of_float32(n, shape):
    assert exact_shape(n, F32) == shape


@pytest.mark.parametrize("n, shape", [
    (2, ExactShape("signed", 4096)),
    (8184, ExactShape("signed", 4096)),                # 2^24 // (4092 + 4)
    (8186, ExactShape("signed", 4095)),                # 2^24 // (4093 + 4)
    (2 * M - 8, ExactShape("signed", 1)),              # 2^24 // (2^24 - 4 + 4)
    (2 * M - 6, ExactShape("balanced"))])              # 2^24 // (2^24 - 3 + 4) = 0
def test_the_signed_shape_of_float32(n, shape):
    assert exact_shape(n, F32, "signed") == shape


def test_the_caps_of_each_type():
    assert exact_shape(10, BF16) == ExactShape("positive", 256)
    assert exact_shape(10, F16) == ExactShape("positive", 2048)
    assert exact_shape(10, F64) == ExactShape("positive", 2**20)
    assert exact_shape(2**34, F64) == ExactShape("positive", 2**19 - 1)   # 2^53 // (2^34 + 1)
    assert exact_shape(10, F64, "signed") == ExactShape("signed", 2**20)
    # int32 wraps exactly: the cap whatever the size
    assert exact_shape(2**33, I32) == ExactShape("positive", 2**20)
    assert exact_shape(2**33, I32, "signed") == ExactShape("signed", 2**20)


@pytest.mark.parametrize("n, names, every_order", [
    (2**20 - 1, ("positive",), True),                # magnitude 16: varied enough
    (2**20, ("positive", "signed"), True),           # magnitude 15: a signed one too
    (M, ("positive", "signed"), True),               # negatives and signed(1)
    (2 * M - 6, ("positive",), True),                # signed balanced: not made
    (2 * M - 2, ("positive",), False)])              # positive balanced
def test_which_exact_inputs_and_whether_every_order_is_exact(n, names, every_order):
    assert exact_inputs(n, F32) == names
    assert every_order_exact(n, F32) is every_order


# -- seeds and the bfloat16 bits ------------------------------------------------------------------

def test_seeds():
    assert derive_seed(7, 1024, F32) == zlib.crc32(b"7:1024:float32")
    assert derive_seed(7, 1024, F64) != derive_seed(7, 1024, F32)
    assert 0 <= inputs.new_seed() < 2**32


def test_bfloat16_rounds_to_nearest_ties_to_even():
    values = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -2.0, 256.0],
                      dtype=np.float32)
    assert to_bfloat16_bits(values).tolist() == [0x3F80, 0x3F80, 0x3F82, 0x3F81, 0xC000,
                                                  0x4380]
    assert to_bfloat16_bits(values).dtype == np.uint16
    assert bfloat16_bits_to_float32(np.array([0x3F80, 0xC000, 0x3F81], dtype=np.uint16)
                                    ).tolist() == [1.0, -2.0, 1 + 2**-7]
    assert storage_dtype(BF16) == np.uint16 and storage_dtype(F16) == np.float16
    assert storage_dtype(I32) == np.int32


# -- the inputs of a case ---------------------------------------------------------------------

def test_a_case_has_its_exact_inputs_each_with_its_own_seed():
    positive, signed = case_inputs(2**20, F32, 11)[0], None
    assert (positive.name, positive.seed) == ("positive", 11)
    small = case_inputs(100, F32, 11)
    assert [(h.name, h.seed, h.kind) for h in small] == [("positive", 11, "exact")]
    assert signed is None


def test_a_case_of_few_magnitudes_has_a_signed_input_seeded_apart(monkeypatch):
    monkeypatch.setitem(inputs.EXACT_INTEGERS, "float", 64)
    hosts = case_inputs(20, F32, 11)          # magnitude 64 // 21 = 3: few
    assert [(h.name, h.seed) for h in hosts] == [("positive", 11),
                                                 ("signed", zlib.crc32(b"11:signed"))]
    assert case_inputs(20, F32, 11, kind="random")[0].name == "random"
    assert [(h.name, h.seed) for h in case_inputs(20, F32, 11, kind="random")] == [
        ("random", 11)]


def test_a_positive_input_in_chunks_sums_exactly(monkeypatch):
    monkeypatch.setattr(inputs, "CHUNK", 4)
    host = make_input(10, F32, 5)
    values = host.data.astype(np.int64)
    assert host.data.dtype == np.float32 and host.data.shape == (10,)
    assert values.min() >= 1 and values.max() <= 4096
    assert host.reference == int(values.sum()) and isinstance(host.reference, int)
    assert host.abs_sum == float(values.sum()) and host.exact
    assert (host.seed, host.kind, host.name) == (5, "exact", "positive")
    # each chunk its own stream: the same input whatever the threads
    assert np.array_equal(make_input(10, F32, 5, workers=3).data, host.data)
    assert not np.array_equal(host.data[:4], host.data[4:8])


def test_past_the_exact_integers_minus_ones_at_random_places(monkeypatch):
    monkeypatch.setitem(inputs.EXACT_INTEGERS, "float", 16)
    monkeypatch.setattr(inputs, "CHUNK", 8)
    host = make_input(20, F32, 3)             # 15 positives, 5 times -1
    assert sorted(host.data.tolist()) == [-1.0] * 5 + [1.0] * 15
    assert host.reference == 10 and host.abs_sum == 20.0
    assert not np.array_equal(host.data, make_input(20, F32, 4).data)


def test_balanced_signs_have_one_or_two_more_plus_in_every_chunk(monkeypatch):
    monkeypatch.setitem(inputs.EXACT_INTEGERS, "float", 16)
    monkeypatch.setattr(inputs, "CHUNK", 8)
    host = make_input(31, F32, 3)             # 31 - 15 > 14: balanced
    chunks = [host.data[i:i + 8] for i in range(0, 31, 8)]
    # chunks of 8, 8, 8, 7: 5, 5, 5 and 4 of them +1
    assert [int((c > 0).sum()) for c in chunks] == [5, 5, 5, 4]
    assert set(host.data.tolist()) == {-1.0, 1.0} and host.reference == 7


def test_a_signed_input_has_one_or_two_more_plus_first_and_never_fewer(monkeypatch):
    monkeypatch.setitem(inputs.EXACT_INTEGERS, "float", 64)
    monkeypatch.setattr(inputs, "CHUNK", 8)
    host = make_input(19, F32, 3, name="signed")   # magnitude 64 // (9 + 4) = 4
    assert exact_shape(19, F32, "signed") == ExactShape("signed", 4)
    chunks = [host.data[i:i + 8] for i in range(0, 19, 8)]
    # 8: 4 + 1 positive; 8: 4 + 0 (even); 3: 1 + 1 (odd)
    assert [int((c > 0).sum()) for c in chunks] == [5, 4, 2]
    assert set(np.abs(host.data).tolist()) <= {1.0, 2.0, 3.0, 4.0}
    assert host.reference == int(host.data.astype(np.int64).sum())


def test_a_bfloat16_input_is_its_bits_and_the_reference_their_sum():
    host = make_input(50, BF16, 2)
    assert host.data.dtype == np.uint16
    values = bfloat16_bits_to_float32(host.data).astype(np.int64)
    assert values.min() >= 1 and values.max() <= 256 and host.reference == int(values.sum())


def test_random_float_inputs(monkeypatch):
    monkeypatch.setattr(inputs, "CHUNK", 1000)
    host = make_input(200_000, F64, 9, kind="random")
    values = host.data
    assert (host.kind, host.name, host.seed) == ("random", "random", 9)
    assert not host.exact and isinstance(host.reference, float)
    assert 0.5 <= np.abs(values).min() and np.abs(values).max() < 1.5
    assert host.reference == pytest.approx(float(values.sum()), abs=1e-6)
    assert host.abs_sum == pytest.approx(float(np.abs(values).sum()))
    # positive 50.05% of the time: 100100 of 200000 expected, sd 224
    assert 99_200 < int((values > 0).sum()) < 101_000
    assert np.array_equal(make_input(200_000, F64, 9, kind="random").data, values)


def test_random_int_inputs_are_minus_7_to_8_without_0(monkeypatch):
    monkeypatch.setattr(inputs, "CHUNK", 1000)
    host = make_input(20_000, I32, 9, kind="random")
    assert set(host.data.tolist()) == set(range(-7, 0)) | set(range(1, 9))
    assert host.exact and host.reference == int(host.data.astype(np.int64).sum())
    assert host.abs_sum == float(np.abs(host.data.astype(np.int64)).sum())


def test_random_half_inputs_are_summed_as_stored():
    host = make_input(1000, F16, 9, kind="random")
    assert host.data.dtype == np.float16
    assert host.reference == pytest.approx(float(host.data.astype(np.float64).sum()),
                                           abs=1e-9)


def test_the_reference_of_an_exact_input_says_it_is_exact():
    assert HostInput(np.zeros(1), 3, 3.0, 1).exact
    assert not HostInput(np.zeros(1), 3.0, 3.0, 1).exact


# -- what the mutation run (tests/mutation/) found untested ---------------------------------------

def test_the_signed_magnitude_of_an_odd_size_halves_it_downwards():
    # 8187 // 2 + 4 = 4097, 2^24 // 4097 = 4095 (not 2^24 // 4097.5 = 4094)
    assert exact_shape(8187, F32, "signed") == ExactShape("signed", 4095)


def test_a_new_seed_is_32_bits():
    assert all(0 <= inputs.new_seed() < 2**32 for _ in range(64))


def test_minus_ones_are_reproducible_distinct_and_in_every_chunk_place(monkeypatch):
    monkeypatch.setitem(inputs.EXACT_INTEGERS, "float", 16)
    monkeypatch.setattr(inputs, "CHUNK", 8)
    places = set()
    for seed in range(20):
        host = make_input(20, F32, seed)
        assert int((host.data == -1).sum()) == 5 and host.reference == 10, seed
        assert np.array_equal(make_input(20, F32, seed).data, host.data)
        places |= set(np.flatnonzero(host.data == -1).tolist())
    assert {0, 7, 8, 15, 16, 19} <= places     # the first and last place of each chunk


def test_a_random_input_whose_size_is_not_a_whole_number_of_chunks(monkeypatch):
    monkeypatch.setattr(inputs, "CHUNK", 8)
    host = make_input(21, F32, 9, kind="random")
    assert host.data.shape == (21,) and len(np.unique(host.data)) == 21
    assert host.reference == pytest.approx(float(host.data.astype(np.float64).sum()))


def test_threads_make_an_input_of_several_chunks_only_when_asked(monkeypatch):
    monkeypatch.setattr(inputs, "ThreadPoolExecutor", CountingPool)
    monkeypatch.setattr(CountingPool, "made", [])
    monkeypatch.setattr(inputs, "CHUNK", 8)
    one = make_input(20, F32, 1)                          # three chunks, one thread
    assert CountingPool.made == []
    assert np.array_equal(make_input(20, F32, 1, workers=3).data, one.data)
    assert CountingPool.made == [3]
    make_input(8, F32, 1, workers=3)                      # one chunk: no pool
    make_input(16, F32, 1, workers=2)                     # two chunks: a pool
    assert CountingPool.made == [3, 2]
    case_inputs(20, F32, 1, workers=4)
    case_inputs(20, F32, 1)
    assert CountingPool.made == [3, 2, 4]


# The input a seed names is pinned: a results file records its seed (README: `--seed`
# makes the inputs repeatable), so the same seed must give the same values in every
# version. These CRC-32s of the data were taken once; a change to how inputs are drawn
# fails here, and must not be made without a new way of naming inputs.
@pytest.mark.parametrize("limit, kind, name, dtype, n, crc", [
    (16, "exact", "positive", F32, 31, 3911109221),       # balanced
    (16, "exact", "positive", F32, 20, 300188775),        # -1 at random places
    (64, "exact", "signed", F32, 19, 3443375419),
    (M, "exact", "positive", F32, 19, 1986656943),
    (M, "random", "random", F32, 19, 803648553),
    (M, "random", "random", I32, 19, 3465538083)])
def test_the_input_of_a_seed_is_pinned(monkeypatch, limit, kind, name, dtype, n, crc):
    monkeypatch.setitem(inputs.EXACT_INTEGERS, "float", limit)
    monkeypatch.setattr(inputs, "CHUNK", 8)
    assert zlib.crc32(make_input(n, dtype, 3, kind, name).data.tobytes()) == crc


def test_an_empty_random_input_is_exact_only_for_int32():
    assert make_input(0, F32, 1, "random").reference == 0.0
    assert not make_input(0, F32, 1, "random").exact
    assert make_input(0, I32, 1, "random").exact
