"""`run`: measure rungs over sizes, dtypes and block sizes; a table on screen, a CSV kept."""

from __future__ import annotations

import json
from pathlib import Path

import click
from click.core import ParameterSource
from rich.console import Console

from reducebench.cli._cluster import launched_world, run_fleet
from reducebench.cli._console import echo_json_rows, make_console, unfinished_note
from reducebench.cli._options import sampling_options
from reducebench.cli._kernels import (callable_specs, compile_user_kernels, kernel_options,
                                      kernel_specs, open_device)
from reducebench.core.errors import UsageError
from reducebench.ladder.case import AUTO
from reducebench.core.interrupt import EXIT_CODE as INTERRUPTED_EXIT, Interrupted, stop_on_signals
from reducebench.measuring.each_device import (device_path, devices_to_run, run_each_device,
                                               side_by_side, single_device)
from reducebench.measuring.each_device import exit_code as each_exit_code
from reducebench.measuring.runner import expand_cases
from reducebench.measuring.session import (Outcome, abandon_lost_context, measure, open_resumed,
                                           plan_resume)
from reducebench.measuring.settings import blame_config, load_config, merge, settings_from
from reducebench.render.progress import progress_bar
from reducebench.render.tables import devices_table, tables
from reducebench.results.files import read_results
from reducebench.results.naming import RESULTS_DIR, check_new_results, default_path
from reducebench.results.store import ResultsStore
from reducebench.verify.inputs import DEFAULT_INPUTS, INPUT_KINDS, new_seed

# option name -> config key (the same meaning in a TOML file)
OPTION_KEYS = {"size": "size", "dtype": "dtype", "rung": "rung", "block": "block",
               "inputs": "inputs", "out": "out", "device": "device", "seed": "seed",
               "param": "params", "min_samples": "min_samples", "max_noise": "max_noise_pct",
               "max_time": "max_time", "rounds": "rounds", "timing": "timing", "energy": "energy",
               "with_metrics": "metrics"}

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


def command_line_values(ctx: click.Context, options: dict) -> tuple[dict, dict]:
    """(given, defaults) as config keys: the options given on the command line, and the
    defaults of the others."""
    given, defaults = {}, {}
    for option, key in OPTION_KEYS.items():
        value = options[option]
        if option == "param":
            value = list(value)
        if value is None or value == [] or value is False:
            continue
        explicit = ctx.get_parameter_source(option) != ParameterSource.DEFAULT
        (given if explicit else defaults)[key] = value
    mode = "cold" if options["cold"] else "warm"
    explicit = ctx.get_parameter_source("cold") != ParameterSource.DEFAULT
    (given if explicit else defaults)["mode"] = mode
    specs = kernel_specs(options)
    if specs:
        given["kernels"] = specs
    callables = callable_specs(options)
    if callables:
        given["callables"] = callables
    return given, defaults


@click.command("run", epilog=EXAMPLES)
@click.option("--size", default="2^24", show_default=True, metavar="SIZES",
              help="Elements: 2^24, '1<<24' (quoted), 16M, 16777216, comma lists, ranges "
                   "2^10..2^28 or 2^10..2^28:2.")
@click.option("--dtype", default="float32", show_default=True, metavar="DTYPES",
              help="float32, float64, int32, float16, bfloat16 (or f32, f64, i32, f16, "
                   "bf16); a comma list.")
@click.option("--rung", default="all", show_default=True, metavar="RUNGS",
              help="Rung names (comma list), all, or none (only your --kernel or "
                   "--callable).")
@click.option("--block", default="256", show_default=True, metavar="THREADS",
              help="Threads per block: powers of two 32..1024 (comma list).")
@click.option("--cold/--warm", default=True, show_default=True,
              help="Flush L2 (by reading) before every sample, or not.")
@click.option("--inputs", type=click.Choice(INPUT_KINDS), default=DEFAULT_INPUTS,
              show_default=True,
              help="exact: integer inputs, every result must equal the exact sum; random: "
                   "real values, each rung's rounding error reported.")
@click.option("--config", type=click.Path(), default=None,
              help="TOML file setting any of these options (see configs/); options given "
                   "here override it.")
@click.option("--out", default=None, help="CSV path; default: a new file under results/.")
@click.option("--device", default="0", show_default=True, metavar="INDEX|LIST|all",
              help="CUDA device index; or a comma list (0,1) or all: the sweep on each GPU "
                   "in turn, one process and one results file each, then the GPUs side by "
                   "side.")
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
@click.option("--format", "output_format", type=click.Choice(["table", "json"]),
              default="table", show_default=True,
              help="json: print the records to stdout (the table goes nowhere).")
