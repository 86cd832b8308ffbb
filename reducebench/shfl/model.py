"""A device-free model of the four warp shuffles (__shfl_sync, __shfl_up_sync,
__shfl_down_sync, __shfl_xor_sync) for `reducebench shfl`: for each lane of each warp of a
one-block launch, which lane it reads, whether the CUDA programming guide defines the
result, and the value it ends up with.

The rules (the CUDA C++ Programming Guide, "Warp Shuffle Functions", and the PTX ISA's
`shfl.sync`, which the intrinsics compile to with c = ((32 - width) << 8) | clamp):

* lanes are split into segments of `width` consecutive lanes (width a power of two
  1..32); a lane's segment starts at base = lane - lane % width and ends at base+width-1;
* sync: the source is base + srcLane % width: always inside the caller's own segment;
* up:   the source is lane - delta; below base, the lane keeps its own value;
* down: the source is lane + delta; past the segment's last lane, it keeps its own value;
* xor:  the source is lane ^ laneMask; a lane in an *earlier* segment is read, but past
  the caller's segment's last lane (a later segment, or beyond lane 31) the lane keeps
  its own value (the only rule that lets a shuffle leave its segment);
* a lane outside the mask does not execute the shuffle (the lab's kernel skips it) and
  keeps its value; a participating lane whose source lane is absent (past the block's
  last thread in a partial warp) or outside the mask (it did not execute the shuffle)
  gets an undefined result.

No CuPy here: the device half lives in reducebench.device.warp_shuffle.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

from reducebench.core.choices import comma_list, did_you_mean
from reducebench.core.errors import UsageError

WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF
MAX_THREADS = 1024
OPS = ("sync", "up", "down", "xor")
# The name of each op's third argument, as the programming guide spells it.
OPERAND_NAMES = {"sync": "srcLane", "up": "delta", "down": "delta", "xor": "laneMask"}
INTRINSICS = {"sync": "__shfl_sync", "up": "__shfl_up_sync", "down": "__shfl_down_sync",
              "xor": "__shfl_xor_sync"}
# The op selector the lab kernel switches on (cuda_src/shfl_lab.cu).
OP_CODES = {"sync": 0, "up": 1, "down": 2, "xor": 3}
WIDTHS = (1, 2, 4, 8, 16, 32)
# dtype name -> (C++ type in the lab kernel, NumPy dtype name)
LAB_DTYPES = {"int32": ("int", "int32"), "float32": ("float", "float32"),
              "float64": ("double", "float64"), "float16": ("__half", "float16")}
_DTYPE_ALIASES = {"int": "int32", "float": "float32", "fp32": "float32", "double": "float64",
                  "fp64": "float64", "half": "float16", "fp16": "float16"}
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# How a lane fares.
READ = "read"            # it read its source lane's value
OWN = "own"              # the source fell outside its segment: it keeps its own value
UNDEFINED = "undefined"  # its source lane is absent or did not take part: undefined
SKIPPED = "skipped"      # not in the mask: it does not execute the shuffle at all
STATUSES = (READ, OWN, UNDEFINED, SKIPPED)


# ---- validation and parsing (shared with the CLI) ---------------------------------------

def check_op(op: str) -> str:
    key = str(op).strip().lower()
    if key not in OPS:
        raise UsageError(f"unknown shuffle {op!r}{did_you_mean(key, OPS)}; accepted: "
                         f"{', '.join(OPS)}")
    return key


def check_threads(threads: int) -> int:
    if not 1 <= int(threads) <= MAX_THREADS:
        raise UsageError(f"--threads {threads}: a block holds 1..{MAX_THREADS} threads")
    return int(threads)


def check_width(width: int) -> int:
    if int(width) not in WIDTHS:
        raise UsageError(f"--width {width}: must be a power of two 1..32 "
                         f"({', '.join(map(str, WIDTHS))})")
    return int(width)


def check_operand(op: str, value: int) -> int:
    """delta and laneMask: 0..31 (the instruction reads only their low 5 bits, so larger
    values would not mean what the guide's lane +/- delta says); srcLane: any int32, taken
    modulo width."""
    value = int(value)
    if op in ("up", "down"):
        if value < 0:
            raise UsageError(f"--delta {value}: must not be negative (it is unsigned)")
        if value >= WARP_SIZE:
            raise UsageError(f"--delta {value}: must be 0..31 (the instruction uses only its "
                             "low 5 bits)")
    elif op == "xor":
        if not 0 <= value < WARP_SIZE:
            raise UsageError(f"--lane-mask {value}: must be 0..31 (lane ids have 5 bits)")
    elif not INT32_MIN <= value <= INT32_MAX:
        raise UsageError(f"--src-lane {value}: must fit in an int")
    return value


def parse_mask(text: str | int) -> int:
    """A 32-bit lane mask written in hex, with or without 0x: 0xffffffff, ffff, 0x0000ffff."""
    if isinstance(text, int):
        value = text
    else:
        s = str(text).strip().lower().replace("_", "")
        if s.startswith("0x"):
            s = s[2:]
        if not s or not re.fullmatch(r"[0-9a-f]+", s):
            raise UsageError(f"--mask {text!r}: not a hex number (e.g. 0xffffffff, 0x0000ffff)")
        value = int(s, 16)
    if not 0 <= value <= FULL_MASK:
        raise UsageError(f"--mask {text!r}: a lane mask has 32 bits (0x0..0xffffffff)")
    return value


def check_dtype(name: str) -> str:
    key = str(name).strip().lower()
    key = _DTYPE_ALIASES.get(key, key)
    if key not in LAB_DTYPES:
        hint = did_you_mean(key, [*LAB_DTYPES, *_DTYPE_ALIASES])
        raise UsageError(f"--dtype {name!r}{hint}: the shuffle lab takes "
                         f"{', '.join(LAB_DTYPES)}")
    return key


def iota(threads: int, dtype: str) -> list:
    """Thread i holds i (exact in every lab dtype: float16 holds integers up to 2048)."""
    return [float(i) if check_dtype(dtype) != "int32" else i for i in range(threads)]


def parse_values(text: str | None, threads: int, dtype: str) -> list:
    """`--values`: none for iota, or a comma list of exactly `threads` numbers, each stored
    as the dtype stores it (float32/float16 rounding)."""
    dtype = check_dtype(dtype)
    if text is None or str(text).strip() == "" or str(text).strip().lower() == "iota":
        return iota(threads, dtype)
    items = comma_list(text, "value")
    if len(items) != threads:
        raise UsageError(f"--values holds {len(items)} value(s); --threads {threads} needs "
                         f"one per thread")
    return [convert_value(item, dtype) for item in items]


def convert_value(item, dtype: str):
    """One value as the dtype holds it: an int for int32, a Python float otherwise."""
    import numpy as np

    dtype = check_dtype(dtype)
    text = str(item).strip()
    if dtype == "int32":
        try:
            if not isinstance(item, str):
                value = int(item)
            elif text.lower().lstrip("+-").startswith("0x"):
                value = int(text, 16)   # 0x7fffffff, -0x10
            else:
                value = int(text)
        except ValueError:
            raise UsageError(f"--values: {text!r} is not an integer (dtype int32)") from None
        if not INT32_MIN <= value <= INT32_MAX:
            raise UsageError(f"--values: {value} does not fit in int32")
        return value
    try:
        wide = float(text) if isinstance(item, str) else float(item)
    except ValueError:
        raise UsageError(f"--values: {text!r} is not a number") from None
    with np.errstate(over="ignore"):
        stored = float(np.dtype(LAB_DTYPES[dtype][1]).type(wide))
    if math.isinf(stored) and math.isfinite(wide):
        raise UsageError(f"--values: {text} overflows {dtype}")
    return stored


# ---- the rules ---------------------------------------------------------------------------

def segment(lane: int, width: int) -> tuple[int, int]:
    """First and last lane of the width-lane segment holding `lane`."""
    base = lane - lane % width
    return base, base + width - 1


def source_lane(op: str, lane: int, operand: int, width: int) -> tuple[int, int, bool]:
    """(target, source, in_range): the lane the op's formula names, the lane actually read
    (the target when in range, else the caller itself), and whether the target was in range.
    Ignores the mask and partial warps: see simulate() for those."""
    base, last = segment(lane, width)
    if op == "sync":
        target = base + operand % width   # Python's % matches the instruction's low bits
        in_range = True
    elif op == "up":
        target = lane - operand
        in_range = target >= base
    elif op == "down":
        target = lane + operand
        in_range = target <= last
    elif op == "xor":
        target = lane ^ operand
        in_range = target <= last          # earlier segments allowed, later ones not
    else:
        raise UsageError(f"unknown shuffle {op!r}")
    return target, (target if in_range else lane), in_range


@dataclass(frozen=True)
class ShflCall:
    """One shuffle executed by every thread of a single block of `threads` threads."""

    op: str
    threads: int = WARP_SIZE
    width: int = WARP_SIZE
    mask: int = FULL_MASK
    operand: int = 0          # srcLane (sync), delta (up, down) or laneMask (xor)

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", check_op(self.op))
        check_threads(self.threads)
        check_width(self.width)
        parse_mask(self.mask)
        check_operand(self.op, self.operand)

    @property
    def operand_name(self) -> str:
        return OPERAND_NAMES[self.op]

    @property
    def warps(self) -> int:
        return (self.threads + WARP_SIZE - 1) // WARP_SIZE

    def lanes_in_warp(self, warp: int) -> int:
        return min(WARP_SIZE, self.threads - warp * WARP_SIZE)

    def signature(self, var: str = "v") -> str:
        return (f"{INTRINSICS[self.op]}(0x{self.mask:08x}, {var}, {self.operand}, "
                f"{self.width})")


@dataclass(frozen=True)
class LaneOutcome:
    thread: int
    warp: int
    lane: int
    before: int | float
    target: int | None        # what the formula names (None when the lane does not execute)
    source: int | None        # the lane read (None when the lane does not execute)
    status: str               # READ, OWN, UNDEFINED or SKIPPED
    after: int | float | None  # None when undefined
    note: str = ""

    @property
    def defined(self) -> bool:
        return self.status != UNDEFINED

    @property
    def participates(self) -> bool:
        return self.status != SKIPPED

    def as_dict(self) -> dict:
        return {"thread": self.thread, "lane": self.lane, "before": json_number(self.before),
                "after": json_number(self.after), "target_lane": self.target,
                "source_lane": self.source, "status": self.status, "defined": self.defined,
                "note": self.note}


@dataclass
class WarpOutcome:
    warp: int
    lanes: list[LaneOutcome] = field(default_factory=list)

    @property
    def first_thread(self) -> int:
        return self.warp * WARP_SIZE

    @property
    def last_thread(self) -> int:
        return self.first_thread + len(self.lanes) - 1


def simulate(call: ShflCall, values: Sequence) -> list[WarpOutcome]:
    """Every lane of every warp of the block: what it reads and what it ends up holding."""
    if len(values) != call.threads:
        raise UsageError(f"{len(values)} value(s) for {call.threads} thread(s)")
    warps = []
    for w in range(call.warps):
        present = call.lanes_in_warp(w)
        out = WarpOutcome(w)
        for lane in range(present):
            thread = w * WARP_SIZE + lane
            before = values[thread]
            if not call.mask >> lane & 1:
                out.lanes.append(LaneOutcome(
                    thread, w, lane, before, None, None, SKIPPED, before,
                    "not in the mask: does not execute the shuffle, keeps its value"))
                continue
            target, source, in_range = source_lane(call.op, lane, call.operand, call.width)
            base, last = segment(lane, call.width)
            if not in_range:
                where = "below" if target < base else "past"
                out.lanes.append(LaneOutcome(
                    thread, w, lane, before, target, source, OWN, before,
                    f"lane {target} is {where} its segment {base}..{last}: keeps its own "
                    "value"))
                continue
            if source >= present:
                out.lanes.append(LaneOutcome(
                    thread, w, lane, before, target, source, UNDEFINED, None,
                    f"UNDEFINED: lane {source} is absent (the block ends at thread "
                    f"{call.threads - 1})"))
                continue
            if not call.mask >> source & 1:
                out.lanes.append(LaneOutcome(
                    thread, w, lane, before, target, source, UNDEFINED, None,
                    f"UNDEFINED: lane {source} is not in the mask (it does not take part)"))
                continue
            note = ""
            if call.op == "sync" and not 0 <= call.operand < call.width:
                note = f"srcLane {call.operand} % {call.width} = {source - base}"
            elif call.op == "xor" and source < base:
                earlier_first, earlier_last = segment(source, call.width)
                note = f"reads an earlier segment ({earlier_first}..{earlier_last})"
            out.lanes.append(LaneOutcome(thread, w, lane, before, target, source, READ,
                                         values[w * WARP_SIZE + source], note))
        warps.append(out)
    return warps


def outcome_dict(call: ShflCall, dtype: str, warps: list[WarpOutcome]) -> dict:
    """The model's prediction as plain JSON-ready data (what --model-only --format json
    prints)."""
    return {
        "op": call.op, "intrinsic": INTRINSICS[call.op], "threads": call.threads,
        "width": call.width, "mask": f"0x{call.mask:08x}", call.operand_name: call.operand,
        "dtype": dtype, "call": call.signature(),
        "warps": [{"warp": w.warp, "threads": [w.first_thread, w.last_thread],
                   "lanes": [lane.as_dict() for lane in w.lanes]} for w in warps],
    }


def json_number(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)   # "nan", "inf", "-inf": JSON has no literal for them
    return value


def same_value(a, b) -> bool:
    """Equal, treating NaN as equal to NaN (a shuffle moves bits; it does not compute)."""
    if a is None or b is None:
        return a is b
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


# ---- --explain ---------------------------------------------------------------------------

_COMMON = """\
Width: the warp's 32 lanes are cut into 32/width segments of width consecutive lanes
(width is a power of two, 1..32, default 32); lane L's segment starts at
base = L - L % width and the op works on positions inside it.
Mask: the lanes that execute this call. A lane outside the mask does not execute it and
keeps its value. A lane that reads from a lane that did not execute it (outside the mask,
or absent: past the last thread of a partial warp, as in a 35-thread block whose second
warp has lanes 0..2 only) gets an undefined value. Each warp is its own shuffle: no value
crosses from one warp to another."""

EXPLANATIONS = {
    "sync": """\
