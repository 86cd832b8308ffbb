"""Compiling kernel sources with NVRTC without a GPU (through cuda-bindings), for the CPU
tests (every kernel compiles for every dtype). The device layer compiles
through CuPy instead; both read the same expanded source."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass
class NvrtcResult:
    ok: bool
    log: str
    lowered: dict[str, str]
    ptx: str = ""  # only for a virtual arch (compute_XX); a real one (sm_XX) gives a cubin


def cuda_include_dirs() -> list[str]:
    """Where cuda_fp16.h and cuda_bf16.h live: a CUDA toolkit, or the pip CUDA runtime."""
    dirs = []
    for var in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(var):
            dirs.append(os.path.join(os.environ[var], "include"))
    dirs.append("/usr/local/cuda/include")
    try:
        import nvidia.cuda_runtime as runtime  # pip wheel nvidia-cuda-runtime-cu12

        dirs += [os.path.join(p, "include") for p in runtime.__path__]
    except ImportError:
        pass
    return [d for d in dirs if os.path.isfile(os.path.join(d, "cuda_fp16.h"))]


def available() -> bool:
    try:
        from cuda.bindings import nvrtc  # noqa: F401
    except ImportError:
        return False
    return bool(cuda_include_dirs())


def compile_source(source: str, name_expressions: list[str], arch: str = "sm_90",
                   file_name: str = "kernel.cu", options: tuple[str, ...] = ()) -> NvrtcResult:
    from cuda.bindings import nvrtc

    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), file_name.encode(), 0, [], [])
    _check(nvrtc, err)
    try:
        for expr in name_expressions:
            _check(nvrtc, nvrtc.nvrtcAddNameExpression(prog, expr.encode())[0])
        opts = [f"-arch={arch}", *options, *(f"-I{d}" for d in cuda_include_dirs())]
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        text = log.rstrip(b"\x00 ").decode(errors="replace")
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return NvrtcResult(False, text, {})
        lowered = {}
        for expr in name_expressions:
            e, name = nvrtc.nvrtcGetLoweredName(prog, expr.encode())
            _check(nvrtc, e)
            lowered[expr] = name.decode()
        return NvrtcResult(True, text, lowered, _ptx(nvrtc, prog) if arch.startswith("compute_") else "")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _ptx(nvrtc, prog) -> str:
    err, size = nvrtc.nvrtcGetPTXSize(prog)
    _check(nvrtc, err)
    text = b" " * size
    _check(nvrtc, nvrtc.nvrtcGetPTX(prog, text)[0])
    return text.rstrip(b"\x00").decode()


def _check(nvrtc, err) -> None:
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"NVRTC: {err}")
