"""Run settings, from the command line and from TOML config files (a sweep as data)."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from reducebench.custom import KernelSpec, user_rungs
from reducebench.dtypes import DEFAULT_DTYPE, DType, parse_dtypes
from reducebench.errors import UsageError
from reducebench.geometry import check_block
from reducebench.registry import DEFAULT_BLOCK, PARAM_RANGES, Rung, parse_rungs
from reducebench.sizes import parse_sizes
from reducebench.stats import StopRule


@dataclass
class RunSettings:
    sizes: list[int] = field(default_factory=lambda: [2**24])
    dtypes: list[DType] = field(default_factory=lambda: parse_dtypes(DEFAULT_DTYPE))
    rungs: list[Rung] = field(default_factory=lambda: parse_rungs("all"))
    blocks: list[int] = field(default_factory=lambda: [DEFAULT_BLOCK])
    cold: bool = True
    out: Path | None = None
    device: int = 0
    seed: int | None = None
    params: dict[str, list[int]] = field(default_factory=dict)
    stop: StopRule = field(default_factory=StopRule)
    profile: bool = False

    @property
    def mode(self) -> str:
        return "cold" if self.cold else "warm"

    def param_sets(self, rung: Rung) -> list[dict[str, int]]:
        """The rung's own parameters crossed with any values given for them."""
        names = [p for p in rung.params if p in self.params]
        if not names:
            return [dict(rung.params)]
        combos = itertools.product(*(self.params[p] for p in names))
        return [{**rung.params, **dict(zip(names, values))} for values in combos]


def parse_blocks(text: str | int | list) -> list[int]:
    items = text if isinstance(text, list) else str(text).split(",")
    blocks: list[int] = []
    for item in items:
        token = str(item).strip()
        if not re.fullmatch(r"\d+", token):
            raise UsageError(f"invalid block size {token!r}; accepted: 32, 64, 128, 256, "
                             "512, 1024 (a power of two from 32 to 1024)")
        block = check_block(int(token))
        if block not in blocks:
            blocks.append(block)
    return blocks


def parse_params(items: list[str] | dict) -> dict[str, list[int]]:
    """--param unroll=2,4,8 (repeatable) or a TOML table {unroll = [2, 4, 8]}."""
    pairs = items.items() if isinstance(items, dict) else (_split_param(i) for i in items)
    params: dict[str, list[int]] = {}
    for name, values in pairs:
        values = values if isinstance(values, list) else str(values).split(",")
        try:
            parsed = [int(str(v).strip()) for v in values]
        except ValueError:
            raise UsageError(f"parameter {name}: {values!r} are not whole numbers") from None
        low, high = PARAM_RANGES.get(name, (1, 2**31 - 1))
        if any(not low <= v <= high for v in parsed):
            raise UsageError(f"parameter {name}: values must be from {low} to {high}")
        params[name] = parsed
    return params


def _split_param(item: str) -> tuple[str, str]:
    name, sep, values = item.partition("=")
    if not sep or not name.strip():
        raise UsageError(f"invalid --param {item!r}; expected NAME=V[,V...], e.g. unroll=2,4,8")
    return name.strip(), values


# key -> (accepted Python types, what the message says is expected)
CONFIG_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "description": ((str,), "a string"),
    "size": ((str, int, list), "a size, a list of sizes, or a range string"),
    "dtype": ((str, list), "a dtype name or a list of them"),
    "rung": ((str, list), "a rung name, a list, or \"all\""),
    "block": ((int, list, str), "a block size or a list of them"),
    "mode": ((str,), "\"cold\" or \"warm\""),
    "out": ((str,), "a file path"),
    "device": ((int,), "a device index"),
    "seed": ((int,), "an integer"),
    "params": ((dict,), "a table such as {unroll = [2, 4]}"),
    "min_samples": ((int,), "an integer"),
    "max_noise": ((float, int), "a fraction, e.g. 0.005"),
    "max_time": ((float, int), "seconds"),
    "kernel": ((list,), "an array of tables: [[kernel]] with path and name"),
}


def load_config(path: str | Path) -> dict:
    """A config file's values, checked: one UsageError naming the file and what is wrong."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"config {path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"config {path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"config {path}: invalid TOML: not UTF-8 text ({exc.reason} at "
                         f"byte {exc.start})") from None
    except OSError as exc:  # a folder, no permission, ...
        raise UsageError(f"config {path}: cannot read it: {exc.strerror or exc}") from None
    for key, value in raw.items():
        if key not in CONFIG_KEYS:
            raise UsageError(f"config {path}: unknown key {key!r}; accepted: "
                             f"{', '.join(CONFIG_KEYS)}")
        types, expected = CONFIG_KEYS[key]
        if isinstance(value, bool) or not isinstance(value, types):
            raise UsageError(f"config {path}: {key} = {value!r} should be {expected}")
    if raw.get("mode", "cold") not in ("cold", "warm"):
        raise UsageError(f"config {path}: mode = {raw['mode']!r} should be \"cold\" or \"warm\"")
    return raw


def with_user_kernels(rungs: list[Rung], specs: list[KernelSpec]) -> list[Rung]:
    """The chosen ladder rungs with the user's kernels placed before the library
    references, so each table reads: the ladder, yours, then cub, cupy and torch."""
    mine = user_rungs(specs)
    ladder = [r for r in rungs if not r.is_library]
    libraries = [r for r in rungs if r.is_library]
    chosen = ladder + mine + libraries
    if not chosen:
        raise UsageError("nothing to run: --rung none and no --kernel")
    return chosen


def settings_from(values: dict) -> RunSettings:
    """Build settings from merged config and command-line values (already strings/lists)."""
    s = RunSettings()
    if "size" in values:
        s.sizes = parse_sizes(values["size"])
    if "dtype" in values:
        s.dtypes = parse_dtypes(values["dtype"])
    if "rung" in values:
        s.rungs = parse_rungs(values["rung"])
    s.rungs = with_user_kernels(s.rungs, values.get("kernels") or [])
    if "block" in values:
        s.blocks = parse_blocks(values["block"])
    if "mode" in values:
        s.cold = values["mode"] == "cold"
    if values.get("out"):
        s.out = Path(values["out"])
    s.device = int(values.get("device", 0))
    s.seed = values.get("seed")
    if "params" in values:
        s.params = parse_params(values["params"])
        known = {p for r in parse_rungs("all") for p in r.params}
        for name in s.params:
            if name not in known:
                raise UsageError(f"unknown parameter {name!r}; rungs take: "
                                 f"{', '.join(sorted(known))}")
    stop = StopRule()
    s.stop = StopRule(min_samples=int(values.get("min_samples", stop.min_samples)),
                      max_noise=float(values.get("max_noise", stop.max_noise)),
                      max_time=float(values.get("max_time", stop.max_time)))
    s.profile = bool(values.get("profile", False))
    return s
