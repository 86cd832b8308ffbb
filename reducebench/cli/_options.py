"""Every option that several commands take, declared once: its name, metavar, help and
default (core/defaults.py), so that it reads the same in every command. A command that
means something narrower by it (multigpu's --size is the whole input, split) says so in
its own help, nothing else."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from reducebench.core import defaults
from reducebench.core.sizes import format_size
from reducebench.verify.inputs import INPUT_KINDS

# name -> (declarations, attributes); option(name, **changes) makes the click option
OPTIONS: dict[str, tuple[tuple[str, ...], dict]] = {
    "size": (("--size",), dict(
        default=format_size(defaults.SIZE), show_default=True, metavar="SIZES",
        help="Elements: 2^24, '1<<24' (quoted), 16M, 16777216, comma lists, ranges "
             "2^10..2^28 or 2^10..2^28:2.")),
    "shape": (("--shape",), dict(
        default=None, metavar="SHAPES",
        help="Sum each row instead: ROWSxCOLS, each side as --size takes it (4096x4096, "
             "1000x33), or a sweep (sweep:rows); a comma list; runs the row rungs.")),
    "dtype": (("--dtype",), dict(
        default=defaults.DTYPE, show_default=True, metavar="DTYPES",
        help="float32, float64, int32, float16, bfloat16 (or f32, f64, i32, f16, bf16); a "
             "comma list.")),
    "rung": (("--rung",), dict(
        default=defaults.RUNG, show_default=True, metavar="RUNGS",
        help="Rung names (comma list), all, or none (only your --kernel or --callable).")),
    "block": (("--block",), dict(
        default=str(defaults.BLOCK), show_default=True, metavar="THREADS",
        help="Threads per block: powers of two 32..1024 (comma list).")),
    "cold": (("--cold/--warm",), dict(
        default=defaults.COLD, show_default=True,
        help="Flush L2 (by reading) before every sample, or not.")),
    "inputs": (("--inputs",), dict(
        type=click.Choice(INPUT_KINDS), default=defaults.INPUTS, show_default=True,
        help="exact: integer inputs, every result must equal the exact sum; random: real "
             "values, each rung's rounding error reported.")),
    "device": (("--device",), dict(
        default=defaults.DEVICE, show_default=True, type=int, help="CUDA device index.")),
    "out": (("--out",), dict(
        default=None, help="CSV path; default: a new file under results/.")),
    "seed": (("--seed",), dict(
        default=None, type=int, help="Input seed (default: random, recorded in the CSV).")),
    "min_samples": (("--min-samples",), dict(
        default=defaults.MIN_SAMPLES, show_default=True, type=int,
        help="Timed samples per case at least.")),
    "max_noise": (("--max-noise",), dict(
        default=defaults.MAX_NOISE_PCT, show_default=True, type=float, metavar="PCT",
        help="Stop sampling once the noise (stdev/mean, in percent) is below this.")),
    "max_time": (("--max-time",), dict(
        default=defaults.MAX_TIME_S, show_default=True, type=float, metavar="SECONDS",
        help="Seconds of sampling per case at most.")),
    "rounds": (("--rounds",), dict(
        default=defaults.ROUNDS, show_default=True, type=str, metavar="N",
        help="Measure each case in N rounds, interleaved with the other cases, each with "
             "fresh buffers: what lets `compare` tell a change from run-to-run variation "
             "(docs/samples.md). The sampling budget is shared out between the rounds.")),
    "threshold": (("--threshold",), dict(
        default=defaults.THRESHOLD_PCT, show_default=True, type=float, metavar="PCT",
        help="BASE NEW: changes within PCT percent (or within the rows' noise, where "
             "larger) are SAME.")),
    "written": (("-o", "--out"), dict(type=click.Path(path_type=Path), default=None)),
    "format": (("--format", "output_format"), dict(
        type=click.Choice(["table", "json"]), default="table", show_default=True)),
}

SAMPLING = ("seed", "min_samples", "max_noise", "max_time", "rounds")


def option(name: str, **changes):
    """The shared option `name`, with what this command says differently."""
    declarations, attributes = OPTIONS[name]
    return click.option(*declarations, **{**attributes, **changes})


def options(*made):
    """Decorate a command with options in the order given (the order --help lists)."""
    def decorate(command):
        for one in reversed(made):
            command = (option(one) if isinstance(one, str) else one)(command)
        return command
    return decorate


def sampling_options(command):
    """--seed, the stop rule's options (--min-samples, --max-noise, --max-time) and
    --rounds."""
    return options(*SAMPLING)(command)


def given_options(ctx: click.Context, skip: set[str]) -> list[tuple[click.Option, object]]:
    """The options given to this command (on the command line or from the environment)
    but those in `skip`, with their values: what a child process repeats."""
    return [(p, ctx.params[p.name]) for p in ctx.command.params
            if isinstance(p, click.Option) and p.name not in skip and is_given(ctx, p.name)]


def is_given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)
