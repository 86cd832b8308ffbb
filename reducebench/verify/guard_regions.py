"""Guards: a region of a known value before and after every buffer a kernel touches (the
input, partials, workspace, result, ticket, scratch copy), so that a kernel which reads
or writes just outside a buffer fails verification whatever n is. Without them such an
access lands in the allocator's padding (zero, so the sum is unchanged) or in another
live allocation, where compute-sanitizer sees nothing.

- A read: the guard value enters the sum and changes it. Float types hold -inf (in their
  own bit patterns: float32, float64, float16, bfloat16), which no finite input and no
  poisoned result holds (the poison is NaN, ladder/plan.py), so a result of -inf can only
  come from a guard. int32 holds INT_GUARD, odd, so k reads (0 < k < 2^32) change the
  sum by k x INT_GUARD modulo 2^32, never 0.
- A write: the guard region is no longer what was written there; the executor checks
  every guard after each verified run (measuring/execution.verified_run).

Everything here is decided from host arrays: the layout, the values, the verdict's words.
GuardedArray allocates through an array module (numpy for the host executor, CuPy in
device/guarded_buffers.py), so the same code runs on a CPU and on a GPU."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

# Bytes of guard on each side of a buffer: a whole block of 1024 float32 elements read or
# written past either end still lands in a guard.
GUARD_BYTES = 4096
# What docs/custom-kernels.md promises of every buffer a kernel gets: its start is
# 256-byte aligned (16-byte vector loads from in[0] are safe). The guard before a buffer
# is a whole number of these, so the view the kernel gets keeps the allocation's alignment.
ALIGNMENT = 256
# int32 (and the uint32 ticket): odd, so any number of guard reads below 2^32 changes an
# int32 sum; 2^32 / phi^2, whose first 64 multiples modulo 2^32 all lie more than 33 x 2^20
# from 0 (the largest exact int32 element is 2^20), so a difference that a few dropped or
# doubled elements make is never taken for guard reads.
INT_GUARD = 1640531527
MAX_GUARD_READS = 64      # k x INT_GUARD is recognised for k = 1 .. this
FLOAT_GUARD = float("-inf")
# bfloat16 travels to the device as its uint16 bit pattern (verify/inputs.py): -inf's bits.
BFLOAT16_GUARD_BITS = 0xFF80

READ_OUTSIDE = "read outside its input (a guard value entered the sum)"


def guard_scalar(storage: np.dtype) -> float | int:
    """The guard value of an array stored as `storage`: -inf for floats, the bits of
    bfloat16's -inf for uint16 (bfloat16 is the only uint16 reducebench stores), and
    INT_GUARD for int32 and uint32."""
    storage = np.dtype(storage)
    if storage.kind == "f":
        return FLOAT_GUARD
    if storage == np.uint16:
        return BFLOAT16_GUARD_BITS
    if storage in (np.int32, np.uint32):
        return INT_GUARD
    raise ValueError(f"no guard value for {storage}")


@dataclass(frozen=True)
class GuardLayout:
    """n elements of `itemsize` bytes between two guards of guard_bytes each, in one
    allocation: [before | the buffer | after]. guard_bytes 0 is an exact allocation."""

    n: int
    itemsize: int
    guard_bytes: int = GUARD_BYTES

    def __post_init__(self) -> None:
        if self.guard_bytes % ALIGNMENT or self.guard_bytes % self.itemsize:
            raise ValueError(f"a guard of {self.guard_bytes} bytes would move the buffer off "
                             f"its {ALIGNMENT}-byte alignment or split an element")

    @property
    def before(self) -> int:
        """Guard elements before the buffer; also the buffer's offset in the allocation."""
        return self.guard_bytes // self.itemsize

    @property
    def after(self) -> int:
        return self.guard_bytes // self.itemsize

    @property
    def total(self) -> int:
        """Elements of the whole allocation."""
        return self.before + self.n + self.after

    @property
    def offset_bytes(self) -> int:
        """Where the buffer starts in the allocation: a multiple of ALIGNMENT."""
        return self.before * self.itemsize


