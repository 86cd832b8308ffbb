"""Run settings, from the command line and from TOML config files (a sweep as data).

Everything that turns what the user typed into settings lives here: parsing and checking
each value, merging a config file with the options given on the command line, and the
sweep recorded in every results file so that `--resume` can continue it."""

from __future__ import annotations

import itertools
import json
import math
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from reducebench.ladder.user_callables import (CallableSpec, callable_rungs, callables_from_config,
                                          parse_callable_option, spec_from_record,
                                          spec_record)
from reducebench.ladder.custom import (LANES, KernelSpec, kernels_from_config, make_spec,
                                       parse_kernel_option, user_rungs)
from reducebench.core import defaults
from reducebench.core.choices import comma_list, did_you_mean
from reducebench.core.dtypes import DEFAULT_DTYPE, DType, parse_dtypes
from reducebench.core.errors import UsageError
from reducebench.measuring.each_device import device_spec, single_device
from reducebench.ladder.geometry import FIT_LANES, check_block
from reducebench.verify.inputs import DEFAULT_INPUTS, INPUT_KINDS
from reducebench.ladder.registry import (DEFAULT_BLOCK, PARAM_RANGES, ROW_RUNGS, ROWS, RUNGS,
                                         Rung, parse_row_rungs, parse_rungs)
from reducebench.core.sizes import format_shape, parse_shape_request, parse_sizes
from reducebench.core.stats import StopRule
from reducebench.measuring.rounds import DEFAULT_ROUNDS, MAX_ROUNDS

MODES = ("cold", "warm")
TIMINGS = ("single", "graph")  # one launch per sample, or K runs per CUDA-graph replay

# Marks values read from a results file's options (never a config key): its rungs are every
# name the sweep ran, not the names the user typed.
RECORDED = "recorded"


@dataclass
class RunSettings:
    sizes: list[int] = field(default_factory=lambda: [defaults.SIZE])
    # --shape: (rows, cols) pairs, each row summed to one value by the row rungs; with
    # shapes there are no sizes (and the reverse)
    shapes: list[tuple[int, int]] = field(default_factory=list)
    # --shape as given (sweep:rows@2^20..2^28 stays one item): what `options` records, so
    # that a record holds the request, not the thousand shapes a sweep expands to
    shape_request: list[str] = field(default_factory=list)
    # A declared sweep's limit (core/shape_sweeps.py): a row case whose lanes would each
    # add more elements than this in sequence is skipped without running (None: none).
    max_chain: int | None = None
    dtypes: list[DType] = field(default_factory=lambda: parse_dtypes(DEFAULT_DTYPE))
    rungs: list[Rung] = field(default_factory=lambda: parse_rungs(defaults.RUNG))
    kernels: list[KernelSpec] = field(default_factory=list)  # the user's, among `rungs`
    callables: list[CallableSpec] = field(default_factory=list)  # the user's too
    blocks: list[int] = field(default_factory=lambda: [DEFAULT_BLOCK])
    cold: bool = defaults.COLD
    inputs: str = DEFAULT_INPUTS
    out: Path | None = None
    device: int = 0           # the device a single-device run opens
    devices: str = "0"        # --device as given: one index, a list or "all" (every_device.py)
    seed: int | None = None
    params: dict[str, list[int]] = field(default_factory=dict)
    stop: StopRule = field(default_factory=StopRule)
    rounds: int = DEFAULT_ROUNDS  # interleaved rounds a timed case is measured in (rounds.py)
    profile: bool = False
    timed: bool = True        # False: `check`, each case run and verified, not timed
    timing: str = defaults.TIMING  # TIMINGS
    energy: bool = False      # also measure energy per run (NVML, a ~1 s burst a case)
    metrics: bool = False     # also read hardware counters with ncu (a child run a case)

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

    def options(self) -> dict:
        """The sweep, as recorded in every results row (column `options`)."""
        extent = {"shape": self.shape_request or [format_shape(r, c) for r, c in self.shapes]
                  } if self.shapes else {"size": self.sizes}
        if self.max_chain is not None:
            extent["max_chain"] = self.max_chain
        return {**extent, "dtype": [d.name for d in self.dtypes],
                "rung": [r.name for r in self.rungs if r.origin == "ladder"] or ["none"],
                "kernel": [{"path": k.path, "name": k.name, "finish": k.finish,
                            "grid": k.grid, **({"label": k.label} if k.label else {})}
                           for k in self.kernels],
                "callable": [spec_record(c) for c in self.callables],
                "block": self.blocks, "params": self.params, "mode": self.mode,
                "timing": self.timing, "inputs": self.inputs}


