"""`multigpu`: a sum sharded across the GPUs of one host and combined with NCCL, next to
NCCL's own all-reduce and reduce; a table on screen, a CSV kept (docs/multi-gpu.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from reducebench.cli._cluster import as_rank, finish, launched_world
from reducebench.cli._console import make_console, unfinished_note
from reducebench.cli._options import sampling_options
from reducebench.multigpu.launch import World, timeout_from
from reducebench.verify.inputs import new_seed
from reducebench.verify.inputs import DEFAULT_INPUTS, INPUT_KINDS
from reducebench.core.interrupt import (EXIT_CODE as INTERRUPTED_EXIT, Interrupted, deferred,
                                        stop_on_signals)
from reducebench.multigpu.cases import (COLLECTIVES, DEFAULT_LOCAL_RUNG, FLOOR, SHARDED,
                                        launched_gpus, settings_from_options)
from reducebench.multigpu.loop import run_multigpu
from reducebench.render.flex import FlexColumn, FlexTable
from reducebench.render.numbers import number
from reducebench.render.progress import progress_bar
from reducebench.results.naming import RESULTS_DIR, check_new_results, default_path
from reducebench.results.schema import MULTIGPU, MultiGpuRecord
from reducebench.results.store import ResultsStore
from reducebench.core.sizes import format_size


EXAMPLES = """
\b
Examples:
  reducebench multigpu --size 2^28 --gpus 1,2      2^28 floats on one GPU, then two
  reducebench multigpu --size 2^24..2^33 --gpus all --out scaling.csv
  reducebench multigpu --no-sharded --nccl --bytes 2^10..2^30 --gpus 2