@kernel_options
@click.pass_context
def run_command(ctx: click.Context, **options) -> None:
    """Measure the ladder: compile, verify and time every rung."""
    given, defaults = command_line_values(ctx, options)
    if options["with_report"]:  # before anything is measured, not after
        from reducebench.render.html.page import require_libraries
        require_libraries()
    resume = Path(options["resume"]) if options["resume"] else None
    if resume is not None:
        if options["config"]:
            raise UsageError("--resume continues the sweep recorded in its file; leave out "
                             "--config")
        if "out" in given:
            raise UsageError("--resume appends to its own file; leave out --out")
        plan = plan_resume(resume, given, defaults)
        settings, cases = plan.settings, plan.cases
        if single_device(settings.devices) is None:
            raise UsageError("--resume continues one GPU's file; give one --device (or "
                             "none: the device the file records)")
        if not cases:
            click.echo(f"nothing to do: {resume} holds every case of its sweep", err=True)
            return
        click.echo(f"resuming {resume}: {plan.done} case(s) already measured, "
                   f"{len(cases)} to go", err=True)
    else:
        config = load_config(options["config"]) if options["config"] else {}
        try:
            settings = settings_from(merge(config, given, defaults))
        except UsageError as exc:
            raise blame_config(exc, config, given, options["config"]) from None
        cases = expand_cases(settings)
        if settings.out is not None:
            check_new_results(settings.out)
    settings.profile = options["profile"]
    console = make_console(stderr=options["output_format"] == "json")
    world = launched_world()
    if world is not None:  # one rank of several (torchrun, srun, mpirun): the fleet check
        if resume is not None:
            raise UsageError("--resume continues one GPU's file; run it without a launcher")
        run_fleet(ctx, settings, cases, world, console, options["output_format"])
        return
    if single_device(settings.devices) is None:
        from reducebench.device import gpu_count

        devices = devices_to_run(settings.devices, gpu_count())
        if len(devices) > 1:
            _measure_each_device(ctx, settings, devices, console, options["output_format"])
            return
        settings.device = devices[0]
    counters = counter_reader(settings) if settings.metrics else None
    with stop_on_signals():
        _measure(ctx, settings, cases, resume, console, options["output_format"], counters)


def counter_reader(settings):
    """The after-case hook of --metrics: ncu, found before anything is measured, run on
    each verified case's profile-mode launches in a child process."""
    import tempfile

    from reducebench.measuring import counters as metrics

    ncu = metrics.find_ncu()
    folder = Path(tempfile.mkdtemp(prefix="reducebench-ncu-"))

    def read(case, record) -> None:
        argv = profile_argv(case, settings, folder / "case.csv")
        launches = record.launches or None  # a library's kernels: found from their period
        try:
            record.metrics = metrics.collect(case.label, argv, launches, case.n,
                                             case.dtype.itemsize, METRICS_TIMEOUT_S, ncu=ncu)
        except metrics.CounterPermissionError:
            raise
        except metrics.MetricsError as exc:
            record.ncu_error = str(exc)
        for leftover in folder.glob("*"):
            leftover.unlink()
    return read


METRICS_TIMEOUT_S = 600


def profile_argv(case, settings, out: Path) -> list[str]:
    """`reducebench run` arguments that repeat exactly one case in profile mode (three
    samples, no stream hold), writing its row to `out`: what --metrics runs under ncu."""
    rung = case.rung
    spec = next((k for k in settings.kernels if rung.origin == "user"
                 and rung.source == k.path and rung.kernel == k.name), None)
    which = (["--rung", "none", "--kernel", f"{spec.path}:{spec.name}", "--finish",
              spec.finish, "--grid", spec.grid] if spec else ["--rung", rung.name])
    if rung.origin == "callable":
        which = ["--rung", "none", "--callable", rung.callable_ref.target]
    params = [arg for k, v in sorted(case.params.items()) for arg in ("--param", f"{k}={v}")]
    block = ["--block", str(case.block)] if case.block else []
    if rung.name == AUTO:  # the child resolves auto from the same table to the same variant
        params, block = [], []  # (auto takes neither option)
    return ["run", "--size", str(case.n), "--dtype", case.dtype.name, *which, *block, *params,
            "--cold" if settings.cold else "--warm", "--inputs", settings.inputs,
            "--device", str(settings.device), "--profile", "--out", str(out)]


def _measure(ctx, settings, cases, resume, console: Console, output_format: str,
             counters=None) -> None:
    store = None
    outcome = Outcome()
    try:
        backend = open_device(settings, settings.device)
        backend.with_ceiling = settings.timed and not settings.profile
        compile_user_kernels(settings, backend)
        if resume is not None:
            store, backup = open_resumed(resume)
            if backup is not None:
                console.print(f"{resume} was written in an older results schema: rewritten "
                              f"in today's, the original kept as {backup}")
        else:
            path = settings.out or default_path(RESULTS_DIR, backend.info.name)
            if settings.out is None:
                RESULTS_DIR.mkdir(exist_ok=True)
            store = ResultsStore(path)
        if ctx.params.get("with_report"):  # however the run ends: done, failed, Ctrl-C
            ctx.call_on_close(lambda: write_run_report(console, store.path))
        with progress_bar(console) as progress:
            task = progress.add_task("starting", total=len(cases))

            def on_case(case, index, total):
                progress.update(task, completed=index, total=total, description=case.label)

            outcome = measure(settings, backend, store, cases, on_case, after_case=counters)
            progress.update(task, completed=progress.tasks[0].total)
    except Interrupted as exc:  # before the first case: opening, compiling
        outcome.interrupted = exc
    _render(console, outcome.records, output_format)
    saved = store.saved() if store is not None else "nothing saved"
    if outcome.interrupted is not None:
        console.print(f"[yellow]interrupted[/] ({outcome.interrupted}): {saved}"
                      + unfinished_note(outcome.interrupted))
        ctx.exit(INTERRUPTED_EXIT)
    if outcome.lost is not None:
        console.print(f"[red]the CUDA context was lost[/] in {outcome.lost}; {saved}")
        abandon_lost_context(backend)
        ctx.exit(1)
    console.print(saved.replace("saved in", "written to"))
    if outcome.failed:
        console.print(f"[bold red]{len(outcome.failed)} case(s) failed[/]: "
                      + ", ".join(f"{r.rung} {r.dtype} n={r.n}" for r in outcome.failed[:10]))
        ctx.exit(1)


