"""The cases of `multigpu`: what is measured (the timing floor, the sharded sum, NCCL's
all-reduce and reduce), over which sizes and GPU counts, and the options that choose them."""

from __future__ import annotations

from dataclasses import dataclass, field

from reducebench.core.choices import comma_list
from reducebench.core.dtypes import DType
from reducebench.core.errors import UsageError
from reducebench.core.stats import StopRule
from reducebench.ladder.registry import LADDER, Rung, get_rung
from reducebench.measuring.rounds import DEFAULT_ROUNDS
from reducebench.multigpu.shards import ALLREDUCE, REDUCE
from reducebench.verify.inputs import DEFAULT_INPUTS

# The local rung when --rung is not given, whatever the size: pingpong is vector_load's
# kernel without the memset before it. vector_load is the fastest rung at every size from
# 2^16 to 2^28 in results/h100/sweep_a487ea9.csv (below 2^16 every rung costs the same launch
# latency, within a microsecond), and pingpong beat it at 2^24 in the README's run
# (24.93 against 25.70 us). One rule for every size keeps the scaling curves comparable.
DEFAULT_LOCAL_RUNG = "pingpong"

SHARDED = "sharded_sum"
FLOOR = "timing_floor"
COLLECTIVES = (ALLREDUCE, REDUCE)
NCCL_ROOT = 0  # the rank that receives nccl_reduce's result


# -- cases ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class MultiGpuCase:
    kind: str                 # sharded_sum | nccl_allreduce | nccl_reduce | timing_floor
    dtype: DType
    n: int                    # sharded: the whole input; collectives: elements per rank
    gpus: int
    rung: Rung | None = None  # the local rung of a sharded sum
    block: int = 0
    in_place: bool = False    # collectives: sendbuff == recvbuff
    params: dict[str, int] = field(default_factory=dict, hash=False, compare=False)

    @property
    def nbytes(self) -> int:
        return self.n * self.dtype.itemsize

    @property
    def name(self) -> str:
        """The CSV's rung column."""
        if self.kind == SHARDED:
            return f"{SHARDED}:{self.rung.name if self.rung else '?'}"
        return self.kind

    @property
    def label(self) -> str:
        """The NVTX range name and how progress and errors name the case."""
        if self.kind == FLOOR:
            return f"{FLOOR} gpus={self.gpus}"
        place = ""
        if self.kind in COLLECTIVES:
            place = " in-place" if self.in_place else " out-of-place"
        block = f" block={self.block}" if self.block else ""
        return f"{self.name} {self.dtype.name} n={self.n} gpus={self.gpus}{block}{place}"

    def params_text(self) -> str:
        """Part of the row's key, so two rows of one file never share (rung, dtype, n,
        block, params)."""
        text = f"gpus={self.gpus}"
        if self.kind in COLLECTIVES:
            text += f";in_place={int(self.in_place)}"
        return text


def local_rung(name: str | None) -> Rung:
    """The rung each GPU reduces its shard with: a ladder kernel, never a library."""
    rung = get_rung(name or DEFAULT_LOCAL_RUNG)
    if rung.is_library:
        kernels = ", ".join(r.name for r in LADDER.values() if not r.is_library)
        raise UsageError(f"--rung {rung.name} is a library reference; the local rung of a "
                         f"sharded sum must be a ladder kernel: {kernels}")
    return rung


def combined_shape(chains: list[int], atomics: list[int], k: int) -> tuple[int, int]:
    """The accumulation shape that sets a sharded sum's tolerance: the longest per-thread
    chain of any shard, and its largest count of atomics plus the k-1 additions in which
    NCCL combines the partial sums (tolerance.py: each adds to the random walk)."""
    return max(chains, default=1), max(atomics, default=0) + k - 1


@dataclass
class MultiGpuSettings:
    sizes: list[int]
    dtypes: list[DType]
    gpus: list[int]
    rung: Rung
    block: int = 256
    sharded: bool = True
    nccl_bytes: list[int] = field(default_factory=list)  # empty: no NCCL reference cases
    cold: bool = True
    inputs: str = DEFAULT_INPUTS   # exact | random (inputs.py)
    seed: int | None = None
    stop: StopRule = field(default_factory=StopRule)
    floor: bool = True
    rounds: int = DEFAULT_ROUNDS  # interleaved rounds, as a single-GPU run's (rounds.py)

    @property
    def mode(self) -> str:
        return "cold" if self.cold else "warm"

    def options(self) -> dict:
        """The sweep, for the rows' options column."""
        return {"size": self.sizes, "dtype": [d.name for d in self.dtypes], "gpus": self.gpus,
                "rung": self.rung.name, "block": self.block, "sharded": self.sharded,
                "nccl_bytes": self.nccl_bytes, "mode": self.mode, "timing": "single",
                "inputs": self.inputs}


def parse_gpus(text: str, present: int) -> list[int]:
    """`all` (1 to every GPU present), or a comma list of counts. Counts past the GPUs
    present are kept: their cases are skipped with the reason."""
    if text.strip().lower() == "all":
        return list(range(1, max(present, 1) + 1))
    counts: list[int] = []
    for token in comma_list(text, "GPU count"):
        if not token.isdigit() or int(token) < 1:
            raise UsageError(f"--gpus {text!r}: expected counts of GPUs from 1 up "
                             "(e.g. 1,2) or all")
        if int(token) not in counts:
            counts.append(int(token))
    return counts


