"""Compiling kernels through CuPy's RawModule with name expressions. Modules are cached
in memory per (source text, name expressions), and on disk by CuPy itself."""

from __future__ import annotations

import functools

from reducebench.kernels import COMPILE_OPTIONS, expanded_source
from reducebench.nvrtc import cuda_include_dirs
from reducebench.profiling import nvtx_range


@functools.lru_cache(maxsize=None)
def _module(source_text: str, name_expressions: tuple[str, ...]):
    import cupy

    options = COMPILE_OPTIONS + tuple(f"-I{d}" for d in cuda_include_dirs())
    module = cupy.RawModule(code=source_text, options=options,
                            name_expressions=name_expressions or None)
    module.compile()
    return module


def get_functions(source_file: str, name_expressions: list[str]) -> dict:
    """name expression -> cupy RawKernel, compiling (or loading from cache) once."""
    text = expanded_source(source_file)
    with nvtx_range(f"compile {source_file}", color="grey"):
        module = _module(text, tuple(sorted(set(name_expressions))))
        return {expr: module.get_function(expr) for expr in set(name_expressions)}


def get_extern_c(source_file: str, names: list[str]) -> dict:
    text = expanded_source(source_file)
    module = _module(text, ())
    return {name: module.get_function(name) for name in names}
