"""Tuning tables: which concrete variant (rung, block size, parameters) the `auto` rung
runs for each size band on one GPU model, where those tables live, reading and writing
them, and the built-in defaults used where there is none. Device-free: `reducebench
tune` (reducebench/tune.py) measures; this module only stores and chooses.

A table is a human-readable TOML file per GPU model (docs/tuning.md has the format):
the user's copy, $XDG_CONFIG_HOME/reducebench/tuning/<gpu-slug>.toml (~/.config when
XDG_CONFIG_HOME is unset), wins over the copy shipped under configs/tuning/. Bands count
n in elements of `element_bytes` bytes (4: float32); a case of another dtype is looked up
by its bytes, since every candidate reads 16-byte vectors and only the bytes matter."""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from reducebench.core.paths import CHECKOUT_DIR, data_dir
from reducebench.core.dtypes import DType, get_dtype
from reducebench.core.errors import UsageError
from reducebench.ladder.geometry import BLOCK_SIZES
from reducebench.ladder.case import AUTO, Case
from reducebench.ladder.registry import LADDER, PARAM_RANGES, Rung

FORMAT = 1
ELEMENT_BYTES = 4
BUILTIN = "built-in defaults"
# The rungs `auto` may run, and the parameters each takes (the registry's own).
AUTO_RUNGS: dict[str, tuple[str, ...]] = {
    "one_block": ("loads",),
    "vector_load": ("blocks_per_sm", "l2_prefetch", "loads"),
    "single_pass": ("blocks_per_sm", "l2_prefetch", "loads"),
    "pingpong": ("blocks_per_sm", "l2_prefetch", "loads"),
    "one_shot": ("l2_prefetch", "loads"),
}


@dataclass(frozen=True)
class Variant:
    """One concrete way to reduce: a rung, its block size and parameter values, and
    (not part of its identity) where the choice came from."""

    rung: str
    block: int
    params: tuple[tuple[str, int], ...] = ()
    origin: str = field(default=BUILTIN, compare=False)

    @classmethod
    def of(cls, rung: str, block: int, **params: int) -> "Variant":
        return cls(rung, block, tuple(sorted(params.items())))

    @property
    def param_dict(self) -> dict[str, int]:
        return dict(self.params)

    def describe(self) -> str:
        """e.g. `pingpong block=256 blocks_per_sm=8 l2_prefetch=0 loads=4`."""
        block = f" block={self.block}" if self.block else ""
        return f"{self.rung}{block}" + "".join(f" {k}={v}" for k, v in self.params)

    def label(self) -> str:
        """What a record's `variant` column says: the variant and where it came from."""
        return f"{self.describe()} ({self.origin})"


@dataclass(frozen=True)
class Band:
    """Sizes n_min..n_max (None: no upper end), in elements of the table's element_bytes,
    the variant chosen for them, and what tune measured at its sample sizes."""

    n_min: int
    n_max: int | None
    variant: Variant
    sizes: tuple[int, ...] = ()            # sample sizes tune measured at
    median_us: tuple[float, ...] = ()      # the chosen variant at each size
    runner_up: str = ""                    # the best other variant, described
    runner_up_us: tuple[float, ...] = ()
    cub_us: tuple[float, ...] = ()
    read_us: tuple[float, ...] = ()        # the same-size read at each size (pct_read's base)
    # The chosen variant confirmed with another dtype at the same bytes (tune's float16):
    same_bytes_dtype: str = ""
    same_bytes_us: tuple[float, ...] = ()
    same_bytes_read_us: tuple[float, ...] = ()

    def holds(self, n: int) -> bool:
        return self.n_min <= n and (self.n_max is None or n <= self.n_max)


@dataclass(frozen=True)
class TuningTable:
    gpu: str
    sm_count: int
    bands: tuple[Band, ...]
    compute_capability: str = ""
    date: str = ""
    dtype: str = "float32"                  # what tune measured with
    element_bytes: int = ELEMENT_BYTES
    versions: tuple[tuple[str, str], ...] = ()
    builtin: bool = False
    path: str = ""                          # where it was read from

    @property
    def origin(self) -> str:
        return BUILTIN if self.builtin else f"tuned for {self.gpu} on {self.date}"


# -- the built-in defaults ---------------------------------------------------------------

