"""Bring your own Python reduction: a function that sums an array on the GPU (written with
CuPy, PyTorch, JAX, Triton, Numba...) turned into a rung, so it gets the ladder's inputs,
verification, timing, NVTX ranges and CSV rows (docs/callables.md).

Everything here runs without a GPU and before one is touched: parsing `--callable
module:function` and `--callable path/to/file.py:function`, importing the module or
loading the file, finding the function, reading which array it wants, and checking its
signature. Each problem is one UsageError naming the callable. What only a call can tell
(the value it returns, an exception it raises) is judged by the pure helpers at the end,
which the device layer (device/python_reductions.py) and the host executor both use.

Which array a function gets, the one rule: the attribute `fn.framework`, else the default
of a parameter named `framework` (read, never passed), else "cupy". Both given and
different is an error."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, Callable, Iterable

from reducebench.core.errors import UsageError
from reducebench.ladder.sources import source_hash
from reducebench.core.errors import CaseFailed
from reducebench.ladder.registry import LADDER, ROW_LADDER, ROWS, Rung
from reducebench.ladder.user_specs import (beside_config, check_label, config_entries,
                                          read_user_file, rung_name)

FRAMEWORKS = ("cupy", "torch", "jax")
DEFAULT_FRAMEWORK = "cupy"
FORMS = "module:function or path/to/file.py:function"
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
# Kernels of GPU languages that are callable in Python but are not a whole reduction: a
# launch needs a grid and an output, which a Python function around them provides.
_KERNEL_TYPES = {"JITFunction": "a @triton.jit kernel", "Autotuner": "a Triton autotuned kernel",
                 "Heuristics": "a Triton kernel", "CUDADispatcher": "a @numba.cuda.jit kernel",
                 "RawKernel": "a CuPy RawKernel", "ElementwiseKernel": "a CuPy ElementwiseKernel"}


@dataclass(frozen=True)
class CallableSpec:
    """One callable as asked for: a file or a module, the function in it, and a label; or
    (from the Python API) the function object itself."""

    target: str                     # as typed, e.g. "examples/cupy_sum.py:cupy_sum"
    function: str                   # the attribute path in the module, e.g. "sums.fast"
    path: str | None = None         # a .py file (shown in messages, recorded in the CSV)
    module: str | None = None       # or an importable module
    label: str | None = None        # the rung name; default: the function's name
    obj: Callable | None = field(default=None, repr=False)  # from the API: the object


@dataclass(frozen=True)
class UserCallable:
    """A resolved callable: what the device layer calls, and what the CSV records."""

    target: str
    name: str                       # the function's own name (the rung's default name)
    function: Callable = field(repr=False)
    framework: str = DEFAULT_FRAMEWORK
    source: str = ""                # the file it comes from ("" for a compiled builtin)
    source_hash: str = ""           # of that file's text as it was imported


# -- parsing what the user typed --------------------------------------------------------

def parse_callable_option(text: str, label: str | None = None,
                          what: str | None = None) -> CallableSpec:
    """`module:function` or `path/to/file.py:function` from --callable (split at the last
    colon, so C:/x.py:f works). A left part ending in .py or holding a slash is a file."""
    what = what or f"--callable {text}"
    left, sep, function = str(text).strip().rpartition(":")
    if not sep or not left or not function:
        raise UsageError(f"{what}: expected {FORMS}, e.g. examples/cupy_sum.py:cupy_sum")
    if not _DOTTED.fullmatch(function):
        raise UsageError(f"{what}: {function!r} is not a Python function name")
    check_label(label, what)
    if _is_file(left):
        return CallableSpec(str(text).strip(), function, path=left, label=label)
    if not _DOTTED.fullmatch(left):
        raise UsageError(f"{what}: {left!r} is neither a module name nor a .py file; "
                         f"expected {FORMS}")
    return CallableSpec(str(text).strip(), function, module=left, label=label)


def spec_for_object(function: Callable, label: str | None = None) -> CallableSpec:
    """A function object given to the Python API: nothing to import."""
    what = "reducebench.measure"
    if not callable(function):
        raise UsageError(f"{what}: {function!r} is neither callable nor a string naming a "
                         f"rung, FILE.cu:KERNEL or {FORMS}")
    check_label(label, what)
    module = getattr(function, "__module__", None) or "?"
    name = getattr(function, "__qualname__", None) or _object_name(function)
    return CallableSpec(f"{module}:{name}", _object_name(function), label=label, obj=function)


def _is_file(left: str) -> bool:
    return left.endswith(".py") or "/" in left or "\\" in left


def _object_name(function: Callable) -> str:
    """A rung-name-safe name for a function object: <lambda> becomes lambda."""
    inner = getattr(function, "func", function)  # functools.partial
    raw = getattr(inner, "__name__", None) or type(function).__name__
    return re.sub(r"[^A-Za-z0-9_.+-]", "", raw) or "callable"


CALLABLE_TABLE_KEYS = ("path", "module", "name", "label")


def callables_from_config(entries: object, config_path: Path) -> list[CallableSpec]:
    """[[callable]] tables: path (a .py file, relative to the config file) or module, the
    function's name, and an optional label."""
    specs = []
    for what, entry in config_entries(entries, config_path, "callable", CALLABLE_TABLE_KEYS,
                                      (), "path (or module) and name"):
        if ("path" in entry) == ("module" in entry):
            raise UsageError(f"{what}: give either path (a .py file) or module, not "
                             f"{'both' if 'path' in entry else 'neither'}")
        if "name" not in entry:
            raise UsageError(f"{what}: missing 'name' (the function)")
        if "path" in entry:
            path = beside_config(entry["path"], config_path)
            left = str(path) if _is_file(str(path)) else f"./{path}"
        else:
            left = entry["module"]
        specs.append(parse_callable_option(f"{left}:{entry['name']}", entry.get("label"),
                                           what))
    return specs