def launched_gpus(text: str, world_size: int, launcher: str) -> str:
    """--gpus under a launcher, as the GPU counts to measure: `all` (the default) is 1 and
    the world size (rank 0 alone first, for the speed-up: one_gpu.py), the world size
    alone leaves the one-GPU cases out. A case spans one rank or all of them: any other
    count is refused."""
    world = str(world_size)
    if text.strip().lower() == "all":
        return f"1,{world}"
    counts = parse_gpus(text, world_size)
    if world_size not in counts or not set(counts) <= {1, world_size}:
        raise UsageError(f"--gpus {text.strip()}: under {launcher} every case spans the "
                         f"world's {world} ranks, one GPU each, after rank 0 alone for the "
                         f"speed-up: give all (1,{world}) or {world}")
    return ",".join(map(str, sorted(counts)))


def settings_from_options(options: dict, present: int) -> MultiGpuSettings:
    """The `multigpu` command's options, each checked (UsageError names the bad one).
    `present` resolves --gpus all; before a GPU is opened, pass 1 to check the rest."""
    from reducebench.measuring.settings import (check_blocks_apply, check_seed, parse_blocks,
                                                parse_rounds, stop_rule)
    from reducebench.core.dtypes import parse_dtypes
    from reducebench.core.sizes import parse_sizes

    sharded, nccl = bool(options.get("sharded", True)), bool(options.get("nccl", False))
    if not sharded and not nccl:
        raise UsageError("--no-sharded without --nccl leaves nothing to measure")
    blocks = parse_blocks(options.get("block", 256))
    if len(blocks) != 1:
        raise UsageError(f"--block {options.get('block')}: one block size for the local rung")
    dtypes = parse_dtypes(options.get("dtype", "float32"))
    try:  # checked even without --nccl: a bad value is refused, never ignored
        nccl_bytes = parse_sizes(options.get("bytes", "2^10..2^30"))
    except UsageError as exc:
        raise UsageError(f"--bytes: {exc}") from None
    if not nccl:
        nccl_bytes = []
    for dtype in dtypes:
        collective_counts(nccl_bytes, dtype)
    limits = {"min_samples": "min_samples", "max_noise_pct": "max_noise",
              "max_time": "max_time"}
    stop = stop_rule({key: options[option] for key, option in limits.items()
                      if options.get(option) is not None})
    rung = local_rung(options.get("rung"))
    check_blocks_apply([rung], [rung.name] if options.get("rung") else [], blocks)
    return MultiGpuSettings(
        sizes=parse_sizes(options.get("size", "2^24")), dtypes=dtypes,
        gpus=parse_gpus(str(options.get("gpus", "all")), present),
        rung=rung, block=blocks[0], sharded=sharded,
        nccl_bytes=nccl_bytes, cold=bool(options.get("cold", True)),
        inputs=options.get("inputs", DEFAULT_INPUTS), seed=check_seed(options.get("seed")),
        stop=stop, rounds=parse_rounds(options.get("rounds", DEFAULT_ROUNDS)))


def collective_counts(nbytes: list[int], dtype: DType) -> list[int]:
    for size in nbytes:
        if size % dtype.itemsize:
            raise UsageError(f"--bytes {size} is not a whole number of {dtype.name} elements "
                             f"({dtype.itemsize} bytes each)")
    return [size // dtype.itemsize for size in nbytes]


def plan_cases(settings: MultiGpuSettings) -> list[MultiGpuCase]:
    """The timing floor for each k first, then the sharded sums (size, dtype, k: k = 1
    first, so later rows get their speed-up), then the NCCL reference cases for every
    k from 2 (over one GPU a collective moves nothing: nccl-tests' busbw is 0)."""
    cases: list[MultiGpuCase] = []
    if settings.floor:
        cases += [MultiGpuCase(FLOOR, settings.dtypes[0], 1, k) for k in settings.gpus]
    if settings.sharded:
        for n in settings.sizes:
            for dtype in settings.dtypes:
                for k in sorted(settings.gpus):
                    cases.append(MultiGpuCase(SHARDED, dtype, n, k, settings.rung,
                                              settings.block, params=dict(settings.rung.params)))
    for dtype in settings.dtypes if settings.nccl_bytes else []:
        for count in collective_counts(settings.nccl_bytes, dtype):
            for k in sorted(k for k in settings.gpus if k >= 2):
                for kind in COLLECTIVES:
                    for in_place in (False, True):
                        cases.append(MultiGpuCase(kind, dtype, count, k, in_place=in_place))
    return cases


def skip_reason(case: MultiGpuCase, present: int) -> str | None:
    if case.gpus > present:
        return f"needs {case.gpus} GPUs; this machine has {present}"
    if case.kind == SHARDED and case.rung is not None:
        if case.dtype.name not in case.rung.dtypes:
            return f"{case.rung.name} does not take {case.dtype.name}"
        if case.block not in case.rung.blocks:
            return f"{case.rung.name} does not take block {case.block}"
    return None


