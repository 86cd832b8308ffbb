"""`shfl`: a warp-shuffle lab. Runs one real __shfl_*_sync in a single block and shows,
warp by warp, what each lane held before, what it holds after, the lane it read, and
where the CUDA programming guide leaves the result undefined; `--model-only` shows the
model's prediction without a GPU, `--explain OP` the rule."""

from __future__ import annotations

import shutil

import click

from reducebench.cli._options import option, options
from reducebench.core.errors import DeviceUnavailable
from reducebench.render import printers
from reducebench.render.shfl_view import reflowed, shfl_view
from reducebench.shfl.model import (OPS, WARP_SIZE, WIDTHS, ShflCall, check_dtype, explain,
                                    mismatches, parse_mask, parse_values, simulate)


@click.group("shfl", invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--explain", "explain_topic", metavar="OP", default=None,
              help=f"Print the rule of one shuffle ({', '.join(OPS)}, or all) and exit; "
                   "needs no GPU.")
@click.pass_context
def shfl(ctx: click.Context, explain_topic: str | None) -> None:
    """Warp-shuffle lab: run one __shfl_*_sync on the GPU and see what every lane got.

    \b
    reducebench shfl down --delta 16 --threads 35
    reducebench shfl sync --src-lane 17 --width 16
    reducebench shfl xor --lane-mask 3
    reducebench shfl up --delta 2 --width 16 --model-only
    reducebench shfl --explain down
    """
    if explain_topic is not None:
        click.echo(reflowed(explain(explain_topic), shutil.get_terminal_size((100, 24)).columns))
        ctx.exit(0)
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


_common_options = options(
    click.option("--threads", default=WARP_SIZE, show_default=True, type=int,
                 help="Threads in the one block (1..1024); warps are shown one by one."),
    click.option("--width", default=WARP_SIZE, show_default=True, type=int,
                 help=f"Segment width: {', '.join(map(str, WIDTHS))}."),
    click.option("--mask", default="0xffffffff", show_default=True,
                 help="Lanes taking part, in hex; the others skip the call."),
    option("dtype", default="int32", metavar=None, help="int32, float32, float64 or float16."),
    click.option("--values", default=None,
                 help="Comma list, one value per thread (default: thread i holds i)."),
    option("format", help="table on screen; json: the lanes as JSON."),
    click.option("--model-only", is_flag=True, help="Show the model's prediction; no GPU needed."),
    "device")


def _run(op: str, operand: int, threads: int, width: int, mask: str, dtype: str,
         values: str | None, output_format: str, model_only: bool, device: int) -> None:
    # Every option is checked (ShflCall checks its own) before any GPU is looked for: a
    # typo is a usage error whether or not this machine has a GPU.
    dtype = check_dtype(dtype)
    call = ShflCall(op, threads, width, parse_mask(mask), operand)
    before = parse_values(values, threads, dtype)
    warps = simulate(call, before)
    hardware = None if model_only else _run_on_gpu(call, before, dtype, device)
    wrong = mismatches(warps, hardware)
    printers.show(shfl_view(call, dtype, warps, hardware, wrong), output_format)
    if wrong:
        raise click.exceptions.Exit(1)


def _run_on_gpu(call: ShflCall, values: list, dtype: str, device: int) -> list:
    from reducebench.device.warp_shuffle import run_shuffle

    try:
        return run_shuffle(call, values, dtype, device)
    except DeviceUnavailable as exc:
        raise DeviceUnavailable(f"{getattr(exc, 'reason', exc)}; running the shuffle on the "
                                "hardware needs a GPU: "
                                "add --model-only to see the model's prediction without "
                                "one") from None


# Each shuffle: its operand's option, that option's default and help, the command's help.
SHUFFLES = (
    ("sync", "--src-lane", 0, "srcLane: the lane to read, taken modulo width inside each "
     "segment.", "__shfl_sync: every lane reads lane srcLane % width of its segment."),
    ("up", "--delta", 1, "Read lane - delta (0..31).",
     "__shfl_up_sync: every lane reads the lane delta below it in its segment."),
    ("down", "--delta", 1, "Read lane + delta (0..31).",
     "__shfl_down_sync: every lane reads the lane delta above it in its segment."),
    ("xor", "--lane-mask", 1, "Read lane ^ laneMask (0..31).",
     "__shfl_xor_sync: every lane reads lane ^ laneMask (butterfly)."),
)


def _shuffle_command(op: str, flag: str, default: int, flag_help: str,
                     help_text: str) -> click.Command:
    @shfl.command(op, help=help_text)
    @click.option(flag, "operand", default=default, show_default=True, type=int,
                  help=flag_help)
    @_common_options
    def command(operand: int, **options) -> None:
        _run(op, operand, **options)

    return command


SHUFFLE_COMMANDS = [_shuffle_command(*shuffle) for shuffle in SHUFFLES]


COMMANDS = [shfl]
