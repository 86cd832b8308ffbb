"""Compiling kernels through CuPy's RawModule with name expressions. Functions are cached
in memory per (source text, name expression), and modules on disk by CuPy itself. A
case's first compile builds every block size of its rung and dtype in one module, so
one compile serves a whole block sweep; `precompile` builds any batch at once (a test
sweeping a parameter's every value compiles one module, not one per value)."""

from __future__ import annotations

import functools

from reducebench.core.dtypes import DType
from reducebench.ladder.sources import (COMPILE_OPTIONS, expanded_source, rung_expressions,
                                 rung_source)
from reducebench.ladder.nvrtc import cuda_include_dirs
from reducebench.device.nvtx import nvtx_range
from reducebench.ladder.registry import Rung

_functions: dict[tuple[str, str], object] = {}


@functools.lru_cache(maxsize=None)
def _module(source_text: str, name_expressions: tuple[str, ...]):
    import cupy

    options = COMPILE_OPTIONS + tuple(f"-I{d}" for d in cuda_include_dirs())
    module = cupy.RawModule(code=source_text, options=options,
                            name_expressions=name_expressions or None)
    module.compile()
    return module


def precompile(rung: Rung, dtype: DType, expressions: list[str]) -> None:
    """Compile the expressions not compiled yet, in one module."""
    text = rung_source(rung)
    missing = tuple(sorted({e for e in expressions if (text, e) not in _functions}))
    if not missing:
        return
    with nvtx_range(f"compile {rung.name} {dtype.name}", color="grey"):
        module = _module(text, missing)
        for expr in missing:
            _functions[(text, expr)] = module.get_function(expr)


def rung_functions(rung: Rung, dtype: DType, params: dict[str, int] | None,
                   needed: list[str] | None = None) -> dict:
    """name expression -> cupy RawKernel for `needed` (default: every block size of the
    rung), compiling all block sizes together on a miss."""
    text = rung_source(rung)
    every_block = rung_expressions(rung, dtype, params)
    wanted = needed if needed is not None else every_block
    if any((text, e) not in _functions for e in wanted):
        precompile(rung, dtype, every_block + list(wanted))
    return {e: _functions[(text, e)] for e in wanted}


def get_extern_c(source_file: str, names: list[str]) -> dict:
    text = expanded_source(source_file)
    module = _module(text, ())
    return {name: module.get_function(name) for name in names}


def get_functions(source_file: str, name_expressions: list[str]) -> dict:
    """For sources outside the ladder (the shfl lab): name expression -> RawKernel."""
    expressions = tuple(sorted(set(name_expressions)))
    module = _module(expanded_source(source_file), expressions)
    return {expr: module.get_function(expr) for expr in expressions}
