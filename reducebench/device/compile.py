"""Compiling kernels through CuPy's RawModule with name expressions. Modules are cached
in memory per (source text, name expressions), and on disk by CuPy itself."""

from __future__ import annotations

import functools

from reducebench.dtypes import DType
from reducebench.kernels import (COMPILE_OPTIONS, expanded_source, rung_expressions,
                                 rung_source)
from reducebench.nvrtc import cuda_include_dirs
from reducebench.profiling import nvtx_range
from reducebench.registry import Rung


@functools.lru_cache(maxsize=None)
def _module(source_text: str, name_expressions: tuple[str, ...]):
    import cupy

    options = COMPILE_OPTIONS + tuple(f"-I{d}" for d in cuda_include_dirs())
    module = cupy.RawModule(code=source_text, options=options,
                            name_expressions=name_expressions or None)
    module.compile()
    return module


def rung_functions(rung: Rung, dtype: DType, params: dict[str, int] | None) -> dict:
    """name expression -> cupy RawKernel, compiling (or loading from cache) once."""
    expressions = rung_expressions(rung, dtype, params)
    with nvtx_range(f"compile {rung.name} {dtype.name}", color="grey"):
        module = _module(rung_source(rung), tuple(expressions))
        return {expr: module.get_function(expr) for expr in expressions}


def get_extern_c(source_file: str, names: list[str]) -> dict:
    text = expanded_source(source_file)
    module = _module(text, ())
    return {name: module.get_function(name) for name in names}


def get_functions(source_file: str, name_expressions: list[str]) -> dict:
    """For sources outside the ladder (the shfl lab): name expression -> RawKernel."""
    expressions = tuple(sorted(set(name_expressions)))
    module = _module(expanded_source(source_file), expressions)
    return {expr: module.get_function(expr) for expr in expressions}
