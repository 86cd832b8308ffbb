"""Bring your own kernel: a user's reduction turned into a rung, so it is compiled,
verified, timed, ranged and recorded exactly like the ladder.

The contract (docs/custom-kernels.md) is checked here, from the source text, before any
GPU is touched: the kernel exists, its form (a template over <T, Acc, BLOCK>, or a plain
or extern "C" function for one dtype), its parameter count for the chosen finish, and a
64-bit n. A row kernel (`--shape`, docs/rows.md) takes (in, out, rows, cols), 64-bit rows
and cols, writes the sum of row r to out[r], and says how many lanes share a row with
its grid, `lanes-per-row=L`; its finish is `rows`. What only a compiler can tell is
reported by `compile_error`, which points at the user's file and line."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable

from reducebench.core.dtypes import DTYPES, DType
from reducebench.core.errors import UsageError
from reducebench.ladder.geometry import BLOCK_SIZES, WHOLE_BLOCK, GridRule
from reducebench.ladder.registry import LADDER, PARAM_RANGES, ROW_LADDER, ROWS, Rung
from reducebench.ladder.user_specs import (beside_config, check_label, config_entries,
                                          read_user_file, rung_name)

FINISHES = ("atomic", "relaunch", "single")
DEFAULT_FINISH = "atomic"
DEFAULT_GRID = "per-thread=1"
# A row kernel's grid: the lanes that share one row (the block then holds block / L rows).
LANES = "lanes-per-row"
GRID_FORMS = (f"per-thread=K, per-block=N or per-sm=M; with --shape {LANES}=L (1 to 1024, "
              "a power of two, or block)")

# Parameters the harness passes, per finish (docs/custom-kernels.md).
SIGNATURES = {
    "atomic": "(const T* in, Acc* out, long long n)",
    "relaunch": "(const T* in, Acc* out, long long n)",
    "single": "(const T* in, Acc* out, long long n, Acc* workspace, unsigned int* ticket)",
    ROWS: "(const T* in, Acc* out, long long rows, long long cols)",
}
PARAMETER_COUNT = {"atomic": 3, "relaunch": 3, "single": 5, ROWS: 4}
# The 64-bit integer parameters of each finish, by position.
SIZE_PARAMETERS = {ROWS: ((2, "rows"), (3, "cols"))}

_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct"}
_TYPE_WORDS = {"long", "int", "unsigned", "signed", "short", "char", "float", "double",
               "size_t", "ptrdiff_t", "int64_t", "uint64_t", "int32_t", "uint32_t",
               "__half", "half", "__nv_bfloat16", "nv_bfloat16", "void", "std"}
_SIXTY_FOUR_BIT = {"long long", "long long int", "signed long long", "unsigned long long",
                   "unsigned long long int", "long", "long int", "unsigned long",
                   "int64_t", "uint64_t", "size_t", "ptrdiff_t", "std int64_t",
                   "std uint64_t", "std size_t", "std ptrdiff_t"}
# C++ element type -> dtype name, for kernels that are not templates.
_ELEMENT_TYPES = {"float": "float32", "double": "float64", "int": "int32", "int32_t": "int32",
                  "__half": "float16", "half": "float16", "__nv_bfloat16": "bfloat16",
                  "nv_bfloat16": "bfloat16"}
_ACC_TYPES = {"float": "float", "double": "double", "int": "int", "int32_t": "int"}
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class KernelSpec:
    """One user kernel as asked for: where it is, and how the harness should run it."""

    path: str                      # as shown in messages and recorded in the CSV
    name: str                      # the __global__ function
    finish: str = DEFAULT_FINISH   # or ROWS: a row kernel (grid lanes-per-row=L)
    grid: str = DEFAULT_GRID
    label: str | None = None       # the rung name; default: the function's name

    @property
    def sums_rows(self) -> bool:
        return self.finish == ROWS


@dataclass(frozen=True)
class Signature:
    """What the source says about the kernel."""

    is_template: bool
    parameters: tuple[str, ...]    # each parameter's text, e.g. "const float* in"
    dtype: str | None = None       # for a plain kernel: the one dtype it takes
    template_ok: bool = True       # a template over exactly <T, Acc, BLOCK>


# -- parsing what the user typed --------------------------------------------------------

def parse_kernel_option(text: str, finish: str | None = None,
                        grid: str | None = None) -> KernelSpec:
    """`path/to/file.cu:kernel_name` from --kernel; a grid `lanes-per-row=L` makes it a
    row kernel (finish rows)."""
    path, sep, name = str(text).rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"--kernel {text!r}: expected FILE.cu:KERNEL_NAME, e.g. "
                         "examples/grid_stride_sum.cu:grid_stride_sum")
    finish, grid = spec_defaults(finish, grid)
    return make_spec(path, name.strip(), finish, grid, None, f"--kernel {text}")


def spec_defaults(finish: str | None, grid: str | None) -> tuple[str, str]:
    """The finish and grid of a kernel where either is left out: a row grid means the
    rows finish; a row kernel has no default grid (its lanes per row are the user's)."""
    if finish is None:
        finish = ROWS if grid is not None and is_row_grid(grid) else DEFAULT_FINISH
    if grid is None:
        grid = "" if finish == ROWS else DEFAULT_GRID
    return finish, grid


def is_row_grid(text: str) -> bool:
    return str(text).partition("=")[0].strip() == LANES


KERNEL_TABLE_KEYS = ("path", "name", "finish", "grid", "label")


def kernels_from_config(entries: object, config_path: Path) -> list[KernelSpec]:
    """[[kernel]] tables of a config file; a relative path is relative to the file."""
    return [make_spec(str(beside_config(entry["path"], config_path)), entry["name"],
                      *spec_defaults(entry.get("finish"), entry.get("grid")),
                      entry.get("label"), what)
            for what, entry in config_entries(entries, config_path, "kernel",
                                              KERNEL_TABLE_KEYS, ("path", "name"),
                                              "path and name")]


def make_spec(path: str, name: str, finish: str, grid: str, label: str | None,
              what: str) -> KernelSpec:
    if not _IDENTIFIER.fullmatch(name):
        raise UsageError(f"{what}: {name!r} is not a C++ function name")
    if finish not in (*FINISHES, ROWS):
        raise UsageError(f"{what}: finish {finish!r}; accepted: {', '.join(FINISHES)} (or "
                         f"{ROWS}, a row kernel with --shape and --grid {LANES}=L)")
    if finish == ROWS and not is_row_grid(grid):
        raise UsageError(f"{what}: a row kernel says how many lanes share a row: --grid "
                         f"{LANES}=L (1 to 1024, a power of two, or block)"
                         + (f", not {grid!r}" if grid else ""))
    if finish != ROWS and is_row_grid(grid):
        raise UsageError(f"{what}: grid {grid!r} is a row kernel's, which writes each row's "
                         f"sum to out[row]; finish {finish!r} sums to one value: leave out "
                         "--finish")
    parse_lanes(grid, what) if finish == ROWS else parse_grid(grid, what)
    check_label(label, what)
    return KernelSpec(path, name, finish, grid, label)


def parse_lanes(text: str, what: str = "--grid") -> int | str:
    """lanes-per-row=L: the threads that share one row (1 to 1024, a power of two), or
    `block` (the whole block, whatever its size): a row rung's lanes_per_row."""
    value = str(text).partition("=")[2].strip()
    if value == WHOLE_BLOCK:
        return WHOLE_BLOCK
    lanes = int(value) if value.isdigit() else 0
    if not 1 <= lanes <= BLOCK_SIZES[-1] or lanes & (lanes - 1):
        raise UsageError(f"{what}: grid {text!r}: {LANES} is a power of two from 1 to "
                         f"{BLOCK_SIZES[-1]}, or block")
    return lanes


def parse_grid(text: str, what: str = "--grid") -> GridRule:
    """per-thread=K: one block per K x block elements; per-block=N: one block per N
    elements; per-sm=M: M blocks per multiprocessor (a grid-stride kernel)."""
    form, sep, value = str(text).partition("=")
    limits = {"per-thread": (1, 1 << 20), "per-block": (1, 1 << 40),
              "per-sm": PARAM_RANGES["blocks_per_sm"]}
    if not sep or form.strip() not in limits or not value.strip().isdigit():
        raise UsageError(f"{what}: grid {text!r}; expected {GRID_FORMS}, e.g. per-sm=8")
    form, number = form.strip(), int(value)
    low, high = limits[form]
    if not low <= number <= high:
        raise UsageError(f"{what}: grid {text!r}: {form} must be from {low} to {high}")
    if form == "per-thread":
        return GridRule(per_thread=number)
    if form == "per-block":
        return GridRule(per_block=number)
    return GridRule(blocks_per_sm=number)


# -- reading the source -----------------------------------------------------------------

def strip_comments(text: str) -> str:
    """Comments replaced by spaces (line breaks kept), string literals left alone."""
    def blank(match: re.Match) -> str:
        token = match.group(0)
        if token.startswith('"'):
            return token
        return re.sub(r"[^\n]", " ", token)

    return re.sub(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', blank, text, flags=re.DOTALL)


def find_signature(text: str, name: str) -> Signature | None:
    """The __global__ function `name` in the source, or None if there is none."""
    code = strip_comments(text)
    for match in re.finditer(rf"\b{re.escape(name)}\s*\(", code):
        start = max(code.rfind(c, 0, match.start()) for c in ";{}") + 1
        prefix = code[start:match.start()]
        if not re.search(r"\b__global__\b", prefix):
            continue
        close = _matching(code, match.end() - 1, "(", ")")
        if close is None:
            continue
        parameters = tuple(p.strip() for p in _split_top(code[match.end():close])
                           if p.strip() and p.strip() != "void")
        template = re.search(r"\btemplate\s*<", prefix)
        if template is None:
            return Signature(False, parameters)
        end = _matching(prefix, template.end() - 1, "<", ">")
        inner = prefix[template.end():end] if end is not None else ""
        return Signature(True, parameters, template_ok=_is_t_acc_block(inner))
    return None


def _matching(text: str, open_at: int, opening: str, closing: str) -> int | None:
    depth = 0
    for index in range(open_at, len(text)):
        if text[index] == opening:
            depth += 1
        elif text[index] == closing:
            depth -= 1
            if depth == 0:
                return index
    return None


def _split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "(<[" and 1 or (char in ")>]" and -1 or 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def _is_t_acc_block(template_parameters: str) -> bool:
    items = [p.strip() for p in _split_top(template_parameters)]
    if len(items) != 3:
        return False
    types_ok = all(re.match(r"(typename|class)\b", p) for p in items[:2])
    return types_ok and not re.match(r"(typename|class)\b", items[2])


def _type_words(parameter: str) -> tuple[list[str], bool]:
    """A parameter's type as words (qualifiers and its name dropped), and whether it is a
    pointer."""
    tokens = re.findall(r"[A-Za-z_]\w*|\*|&", parameter)
    tokens = [t for t in tokens if t not in _QUALIFIERS]
    pointer = "*" in tokens
    words = [t for t in tokens if t not in ("*", "&")]
    if len(words) > 1 and words[-1] not in _TYPE_WORDS:
        words = words[:-1]  # the parameter's name
    return words, pointer


def check_contract(spec: KernelSpec, text: str) -> Signature:
    """The kernel's signature, or one UsageError saying which part of the contract it
    breaks."""
    what = f"kernel {spec.name} in {spec.path}"
    signature = find_signature(text, spec.name)
    if signature is None:
        raise UsageError(f"{what}: no __global__ function named {spec.name} in the file")
    if not signature.template_ok:
        raise UsageError(f"{what}: a template kernel takes exactly <typename T, typename Acc, "
                         "unsigned BLOCK> (input type, accumulator type, block size)")
    expected = PARAMETER_COUNT[spec.finish]
    if len(signature.parameters) != expected:
        given = f"--finish {spec.finish}" if not spec.sums_rows else f"--grid {spec.grid}"
        raise UsageError(f"{what}: takes {len(signature.parameters)} parameter(s); with "
                         f"{given} the harness calls {SIGNATURES[spec.finish]}")
    for index, size in SIZE_PARAMETERS.get(spec.finish, ((2, "n"),)):
        words, pointer = _type_words(signature.parameters[index])
        if pointer or " ".join(words) not in _SIXTY_FOUR_BIT:
            raise UsageError(f"{what}: {size} is {signature.parameters[index]!r}; it must be "
                             f"a 64-bit integer (long long): the harness passes {size} as "
                             "64 bits")
    if signature.is_template:
        return signature
    element, element_pointer = _type_words(signature.parameters[0])
    acc, acc_pointer = _type_words(signature.parameters[1])
    element_cpp, acc_cpp = " ".join(element), " ".join(acc)
    if not element_pointer or element_cpp not in _ELEMENT_TYPES:
        raise UsageError(f"{what}: its input is {signature.parameters[0]!r}; a kernel that "
                         "is not a template must read one of float, double, int, __half or "
                         "__nv_bfloat16 through a pointer (or make it a template)")
    dtype = DTYPES[_ELEMENT_TYPES[element_cpp]]
    if not acc_pointer or _ACC_TYPES.get(acc_cpp) != dtype.acc_cpp:
        raise UsageError(f"{what}: its output is {signature.parameters[1]!r}; for "
                         f"{dtype.cpp} input the harness accumulates in {dtype.acc_cpp}, so "
                         f"it must be {dtype.acc_cpp}*")
    if spec.finish == "relaunch" and dtype.cpp != dtype.acc_cpp:
        raise UsageError(f"{what}: --finish relaunch runs the kernel again on its {dtype.acc_cpp} "
                         f"partials, so a {dtype.cpp} kernel needs to be a template")
    return Signature(False, signature.parameters, dtype.name)


# -- the rung ---------------------------------------------------------------------------

def user_rungs(specs: Iterable[KernelSpec]) -> list[Rung]:
    """One rung per spec, named after the kernel (or its label); a name that is already
    taken gets the file's stem in front, e.g. v2.my_reduce."""
    rungs: list[Rung] = []
    taken = set(LADDER) | set(ROW_LADDER)
    for spec in specs:
        rung = user_rung(spec)
        name = rung_name(spec.label, rung.name, Path(spec.path).stem, taken, "kernel",
                         "kernels")
        rungs.append(replace(rung, name=name))
    return rungs


def user_rung(spec: KernelSpec) -> Rung:
    text = read_user_file(spec.path, f"kernel {spec.name}", "a .cu file")
    signature = check_contract(spec, text)
    dtypes = (signature.dtype,) if signature.dtype else tuple(DTYPES)
    kind = "template over <T, Acc, BLOCK>" if signature.is_template else \
        f"plain function for {signature.dtype}"
    if spec.sums_rows:
        return user_row_rung(spec, signature, dtypes, kind)
    grid = parse_grid(spec.grid, f"kernel {spec.name}")
    return Rung(
        name=spec.name, title=f"your kernel {spec.name} from {spec.path}", finish=spec.finish,
        source=spec.path, kernel=spec.name,
        template="{T}, {Acc}, {block}" if signature.is_template else None,
        grid=grid, dtypes=dtypes, blocks=BLOCK_SIZES,
        deterministic=spec.finish != "atomic", origin="user",
        notes=f"A user kernel ({kind}), finish {spec.finish}, grid {spec.grid}.")


def user_row_rung(spec: KernelSpec, signature: Signature, dtypes: tuple[str, ...],
                  kind: str) -> Rung:
    """A user's row kernel: one launch of ceil(ROWS / (block / L)) blocks, L lanes a row
    (ladder/geometry.plan_rows, as for the row ladder); the block sizes it takes are
    those that hold a whole row's lanes."""
    lanes = parse_lanes(spec.grid, f"kernel {spec.name}")
    blocks = tuple(b for b in BLOCK_SIZES if lanes == WHOLE_BLOCK or b >= lanes)
    return Rung(
        name=spec.name, title=f"your row kernel {spec.name} from {spec.path}", finish=ROWS,
        source=spec.path, kernel=spec.name,
        template="{T}, {Acc}, {block}" if signature.is_template else None,
        dtypes=dtypes, blocks=blocks, origin="user", lanes_per_row=lanes,
        notes=f"A user row kernel ({kind}), {spec.grid}: out[r] = the sum of row r.")


# -- compiling before measuring -----------------------------------------------------------

CompileCheck = Callable[[Rung, DType], "str | None"]


def preflight(rungs: Iterable[Rung], dtypes: Iterable[DType], compile_log: CompileCheck) -> None:
    """Compile every user rung for every dtype it will run with, before anything is
    measured; the first failure becomes one UsageError carrying the compiler's message."""
    dtypes = list(dtypes)
    for rung in rungs:
        if rung.origin != "user":
            continue
        for dtype in dtypes:
            if dtype.name not in rung.dtypes:
                continue
            log = compile_log(rung, dtype)
            if log is not None:
                raise UsageError(compile_error(rung, dtype, log))


def compile_error(rung: Rung, dtype: DType, log: str, max_lines: int = 30) -> str:
    """The compiler's log, shortened and in file:line: form, under one heading line."""
    lines = []
    for line in log.replace("\r", "").splitlines():
        if re.match(r"\d+ errors? detected in the compilation of", line.strip()):
            continue
        line = re.sub(r"^(.*?)\((\d+)\): (error|warning|catastrophic error)",
                      r"\1:\2: \3", line)
        lines.append(line)
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more line(s))"]
    body = "\n".join(f"  {line}" for line in lines) or "  (the compiler gave no message)"
    return (f"kernel {rung.name} ({rung.source}) does not compile for {dtype.name}:\n"
            + body)


def preflight_without_gpu(rungs: list[Rung], dtypes: Iterable[DType]) -> None:
    """preflight() with NVRTC, which needs no GPU: where there is none, a --kernel that
    does not compile is the error to show, not the missing GPU (the user can fix it
    before finding one). Nothing where NVRTC is missing."""
    from reducebench.ladder import nvrtc
    from reducebench.ladder.sources import rung_expressions, rung_source

    if not any(r.origin == "user" for r in rungs) or not nvrtc.available():
        return

    def compile_log(rung, dtype) -> str | None:
        done = nvrtc.compile_source(rung_source(rung), rung_expressions(rung, dtype),
                                    file_name=str(rung.source))
        return None if done.ok else done.log

    preflight(rungs, dtypes, compile_log)