# -- single values ------------------------------------------------------------------------

def parse_blocks(text: str | int | list) -> list[int]:
    blocks: list[int] = []
    for token in comma_list(text, "block size"):
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
        if name not in PARAM_RANGES:
            raise UsageError(f"unknown parameter {name!r}{did_you_mean(name, PARAM_RANGES)}; "
                             f"rungs take: {', '.join(sorted(PARAM_RANGES))}")
        values = comma_list(values, f"value of parameter {name}")
        try:
            parsed = [int(v) for v in values]
        except ValueError:
            raise UsageError(f"parameter {name}: {values!r} are not whole numbers") from None
        low, high = PARAM_RANGES[name]
        # lanes=0: the lanes that fit each shape (ladder/geometry.py fitted_lanes)
        fit = " (or 0: fitted to each shape)" if name == "lanes" else ""
        given = [v for v in parsed if not (name == "lanes" and v == FIT_LANES)]
        if any(not low <= v <= high for v in given):
            raise UsageError(f"parameter {name}: values must be from {low} to {high}{fit}")
        if name in POWERS_OF_TWO and any(v & (v - 1) for v in given):
            raise UsageError(f"parameter {name}: values must be powers of two from {low} "
                             f"to {high}{fit}")
        params[name] = parsed
    return params


# Lanes per row (row_group's width, row_vec_group's lanes): they must divide a warp.
POWERS_OF_TWO = ("width", "lanes")


def _split_param(item: str) -> tuple[str, str]:
    name, sep, values = item.partition("=")
    if not sep or not name.strip():
        raise UsageError(f"invalid --param {item!r}; expected NAME=V[,V...], e.g. unroll=2,4,8")
    return name.strip(), values


def check_params_apply(params: dict[str, list[int]], rungs: list[Rung]) -> None:
    """A parameter that none of the chosen rungs takes would be silently ignored."""
    for name in params:
        if not any(name in r.params for r in rungs):
            takers = [r.name for r in (*RUNGS, *ROW_RUNGS) if name in r.params]
            raise UsageError(f"--param {name}: none of the chosen rungs takes it; rungs "
                             f"that do: {', '.join(takers)}")


def check_seed(seed: object) -> int | None:
    """A seed as given (None: a new one each run), refused unless a whole number of 0 or
    more: the input generator takes no negative seed, and would say so only once the GPU
    is open."""
    if seed is None:
        return None
    try:
        value = operator.index(seed)  # an int (numpy's too), never 1.5 or "7"
    except TypeError:
        value = -1
    if isinstance(seed, bool) or value < 0:
        raise UsageError(f"--seed {seed}: a seed is a whole number of 0 or more, e.g. "
                         "20261123")
    return value


def stop_rule(values: dict) -> StopRule:
    """The sampling stop rule, each limit checked: at least one sample, times and noise
    that are positive (noise in percent, like every other noise figure)."""
    default = StopRule()
    min_samples = values.get("min_samples", default.min_samples)
    max_noise_pct = values.get("max_noise_pct", 100 * default.max_noise)
    max_time = values.get("max_time", default.max_time)
    if int(min_samples) < 1:
        raise UsageError(f"--min-samples {min_samples}: at least 1 sample is needed")
    if not float(max_noise_pct) > 0:
        raise UsageError(f"--max-noise {max_noise_pct}: a noise in percent above 0, e.g. 0.5")
    if not (float(max_time) > 0 and math.isfinite(float(max_time))):
        raise UsageError(f"--max-time {max_time}: a time in seconds above 0 (and finite: "
                         "sampling must end), e.g. 0.5")
    return StopRule(min_samples=int(min_samples), max_noise=float(max_noise_pct) / 100,
                    max_time=float(max_time))


