"""Commands started by a launcher (torchrun, srun, mpirun), one process per GPU: how such
a rank ends, and the fleet check that `run --device all` becomes there (docs/cluster.md).

A launched rank always ends through finish(): os._exit after flushing, because a rank
that gave up on a dead peer may still have a helper thread blocked inside the TCPStore, MPI or
NCCL, and no library's teardown may be allowed to wait on it."""

from __future__ import annotations

import contextlib
import os
import sys

import click
from rich.console import Console

from reducebench.cli._console import echo_json_rows, unfinished_note
from reducebench.core.errors import ReducebenchError, UsageError
from reducebench.core.interrupt import (EXIT_CODE as INTERRUPTED_EXIT, Interrupted, deferred,
                                        stop_on_signals)
from reducebench.multigpu.launch import (EXIT_UNREACHABLE, Unreachable, World, print_line,
                                         timeout_from, world_from_env)
from reducebench.results.naming import RESULTS_DIR, check_new_results, default_path
from reducebench.results.store import ResultsStore



def launched_world() -> World | None:
    """The launcher's world when this process is one of several ranks; None otherwise
    (no launcher, or a world of one: the commands behave as without a launcher)."""
    world = world_from_env(os.environ)
    return world if world is not None and world.size > 1 else None


def finish(code: int) -> None:
    """End this rank now (module docstring); tests replace it."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def ended_by(world: World, exc: BaseException) -> int:
    """One line for what ended a launched rank, and its exit code."""
    if isinstance(exc, Unreachable):
        print_line(f"reducebench: rank {world.rank} of {world.size}: {exc}")
        return EXIT_UNREACHABLE
    if isinstance(exc, ReducebenchError):
        print_line(f"reducebench: error: rank {world.rank}: {exc}")
        return exc.exit_code
    raise exc


def as_rank(world: World, body, on_stop, console: Console, box: dict) -> int | None:
    """Run body() as one rank of a launched world, signals held to their rules: the code
    to finish() with when it ended early (130 on SIGINT or SIGTERM, rank 0 keeping its
    rows and showing them through on_stop(); one line and its code when a peer is gone or
    an option is bad), None when it ran to the end. `box` holds what body() opened
    ("member": this rank in the world, "store": rank 0's results)."""
    lead = world.rank == 0
    try:
        with stop_on_signals():
            body()
    except Interrupted as exc:
        if lead:
            on_stop()
            saved = box["store"].saved() if "store" in box else "nothing saved"
            console.print(f"[yellow]interrupted[/] ({exc}): {saved}" + unfinished_note(exc, resumable=False))
        if "member" in box:
            box["member"].comm.close()
        return INTERRUPTED_EXIT
    except (Unreachable, ReducebenchError) as exc:
        code = ended_by(world, exc)
        if lead and "store" in box:
            print_line(f"reducebench: rank 0 kept {box['store'].saved()}")
        return code
    return None


# -- the fleet check: `run --device all` under a launcher ------------------------------------

def run_fleet(ctx: click.Context, settings, cases, world: World, console: Console,
              output_format: str) -> None:
    """Every rank runs the sweep on its own GPU, in step with the others (one seed for
    all); after each case rank 0 gathers every rank's record and commits it to one
    results file. Then rank 0 shows the GPUs side by side and the fleet check."""
    if settings.devices != "all":
        raise UsageError(f"under {world.launcher} `run` measures each rank's own GPU: give "
                         "--device all")
    lead = world.rank == 0
    if lead and settings.out is not None:
        check_new_results(settings.out)
    timeout = timeout_from(os.environ)
    records: list = []
    box: dict = {}
    ended = as_rank(world, lambda: _fleet(settings, cases, world, timeout, console, records,
                                          box),
                    lambda: _render_fleet(console, box.get("store"), records, output_format),
                    console, box)
    if ended is not None:
        finish(ended)
        return
    store = box["store"] if lead else None
    code = 0
    if lead:
        _render_fleet(console, store, records, output_format)
        console.print(store.saved().replace("saved in", "written to"))
        failed = [r for r in records if r.status in ("FAIL", "error")]
        if failed:
            console.print(f"[bold red]{len(failed)} case(s) failed[/]: " + ", ".join(
                f"rank {r.meta.get('rank')} {r.rung} {r.dtype} n={r.n}" for r in failed[:10]))
            code = 1
    finish(code)


def _fleet(settings, cases, world: World, timeout: float, console: Console,
           records: list, box: dict) -> None:
    from reducebench.cli._kernels import compile_user_kernels
    from reducebench.device import open_backend
    from reducebench.device.cluster import join
    from reducebench.measuring.session import measure
    from reducebench.render.progress import progress_bar
    from reducebench.verify.inputs import new_seed

    member = box["member"] = join(world, timeout)
    seed = settings.seed if settings.seed is not None else new_seed()
    settings.seed = member.comm.bcast(seed, "sharing the seed")
    settings.device = member.device
    backend = open_backend(member.device)
    backend.with_ceiling = settings.timed and not settings.profile
    compile_user_kernels(settings, backend)
    store = None
    if world.rank == 0:
        path = settings.out or default_path(RESULTS_DIR, f"fleet {member.info.name}")
        if settings.out is None:
            RESULTS_DIR.mkdir(exist_ok=True)
        store = box["store"] = ResultsStore(path)
    rank = world.rank_fields()

    def on_record(record) -> None:
        record.meta = {**record.meta, **rank}
        rows = member.comm.gather(record, f"{record.rung} n={record.n}: gathering the rows")
        if store is not None:
            with deferred():  # a signal meanwhile: the rows are both saved and shown
                for row in rows:
                    store.commit(row)
                records.extend(rows)

    lead = world.rank == 0
    with (progress_bar(console) if lead else contextlib.nullcontext()) as progress:
        task = progress.add_task("starting", total=len(cases)) if lead else None

        def on_case(case, index, total):
            if lead:
                progress.update(task, completed=index, description=case.label)

        outcome = measure(settings, backend, None, cases, on_case, on_record=on_record)
    if outcome.interrupted is not None:
        raise outcome.interrupted
    if outcome.lost is not None:
        raise Unreachable(f"the CUDA context of rank {world.rank}'s GPU was lost in "
                          f"{outcome.lost}")
    member.comm.barrier("the last barrier")
    member.comm.close()


def _render_fleet(console: Console, store, records: list, output_format: str) -> None:
    """The GPUs side by side (from the one results file), then the fleet check."""
    if output_format == "json":
        echo_json_rows(records)
        return
    if store is None or not records:
        return
    from reducebench.analysis.fleet import judge_fleet
    from reducebench.measuring.each_device import side_by_side
    from reducebench.render.tables import devices_table, fleet_table
    from reducebench.results.files import read_results

    frame = read_results(store.path)
    ranks = sorted(int(r) for r in frame["rank"].dropna().unique())
    frames = {r: frame[frame["rank"] == r] for r in ranks}
    names = {}
    for r in ranks:
        row = frames[r].iloc[0]
        names[r] = f"{row['host']}:{int(row['device'])} {row['gpu']}"
    if len(frames) > 1:
        console.print(devices_table(side_by_side(frames), names))
    report = judge_fleet(fleet_samples(records))
    if not report.cases:  # a table of "not judged" says less than this line
        console.print("the fleet check: no case was timed on enough GPUs to be judged")
        return
    uuids = {int(r.meta.get("rank", 0)): str(r.meta.get("gpu_uuid", "")) for r in records}
    console.print(fleet_table(report, names, uuids))
    console.print(report.rule())


def fleet_samples(records: list) -> dict:
    """case -> rank -> the kept samples of that case on that rank (raw, from each record)."""
    out: dict = {}
    for r in records:
        raw = getattr(r, "raw_samples", None)
        if r.status not in ("ok", "suspect") or raw is None:
            continue
        kept = raw.kept if raw.kept is not None else [True] * len(raw.times_us)
        times = [t for t, k in zip(raw.times_us, kept) if k]
        case = f"{r.rung} {r.dtype} n={r.n} block={r.block} {r.params}".strip()
        out.setdefault(case, {})[int(r.meta.get("rank", 0))] = times
    return out