__shfl_sync(mask, var, srcLane, width): broadcast / gather by index.
Source lane: base + srcLane % width, i.e. srcLane is taken modulo width and counted from
the start of the caller's own segment. With width 32 every lane reads lane srcLane % 32;
with width 16 and srcLane 17 the lanes 0..15 read lane 1 and the lanes 16..31 read lane 17
(lane 1 of each 16-lane segment).
Out of range: never; any srcLane lands inside the caller's segment.""",
    "up": """\
__shfl_up_sync(mask, var, delta, width): shift values up (towards higher lanes) by delta.
Source lane: L - delta.
Out of range: when L - delta is below the first lane of L's segment (the first delta lanes
of every segment), nothing wraps around: the lane keeps its own value. With width 16 and
delta 2, lanes 0,1 and 16,17 keep their values, lane 2 reads lane 0, lane 18 reads lane 16.
delta is unsigned and must be 0..31 here.""",
    "down": """\
__shfl_down_sync(mask, var, delta, width): shift values down (towards lower lanes) by delta.
Source lane: L + delta.
Out of range: when L + delta is past the last lane of L's segment (the last delta lanes of
every segment), nothing wraps around: the lane keeps its own value. This is what a tree
sum with delta 16, 8, 4, 2, 1 relies on: lane 0 ends with the total, upper lanes hold
partial sums. In a partial warp the source may lie inside the segment yet past the block's
last thread: that lane's result is undefined (not its own value).
delta is unsigned and must be 0..31 here.""",
    "xor": """\
__shfl_xor_sync(mask, var, laneMask, width): butterfly exchange.
Source lane: L ^ laneMask (flip the bits of L set in laneMask): laneMask 1 swaps
neighbours (0<->1, 2<->3, ...), laneMask 3 reverses each group of four (0<->3, 1<->2).
Out of range: only upward. With width < 32, a source lane in an earlier (lower) segment is
read even though it is outside the caller's segment; a source past the last lane of the
caller's segment (a later segment) is not read: the lane keeps its own value. With width
16 and laneMask 16, lanes 16..31 read lanes 0..15 while lanes 0..15 keep their values.
laneMask must be 0..31 here.""",
}


# What `--explain` accepts: one op, or all of them in turn.
EXPLAIN_TOPICS = (*OPS, "all")


def explain(topic: str) -> str:
    """The rule of one op in a few lines, then what width and mask do; "all" gives every
    op's in turn."""
    key = str(topic).strip().lower()
    if key == "all":
        return "\n\n".join(explain(op) for op in OPS)
    if key not in OPS:
        hint = did_you_mean(key, EXPLAIN_TOPICS)
        raise UsageError(f"--explain {topic!r}: unknown topic{hint}; accepted: "
                         f"{', '.join(EXPLAIN_TOPICS)}")
    return f"{EXPLANATIONS[key]}\n{_COMMON}"


def mismatches(warps: list[WarpOutcome], hardware: list | None) -> list[LaneOutcome]:
    """Lanes where the result is defined but the hardware disagrees with the model."""
    if hardware is None:
        return []
    return [lane for w in warps for lane in w.lanes
            if lane.defined and not same_value(lane.after, hardware[lane.thread])]