def write_run_report(console: Console, path: Path) -> None:
    """run --report: the run's page beside its CSV. A page that cannot be written is one
    line; the run's results and exit code stay what they are."""
    from reducebench.core.errors import ReducebenchError
    from reducebench.render.html.page import write_report

    if not path.exists() or not path.stat().st_size:
        console.print(f"no report: nothing was written to {path}")
        return
    try:
        info = write_report([path], path.with_suffix(".html"))
    except ReducebenchError as exc:
        console.print(f"[yellow]no report[/]: {exc}")
        return
    console.print(f"report: {info.path}")


# -- several GPUs (every_device.py) ---------------------------------------------------------

# Options each GPU's child gets its own value of; the rest are passed on as given.
CHILD_OWN_OPTIONS = {"device", "out", "seed", "resume"}


def given_argv(ctx: click.Context, skip: set[str]) -> list[str]:
    """The options given to this command (on the command line or from the environment),
    as arguments that give them again: what a child process repeats."""
    argv: list[str] = []
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name in skip:
            continue
        if ctx.get_parameter_source(param.name) in (None, ParameterSource.DEFAULT):
            continue
        value = ctx.params[param.name]
        if param.is_flag and param.secondary_opts:  # --cold/--warm
            argv.append(param.opts[0] if value else param.secondary_opts[0])
        elif param.is_flag:
            argv += [param.opts[0]] if value else []
        elif param.multiple:
            for item in value:
                argv += [param.opts[0], str(item)]
        elif value is not None:
            argv += [param.opts[0], str(value)]
    return argv


def _measure_each_device(ctx, settings, devices: list[int], console: Console,
                         output_format: str) -> None:
    base = settings.out or default_path(RESULTS_DIR, "gpus")
    if settings.out is None:
        RESULTS_DIR.mkdir(exist_ok=True)
    for device in devices:
        check_new_results(device_path(base, device))
    seed = settings.seed if settings.seed is not None else new_seed()
    argv = given_argv(ctx, CHILD_OWN_OPTIONS)
    console.print(f"{len(devices)} GPUs, one after the other, seed {seed}:")
    try:
        runs = run_each_device(argv, devices, base, seed,
                               capture_stdout=output_format == "json",
                               announce=lambda line: console.print(f"[bold]{line}[/]"))
    except Interrupted as exc:
        runs = getattr(exc, "runs", [])
        _render_devices(console, runs, output_format)
        saved = ", ".join(str(r.path) for r in runs if r.path.exists()) or "nothing"
        console.print(f"[yellow]interrupted[/] ({exc}): saved {saved}")
        ctx.exit(INTERRUPTED_EXIT)
    _render_devices(console, runs, output_format)
    code = each_exit_code(runs)
    if code:
        failed = [f"GPU {r.device} (exit {r.exit_code})" for r in runs if r.exit_code]
        console.print(f"[bold red]not every GPU's run succeeded[/]: {', '.join(failed)}")
        ctx.exit(code)


def _render_devices(console: Console, runs, output_format: str) -> None:
    """The GPUs side by side, from the files their runs wrote (json: every child's
    records, as one list)."""
    if output_format == "json":
        rows = [row for r in runs if r.stdout.strip() for row in json.loads(r.stdout)]
        click.echo(json.dumps(rows, indent=1, allow_nan=False))
        return
    frames, names = {}, {}
    for r in runs:
        if r.path.exists() and r.path.stat().st_size:
            frames[r.device] = read_results(r.path)
            gpus = frames[r.device]["gpu"].dropna()
            names[r.device] = str(gpus.iloc[0]) if len(gpus) else "?"
    if len(frames) > 1:
        console.print(devices_table(side_by_side(frames), names))
    for r in runs:
        if r.path.exists():
            console.print(f"GPU {r.device}: {r.path}")


def _render(console: Console, records, output_format: str) -> None:
    if output_format == "json":
        echo_json_rows(records)
        return
    for t in tables(records):
        console.print(t)


COMMANDS = [run_command]
