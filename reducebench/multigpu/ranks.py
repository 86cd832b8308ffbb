"""One rank of a launched world (torchrun, srun, mpirun; docs/cluster.md), one process
per GPU: joining the others, the seed they share, the rows rank 0 gathers and commits,
the last barrier, and how the rank ends. Two things run this way: `multigpu`'s cases
over the world's ranks and `run --device all`'s fleet check.

The device half is given: `join` (device/cluster.join), the backend opener. A launched
rank always ends through finish(): os._exit after flushing, because a rank that gave up
on a dead peer may still have a helper thread blocked inside the TCPStore, MPI or NCCL,
and no library's teardown may be allowed to wait on it."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Callable

from reducebench.core.errors import ReducebenchError, UsageError
from reducebench.core.interrupt import Interrupted, deferred, stop_on_signals
from reducebench.measuring.lifecycle import Ending, Watch, new_store, store_ending
from reducebench.multigpu.launch import (EXIT_UNREACHABLE, Unreachable, World, print_line,
                                         world_from_env)
from reducebench.results.naming import check_new_results
from reducebench.results.schema import MULTIGPU
from reducebench.verify.inputs import new_seed


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


def as_rank(world: World, body: Callable[[dict], None], label: Callable) -> Ending:
    """body(box) as one rank of the world, signals held to their rules; how it ended.
    `box` holds what body() opened: "member" (this rank in the world), "store" (rank 0's
    results) and "records" (the rows rank 0 committed). A peer gone or a bad option is
    one line here and an Ending that shows nothing more."""
    box: dict = {"records": []}
    try:
        with stop_on_signals():
            body(box)
    except Interrupted as exc:
        if "member" in box:
            box["member"].comm.close()
        return store_ending(box["records"], box.get("store"), exc, resumable=False)
    except (Unreachable, ReducebenchError) as exc:
        code = ended_by(world, exc)
        if world.rank == 0 and "store" in box:
            print_line(f"reducebench: rank 0 kept {box['store'].saved()}")
        return Ending(code=code, show=False)
    if world.rank:
        return Ending()
    return store_ending(box["records"], box["store"], label=label,
                        heading=box.get("heading", ""))


def share_seed(member, settings) -> None:
    """The seed every rank measures with: rank 0's (given, or drawn there)."""
    seed = settings.seed if settings.seed is not None else new_seed()
    settings.seed = member.comm.bcast(seed, "sharing the seed")


def commit(box: dict, rows: list) -> None:
    """Rank 0 commits every rank's row of a case; a signal meanwhile waits, so the rows
    are both saved and shown."""
    store = box.get("store")
    if store is not None:
        with deferred():
            for row in rows:
                store.commit(row)
            box["records"].extend(rows)


def end_together(member, *closing) -> None:
    member.comm.barrier("the last barrier")
    for thing in closing:
        thing.close()
    member.comm.close()


# -- `run --device all` under a launcher: the fleet check ------------------------------------

def rank_label(record) -> str:
    return f"rank {record.meta.get('rank')} {record.rung} {record.dtype} n={record.n}"


def run_fleet(settings, cases, world: World, timeout: float, join: Callable,
              open_backend: Callable, watch: Watch) -> Ending:
    """Every rank runs the sweep on its own GPU, in step with the others (one seed for
    all); after each case rank 0 gathers every rank's record and commits it to one
    results file. open_backend(settings) opens this rank's GPU."""
    from reducebench.measuring.session import measure

    if settings.devices != "all":
        raise UsageError(f"under {world.launcher} `run` measures each rank's own GPU: give "
                         "--device all")
    lead = world.rank == 0
    if lead and settings.out is not None:
        check_new_results(settings.out)

    def body(box: dict) -> None:
        member = box["member"] = join(world, timeout)
        share_seed(member, settings)
        settings.device = member.device
        backend = open_backend(settings)
        if lead:
            box["store"] = new_store(settings.out, f"fleet {member.info.name}")
        rank = world.rank_fields()

        def on_record(record) -> None:
            record.meta = {**record.meta, **rank}
            commit(box, member.comm.gather(record, f"{record.rung} n={record.n}: "
                                                   "gathering the rows"))

        with (watch(len(cases)) if lead else contextlib.nullcontext()) as on_case:
            outcome = measure(settings, backend, None, cases, on_case, on_record=on_record)
        if outcome.interrupted is not None:
            raise outcome.interrupted
        if outcome.lost is not None:
            raise Unreachable(f"the CUDA context of rank {world.rank}'s GPU was lost in "
                              f"{outcome.lost}")
        end_together(member)

    return as_rank(world, body, rank_label)


# -- `multigpu` under a launcher ----------------------------------------------------------------

def gpus_label(record) -> str:
    return f"{record.rung} {record.dtype} n={record.n} gpus={record.gpus}"


def run_launched(options: dict, world: World, timeout: float, join: Callable,
                 open_cluster: Callable) -> Ending:
    """This rank's part of every case over the world's ranks; rank 0 writes the rows.
    The Ending's heading says how the world is laid out."""
    from reducebench.multigpu.cases import launched_gpus, settings_from_options
    from reducebench.multigpu.loop import run_multigpu

    options["gpus"] = launched_gpus(str(options.get("gpus", "all")), world.size, world.launcher)
    settings_from_options(options, present=world.size)
    lead = world.rank == 0
    if lead and options["out"] is not None:
        check_new_results(options["out"])

    def body(box: dict) -> None:
        member = box["member"] = join(world, timeout)
        backend = open_cluster(member, timeout)
        settings = settings_from_options(options, world.size)
        share_seed(member, settings)
        if lead:
            box["heading"] = world_line(member)
            box["store"] = new_store(options["out"], f"multigpu {member.info.name} "
                                                     f"x{world.size}", kind=MULTIGPU)

        def on_case(case, index, total) -> None:
            if lead:
                print(f"[{index + 1}/{total}] {case.label}", file=sys.stderr, flush=True)

        run_multigpu(settings, backend, lambda record: commit(box, [record]), on_case)
        end_together(member, backend)

    return as_rank(world, body, gpus_label)


def world_line(member) -> str:
    lay, world = member.layout, member.world
    return (f"{world.size} ranks ({world.launcher}) on {lay.nodes} node(s), "
            f"{lay.gpus_per_node} GPU(s) per node, {len(lay.hosts)} host(s)"
            + (": NCCL's traffic crosses hosts" if lay.cross_node else ""))
