"""`multigpu`: a sum sharded across the GPUs of one host and combined with NCCL, next to
NCCL's own all-reduce and reduce; a table on screen, a CSV kept (docs/multi-gpu.md)."""

from __future__ import annotations

import functools
import os

import click

from reducebench.cli._console import show_ending
from reducebench.cli._options import option, options, sampling_options
from reducebench.multigpu import ranks
from reducebench.multigpu.cases import DEFAULT_LOCAL_RUNG
from reducebench.multigpu.host import run_on_host
from reducebench.multigpu.launch import timeout_from
from reducebench.render.console import make_console
from reducebench.render.multigpu_tables import multigpu_view
from reducebench.render.progress import case_progress

EXAMPLES = """
\b
Examples:
  reducebench multigpu --size 2^28 --gpus 1,2      2^28 floats on one GPU, then two
  reducebench multigpu --size 2^24..2^33 --gpus all --out scaling.csv
  reducebench multigpu --no-sharded --nccl --bytes 2^10..2^30 --gpus 2
"""


@click.command("multigpu", epilog=EXAMPLES)
@options(option("size", help="Elements of the whole input, split over the GPUs: 2^24, 16M, "
                             "lists, ranges 2^24..2^33."), "dtype")
@click.option("--gpus", default="all", show_default=True, metavar="K[,K...]",
              help="How many GPUs (devices 0..K-1), a comma list, or all (1 to every GPU "
                   "present). Counts past the GPUs present are skipped with the reason.")
@options(option("rung", default=None, show_default=False, metavar="RUNG",
                help=f"The ladder rung each GPU reduces its shard with (default: "
                     f"{DEFAULT_LOCAL_RUNG}, vector_load without its memset: the fastest "
                     "measured from 2^16 elements up)."),
         option("block", help="Threads per block of the local rung."))
@click.option("--sharded/--no-sharded", default=True, show_default=True,
              help="Measure the sharded sum.")
@click.option("--nccl", is_flag=True,
              help="Also measure NCCL's all-reduce and reduce of a vector on every GPU "
                   "(in place and out of place) over --bytes.")
@click.option("--bytes", "nbytes", default="2^10..2^30", show_default=True, metavar="SIZES",
              help="Bytes per GPU of the NCCL reference cases.")
@options(option("cold", help="Flush every GPU's L2 (by reading) before every sample, or not."),
         option("inputs", help="The sharded sum's input (see `run --help`)."), "out")
@sampling_options
@click.option("--timeout", default=None, type=float, metavar="SECONDS",
              help="Under a launcher: how long any wait for another rank may take before "
                   "every rank gives up with one line (default: $REDUCEBENCH_TIMEOUT, else "
                   "60).")
def multigpu_command(**values) -> None:
    """Sum across the GPUs of this host, or of every rank under torchrun, srun or mpirun:
    shards reduced locally, combined with NCCL."""
    values["bytes"] = values.pop("nbytes")
    timeout = timeout_from(os.environ, values.pop("timeout"))
    console = make_console()
    world = ranks.launched_world()
    if world is not None:  # one process per GPU (docs/cluster.md)
        from reducebench.device import cluster

        ending = ranks.run_launched(values, world, timeout, cluster.join,
                                    cluster.open_cluster)
        if world.rank == 0:
            show_ending(ending, multigpu_view(ending.records), "table", console)
        return ranks.finish(ending.exit_code)
    from reducebench.device.one_process import open_multigpu

    ending = run_on_host(values, open_multigpu,
                         functools.partial(case_progress, console))
    show_ending(ending, multigpu_view(ending.records), "table", console)


COMMANDS = [multigpu_command]