def spec_record(spec: CallableSpec) -> dict:
    """How a results file's `options` column records a callable (for --resume)."""
    record = {"target": spec.target} if spec.obj is None else {"object": spec.target}
    return {**record, **({"label": spec.label} if spec.label else {})}


def spec_from_record(record: dict, what: str) -> CallableSpec:
    if "target" not in record:
        raise UsageError(f"{what}: the run measured a Python object ({record.get('object')}) "
                         "through reducebench.measure; it cannot be resumed from the file")
    return parse_callable_option(record["target"], record.get("label"), what)


# -- resolving: import, find, check ------------------------------------------------------

def resolve(spec: CallableSpec) -> UserCallable:
    """The function the spec names, its framework and its source, or one UsageError."""
    what = f"callable {spec.target}"
    if spec.path is not None:
        module, text = load_file(spec.path, what)
        function = find_function(module, spec.function, spec.path, what)
        # Recorded: the file as given, and a hash of the very text that was run.
        return _checked(spec, function, what, spec.path, source_hash(text))
    if spec.obj is not None:
        function, module_file = spec.obj, None
    else:
        module = import_module(str(spec.module), what)
        function = find_function(module, spec.function, f"module {spec.module}", what)
        module_file = getattr(module, "__file__", None)
    source = _function_file(function) or module_file or ""
    return _checked(spec, function, what, source, _file_hash(source, function))


def _checked(spec: CallableSpec, function: Callable, what: str, source: str,
             digest: str) -> UserCallable:
    framework = check_signature(function, what)
    name = spec.function.rpartition(".")[2]
    return UserCallable(spec.target, name, function, framework, source, digest)


def load_file(path: str, what: str) -> tuple[ModuleType, str]:
    """The file run as a module of its own (registered in sys.modules, so that tools which
    read a function's source, such as Triton's JIT, find it), with its folder on sys.path
    while it runs, as for a script. A file already loaded with the same text is reused."""
    file = Path(path)
    text = read_user_file(path, what, "a .py file")
    digest = source_hash(text)
    name = f"reducebench_callable_{re.sub(r'[^0-9A-Za-z_]', '_', file.stem)}_{digest[:8]}"
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(file.resolve()):
        return loaded, text
    try:  # compiled under its full path, so that tools reading source find the file
        code = compile(text, str(file.resolve()), "exec")
    except SyntaxError as exc:
        raise UsageError(f"{what}: syntax error at {path}:{exc.lineno}: {exc.msg}") from None
    spec = importlib.util.spec_from_file_location(name, file.resolve())
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(file.resolve().parent)
    sys.path.insert(0, folder)
    try:
        exec(code, module.__dict__)
    except Exception as exc:
        del sys.modules[name]
        raise UsageError(f"{what}: importing {path} failed{_at(exc, path)}: "
                         f"{_one_line(exc)}") from None
    finally:
        sys.path.remove(folder)
    return module, text


