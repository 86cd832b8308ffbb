"""`shfl`: a warp-shuffle lab. Runs one real __shfl_*_sync in a single block and shows,
warp by warp, what each lane held before, what it holds after, the lane it read, and
where the CUDA programming guide leaves the result undefined; `--model-only` shows the
model's prediction without a GPU, `--explain OP` the rule."""

from __future__ import annotations

import json
import re
import shutil
import textwrap

import click
import numpy as np
from rich.table import Table
from rich.text import Text

from reducebench.core.errors import DeviceUnavailable
from reducebench.shfl.model import (LAB_DTYPES, OPS, OWN, READ, SKIPPED, STATUSES,
                                    UNDEFINED, WARP_SIZE, WIDTHS, LaneOutcome, ShflCall,
                                    WarpOutcome, check_dtype, explain, json_number,
                                    outcome_dict, parse_mask, parse_values, same_value,
                                    simulate)

_STYLES = {READ: "", OWN: "cyan", UNDEFINED: "bold yellow", SKIPPED: "dim"}


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


def _common_options(func):
    options = [
        click.option("--threads", default=WARP_SIZE, show_default=True, type=int,
                     help="Threads in the one block (1..1024); warps are shown one by one."),
        click.option("--width", default=WARP_SIZE, show_default=True, type=int,
                     help=f"Segment width: {', '.join(map(str, WIDTHS))}."),
        click.option("--mask", default="0xffffffff", show_default=True,
                     help="Lanes taking part, in hex; the others skip the call."),
        click.option("--dtype", default="int32", show_default=True,
                     help="int32, float32, float64 or float16."),
        click.option("--values", default=None,
                     help="Comma list, one value per thread (default: thread i holds i)."),
        click.option("--format", "output_format", type=click.Choice(["table", "json"]),
                     default="table", show_default=True,
                     help="table on screen; json: the lanes as JSON."),
        click.option("--model-only", is_flag=True,
                     help="Show the model's prediction; no GPU needed."),
        click.option("--device", default=0, show_default=True, type=int,
                     help="CUDA device index."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _run(op: str, operand: int, threads: int, width: int, mask: str, dtype: str,
         values: str | None, output_format: str, model_only: bool, device: int) -> None:
    # Every option is checked (ShflCall checks its own) before any GPU is looked for: a
    # typo is a usage error whether or not this machine has a GPU.
    dtype = check_dtype(dtype)
    call = ShflCall(op, threads, width, parse_mask(mask), operand)
    before = parse_values(values, threads, dtype)
    warps = simulate(call, before)
    hardware = None if model_only else _run_on_gpu(call, before, dtype, device)
    mismatches = _mismatches(warps, hardware)
    if output_format == "json":
        click.echo(json.dumps(_json(call, dtype, warps, hardware, mismatches), indent=1))
    else:
        _render(call, dtype, warps, hardware, mismatches)
    if mismatches:
        raise click.exceptions.Exit(1)


def _run_on_gpu(call: ShflCall, values: list, dtype: str, device: int) -> list:
    from reducebench.device.shfl import run_shuffle

    try:
        return run_shuffle(call, values, dtype, device)
    except DeviceUnavailable as exc:
        raise DeviceUnavailable(f"{getattr(exc, 'reason', exc)}; running the shuffle on the "
                                "hardware needs a GPU: "
                                "add --model-only to see the model's prediction without "
                                "one") from None


def _mismatches(warps: list[WarpOutcome], hardware: list | None) -> list[LaneOutcome]:
    """Lanes where the result is defined but the hardware disagrees with the model."""
    if hardware is None:
        return []
    return [lane for w in warps for lane in w.lanes
            if lane.defined and not same_value(lane.after, hardware[lane.thread])]


def _json(call: ShflCall, dtype: str, warps: list[WarpOutcome], hardware: list | None,
          mismatches: list[LaneOutcome]) -> dict:
    data = outcome_dict(call, dtype, warps)
    if hardware is None:
        data["source"] = "model"
        return data
    data["source"] = "device"
    data["mismatches"] = len(mismatches)
    for w_data, w in zip(data["warps"], warps):
        for lane_data, lane in zip(w_data["lanes"], w.lanes):
            got = hardware[lane.thread]
            lane_data["model_after"] = lane_data["after"]
            lane_data["after"] = json_number(got)
            lane_data["agrees"] = (same_value(lane.after, got) if lane.defined else None)
    return data


def _format(value, dtype: str) -> str:
    if value is None:
        return "?"
    if dtype == "int32":
        return str(int(value))
    return str(np.dtype(LAB_DTYPES[dtype][1]).type(value))


def _mark(lane: LaneOutcome) -> str:
    if lane.status == SKIPPED:
        return "not in mask: does not execute"
    if lane.status == UNDEFINED:
        return lane.note
    if lane.status == OWN:
        return f"own value ({lane.note.split(':')[0]})"
    return lane.note


def _render(call: ShflCall, dtype: str, warps: list[WarpOutcome], hardware: list | None,
            mismatches: list[LaneOutcome]) -> None:
    # Imported here, not at the top: reducebench.cli's package init registers this module
    # (through the reducebench.cli.shfl shim), so a top-level import of reducebench.cli
    # would make `import reducebench.shfl.cli` on its own circular.
    from reducebench.render.console import make_console

    console = make_console()
    where = "model prediction (no GPU)" if hardware is None else "GPU"
    console.print(f"[bold]{call.signature()}[/] on {call.threads} thread(s), {dtype}: "
                  f"{where}")
    bad = {lane.thread for lane in mismatches}
    for w in warps:
        t = Table(title=f"warp {w.warp}: threads {w.first_thread}..{w.last_thread}"
                        f" ({len(w.lanes)} lane(s))", title_justify="left")
        t.add_column("lane", justify="right")
        t.add_column("before", justify="right")
        if hardware is None:
            t.add_column("after", justify="right")
        else:
            t.add_column("after (GPU)", justify="right")
            t.add_column("model", justify="right")
        t.add_column("src lane", justify="right")
        t.add_column("mark")
        for lane in w.lanes:
            source = "-" if lane.source is None else str(lane.source)
            cells = [str(lane.lane), _format(lane.before, dtype)]
            if hardware is None:
                cells.append(_format(lane.after, dtype))
            else:
                cells += [_format(hardware[lane.thread], dtype), _format(lane.after, dtype)]
            mark = _mark(lane)
            style = _STYLES[lane.status]
            if lane.thread in bad:
                mark = "MISMATCH with the model" + (f"; {mark}" if mark else "")
                style = "bold red"
            cells += [source, Text(mark, style=style)]
            t.add_row(*cells)
        console.print(t)
    counts = {s: sum(lane.status == s for w in warps for lane in w.lanes) for s in STATUSES}
    console.print(f"{counts[READ]} read a lane, {counts[OWN]} kept their own value "
                  f"(source out of segment), {counts[UNDEFINED]} undefined, "
                  f"{counts[SKIPPED]} not in the mask")
    if hardware is not None:
        defined = sum(lane.defined for w in warps for lane in w.lanes)
        if mismatches:
            console.print(f"[bold red]{len(mismatches)} of {defined} defined lane(s) differ "
                          "from the model[/]")
        else:
            console.print(f"the GPU agrees with the model on all {defined} defined lane(s)"
                          + ("; undefined lanes show what this GPU happened to return"
                             if counts[UNDEFINED] else ""))


@shfl.command("sync")
@click.option("--src-lane", default=0, show_default=True, type=int,
              help="srcLane: the lane to read, taken modulo width inside each segment.")
@_common_options
def sync_command(src_lane: int, **options) -> None:
    """__shfl_sync: every lane reads lane srcLane % width of its segment."""
    _run("sync", src_lane, **options)


@shfl.command("up")
@click.option("--delta", default=1, show_default=True, type=int,
              help="Read lane - delta (0..31).")
@_common_options
def up_command(delta: int, **options) -> None:
    """__shfl_up_sync: every lane reads the lane delta below it in its segment."""
    _run("up", delta, **options)


@shfl.command("down")
@click.option("--delta", default=1, show_default=True, type=int,
              help="Read lane + delta (0..31).")
@_common_options
def down_command(delta: int, **options) -> None:
    """__shfl_down_sync: every lane reads the lane delta above it in its segment."""
    _run("down", delta, **options)


@shfl.command("xor")
@click.option("--lane-mask", default=1, show_default=True, type=int,
              help="Read lane ^ laneMask (0..31).")
@_common_options
def xor_command(lane_mask: int, **options) -> None:
    """__shfl_xor_sync: every lane reads lane ^ laneMask (butterfly)."""
    _run("xor", lane_mask, **options)


COMMANDS = [shfl]


# A line that starts a paragraph of the lab's explanations: the op's signature, or a
# label such as "Source lane:" or "Width:".
_PARAGRAPH = re.compile(r"^(__shfl|[A-Z][\w /]{0,24}:\s)")


def reflowed(text: str, width: int) -> str:
    """The explanations' paragraphs wrapped at the terminal's width, between words: they
    are written at about 90 columns, which an 80-column terminal would break mid-word."""
    out: list[str] = []
    for block in text.split("\n\n"):
        paragraphs: list[list[str]] = []
        for line in block.splitlines():
            if not paragraphs or _PARAGRAPH.match(line):
                paragraphs.append([])
            paragraphs[-1].append(line.strip())
        out.append("\n".join(textwrap.fill(" ".join(words), max(width, 40),
                                            break_long_words=False, break_on_hyphens=False)
                              for words in paragraphs))
    return "\n\n".join(out)
