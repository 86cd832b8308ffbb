"""`run`: measure rungs over sizes, dtypes and block sizes; a table on screen, a CSV kept."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from reducebench.cli._console import show_ending
from reducebench.cli._kernels import kernel_options, open_device
from reducebench.cli._options import given_options, is_given, option, options, sampling_options
from reducebench.measuring import lifecycle
from reducebench.measuring.each_device import devices_to_run, options_argv, single_device
from reducebench.measuring.session import open_resumed, plan_sweep
from reducebench.measuring.settings import split_given
from reducebench.multigpu import ranks
from reducebench.render.printers import console_for, records_view, to_stdout
from reducebench.render.progress import case_progress
from reducebench.render.run_views import devices_view, fleet_view
from reducebench.results.store import ResultsStore

# Options each GPU's child gets its own value of; the rest are passed on as given.
CHILD_OWN_OPTIONS = {"device", "out", "seed", "resume"}

EXAMPLES = """
\b
Examples:
  reducebench run --size 2^24                      the whole ladder, 2^24 float32
  reducebench run --size '1<<20,16M' --dtype int32  two sizes (quote 1<<20 in a shell)
  reducebench run --size 2^10..2^28:2 --rung vector_load,cub
  reducebench run --rung shfl_unroll --param unroll=2,4,8
  reducebench run --config configs/harris.toml
  reducebench run --inputs random                  report each rung's rounding error
  reducebench run --resume results/FILE.csv        finish an interrupted sweep
"""


@click.command("run", epilog=EXAMPLES)
@options("size", "dtype", "rung", "block", "cold", "inputs")
@click.option("--config", type=click.Path(), default=None,
              help="TOML file setting any of these options (see configs/); options given "
                   "here override it.")
@options("out", option("device", default="0", type=str, metavar="INDEX|LIST|all",
                       help="CUDA device index; or a comma list (0,1) or all: the sweep on "
                            "each GPU in turn, one process and one results file each, then "
                            "the GPUs side by side."))
@click.option("--param", multiple=True, metavar="NAME=V[,V...]",
              help="Rung parameter values to sweep, e.g. --param unroll=2,4,8 (repeatable).")
@sampling_options
@click.option("--timing", type=click.Choice(["single", "graph"]), default="single",
              show_default=True,
              help="single: each sample one whole reduction, launches included; graph: K "
                   "runs back to back from a CUDA graph, per run (the kernels' own time "
                   "at small n; docs/samples.md).")
@click.option("--energy", is_flag=True,
              help="Also measure energy per run (uJ) and GB per joule from NVML, over a "
                   "burst of about a second per case.")
@click.option("--metrics", "with_metrics", is_flag=True,
              help="After each case is timed, read its hardware counters with Nsight "
                   "Compute (ncu) from separate profile-mode launches (docs/metrics.md).")
@click.option("--profile", is_flag=True,
              help="Run each case 3 times without the statistics loop or the stream hold: "
                   "a clean timeline for nsys/ncu.")
@click.option("--resume", type=click.Path(), default=None,
              help="Finish an interrupted sweep: measure only the cases missing from FILE, "
                   "with the options recorded in it, appending to it.")
@click.option("--report", "with_report", is_flag=True,
              help="Also write the run's HTML page beside the CSV (FILE.html), at the end "
                   "or on Ctrl-C (reducebench report; needs reducebench[report]).")
@options(option("format", help="json: print the records to stdout (the table goes nowhere)."))
@kernel_options
@click.pass_context
def run_command(ctx: click.Context, **values) -> None:
    """Measure the ladder: compile, verify and time every rung."""
    given, defaults = split_given(values, lambda name: is_given(ctx, name))
    if values["with_report"]:  # before anything is measured, not after
        from reducebench.render.html.page import require_libraries
        require_libraries()
    resume = Path(values["resume"]) if values["resume"] else None
    plan = plan_sweep(given, defaults, values["config"], resume)
    settings, cases, fmt = plan.settings, plan.cases, values["output_format"]
    if resume is not None:
        if not cases:
            click.echo(f"nothing to do: {resume} holds every case of its sweep", err=True)
            return
        click.echo(f"resuming {resume}: {plan.done} case(s) already measured, "
                   f"{len(cases)} to go", err=True)
    settings.profile = values["profile"]
    console = console_for(fmt)
    watch = functools.partial(case_progress, console)
    world = ranks.launched_world()
    if world is not None:  # one rank of several (torchrun, srun, mpirun): the fleet check
        from reducebench.core.errors import UsageError
        from reducebench.device import cluster
        from reducebench.multigpu.launch import timeout_from
        import os

        if resume is not None:
            raise UsageError("--resume continues one GPU's file; run it without a launcher")
        ending = ranks.run_fleet(settings, cases, world, timeout_from(os.environ),
                                 cluster.join, open_device, watch)
        if world.rank == 0:
            show_ending(ending, fleet_view(ending.records, ending.path), fmt, console)
        return ranks.finish(ending.exit_code)
    if single_device(settings.devices) is None:
        from reducebench.device import gpu_count

        devices = devices_to_run(settings.devices, gpu_count())
        if len(devices) > 1:
            argv = options_argv(given_options(ctx, CHILD_OWN_OPTIONS))
            ending = lifecycle.measure_each_device(settings, devices, argv, to_stdout(fmt),
                                                   console.print)
            return show_ending(ending, devices_view(ending.records), fmt, console)
        settings.device = devices[0]
    after_case = None
    if settings.metrics:
        from reducebench.measuring.counters import counter_reader
        after_case = counter_reader(settings)

    def open_store(backend) -> ResultsStore:
        if resume is not None:
            store, backup = open_resumed(resume)
            if backup is not None:
                console.print(f"{resume} was written in an older results schema: rewritten "
                              f"in today's, the original kept as {backup}")
        else:
            store = lifecycle.new_store(settings.out, backend.info.name)
        if values["with_report"]:  # however the run ends: done, failed, Ctrl-C
            from reducebench.render.html.page import report_beside
            ctx.call_on_close(lambda: console.print(report_beside(store.path)))
        return store

    ending = lifecycle.measure_cases(settings, cases, lambda: open_device(settings),
                                     open_store, watch, after_case)
    show_ending(ending, records_view(ending.records), fmt, console)


COMMANDS = [run_command]