def import_module(name: str, what: str) -> ModuleType:
    """The module, imported with the current folder on sys.path (as `python -m` would)."""
    added = "" not in sys.path and os.getcwd() not in sys.path
    if added:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if name == missing or name.startswith(missing + "."):
            raise UsageError(f"{what}: no module named {missing!r} (looked for on sys.path "
                             "and in the current folder)") from None
        raise UsageError(f"{what}: importing {name} failed{_at(exc)}: {_one_line(exc)}") \
            from None
    except SyntaxError as exc:
        raise UsageError(f"{what}: syntax error at {exc.filename}:{exc.lineno}: "
                         f"{exc.msg}") from None
    except Exception as exc:
        raise UsageError(f"{what}: importing {name} failed{_at(exc)}: {_one_line(exc)}") \
            from None
    finally:
        if added:
            sys.path.remove(os.getcwd())


def find_function(module: ModuleType, dotted: str, where: str, what: str) -> Callable:
    target: Any = module
    for part in dotted.split("."):
        if not hasattr(target, part):
            defined = sorted(k for k, v in vars(module).items()
                             if callable(v) and not k.startswith("_")
                             and getattr(v, "__module__", None) == module.__name__)
            hint = f" (it defines: {', '.join(defined[:8])})" if defined else ""
            raise UsageError(f"{what}: no function named {dotted} in {where}{hint}")
        target = getattr(target, part)
    if not callable(target):
        raise UsageError(f"{what}: {dotted} is {type(target).__name__!r}, not a function")
    return target


def check_signature(function: Callable, what: str) -> str:
    """The framework the function declares, after checking that it can be called with the
    input alone: exactly one required positional parameter; any other has a default."""
    kind = _KERNEL_TYPES.get(type(function).__name__)
    if kind:
        raise UsageError(f"{what}: is {kind}, not a reduction: wrap its launch in a function "
                         "that takes the input array and returns the sum (docs/callables.md)")
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a compiled builtin: nothing to read, the call tells
        return declared_framework(function, None, what)
    framework = signature.parameters.get("framework")
    if framework is not None and framework.default is inspect.Parameter.empty:
        raise UsageError(f"{what}: its parameter framework needs a default, e.g. "
                         "framework=\"torch\"; reducebench reads it and never passes it")
    parameters = list(signature.parameters.values())
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in parameters
                if p.default is inspect.Parameter.empty and p.kind not in variadic]
    shown = f"{_object_name(function)}{signature}"
    if len(required) != 1 or required[0].kind not in positional:
        names = ", ".join(p.name for p in required) or "none"
        raise UsageError(f"{what}: {shown} must take exactly one required positional "
                         f"parameter, the input array (required now: {names}); give any "
                         "other parameter a default")
    return declared_framework(function, framework, what)


def declared_framework(function: Callable, parameter: inspect.Parameter | None,
                       what: str) -> str:
    attribute = getattr(function, "framework", None)
    default = parameter.default if parameter is not None else None
    for where, value in (("the attribute framework", attribute),
                         ("the default of parameter framework", default)):
        if value is not None and value not in FRAMEWORKS:
            raise UsageError(f"{what}: {where} is {value!r}; accepted: "
                             f"{', '.join(repr(f) for f in FRAMEWORKS)}")
    if attribute is not None and default is not None and attribute != default:
        raise UsageError(f"{what}: declares framework {attribute!r} as an attribute and "
                         f"{default!r} as a parameter default; keep one")
    return attribute or default or DEFAULT_FRAMEWORK


# -- the rung ---------------------------------------------------------------------------