def overwritten(name: str, n: int, before: np.ndarray, after: np.ndarray,
                guard: np.ndarray) -> list[str]:
    """What was written outside buffer `name` of n elements, given the contents of its two
    guard regions and the guard value as a one-element array of the buffer's type: one
    line per side whose guard changed, naming the element nearest the buffer. Compared
    bit for bit (-inf is compared as bits like any other value)."""
    found = []
    for side, region in (("before", before), ("after", after)):
        bad = np.flatnonzero(_bits(region) != _bits(guard)[0])
        if bad.size == 0:
            continue
        # Index in the buffer's own terms: -1 is the element just before it, n just after.
        nearest = int(bad[-1]) - region.size if side == "before" else n + int(bad[0])
        count = f"{bad.size} element{'s' if bad.size > 1 else ''}"
        found.append(f"wrote outside {name}: the guard {side} it was overwritten "
                     f"({count}, the nearest {name}[{nearest}])")
    return found


def _bits(values: np.ndarray) -> np.ndarray:
    values = np.ascontiguousarray(values)
    return values.view(np.dtype(f"u{values.dtype.itemsize}"))


def guard_read_evidence(value: float | int, reference: float | int,
                        is_float: bool) -> str | None:
    """Why a result shows that a guard value entered the sum, or None: for floats, -inf
    (the guard, which no finite input sum reaches); for int32, the reference plus k x
    INT_GUARD modulo 2^32 for some k from 1 to MAX_GUARD_READS."""
    if is_float:
        if float(value) == FLOAT_GUARD:
            return "-inf is the guard value, and every input element is finite"
        return None
    difference = (int(value) - int(reference)) % 2**32
    for k in range(1, MAX_GUARD_READS + 1):
        if difference == k * INT_GUARD % 2**32:
            return f"that is the reference plus {k} x the guard value {INT_GUARD}, modulo 2^32"
    return None


ToHost = Callable[[object], np.ndarray]


class GuardedArray:
    """A buffer of n elements with a guard on each side, in one allocation of the array
    module `xp` (numpy, or CuPy in device/guarded_buffers.py); `view` is what a kernel gets.
    check() reads both guards back (through to_host) and restores any it finds changed,
    so a later case that shares the buffer (the input) is not blamed for it."""

    def __init__(self, xp, name: str, n: int, dtype, guard_bytes: int = GUARD_BYTES,
                 to_host: ToHost = np.asarray) -> None:
        self.name, self.to_host = name, to_host
        self.dtype = np.dtype(dtype)
        self.layout = GuardLayout(n, self.dtype.itemsize, guard_bytes)
        self.guard = np.array([guard_scalar(self.dtype)], dtype=self.dtype)
        self.whole = xp.empty(self.layout.total, dtype=self.dtype)
        start = self.layout.before
        self.view = self.whole[start:start + n]
        self.restore()

    def restore(self) -> None:
        start, end = self.layout.before, self.layout.before + self.layout.n
        if self.layout.guard_bytes:
            value = self.guard[0].item()
            self.whole[:start] = value
            self.whole[end:] = value

    def check(self) -> list[str]:
        """What was written outside the buffer since it was made (or last checked)."""
        if not self.layout.guard_bytes:
            return []
        start, end = self.layout.before, self.layout.before + self.layout.n
        found = overwritten(self.name, self.layout.n, self.to_host(self.whole[:start]),
                            self.to_host(self.whole[end:]), self.guard)
        if found:
            self.restore()
        return found


class InputGuards:
    """The guarded allocation behind each uploaded input, found from the view the
    executions get (a handle not uploaded here, e.g. a test's own view, has none)."""

    def __init__(self) -> None:
        self._by_view: dict[int, GuardedArray] = {}

    def add(self, guarded: GuardedArray):
        self._by_view[id(guarded.view)] = guarded
        return guarded.view

    def of(self, view) -> GuardedArray | None:
        guarded = self._by_view.get(id(view))
        return guarded if guarded is not None and guarded.view is view else None

    def forget(self, view) -> None:
        if self.of(view) is not None:
            del self._by_view[id(view)]
