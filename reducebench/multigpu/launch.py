"""Where this process stands in a launcher's world, with no GPU and no network: the rank,
world size, local rank and node read from the environment that torchrun, Slurm's srun or
Open MPI's mpirun gives each process; the refusals that come before anything is measured;
and the bound on every wait for the other ranks (docs/cluster.md).

Everything here takes the environment as a mapping passed in, so tests give plain dicts.
Which launcher, when several left their variables (srun starting torchrun, mpirun inside
a Slurm allocation): torchrun's first, then Open MPI's, then Slurm's; the innermost
launcher is the one that started this process."""

from __future__ import annotations

import re
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence, TypeVar

from reducebench.core.errors import UsageError
from reducebench.core.numbers import number

TORCHRUN, SLURM, MPI = "torchrun", "srun", "mpirun"
TORCH, MPI4PY = "torch", "mpi"          # how the ranks reach each other (bootstrap)
DEFAULT_TIMEOUT_S = 60.0
TIMEOUT_ENV = "REDUCEBENCH_TIMEOUT"
BOOTSTRAP_ENV = "REDUCEBENCH_BOOTSTRAP"  # torch | mpi: override the launcher's default
PORT_ENV = "REDUCEBENCH_MASTER_PORT"
DEFAULT_PORT = 29500                    # torch's default MASTER_PORT
EXIT_UNREACHABLE = 3                    # a rank died or cannot be reached


@dataclass(frozen=True)
class World:
    """This process's place among the launcher's processes, one per GPU."""

    launcher: str            # torchrun | srun | mpirun
    rank: int
    size: int                # world size: ranks in all
    local_rank: int          # rank among the processes of this node
    local_size: int          # processes on this node
    node: int                # this node's index, 0..nodes-1
    nodes: int
    bootstrap: str = TORCH   # torch: torch.distributed's store; mpi: mpi4py
    master_addr: str = ""    # torch over TCP: the host and port rank 0 listens on
    master_port: int = 0

    def rank_fields(self) -> dict:
        """results.schema.RANK_FIELDS of a row this rank measured."""
        return {"rank": self.rank, "local_rank": self.local_rank, "world_size": self.size}


