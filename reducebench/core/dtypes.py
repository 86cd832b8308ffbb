"""The element types a rung can reduce, as data: C++ names, sizes and accumulators."""

from __future__ import annotations

from dataclasses import dataclass

from reducebench.core.choices import comma_list, did_you_mean
from reducebench.core import defaults
from reducebench.core.errors import UsageError


@dataclass(frozen=True)
class DType:
    name: str            # CLI and CSV name
    cpp: str             # C++ type of the input elements
    acc_cpp: str         # C++ type the kernels accumulate in
    acc_name: str        # dtype name of the accumulator (and of the result)
    itemsize: int        # bytes per input element
    is_float: bool
    unit_roundoff: float  # of the accumulator: 2^-24 for float, 2^-53 for double, 0 for int
    short: str = ""      # the short name `list` prints (f32); accepted wherever a name is


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        DType("float32", "float", "float", "float32", 4, True, 2.0**-24, "f32"),
        DType("float64", "double", "double", "float64", 8, True, 2.0**-53, "f64"),
        DType("int32", "int", "int", "int32", 4, False, 0.0, "i32"),
        # Half types are read as half and accumulated in float32: summing 2^24 halves in
        # half precision would stop growing at 2048 (a classic half-in-half bug).
        DType("float16", "__half", "float", "float32", 2, True, 2.0**-24, "f16"),
        DType("bfloat16", "__nv_bfloat16", "float", "float32", 2, True, 2.0**-24, "bf16"),
    )
}

DEFAULT_DTYPE = defaults.DTYPE


# Other names a user may type for the same types: the C/C++ and PyTorch spellings.
_ALIASES = {"float": "float32", "fp32": "float32", "single": "float32",
            "double": "float64", "fp64": "float64",
            "int": "int32", "int32_t": "int32",
            "half": "float16", "fp16": "float16",
            "bfloat": "bfloat16", "bf16": "bfloat16"}
ALIASES: dict[str, str] = {**{d.short: d.name for d in DTYPES.values()}, **_ALIASES}


def get_dtype(name: str) -> DType:
    """A dtype by its name (float32), the short name `list` prints (f32), or a common
    alias (float, double, int, half, fp16, fp32, fp64, bf16)."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in DTYPES:
        accepted = ", ".join(f"{d.name} ({d.short})" for d in DTYPES.values())
        hint = did_you_mean(key, [*DTYPES, *ALIASES])
        raise UsageError(f"unknown dtype {name.strip()!r}{hint}; accepted: {accepted}, or "
                         "float, double, int, half, fp16, fp32, fp64")
    return DTYPES[key]


def parse_dtypes(text: str | list) -> list[DType]:
    out: list[DType] = []
    for item in comma_list(text, "dtype"):
        d = get_dtype(item)
        if d not in out:
            out.append(d)
    return out