"""


@click.command("multigpu", epilog=EXAMPLES)
@click.option("--size", default="2^24", show_default=True, metavar="SIZES",
              help="Elements of the whole input, split over the GPUs: 2^24, 16M, lists, "
                   "ranges 2^24..2^33.")
@click.option("--dtype", default="float32", show_default=True, metavar="DTYPES",
              help="float32, float64, int32, float16, bfloat16 (comma list).")
@click.option("--gpus", default="all", show_default=True, metavar="K[,K...]",
              help="How many GPUs (devices 0..K-1), a comma list, or all (1 to every GPU "
                   "present). Counts past the GPUs present are skipped with the reason.")
@click.option("--rung", default=None, metavar="RUNG",
              help=f"The ladder rung each GPU reduces its shard with (default: "
                   f"{DEFAULT_LOCAL_RUNG}, vector_load without its memset: the fastest "
                   "measured from 2^16 elements up).")
@click.option("--block", default="256", show_default=True, metavar="THREADS",
              help="Threads per block of the local rung.")
@click.option("--sharded/--no-sharded", default=True, show_default=True,
              help="Measure the sharded sum.")
@click.option("--nccl", is_flag=True,
              help="Also measure NCCL's all-reduce and reduce of a vector on every GPU "
                   "(in place and out of place) over --bytes.")
@click.option("--bytes", "nbytes", default="2^10..2^30", show_default=True, metavar="SIZES",
              help="Bytes per GPU of the NCCL reference cases.")
@click.option("--cold/--warm", default=True, show_default=True,
              help="Flush every GPU's L2 (by reading) before every sample, or not.")
@click.option("--inputs", type=click.Choice(INPUT_KINDS), default=DEFAULT_INPUTS,
              show_default=True, help="The sharded sum's input (see `run --help`).")
@click.option("--out", default=None, help="CSV path; default: a new file under results/.")
@sampling_options
@click.option("--timeout", default=None, type=float, metavar="SECONDS",
              help="Under a launcher: how long any wait for another rank may take before "
                   "every rank gives up with one line (default: $REDUCEBENCH_TIMEOUT, else "
                   "60).")
@click.pass_context
def multigpu_command(ctx: click.Context, **options) -> None:
    """Sum across the GPUs of this host, or of every rank under torchrun, srun or mpirun:
    shards reduced locally, combined with NCCL."""
    options["bytes"] = options.pop("nbytes")
    timeout = timeout_from(os.environ, options.pop("timeout"))
    world = launched_world()
    if world is not None:  # one process per GPU (docs/cluster.md)
        _launched(options, world, timeout)
        return
    settings_from_options(options, present=1)  # every bad option fails before any GPU
    out = check_new_results(options["out"]) if options["out"] is not None else None
    from reducebench.device.multigpu import open_multigpu

    console = make_console()
    records: list[MultiGpuRecord] = []
    store, backend = None, None
    try:
        with stop_on_signals():
            backend = open_multigpu()
            settings = settings_from_options(options, backend.present())
            gpu = backend.device_info().get("gpu", "gpu")
            path = out or default_path(RESULTS_DIR, f"multigpu {gpu}")
            if out is None:
                RESULTS_DIR.mkdir(exist_ok=True)
            store = ResultsStore(path, kind=MULTIGPU)
            with progress_bar(console) as progress:
                task = progress.add_task("starting", total=None)

                def on_case(case, index, total):
                    progress.update(task, completed=index, total=total,
                                    description=case.label)

                def write(record: MultiGpuRecord) -> None:
                    with deferred():  # a signal meanwhile: the row is both saved and shown
                        store.commit(record)
                        records.append(record)

                run_multigpu(settings, backend, write, on_case)
    except Interrupted as exc:
        render(console, records)
        saved = store.saved() if store is not None else "nothing saved"
        console.print(f"[yellow]interrupted[/] ({exc}): {saved}" + unfinished_note(exc, resumable=False))
        ctx.exit(INTERRUPTED_EXIT)
    finally:
        if backend is not None:
            backend.close()
    render(console, records)
    console.print(store.saved().replace("saved in", "written to"))
    failed = [r for r in records if r.status in ("FAIL", "error")]
    if failed:
        console.print(f"[bold red]{len(failed)} case(s) failed[/]: "
                      + ", ".join(f"{r.rung} {r.dtype} n={r.n} gpus={r.gpus}"
                                  for r in failed[:10]))
        ctx.exit(1)


def _launched(options: dict, world: World, timeout: float) -> None:
    """This rank's part of every case over the world's ranks; rank 0 writes the rows and
    renders them. Ends through finish() whatever happens (cli/_cluster.py)."""
    options["gpus"] = launched_gpus(str(options.get("gpus", "all")), world.size, world.launcher)
    settings_from_options(options, present=world.size)
    lead = world.rank == 0
    out = Path(options["out"]) if options["out"] is not None else None
    if lead and out is not None:
        check_new_results(out)
    console = make_console()
    records: list[MultiGpuRecord] = []
    box: dict = {}
    ended = as_rank(world, lambda: _launched_run(options, world, timeout, out, console,
                                                 records, box),
                    lambda: render(console, records), console, box)
    if ended is not None:
        finish(ended)
        return
    code = 0
    if lead:
        console.print(_world_line(box["member"]))
        render(console, records)
        console.print(box["store"].saved().replace("saved in", "written to"))
        failed = [r for r in records if r.status in ("FAIL", "error")]
        if failed:
            console.print(f"[bold red]{len(failed)} case(s) failed[/]: "
                          + ", ".join(f"{r.rung} {r.dtype} n={r.n} gpus={r.gpus}"
                                      for r in failed[:10]))
            code = 1
    finish(code)


def _launched_run(options: dict, world: World, timeout: float, out: Path | None,
                  console: Console, records: list, box: dict) -> None:
    from reducebench.device.cluster import join, open_cluster

    member = box["member"] = join(world, timeout)
    backend = open_cluster(member, timeout)
    settings = settings_from_options(options, world.size)
    seed = settings.seed if settings.seed is not None else new_seed()
    settings.seed = member.comm.bcast(seed, "sharing the seed")
    if world.rank == 0:
        path = out or default_path(RESULTS_DIR, f"multigpu {member.info.name} "
                                                f"x{world.size}")
        if out is None:
            RESULTS_DIR.mkdir(exist_ok=True)
        box["store"] = ResultsStore(path, kind=MULTIGPU)

    def write(record: MultiGpuRecord) -> None:
        if "store" in box:
            with deferred():  # a signal meanwhile: the row is both saved and shown
                box["store"].commit(record)
                records.append(record)

    def on_case(case, index, total) -> None:
        if world.rank == 0:
            print(f"[{index + 1}/{total}] {case.label}", file=sys.stderr, flush=True)

    run_multigpu(settings, backend, write, on_case)
    member.comm.barrier("the last barrier")
    backend.close()
    member.comm.close()


def _world_line(member) -> str:
    lay = member.layout
    hosts = len(lay.hosts)
    return (f"{member.world.size} ranks ({member.world.launcher}) on {lay.nodes} node(s), "
            f"{lay.gpus_per_node} GPU(s) per node, {hosts} host(s)"
            + (": NCCL's traffic crosses hosts" if lay.cross_node else ""))


# -- rendering ---------------------------------------------------------------------------

def render(console: Console, records: list[MultiGpuRecord]) -> None:
    floors = [r for r in records if r.case == FLOOR]
    if floors:
        console.print("timing floor (k empty kernels and a one-float NCCL all-reduce, "
                      "median): " + ", ".join(f"k={r.gpus} {_floor(r)}" for r in floors))
    sharded = [r for r in records if r.case == SHARDED]
    if sharded:
        console.print(sharded_table(sharded))
    collectives = [r for r in records if r.case in COLLECTIVES]
    if collectives:
        console.print(collective_table(collectives))


def sharded_table(records: list[MultiGpuRecord]) -> FlexTable:
    first = records[0]
    columns = [FlexColumn(header, justify="left" if header in ("n", "dtype") else "right",
                          short=short)
               for header, short in (("n", ""), ("dtype", ""), ("GPUs", ""),
                                     ("median us", "median\nus"),
                                     ("spread us", "spread\nus"),
                                     ("GB/s (all GPUs)", "GB/s\n(all)"),
                                     ("speed-up", "speed-\nup"),
                                     ("efficiency", "effic-\niency"),
                                     ("floor us", "floor\nus"))]
    columns.append(FlexColumn("verified", prose=True))
    rows = [(format_size(r.n), r.dtype, str(r.gpus), number(r.median_us, ".2f"),
             number(r.spread_us, ".2f"), number(r.gbps, ".0f"), number(r.speedup, ".2f"),
             number(r.efficiency, ".2f"), number(r.floor_us, ".2f"), _status(r))
            for r in records]
    return FlexTable(f"sharded sum · local rung {first.local_rung} · "
                     f"{first.meta.get('gpu', '')} · {first.meta.get('mode', '')} L2",
                     columns, rows)


def collective_table(records: list[MultiGpuRecord]) -> FlexTable:
    columns = [FlexColumn(header, justify="left" if header in ("op", "dtype", "place")
                          else "right", short=short)
               for header, short in (("op", ""), ("bytes", ""), ("dtype", ""),
                                     ("GPUs", ""), ("place", ""),
                                     ("median us", "median\nus"),
                                     ("algbw GB/s", "algbw\nGB/s"),
                                     ("busbw GB/s", "busbw\nGB/s"))]
    columns.append(FlexColumn("verified", prose=True))
    rows = [(r.rung.removeprefix("nccl_"), format_size(r.bytes), r.dtype, str(r.gpus),
             "in" if r.in_place else "out", number(r.median_us, ".2f"),
             number(r.algbw_gbps, ".2f"), number(r.busbw_gbps, ".2f"), _status(r))
            for r in records]
    return FlexTable("NCCL reference collectives (nccl-tests' algbw and busbw)", columns,
                     rows)


def _floor(r: MultiGpuRecord) -> str:
    return f"{r.median_us:.2f} us" if r.verified else f"({r.status}: {r.error})"


def _status(r: MultiGpuRecord) -> str:
    if r.status == "ok":
        return "[green]yes[/]"
    if r.status == "skipped":
        return f"[dim]skipped: {escape(r.error)}[/]"
    return f"[bold red]{r.status}[/] {escape(r.error)}"


COMMANDS = [multigpu_command]