# The variants whose worst time over the sample sizes of both GPUs' tunes was closest to
# the fastest candidate at each size, per range (scripts/default_variants.py): up to 2^16
# float32, one_shot in blocks of one warp, 32 threads x 4 loads, the fastest candidate
# at every sample size of both GPUs' tunes (results/h100/tune_candidates_9db2346.csv,
# results/h200/tune_candidates_9db2346.csv); with 512 threads and 4 loads up to 2^24
# (5.6% at worst on those candidates; no variant did better over the range), and with
# 1024 threads and 4 loads above (0.8% at worst). The
# grid is one block per tile, so small inputs get small grids (eight blocks at 2^12).
# Used by a GPU without a table (docs/tuning.md).
DEFAULT_TABLE = TuningTable(
    gpu="", sm_count=0, builtin=True,
    bands=(Band(1, 2**16, Variant.of("one_shot", 32, loads=4, l2_prefetch=0)),
           Band(2**16 + 1, 2**24, Variant.of("one_shot", 512, loads=4, l2_prefetch=0)),
           Band(2**24 + 1, None, Variant.of("one_shot", 1024, loads=4, l2_prefetch=0))))


# -- choosing ----------------------------------------------------------------------------

def lookup_size(n: int, dtype: DType | str, element_bytes: int = ELEMENT_BYTES) -> int:
    """n in the table's elements: the same bytes (rounded up)."""
    dtype = get_dtype(dtype) if isinstance(dtype, str) else dtype
    return max(1, -(-n * dtype.itemsize // element_bytes))


def choose(table: TuningTable, n: int, dtype: DType | str) -> Variant:
    """The variant of the band that holds n elements of dtype, marked with the table's
    origin ("tuned for <GPU> on <date>" or "built-in defaults")."""
    size = lookup_size(n, dtype, table.element_bytes)
    for band in table.bands:
        if band.holds(size):
            return replace(band.variant, origin=table.origin)
    raise UsageError(f"tuning table for {table.gpu or 'defaults'}: no band holds "
                     f"n = {size}")  # load_table refuses tables with gaps: never here


def resolve_auto(n: int, dtype: DType | str, gpu_name: str, sm_count: int) -> Variant:
    """What `auto` runs for n elements of dtype on this GPU: from the user's tuning
    file, else the shipped one, else the built-in defaults (a file for another SM count,
    e.g. another product under the same name, is not used; the origin says so)."""
    path = find_table(gpu_name)
    if path is None:
        return choose(DEFAULT_TABLE, n, dtype)
    table = load_table(path)
    if table.gpu != gpu_name or table.sm_count != sm_count:
        return replace(choose(DEFAULT_TABLE, n, dtype),
                       origin=f"{BUILTIN}; {path} is for {table.gpu} with {table.sm_count} SMs")
    return choose(table, n, dtype)


def resolve_auto_cases(cases: list[Case], gpu_name: str, sm_count: int,
                       ladder: Mapping[str, Rung] | None = None) -> tuple[list[Case], list[str]]:
    """Each case of rung `auto` replaced by the concrete case it runs, and for every
    case the variant label its record shows ("" where the case is not auto's).

    The concrete case's rung is the chosen ladder rung renamed `auto` (a Rung is data:
    its kernel, template, grid and finish come along), with the variant's block and
    parameters, so planning, compiling, timing, verifying and the record all follow the
    chosen rung while the record still says `auto`."""
    ladder = LADDER if ladder is None else ladder
    resolved: list[Case] = []
    labels: list[str] = []
    for case in cases:
        if case.rung.name != AUTO:
            resolved.append(case)
            labels.append("")
            continue
        variant = resolve_auto(case.n, case.dtype, gpu_name, sm_count)
        concrete = variant_case(variant, case.dtype, case.n, ladder, name=AUTO)
        resolved.append(concrete)
        # every parameter it ran with, the rung's defaults for those the table leaves out
        ran = replace(Variant.of(variant.rung, variant.block, **concrete.params),
                      origin=variant.origin)
        labels.append(ran.label())
    return resolved, labels


def variant_case(variant: Variant, dtype: DType, n: int,
                 ladder: Mapping[str, Rung] | None = None, name: str | None = None) -> Case:
    """The case that runs a variant: its rung (renamed `name` if given) with the
    variant's block and parameters over the rung's defaults."""
    ladder = LADDER if ladder is None else ladder
    if variant.rung not in ladder:
        raise UsageError(f"the tuning table names rung {variant.rung!r}, which this "
                         "reducebench does not have")
    rung = ladder[variant.rung]
    if name is not None:
        rung = replace(rung, name=name, title=f"{name}: {variant.describe()}")
    return Case(rung, dtype, n, variant.block, {**rung.params, **variant.param_dict})


# -- where tables live -------------------------------------------------------------------

def gpu_slug(gpu_name: str) -> str:
    """A file name for a GPU model: `NVIDIA H100 80GB HBM3` -> `nvidia-h100-80gb-hbm3`."""
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-") or "gpu"


def user_dir() -> Path:
    """$XDG_CONFIG_HOME/reducebench/tuning, or ~/.config/reducebench/tuning."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "reducebench" / "tuning"


def shipped_dir() -> Path:
    """configs/tuning of an installed wheel (reducebench/_data), else of the checkout."""
    return data_dir("configs", "tuning") or CHECKOUT_DIR / "configs" / "tuning"


def user_path(gpu_name: str) -> Path:
    return user_dir() / f"{gpu_slug(gpu_name)}.toml"


def find_table(gpu_name: str) -> Path | None:
    """The user's tuning file for this GPU, else the shipped one, else None."""
    for folder in (user_dir(), shipped_dir()):
        path = folder / f"{gpu_slug(gpu_name)}.toml"
        if path.is_file():
            return path
    return None


# -- reading -----------------------------------------------------------------------------

def load_table(path: str | Path) -> TuningTable:
    """A tuning file, checked; a broken one is one UsageError naming the file."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError as exc:
        raise UsageError(f"tuning file {path}: cannot read it: {exc.strerror or exc}") from None
    return _load_cached(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _load_cached(path: str, mtime_ns: int, size: int) -> TuningTable:
    try:
        raw = tomllib.loads(Path(path).read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"tuning file {path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"tuning file {path}: invalid TOML: not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"tuning file {path}: cannot read it: {exc.strerror or exc}") from None
    try:
        return replace(table_from_dict(raw), path=path)
    except ValueError as exc:
        raise UsageError(f"tuning file {path}: {exc}") from None


def table_from_dict(raw: dict) -> TuningTable:
    """A table from parsed TOML; ValueError says what is wrong, in one line."""
    fmt = raw.get("format")
    if fmt != FORMAT:
        raise ValueError(f"format = {fmt!r}; this reducebench reads format {FORMAT}")
    gpu = _get(raw, "gpu", str)
    sm_count = _get(raw, "sm_count", int)
    element_bytes = _get(raw, "element_bytes", int, ELEMENT_BYTES)
    if element_bytes not in (2, 4, 8):
        raise ValueError(f"element_bytes = {element_bytes}; expected 2, 4 or 8")
    versions = raw.get("versions", {})
    if not isinstance(versions, dict) or not all(isinstance(v, str) for v in versions.values()):
        raise ValueError("[versions] should be a table of strings")
    bands_raw = raw.get("band")
    if not isinstance(bands_raw, list) or not bands_raw:
        raise ValueError("no [[band]] tables")
    bands = tuple(_band(b, i + 1) for i, b in enumerate(bands_raw))
    _check_bands_cover_every_size(bands)
    return TuningTable(gpu=gpu, sm_count=sm_count, bands=bands,
                       compute_capability=_get(raw, "compute_capability", str, ""),
                       date=_get(raw, "date", str, ""), dtype=_get(raw, "dtype", str, "float32"),
                       element_bytes=element_bytes, versions=tuple(sorted(versions.items())))


def _get(raw: dict, key: str, kind: type, default=None):
    if key not in raw:
        if default is None:
            raise ValueError(f"missing key {key!r}")
        return default
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        expected = "a string" if kind is str else "a whole number"
        raise ValueError(f"{key} = {value!r} should be {expected}")
    return value


def _band(raw: dict, number: int) -> Band:
    where = f"band {number}"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} is not a table")
    n_min = _get(raw, "n_min", int)
    n_max = raw.get("n_max")
    if n_max is not None and (isinstance(n_max, bool) or not isinstance(n_max, int)):
        raise ValueError(f"{where}: n_max = {n_max!r} should be a whole number")
    if n_min < 1 or (n_max is not None and n_max < n_min):
        raise ValueError(f"{where}: n_min = {n_min}, n_max = {n_max} is not a size range")
    rung = _get(raw, "rung", str)
    if rung not in AUTO_RUNGS:
        raise ValueError(f"{where}: rung {rung!r}; auto runs {', '.join(AUTO_RUNGS)}")
    block = _get(raw, "block", int)
    if block not in BLOCK_SIZES:
        raise ValueError(f"{where}: block {block}; accepted: "
                         f"{', '.join(map(str, BLOCK_SIZES))}")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"{where}: params should be a table such as {{loads = 4}}")
    for name, value in params.items():
        if name not in AUTO_RUNGS[rung]:
            raise ValueError(f"{where}: {rung} takes no parameter {name!r} (it takes "
                             f"{', '.join(AUTO_RUNGS[rung])})")
        low, high = PARAM_RANGES[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{where}: {name} = {value!r} should be from {low} to {high}")
    return Band(n_min, n_max, Variant.of(rung, block, **params),
                sizes=_numbers(raw, "sizes", int, where),
                median_us=_numbers(raw, "median_us", float, where),
                runner_up=_get(raw, "runner_up", str, ""),
                runner_up_us=_numbers(raw, "runner_up_us", float, where),
                cub_us=_numbers(raw, "cub_us", float, where),
                read_us=_numbers(raw, "read_us", float, where),
                same_bytes_dtype=_get(raw, "same_bytes_dtype", str, ""),
                same_bytes_us=_numbers(raw, "same_bytes_us", float, where),
                same_bytes_read_us=_numbers(raw, "same_bytes_read_us", float, where))


def _numbers(raw: dict, key: str, kind: type, where: str) -> tuple:
    values = raw.get(key, [])
    if not isinstance(values, list) or any(isinstance(v, bool) or
                                           not isinstance(v, (int, float)) for v in values):
        raise ValueError(f"{where}: {key} should be a list of numbers")
    return tuple(kind(v) for v in values)


def _check_bands_cover_every_size(bands: tuple[Band, ...]) -> None:
    """Bands in order from 1 up, each starting right after the previous one, the last
    with no n_max: every size has exactly one band."""
    if bands[0].n_min != 1:
        raise ValueError(f"band 1 starts at n_min = {bands[0].n_min}; the first band "
                         "starts at 1")
    for number, (before, after) in enumerate(zip(bands, bands[1:]), start=2):
        if before.n_max is None or after.n_min != before.n_max + 1:
            raise ValueError(f"band {number} starts at n_min = {after.n_min}; it must start "
                             f"right after band {number - 1} (n_max + 1)")
    if bands[-1].n_max is not None:
        raise ValueError(f"the last band ends at n_max = {bands[-1].n_max}; leave n_max out "
                         "of the last band so that it covers every larger size")


# -- writing -----------------------------------------------------------------------------

def format_table(table: TuningTable) -> str:
    """The TOML text of a table (tomllib reads it back to the same table)."""
    lines = [
        "# reducebench tuning file: the variant `auto` runs for each size band on this GPU.",
        "# Written by `reducebench tune`; hand edits are read (and checked) too.",
        "# n counts elements of element_bytes bytes; other dtypes are looked up by bytes.",
        "# same_bytes_*: the chosen variant with that dtype over the band's sizes' bytes.",
        f"format = {FORMAT}",
        f"gpu = {_string(table.gpu)}",
        f"sm_count = {table.sm_count}",
        f"compute_capability = {_string(table.compute_capability)}",
        f"date = {_string(table.date)}",
        f"dtype = {_string(table.dtype)}",
        f"element_bytes = {table.element_bytes}",
        "",
        "[versions]",
        *(f"{_key(k)} = {_string(v)}" for k, v in table.versions),
    ]
    for band in table.bands:
        lines += ["", "[[band]]", f"n_min = {band.n_min}"]
        if band.n_max is not None:
            lines.append(f"n_max = {band.n_max}")
        lines += [f"rung = {_string(band.variant.rung)}", f"block = {band.variant.block}",
                  "params = {" + ", ".join(f"{k} = {v}" for k, v in band.variant.params) + "}"]
        if band.sizes:
            lines.append(f"sizes = [{', '.join(str(s) for s in band.sizes)}]")
        lines += _number_lines(band, ("median_us", "runner_up_us", "cub_us", "read_us"))
        if band.runner_up:
            lines.append(f"runner_up = {_string(band.runner_up)}")
        if band.same_bytes_dtype:
            lines.append(f"same_bytes_dtype = {_string(band.same_bytes_dtype)}")
        lines += _number_lines(band, ("same_bytes_us", "same_bytes_read_us"))
    return "\n".join(lines) + "\n"


def _number_lines(band: Band, keys: tuple[str, ...]) -> list[str]:
    """`key = [...]` for each of the band's measured lists that is not empty."""
    return [f"{key} = [{', '.join(_float(v) for v in getattr(band, key))}]"
            for key in keys if getattr(band, key)]


def write_table(table: TuningTable, path: str | Path) -> Path:
    """Write the table (creating the folder), replacing any file there in one step.
    A table that would not read back (a gap between bands) is a ValueError."""
    path = Path(path)
    text = format_table(table)
    table_from_dict(tomllib.loads(text))  # never write what could not be read back
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text)
        partial.replace(path)
    except OSError as exc:
        raise UsageError(f"cannot write the tuning file {path}: {exc.strerror or exc}") from None
    return path


def today() -> str:
    return _dt.date.today().isoformat()


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string: the same escapes


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _string(name)


def _float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.3f}"