def parse_rounds(value) -> int:
    """--rounds: a whole number from 1 to MAX_ROUNDS."""
    text = str(value).strip()
    if isinstance(value, bool) or not re.fullmatch(r"\d+", text) \
            or not 1 <= int(text) <= MAX_ROUNDS:
        raise UsageError(f"--rounds {value}: a whole number of rounds from 1 to {MAX_ROUNDS} "
                         f"(default {DEFAULT_ROUNDS})")
    return int(text)


# -- config files ------------------------------------------------------------------------

# key -> (accepted Python types, what the message says is expected)
CONFIG_KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "description": ((str,), "a string"),
    "size": ((str, int, list), "a size, a list of sizes, or a range string"),
    "shape": ((str, list), "a shape such as \"4096x4096\", or a list of them"),
    "dtype": ((str, list), "a dtype name or a list of them"),
    "rung": ((str, list), "a rung name, a list, or \"all\""),
    "block": ((int, list, str), "a block size or a list of them"),
    "mode": ((str,), "\"cold\" or \"warm\""),
    "inputs": ((str,), "\"exact\" or \"random\""),
    "timing": ((str,), "\"single\" or \"graph\""),
    "energy": ((bool,), "true or false"),
    "metrics": ((bool,), "true or false"),
    "out": ((str,), "a file path"),
    "device": ((int, str), "a device index, a list such as \"0,1\", or \"all\""),
    "seed": ((int,), "an integer"),
    "params": ((dict,), "a table such as {unroll = [2, 4]}"),
    "min_samples": ((int,), "an integer of 1 or more"),
    "max_noise_pct": ((float, int), "a percentage above 0, e.g. 0.5"),
    "max_time": ((float, int), "seconds above 0"),
    "rounds": ((int,), f"a whole number of rounds from 1 to {MAX_ROUNDS}"),
    "kernel": ((list,), "an array of tables: [[kernel]] with path and name"),
    "callable": ((list,), "an array of tables: [[callable]] with path (or module) and name"),
}
RENAMED_KEYS = {"max_noise": "max_noise_pct (now in percent, e.g. 0.5 for 0.5%)"}


