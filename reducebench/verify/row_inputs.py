"""Exact inputs for a ROWS x COLS array summed row by row (`run --shape`), made on the
host from a recorded seed.

Each row is an exact input of COLS elements in the scheme of inputs.py (the magnitude
and regime inputs.exact_shape gives COLS elements), so every partial sum a correct kernel
forms within a row is exact in any order; and as there, where the positive input's values
are few (long rows of float types), a signed input with more varied values verifies the
case too (inputs.exact_inputs of COLS), so an element read in another's place within a
row rarely reads the value it should. On top of that, row r's sum is r modulo 3:
two neighbouring rows, or rows two apart, never have the same sum, so a row's value
written into another row's slot, or a row read in another's place, fails. The residue
is set by changing one element of the row by -2 to +2 within its magnitude and keeping
its sign, or, where the magnitude is below 3 (+-1 elements of very long rows), by turning
one or two +1 elements into -1 (each turn lowers the sum by 2, which is +1 modulo 3);
neither breaks the exactness the row's scheme gives (docs/verification.md,
docs/rows.md).

Random inputs (`--inputs random`) are the random input of ROWS x COLS elements
(inputs.make_input), each row's float64 sum and the sum of its magnitudes kept: each row
is then judged within the rounding bound of tolerance.py for a row of COLS elements."""

from __future__ import annotations

import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from reducebench.core.dtypes import DType
from reducebench.verify.inputs import (CHUNK, EXACT, RANDOM, HostInput, _store,
                                       _stored_values, exact_inputs, exact_shape, make_input,
                                       storage_dtype)

RESIDUE = 3  # row r sums to r modulo RESIDUE: rows up to two apart differ


def row_inputs(rows: int, cols: int, dtype: DType, seed: int,
               kind: str = EXACT, workers: int = 1) -> list[HostInput]:
    """Every input a ROWS x COLS case is verified with, the first also timed: the
    positive one, and the signed one where exact_inputs of COLS asks for it; or the one
    random input. `workers` threads make the rows' pieces (the same input whatever
    their number: each piece has its own random stream)."""
    if kind == RANDOM:
        return [random_row_input(rows, cols, dtype, seed)]
    return [row_input(rows, cols, dtype,
                      seed if index == 0 else zlib.crc32(f"{seed}:{name}".encode()), name,
                      workers)
            for index, name in enumerate(exact_inputs(cols, dtype))]


def row_input(rows: int, cols: int, dtype: DType, seed: int,
              name: str = "positive", workers: int = 1) -> HostInput:
    """The named exact input of a ROWS x COLS case: data row-major, the exact sum of each
    row in row_references (int64), their total as the reference. Made in pieces of
    whole rows, about CHUNK elements each, on `workers` threads."""
    data = np.empty(rows * cols, dtype=storage_dtype(dtype))
    sums = np.empty(rows, dtype=np.int64)
    per_chunk = max(1, CHUNK // cols)  # whole rows, about CHUNK elements at a time
    magnitude = exact_shape(cols, dtype, name).magnitude

    def make_piece(first: int) -> int:
        """Rows first.. of one piece written into data and sums; its sum of magnitudes."""
        count = min(per_chunk, rows - first)
        values = _rows_of(first, count, cols, dtype, seed, name)
        _set_residues(values, first, magnitude)
        stored = _store(values.reshape(-1), dtype)
        data[first * cols:(first + count) * cols] = stored
        as_stored = _stored_values(stored, dtype, True).reshape(count, cols)
        sums[first:first + count] = as_stored.sum(axis=1)
        return int(np.abs(as_stored).sum())

    firsts = range(0, rows, per_chunk)
    if workers > 1 and len(firsts) > 1:
        with ThreadPoolExecutor(min(workers, len(firsts))) as pool:
            abs_sum = sum(pool.map(make_piece, firsts))
    else:
        abs_sum = sum(make_piece(first) for first in firsts)
    return HostInput(data, int(sums.sum()), float(abs_sum), seed, EXACT, name,
                     row_references=sums)


def random_row_input(rows: int, cols: int, dtype: DType, seed: int) -> HostInput:
    """The random input of ROWS x COLS elements with each row's sum (float64, or exact
    for int32) in row_references and the sum of its magnitudes in row_abs_sums."""
    host = make_input(rows * cols, dtype, seed, RANDOM)
    exact = not dtype.is_float
    sums = np.empty(rows, dtype=np.int64 if exact else np.float64)
    magnitudes = np.empty(rows, dtype=np.float64)
    per_chunk = max(1, CHUNK // cols)
    for first in range(0, rows, per_chunk):
        count = min(per_chunk, rows - first)
        stored = host.data[first * cols:(first + count) * cols]
        values = _stored_values(stored, dtype, exact).reshape(count, cols)
        sums[first:first + count] = values.sum(axis=1)
        magnitudes[first:first + count] = np.abs(values).sum(axis=1)
    host.row_references, host.row_abs_sums = sums, magnitudes
    return host


def _rows_of(first: int, count: int, cols: int, dtype: DType, seed: int,
             name: str) -> np.ndarray:
    """Rows first..first+count-1 before their residues are set, as int64 (count x cols):
    drawn at once where every element is 1..magnitude, else one exact input a row (few
    rows: their length is what makes the values few)."""
    shape = exact_shape(cols, dtype, name)
    if shape.regime == "positive":
        rng = np.random.default_rng((seed, first))
        return rng.integers(1, shape.magnitude + 1, size=(count, cols), dtype=np.int64)
    rows = [_stored_values(make_input(cols, dtype, _row_seed(seed, first + r), name=name).data,
                           dtype, True) for r in range(count)]
    return np.stack(rows).astype(np.int64)


def _row_seed(seed: int, row: int) -> int:
    return (seed * 1_000_003 + row) % 2**63


def _set_residues(values: np.ndarray, first: int, magnitude: int) -> None:
    """Make row first + i sum to first + i modulo RESIDUE, in place."""
    count = values.shape[0]
    wanted = (first + np.arange(count)) % RESIDUE
    short = (wanted - values.sum(axis=1)) % RESIDUE  # 0, 1 or 2 to add, modulo 3
    if magnitude >= RESIDUE:
        head = values[:, 0]
        # add `short`, or `short` - 3 where that would leave the head's side: a positive
        # head stays in 1..magnitude, a negative one in -magnitude..-1 (magnitude >= 3)
        fits = np.where(head > 0, head + short <= magnitude, head + short <= -1)
        values[:, 0] = head + np.where(fits, short, short - RESIDUE)
        return
    for row in np.flatnonzero(short):
        ones = np.flatnonzero(values[row] == 1)[:int(short[row])]
        if ones.size < short[row]:
            raise ValueError(f"row {first + row} has too few +1 elements to set its sum")
        values[row, ones] = -1
