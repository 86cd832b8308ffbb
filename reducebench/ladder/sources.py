"""Kernel sources as the compiler sees them: found on disk, with local includes inlined
(so a compile cache keyed on the source text notices a changed header), and the name
expressions each case instantiates. No CuPy here."""

from __future__ import annotations

import functools
import hashlib
import posixpath
import re
from pathlib import Path

from reducebench.core.dtypes import DType
from reducebench.core.paths import data_dir
from reducebench.ladder.geometry import SPLIT_TWO_PASS
from reducebench.ladder.plan import Plan
from reducebench.ladder.registry import Rung

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*(?://.*)?$', re.MULTILINE)
COMPILE_OPTIONS = ("-std=c++17",)


def source_dir() -> Path:
    """cuda_src/ of an installed wheel, else of the source checkout."""
    found = data_dir("cuda_src")
    if found is not None:
        return found
    raise FileNotFoundError("cuda_src/ not found next to the reducebench package")


def source_path(file_name: str) -> Path:
    return source_dir() / file_name


def local_includes(text: str) -> list[str]:
    return _INCLUDE.findall(text)


@functools.lru_cache(maxsize=None)
def expanded_source(file_name: str, directory: str | None = None) -> str:
    """The file with each local `#include "x"` replaced by x's text, once per header."""
    root = Path(directory) if directory else source_dir()
    seen: set[str] = set()

    def expand(name: str) -> str:
        text = (root / name).read_text()

        def replace(match: re.Match) -> str:
            # found next to the including file, as a compiler finds it: the row ladder's
            # files in cuda_src/rows/ include "../common.cuh"
            header = posixpath.normpath(posixpath.join(posixpath.dirname(name), match.group(1)))
            if header in seen:
                return ""
            seen.add(header)
            return f"// ---- {header} ----\n{expand(header)}\n// ---- end {header} ----"

        return _INCLUDE.sub(replace, text)

    return expand(file_name)


# Declared before a user's file so that the harness's name expressions (my_reduce<__half,
# float, 256>) can name the half types whether or not the file includes them.
USER_PRELUDE = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"


def user_source(path: str) -> str:
    """A user's kernel file as the compiler sees it: the prelude, then the file with its
    local includes inlined (found next to the including file, else in cuda_src/ so that
    common.cuh's helpers are available). #line markers keep every compiler message
    pointing at the user's own file and line."""
    seen: set[Path] = set()

    def marker(line: int, shown: str) -> str:
        quoted = shown.replace("\\", "\\\\").replace('"', '\\"')
        return f'#line {line} "{quoted}"'

    def expand(file: Path, shown: str) -> str:
        lines = file.read_text().splitlines()
        out = [marker(1, shown)]
        for number, line in enumerate(lines, start=1):
            match = _INCLUDE.match(line)
            header = _find_header(match.group(1), file.parent) if match else None
            if header is None:
                out.append(line)
                continue
            if header.resolve() not in seen:
                seen.add(header.resolve())
                out.append(expand(header, str(header)))
            out.append(marker(number + 1, shown))
        return "\n".join(out)

    return USER_PRELUDE + expand(Path(path), str(path)) + "\n"


def _find_header(name: str, folder: Path) -> Path | None:
    for root in (folder, source_dir()):
        if (root / name).is_file():
            return root / name
    return None  # left to the compiler, which says it is missing


def rung_source(rung: Rung) -> str:
    """The text a rung's module is compiled from."""
    if rung.origin == "user":
        return user_source(str(rung.source))
    return expanded_source(str(rung.source))


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def name_expressions(rung: Rung, dtype: DType, block: int, plan: Plan,
                     params: dict[str, int] | None = None) -> dict[str, str]:
    """Element type of each pass ("input" or "acc") -> the template instantiation."""
    needed: dict[str, str] = {}
    for launch in plan.launches:
        # In-place rungs reduce an accumulator-typed scratch copy from the first pass on.
        element_cpp = dtype.cpp if launch.element_type == "input" and not rung.in_place \
            else dtype.acc_cpp
        needed[launch.element_type] = rung.name_expression(element_cpp, dtype.acc_cpp, block,
                                                           params)
    return needed


def all_name_expressions(rung: Rung, dtype: DType, block: int,
                         params: dict[str, int] | None = None) -> list[str]:
    """Every instantiation the rung may need for this dtype and block (both passes: a
    re-launch rung's, and a two-pass row rung's second launch over its partials)."""
    first = dtype.acc_cpp if rung.in_place else dtype.cpp
    exprs = [rung.name_expression(first, dtype.acc_cpp, block, params)]
    if rung.finish == "relaunch" or rung.row_split == SPLIT_TWO_PASS:
        second = rung.name_expression(dtype.acc_cpp, dtype.acc_cpp, block, params)
        if second not in exprs:
            exprs.append(second)
    return exprs


def rung_expressions(rung: Rung, dtype: DType, params: dict[str, int] | None = None) -> list[str]:
    """Every instantiation of the rung for this dtype over all its block sizes: what one
    module per rung and dtype holds, so one compile serves every block size."""
    return sorted({e for block in rung.blocks
                   for e in all_name_expressions(rung, dtype, block, params)})