def load_config(path: str | Path) -> dict:
    """A config file's values, checked: one UsageError naming the file and what is wrong.
    [[kernel]] tables come back as KernelSpecs under "kernels", paths relative to the file."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"config {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"config {path}: is a folder, not a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"config {path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"config {path}: invalid TOML: not UTF-8 text ({exc.reason} at "
                         f"byte {exc.start})") from None
    except OSError as exc:  # no permission, ...
        raise UsageError(f"config {path}: cannot read it: {exc.strerror or exc}") from None
    for key, value in raw.items():
        if key in RENAMED_KEYS:
            raise UsageError(f"config {path}: {key} is now {RENAMED_KEYS[key]}")
        if key not in CONFIG_KEYS:
            raise UsageError(f"config {path}: unknown key {key!r}"
                             f"{did_you_mean(key, CONFIG_KEYS)}; accepted: "
                             f"{', '.join(CONFIG_KEYS)}")
        types, expected = CONFIG_KEYS[key]
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            raise UsageError(f"config {path}: {key} = {value!r} should be {expected}")
    for key, accepted in (("mode", MODES), ("inputs", INPUT_KINDS), ("timing", TIMINGS)):
        if key in raw and raw[key] not in accepted:
            raise UsageError(f"config {path}: {key} = {raw[key]!r} should be "
                             + " or ".join(f'"{a}"' for a in accepted))
    raw.pop("description", None)
    if "kernel" in raw:
        raw["kernels"] = kernels_from_config(raw.pop("kernel"), path)
    if "callable" in raw:
        raw["callables"] = callables_from_config(raw.pop("callable"), path)
    return raw


# `run`'s option names -> config keys (the same meaning in a TOML file)
OPTION_KEYS = {"size": "size", "shape": "shape", "dtype": "dtype", "rung": "rung", "block": "block",
               "inputs": "inputs", "out": "out", "device": "device", "seed": "seed",
               "param": "params", "min_samples": "min_samples", "max_noise": "max_noise_pct",
               "max_time": "max_time", "rounds": "rounds", "timing": "timing",
               "energy": "energy", "with_metrics": "metrics", "cold": "mode"}


def split_given(options: dict, given: Callable[[str], bool]) -> tuple[dict, dict]:
    """(given, defaults) as config keys: the options given on the command line
    (given(name)), with the user's kernels and functions, and the defaults of the
    others; merge() puts a config file between them."""
    chosen, defaults = user_values(options), {}
    for name, key in OPTION_KEYS.items():
        value = list(options[name]) if name == "param" else options[name]
        if name == "cold":
            value = "cold" if value else "warm"
        elif value is None or value == [] or value is False:
            continue
        (chosen if given(name) else defaults)[key] = value
    return chosen, defaults


def user_values(options: dict) -> dict:
    """The settings values of the kernels (--kernel, --finish, --grid) and functions
    (--callable) given, where any were (a config's [[kernel]] and [[callable]] tables
    are read with them)."""
    kernels, finish, grid = options["kernels"], options["finish"], options["grid"]
    if not kernels and (finish or grid):
        given = "--finish" if finish else "--grid"
        raise UsageError(f"{given} applies to kernels given with --kernel; none was given")
    specs = [parse_kernel_option(k, finish, grid) for k in kernels]
    functions = [parse_callable_option(text) for text in options.get("callables") or ()]
    return {key: value for key, value in (("kernels", specs), ("callables", functions))
            if value}


def merge(config: dict, given: dict, defaults: dict) -> dict:
    """One set of values: the options given on the command line, over the config file's
    values, over the options' defaults. Kernels from both add up, the config's first."""
    values = {**defaults, **config, **given}
    # what to sum, size or shape, from the first of the options given, the config and
    # the defaults that says it (both in one of them are refused by settings_from)
    for layer in (given, config, defaults):
        if "size" in layer or "shape" in layer:
            for key in ("size", "shape"):
                if key not in layer:
                    values.pop(key, None)
            break
    values["kernels"] = list(config.get("kernels", [])) + list(given.get("kernels", []))
    values["callables"] = list(config.get("callables", [])) + list(given.get("callables", []))
    return values


def blame_config(exc: UsageError, config: dict, given: dict, path: str | Path) -> UsageError:
    """A refusal of a value that came from the config file, not the command line, says
    so: `--max-time -1: ...` names a flag the user never typed."""
    flag = re.match(r"--([a-z0-9-]+)", str(exc))
    key = flag[1].replace("-", "_") if flag else ""
    if key in config and key not in given:
        return UsageError(f"config {path}: {key}: {exc}")
    return exc


# -- settings ------------------------------------------------------------------------------

def with_user_kernels(rungs: list[Rung], specs: list[KernelSpec],
                      callables: list[CallableSpec] = (), rows: bool = False) -> list[Rung]:
    """The chosen ladder rungs with the user's kernels and callables placed before the
    library references, so each table reads: the ladder, yours, then the references.
    With `rows` (--shape) the callables sum each row."""
    mine = user_rungs(specs)
    mine += callable_rungs(callables, taken=[r.name for r in mine], rows=rows)
    ladder = [r for r in rungs if not r.is_library]
    libraries = [r for r in rungs if r.is_library]
    chosen = ladder + mine + libraries
    if not chosen:
        raise UsageError("nothing to run: --rung none and no --kernel or --callable")
    return chosen


def check_dtypes_apply(rungs: list[Rung], dtypes: list[DType]) -> None:
    """Refuse a choice where no chosen rung takes any chosen dtype (every case would be
    a skipped row); where only some pairs are impossible, those rows say skipped."""
    if any(d.name in r.dtypes for r in rungs for d in dtypes):
        return
    asked = ", ".join(d.name for d in dtypes)
    chosen = "; ".join(f"{r.name} takes {', '.join(r.dtypes)}" for r in rungs[:4])
    more = f"; and {len(rungs) - 4} more" if len(rungs) > 4 else ""
    ladder = ROW_RUNGS if any(r.finish == ROWS for r in rungs) else RUNGS
    takers = [r.name for r in ladder if any(d.name in r.dtypes for d in dtypes)]
    raise UsageError(f"--dtype {asked}: no chosen rung takes it ({chosen}{more}); rungs "
                     f"that do: {', '.join(takers) or 'none'}")


def named_rungs(text: str | list) -> list[str]:
    """The rung names a --rung value (or a config's rung) names one by one, not through
    `all` or `none`."""
    return [name for name in comma_list(text, "rung") if name not in ("all", "none")]


def check_blocks_apply(rungs: list[Rung], named: list[str], blocks: list[int]) -> None:
    """Refuse a rung the user named that takes none of the block sizes given (every one
    of its cases would be a skipped row); a rung chosen through `all` that takes only
    some of them, or none, has those rows say skipped, as with dtypes."""
    for rung in rungs:
        if (rung.name not in named and rung.origin != "user") or rung.is_library \
                or rung.dispatch:
            continue  # a library and auto choose their own blocks
        if not any(b in rung.blocks for b in blocks):
            why = "reducebench list" if rung.origin != "user" else \
                f"{LANES}={rung.lanes_per_row}: a block holds whole rows"
            raise UsageError(f"--block {','.join(map(str, blocks))}: {rung.name} takes "
                             f"blocks {rung.blocks[0]}-{rung.blocks[-1]} ({why}); "
                             f"give a block it takes, or leave {rung.name} out")


def settings_from(values: dict) -> RunSettings:
    """Settings from merged values (config keys; strings, lists or numbers), each checked."""
    s = RunSettings()
    if "shape" in values:
        shaped(s, values)
    elif "size" in values:
        s.sizes = parse_sizes(values["size"])
        if not s.sizes:
            raise UsageError("no size given; e.g. --size 2^24")
    if "dtype" in values:
        s.dtypes = parse_dtypes(values["dtype"])
    if s.shapes:
        s.rungs = parse_row_rungs(values.get("rung", "all"))
    elif "rung" in values:
        s.rungs = parse_rungs(values["rung"])
    s.kernels = list(values.get("kernels") or [])
    check_kernels_fit(s.kernels, bool(s.shapes))
    s.callables = list(values.get("callables") or [])
    s.rungs = with_user_kernels(s.rungs, s.kernels, s.callables, rows=bool(s.shapes))
    check_dtypes_apply(s.rungs, s.dtypes)
    if "block" in values:
        s.blocks = parse_blocks(values["block"])
    if not values.get(RECORDED):  # a results file records `all` as every name it meant
        check_blocks_apply(s.rungs, named_rungs(values.get("rung", "all")), s.blocks)
    mode = values.get("mode", "cold")
    if mode not in MODES:
        raise UsageError(f"mode {mode!r}; accepted: {', '.join(MODES)}")
    s.cold = mode == "cold"
    s.inputs = values.get("inputs", DEFAULT_INPUTS)
    if s.inputs not in INPUT_KINDS:
        raise UsageError(f"--inputs {s.inputs!r}; accepted: {', '.join(INPUT_KINDS)}")
    s.timing = values.get("timing", "single")
    if s.timing not in TIMINGS:
        raise UsageError(f"--timing {s.timing!r}; accepted: {', '.join(TIMINGS)}")
    s.energy = bool(values.get("energy", False))
    s.metrics = bool(values.get("metrics", False))
    if values.get("out") is not None:
        if not str(values["out"]).strip():
            raise UsageError("--out '': give a file name (or leave out --out for a new file "
                             "under results/)")
        s.out = Path(values["out"])
    s.devices = device_spec(values.get("device", 0))
    single = single_device(s.devices)
    s.device = single if single is not None else 0
    s.seed = check_seed(values.get("seed"))
    if values.get("params"):
        s.params = parse_params(values["params"])
        check_params_apply(s.params, s.rungs)
    s.stop = stop_rule(values)
    s.rounds = parse_rounds(values.get("rounds", DEFAULT_ROUNDS))
    s.profile = bool(values.get("profile", False))
    s.timed = bool(values.get("timed", True))
    return s


def extent_values(size: str, shape: str | None, size_given: bool) -> dict:
    """What a command's --size and --shape say to sum: the shape where one is given
    (with the size too only where that was given as well, which settings_from refuses),
    else the size."""
    return {**({"size": size} if shape is None or size_given else {}),
            **({"shape": shape} if shape else {})}


def shaped(s: RunSettings, values: dict) -> None:
    """--shape: the shapes, and what does not go with them refused, one line each."""
    if "size" in values:
        raise UsageError("--size and --shape: give one (--size N sums N elements to one "
                         "value; --shape ROWSxCOLS sums each row)")
    request = parse_shape_request(values["shape"])
    s.shapes, s.sizes = request.shapes, []
    s.shape_request = comma_list(values["shape"], "shape")
    # a sweep's own limit, or the one a resumed file recorded
    s.max_chain = request.max_chain or values.get("max_chain")


def check_kernels_fit(kernels: list[KernelSpec], rows: bool) -> None:
    """With --shape every kernel is a row kernel (grid lanes-per-row=L), with --size none
    is: one line for the first that does not fit."""
    for spec in kernels:
        if rows and not spec.sums_rows:
            raise UsageError(f"--shape sums each row: kernel {spec.name} ({spec.path}) sums "
                             f"one array to one value (finish {spec.finish}); a row kernel "
                             f"takes (in, out, rows, cols) and says how many lanes share a "
                             f"row: --grid {LANES}=L (docs/custom-kernels.md)")
        if not rows and spec.sums_rows:
            raise UsageError(f"kernel {spec.name} ({spec.path}) is a row kernel (grid "
                             f"{spec.grid}): give --shape ROWSxCOLS to run it")


# -- resuming a recorded sweep ---------------------------------------------------------------

def recorded_values(options_json: str) -> dict:
    """The values a results file's `options` column recorded, as config keys."""
    try:
        options = json.loads(options_json)
    except (TypeError, ValueError):
        raise UsageError("the file does not record its sweep's options (made by an older "
                         "reducebench); give the original options again") from None
    values = {k: options[k] for k in ("size", "shape", "max_chain", "dtype", "block",
                                      "params", "mode", "timing", "inputs") if k in options}
    values[RECORDED] = True
    values["rung"] = ",".join(options.get("rung", [])) or "none"
    values["kernels"] = [make_spec(k["path"], k["name"], k["finish"], k["grid"],
                                   k.get("label"), "the resumed file's kernel")
                         for k in options.get("kernel", [])]
    values["callables"] = [spec_from_record(c, "the resumed file's callable")
                           for c in options.get("callable", [])]
    return values


SWEEP_KEYS = ("size", "shape", "dtype", "rung", "kernels", "callables", "block", "params", "mode",
              "timing", "inputs")


def resumed_values(recorded: dict, given: dict) -> dict:
    """The recorded sweep, plus the options given with --resume that leave it unchanged
    (how long to sample, which device); an option that would change it is refused."""
    before = settings_from(recorded).options()
    after = settings_from({**recorded, **given}).options()
    changed = [key for key in before if before[key] != after[key]]
    if changed:
        raise UsageError(f"--resume continues the sweep recorded in the file; these options "
                         f"differ from it: {', '.join(changed)} (leave them out, or start "
                         "a new run)")
    return {**recorded, **{k: v for k, v in given.items() if k not in SWEEP_KEYS}}
