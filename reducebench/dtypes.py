"""The element types a rung can reduce, as data: C++ names, sizes and accumulators."""

from __future__ import annotations

from dataclasses import dataclass

from reducebench.errors import UsageError


@dataclass(frozen=True)
class DType:
    name: str            # CLI and CSV name
    cpp: str             # C++ type of the input elements
    acc_cpp: str         # C++ type the kernels accumulate in
    acc_name: str        # dtype name of the accumulator (and of the result)
    itemsize: int        # bytes per input element
    is_float: bool
    unit_roundoff: float  # of the accumulator: 2^-24 for float, 2^-53 for double, 0 for int


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        DType("float32", "float", "float", "float32", 4, True, 2.0**-24),
        DType("float64", "double", "double", "float64", 8, True, 2.0**-53),
        DType("int32", "int", "int", "int32", 4, False, 0.0),
        # Half types are read as half and accumulated in float32: summing 2^24 halves in
        # half precision would stop growing at 2048 (the seeds' half-in-half bug).
        DType("float16", "__half", "float", "float32", 2, True, 2.0**-24),
        DType("bfloat16", "__nv_bfloat16", "float", "float32", 2, True, 2.0**-24),
    )
}

DEFAULT_DTYPE = "float32"


def get_dtype(name: str) -> DType:
    key = name.strip().lower()
    aliases = {"half": "float16", "fp16": "float16", "bf16": "bfloat16", "float": "float32",
               "double": "float64", "int": "int32", "fp32": "float32", "fp64": "float64"}
    key = aliases.get(key, key)
    if key not in DTYPES:
        raise UsageError(f"unknown dtype {name!r}; accepted: {', '.join(DTYPES)}")
    return DTYPES[key]


def parse_dtypes(text: str | list) -> list[DType]:
    items = text if isinstance(text, list) else str(text).split(",")
    out: list[DType] = []
    for item in items:
        d = get_dtype(str(item))
        if d not in out:
            out.append(d)
    return out