def _integer(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    text = env.get(name)
    if text is None or text.strip() == "":
        if default is None:
            raise UsageError(f"the launcher set no {name}: cannot tell this process's rank")
        return default
    if not text.strip().isdigit():
        raise UsageError(f"{name}={text!r} is not a whole number")
    return int(text)


def world_from_env(env: Mapping[str, str]) -> World | None:
    """The world this process was launched into, or None without a launcher (plain
    `reducebench multigpu` on one host). Inconsistent values raise UsageError."""
    if "RANK" in env and "WORLD_SIZE" in env and "LOCAL_RANK" in env:
        world = _torchrun(env)
    elif "OMPI_COMM_WORLD_RANK" in env:
        world = _open_mpi(env)
    elif "SLURM_PROCID" in env and ("SLURM_STEP_ID" in env or "SLURM_STEPID" in env):
        world = _slurm(env)   # a job step: an sbatch script itself has no step id
    else:
        return None
    check_world(world)
    return world


def _torchrun(env: Mapping[str, str]) -> World:
    """Without GROUP_RANK the node is rank // local size (torchrun numbers the ranks node
    by node); without LOCAL_WORLD_SIZE the local size is the world over GROUP_WORLD_SIZE
    nodes, never the whole world where several nodes are named."""
    size, local_size = _integer(env, "WORLD_SIZE"), _integer(env, "LOCAL_WORLD_SIZE", 0)
    rank, local_rank = _integer(env, "RANK"), _integer(env, "LOCAL_RANK")
    named_nodes = _integer(env, "GROUP_WORLD_SIZE", 0)
    local_size = local_size or (-(-size // named_nodes) if named_nodes else size)
    nodes = named_nodes or max(1, -(-size // local_size))
    node = _integer(env, "GROUP_RANK", rank // local_size)
    return World(TORCHRUN, rank, size, local_rank, local_size, node, nodes,
                 _bootstrap(env, TORCH), env.get("MASTER_ADDR", ""),
                 _integer(env, "MASTER_PORT", DEFAULT_PORT))


def _open_mpi(env: Mapping[str, str]) -> World:
    """Open MPI names no node index: rank // local size is right for its default mapping
    (by slot, the same count on each node); the CLI replaces it by the hosts the ranks
    report once they are connected (layout())."""
    size, rank = _integer(env, "OMPI_COMM_WORLD_SIZE"), _integer(env, "OMPI_COMM_WORLD_RANK")
    local_size = _integer(env, "OMPI_COMM_WORLD_LOCAL_SIZE", size)
    local_rank = _integer(env, "OMPI_COMM_WORLD_LOCAL_RANK", rank)
    return World(MPI, rank, size, local_rank, local_size, rank // max(local_size, 1),
                 max(1, -(-size // max(local_size, 1))), _bootstrap(env, MPI4PY))


def _slurm(env: Mapping[str, str]) -> World:
    rank, size = _integer(env, "SLURM_PROCID"), _integer(env, "SLURM_NTASKS", 1)
    node, nodes = _integer(env, "SLURM_NODEID", 0), _integer(env, "SLURM_NNODES", 1)
    per_node = tasks_per_node(env.get("SLURM_STEP_TASKS_PER_NODE")
                              or env.get("SLURM_TASKS_PER_NODE") or "")
    local_size = per_node[node] if node < len(per_node) else -(-size // nodes)
    nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST") or ""
    address = env.get("MASTER_ADDR") or first_host(nodelist)
    return World(SLURM, rank, size, _integer(env, "SLURM_LOCALID", 0), local_size, node, nodes,
                 _bootstrap(env, TORCH), address, slurm_port(env))


def _bootstrap(env: Mapping[str, str], default: str) -> str:
    choice = env.get(BOOTSTRAP_ENV, default).strip().lower() or default
    if choice not in (TORCH, MPI4PY):
        raise UsageError(f"{BOOTSTRAP_ENV}={choice!r}: expected torch or mpi")
    return choice


def tasks_per_node(text: str) -> list[int]:
    """Slurm's tasks-per-node list, "2(x3),1" -> [2, 2, 2, 1]."""
    counts: list[int] = []
    for item in filter(None, text.split(",")):
        match = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", item.strip())
        if not match:
            raise UsageError(f"SLURM_TASKS_PER_NODE={text!r}: cannot read {item!r}")
        counts += [int(match.group(1))] * int(match.group(2) or 1)
    return counts


def first_host(nodelist: str) -> str:
    """The first host of a Slurm hostlist: "gpu[07-09,12],login1" -> "gpu07" (what
    `scontrol show hostnames | head -1` prints), the rank-0 node of a block layout."""
    text = nodelist.strip()
    if not text:
        return ""
    match = re.match(r"([^,\[]*)(?:\[([^\]]*)\])?", text)
    prefix, ranges = match.group(1), match.group(2)
    if ranges is None:
        return prefix
    first = ranges.split(",")[0].split("-")[0]
    return prefix + first


def slurm_port(env: Mapping[str, str]) -> int:
    """REDUCEBENCH_MASTER_PORT, else MASTER_PORT, else one derived from the job id (so two
    jobs sharing a first node do not collide): 29500 + job id mod 10000."""
    for name in (PORT_ENV, "MASTER_PORT"):
        if env.get(name):
            return _integer(env, name)
    job = env.get("SLURM_JOB_ID", "")
    return DEFAULT_PORT + (int(job) % 10000 if job.isdigit() else 0)


def check_world(world: World) -> None:
    if world.size < 1 or not 0 <= world.rank < world.size:
        raise UsageError(f"{world.launcher}: rank {world.rank} of a world of {world.size}")
    if world.local_size < 1 or not 0 <= world.local_rank < world.local_size:
        raise UsageError(f"{world.launcher}: local rank {world.local_rank} of "
                         f"{world.local_size} on this node")
    if not 0 <= world.node < world.nodes:
        raise UsageError(f"{world.launcher}: node {world.node} of {world.nodes} nodes")
    if world.bootstrap == TORCH and world.size > 1 and not world.master_addr:
        raise UsageError(f"{world.launcher}: no MASTER_ADDR (nor a node list) to reach rank 0 "
                         "at; set MASTER_ADDR and MASTER_PORT")


def timeout_from(env: Mapping[str, str], option: float | None = None) -> float:
    """--timeout, else REDUCEBENCH_TIMEOUT, else 60 s: how long any wait for another rank
    may take before this rank gives up."""
    if option is not None:
        value, where = option, "--timeout"
    elif env.get(TIMEOUT_ENV):
        where = TIMEOUT_ENV
        try:
            value = float(env[TIMEOUT_ENV])
        except ValueError:
            raise UsageError(f"{TIMEOUT_ENV}={env[TIMEOUT_ENV]!r} is not a number of "
                             "seconds") from None
    else:
        return DEFAULT_TIMEOUT_S
    if not value > 0:
        raise UsageError(f"{where} {value}: expected seconds above 0")
    return float(value)


# -- one GPU per rank ------------------------------------------------------------------------

def device_for(world: World, visible: int, host: str = "this node") -> int:
    """The CUDA device this rank drives. Every GPU visible (the usual case): the local rank.
    One GPU visible: that one (srun --gpus-per-task=1, or a CUDA_VISIBLE_DEVICES per rank);
    two ranks that land on one GPU this way are refused by check_distinct_gpus."""
    if visible < 1:
        raise UsageError(f"rank {world.rank} on {host}: no CUDA GPU visible")
    if world.local_size <= visible:
        return world.local_rank
    if visible == 1:
        return 0
    raise UsageError(f"{world.local_size} ranks on {host} but it has {visible} GPU(s): "
                     "one rank per GPU (e.g. torchrun --nproc-per-node "
                     f"{visible})")


@dataclass(frozen=True)
class RankFacts:
    """What each rank reports once connected: gathered by all, so every rank takes the same
    decisions (refusals, the layout)."""

    rank: int
    host: str
    local_rank: int
    device: int
    uuid: str = ""
    gpu: str = ""
    node: int = 0            # the launcher's node index (World.node)

    @property
    def gpu_key(self) -> tuple[str, str]:
        return (self.host, self.uuid) if self.uuid else (self.host, f"device {self.device}")


def check_distinct_gpus(facts: Sequence[RankFacts]) -> None:
    """Two ranks on one GPU would time each other: refused, naming both."""
    seen: dict[tuple[str, str], int] = {}
    for f in sorted(facts, key=lambda f: f.rank):
        if f.gpu_key in seen:
            raise UsageError(f"ranks {seen[f.gpu_key]} and {f.rank} are both on GPU "
                             f"{f.uuid or f.device} of {f.host}: one rank per GPU")
        seen[f.gpu_key] = f.rank


@dataclass(frozen=True)
class Layout:
    """Where the ranks are. `nodes` counts the launcher's nodes (its node indices, or the
    hosts where they are more); `cross_node` says whether the ranks sit on more than one
    host, i.e. whether NCCL's traffic leaves a host. Two launcher "nodes" on one host (a
    test of the multi-node path) are 2 nodes that do not cross."""

    nodes: int
    gpus_per_node: int       # the most ranks on one node
    hosts: tuple[str, ...]   # in order of their first rank

    @property
    def cross_node(self) -> bool:
        return len(self.hosts) > 1


def layout(facts: Sequence[RankFacts]) -> Layout:
    per_node: dict[tuple[str, int], int] = {}
    hosts: dict[str, None] = {}
    for f in sorted(facts, key=lambda f: f.rank):
        per_node[(f.host, f.node)] = per_node.get((f.host, f.node), 0) + 1
        hosts[f.host] = None
    nodes = max(len({node for _, node in per_node}), len(hosts))
    return Layout(nodes, max(per_node.values(), default=0), tuple(hosts))


# -- bounded waits --------------------------------------------------------------------------

class Unreachable(Exception):
    """A wait for the other ranks outlasted the bound: one of them died, hangs, or cannot
    be reached. The command prints one line and exits EXIT_UNREACHABLE."""


T = TypeVar("T")


def bounded(call: Callable[[], T], what: str, timeout: float,
            clock: Callable[[], float] = time.monotonic, poll: float = 0.05) -> T:
    """call() in a helper thread, this (main) thread waiting at most `timeout` seconds.

    Why a thread: a collective blocked inside a C library (TCPStore, MPI, NCCL set-up) never
    returns to Python, so neither a signal handler nor a clock check would run. Waiting
    here in short joins keeps the main thread in Python: SIGINT/SIGTERM still raise
    Interrupted at once, and the bound raises Unreachable. The helper is a daemon thread
    left blocked; the command then ends with os._exit, so no library's teardown waits on
    it."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the main thread
            box["error"] = exc

    helper = threading.Thread(target=target, name=f"reducebench: {what}", daemon=True)
    began = clock()
    helper.start()
    while helper.is_alive():
        helper.join(poll)
        if helper.is_alive() and clock() - began > timeout:
            raise Unreachable(f"{what} did not complete within {number(timeout, 'g', ' s')}: "
                              "a rank died, hangs, or cannot reach the others")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def wait_until(done: Callable[[], bool], what: str, timeout: float,
               clock: Callable[[], float] = time.monotonic, pause: float = 2e-5) -> None:
    """Poll done() (e.g. a CUDA event's query) until true, at most `timeout` seconds: a
    GPU waiting on a dead peer in a collective never completes its event."""
    began = clock()
    while not done():
        if clock() - began > timeout:
            raise Unreachable(f"{what} did not complete within {number(timeout, 'g', ' s')}: "
                              "a rank died, hangs, or cannot reach the others")
        time.sleep(pause)


class HostComm(Protocol):
    """Small objects between the ranks' host processes (torch.distributed or mpi4py)."""

    rank: int
    size: int

    def barrier(self) -> None: ...
    def bcast(self, obj: object) -> object: ...
    def gather(self, obj: object) -> list | None: ...
    def allgather(self, obj: object) -> list: ...
    def close(self) -> None: ...


class BoundedComm:
    """A HostComm whose every call is bounded (bounded()), and whose failures all read the
    same way: a peer that died mid-call makes the store or MPI raise a connection error at once,
    which is the same news as a timeout."""

    def __init__(self, comm: HostComm, timeout: float) -> None:
        self.comm, self.timeout = comm, timeout
        self.rank, self.size = comm.rank, comm.size

    def _call(self, call: Callable[[], T], what: str) -> T:
        try:
            return bounded(call, what, self.timeout)
        except Unreachable:
            raise
        except Exception as exc:
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise Unreachable(f"{what} failed ({type(exc).__name__}: {text[:200]}): a rank "
                              "died or cannot reach the others") from None

    def barrier(self, what: str = "a barrier") -> None:
        self._call(self.comm.barrier, what)

    def bcast(self, obj: object, what: str = "a broadcast from rank 0") -> object:
        return self._call(lambda: self.comm.bcast(obj), what)

    def gather(self, obj: object, what: str = "gathering to rank 0") -> list | None:
        return self._call(lambda: self.comm.gather(obj), what)

    def allgather(self, obj: object, what: str = "an all-gather") -> list:
        return self._call(lambda: self.comm.allgather(obj), what)

    def close(self) -> None:
        if getattr(self.comm, "close_in_main", False):  # MPI_Finalize: the main thread's
            self.comm.close()
            return
        try:
            bounded(self.comm.close, "closing the connection", min(self.timeout, 5.0))
        except Exception:  # a peer already gone: nothing left to close cleanly
            pass


class LocalComm:
    """A world of one: what a launched run of one rank uses, and tests."""

    rank, size = 0, 1

    def barrier(self) -> None:
        pass

    def bcast(self, obj: object) -> object:
        return obj

    def gather(self, obj: object) -> list:
        return [obj]

    def allgather(self, obj: object) -> list:
        return [obj]

    def close(self) -> None:
        pass


def unreachable_line(world: World, host: str, exc: Unreachable) -> str:
    return f"reducebench: rank {world.rank} of {world.size} ({host}): {exc}"


def print_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