def callable_rungs(specs: Iterable[CallableSpec], taken: Iterable[str] = (),
                   rows: bool = False) -> list[Rung]:
    """One library rung per callable, named after its function (or its label); a name
    already taken (a built-in rung, one of the user's kernels or another callable) gets
    the file's stem (or the module's last part) in front, e.g. v2.my_sum. With `rows`
    (--shape) each sums every row of a ROWS x COLS array."""
    rungs: list[Rung] = []
    names = set(LADDER) | set(ROW_LADDER) | set(taken)
    for spec in specs:
        user = resolve(spec)
        name = rung_name(spec.label, user.name, _stem(spec), names, "callable",
                         "callables or kernels")
        rungs.append(callable_rung(user, name, rows))
    return rungs


STREAM_NOTES = {
    "cupy": "It runs on reducebench's stream (the current CuPy stream), held while it is "
            "enqueued, so Python's call overhead is outside the timed interval.",
    "torch": "It runs on reducebench's stream (a torch external stream), held while it is "
             "enqueued, so Python's call overhead is outside the timed interval.",
    "jax": "JAX cannot be told a stream: the call runs unheld, followed by a device sync, "
           "so its time includes dispatching the call: an upper bound (docs/callables.md).",
}


def callable_rung(user: UserCallable, name: str, rows: bool = False) -> Rung:
    """A library rung whose library is the user's function; not deterministic (nothing
    says it is). With `rows` it is a row rung: the function gets the ROWS x COLS array
    and returns one sum per row."""
    given = (f"the ROWS x COLS {user.framework} array and returning each row's sum" if rows
             else f"a {user.framework} array")
    return Rung(
        name=name, title=f"your function {user.target} ({user.framework})",
        finish=ROWS if rows else "library",
        source=user.source or None, library="callable", callable_ref=user,
        deterministic=False, origin="callable",
        notes=f"A user callable receiving {given}. {STREAM_NOTES[user.framework]}")


def _stem(spec: CallableSpec) -> str:
    if spec.path:
        return Path(spec.path).stem
    if spec.module:
        return spec.module.rpartition(".")[2]
    return spec.target.partition(":")[0].rpartition(".")[2].strip("_") or "callable"


def _function_file(function: Callable) -> str | None:
    try:
        return inspect.getsourcefile(inspect.unwrap(function))
    except (TypeError, ValueError):
        return None


def _file_hash(source: str, function: Callable) -> str:
    """Of the file's text; of the function's own source where there is no readable file
    (a notebook cell); "" for compiled code."""
    try:
        return source_hash(Path(source).read_text()) if source else ""
    except (OSError, UnicodeDecodeError):
        pass
    try:
        return source_hash(inspect.getsource(function))
    except (OSError, TypeError):
        return ""


def _same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


# -- what a call tells: pure helpers for both executors -----------------------------------

def user_location(tb: TracebackType | None, source: str) -> tuple[str, int] | None:
    """The last frame of a traceback in the user's file: where their code went wrong."""
    if not source:
        return None
    frames = [f for f in traceback.extract_tb(tb) if _same_file(f.filename, source)]
    return (frames[-1].filename, frames[-1].lineno or 0) if frames else None


def failure_message(exc: BaseException, user: UserCallable) -> str:
    """One line: which function raised what, at the user's file and line (the last frame
    in the file the callable was named from, else in the file defining the function)."""
    location = user_location(exc.__traceback__, user.source)
    if location is None:
        location = user_location(exc.__traceback__, _function_file(user.function) or "")
    where = f" at {_shown(location[0], user.source)}:{location[1]}" if location else ""
    return f"{user.name} raised {_one_line(exc)}{where}"


def result_value(value: object, acc_name: str, name: str) -> float | int:
    """The sum a function returned, as a Python number, or CaseFailed naming the function:
    it must be a 0-d array (CuPy, torch, JAX or NumPy) or a scalar of the accumulator
    type (acc_name; e.g. float32 for float16 input). A Python float or int has no dtype
    and is taken when its kind matches."""
    expected = f"a 0-d array or scalar of {acc_name}"
    is_int = acc_name.startswith("int")
    if isinstance(value, bool) or value is None:
        raise CaseFailed(f"{name} returned {value!r}; it must return {expected}")
    if type(value) in (int, float):  # exactly: numpy's float64 is a float too
        if isinstance(value, float) == is_int:
            raise CaseFailed(f"{name} returned a Python {type(value).__name__}; "
                             f"expected {expected}")
        return value
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None:
        raise CaseFailed(f"{name} returned {type(value).__name__}; expected {expected}")
    if tuple(shape) != ():
        raise CaseFailed(f"{name} returned an array of shape {tuple(shape)}; expected "
                         f"{expected} (one value, e.g. x.sum())")
    got = dtype_name(dtype)
    if got != acc_name:
        raise CaseFailed(f"{name} returned {got}; expected {acc_name}, the accumulator of "
                         f"this input (e.g. sum(x, dtype={acc_name}))")
    return value.item()


def row_values(value: object, acc_name: str, name: str, rows: int):
    """The sums a row function returned, one per row, as a NumPy array, or CaseFailed
    naming the function: it must be a 1-D array (CuPy, torch, JAX or NumPy) of `rows`
    values of the accumulator type (acc_name)."""
    import numpy

    expected = f"a 1-D array of {rows} {acc_name} values, one per row"
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None:
        raise CaseFailed(f"{name} returned {type(value).__name__}; expected {expected}")
    if tuple(shape) != (rows,):
        raise CaseFailed(f"{name} returned an array of shape {tuple(shape)}; expected "
                         f"{expected} (e.g. x.sum(axis=1))")
    got = dtype_name(dtype)
    if got != acc_name:
        raise CaseFailed(f"{name} returned {got}; expected {acc_name}, the accumulator of "
                         f"this input (e.g. sum(x, axis=1, dtype={acc_name}))")
    if hasattr(value, "detach"):  # torch: to the host through its own copy
        value = value.detach().cpu().numpy()
    elif not isinstance(value, numpy.ndarray) and hasattr(value, "get"):  # CuPy
        value = value.get()
    return numpy.asarray(value)


def is_host_value(value: object) -> bool:
    """A Python or NumPy number (or NumPy array): a function that returns one has waited
    for the GPU to copy it back, so it cannot be held (device/python_reductions.py)."""
    import numpy

    return type(value) in (int, float) or isinstance(value, (numpy.generic, numpy.ndarray))


def dtype_name(dtype: object) -> str:
    """numpy/CuPy/JAX dtypes print as float32, torch's as torch.float32."""
    return str(dtype).rpartition(".")[2]


def _at(exc: BaseException, path: str | None = None) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if path:
        mine = [f for f in frames if _same_file(f.filename, path)]
        return f" at {path}:{mine[-1].lineno}" if mine else ""
    outside = [f for f in frames if "importlib" not in f.filename
               and not _same_file(f.filename, __file__)]
    return f" at {outside[-1].filename}:{outside[-1].lineno}" if outside else ""


def _shown(filename: str, source: str) -> str:
    """The user's file as they named it (relative, as given) when it is that file."""
    return source if _same_file(filename, source) else filename


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- the host executor's callable (tests and FakeBackend) ---------------------------------

class HostCallable:
    """A callable on the host executor (reducebench.measuring.hostexec): called with the numpy
    input (bfloat16 arrives as float32 there), judged by the same helpers as on a GPU; for
    a row case (rows > 0) the input viewed as rows x (n / rows), one sum per row back."""

    def __init__(self, user: UserCallable, x, acc_name: str, rows: int = 0) -> None:
        self.user, self.acc, self.out, self.rows = user, acc_name, None, rows
        self.x = x.reshape(rows, x.size // rows) if rows else x

    def prepare(self) -> None:
        pass

    def poison(self) -> None:
        self.out = None

    def enqueue(self) -> None:
        try:
            self.out = self.user.function(self.x)
        except Exception as exc:
            raise CaseFailed(failure_message(exc, self.user)) from None

    def read(self):
        if self.rows:
            return row_values(self.out, self.acc, self.user.name, self.rows)
        return result_value(self.out, self.acc, self.user.name)

    def check_guards(self) -> list[str]:
        return []  # the user's function allocates its own buffers
