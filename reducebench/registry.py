"""The ladder as data. One entry per rung: its source, kernel, launch geometry, dtypes,
block sizes, how partial sums become one value, and what it must read. The device layer
only follows these entries; nothing anywhere picks kernels with a switch."""

from __future__ import annotations

from dataclasses import dataclass, field

from reducebench.dtypes import DTYPES, DType
from reducebench.errors import UsageError
from reducebench.geometry import BLOCK_SIZES, PLANNERS, GridRule, Plan

ALL_DTYPES = tuple(DTYPES)
FULL_WORD_DTYPES = ("float32", "float64", "int32")  # rungs whose tree writes back into T
ALL_BLOCKS = BLOCK_SIZES
DEFAULT_BLOCK = 256


@dataclass(frozen=True)
class Rung:
    name: str
    title: str                     # one line for `list`
    finish: str                    # relaunch | atomic | single | library
    source: str | None = None      # file under cuda_src/
    kernel: str | None = None      # the __global__ function template
    template: str = "{T}, {Acc}, {block}"  # its template arguments
    grid: GridRule | None = None
    dtypes: tuple[str, ...] = ALL_DTYPES
    blocks: tuple[int, ...] = ALL_BLOCKS
    params: dict[str, int] = field(default_factory=dict)  # tunable, swept with --param
    in_place: bool = False         # reduces a scratch copy of the input
    deterministic: bool = True     # same bits on every run of the same input
    library: str | None = None     # cub | cupy | torch: a reference, not a kernel of ours
    max_elements: int | None = None  # refuse larger n with a clear message
    notes: str = ""                # shown by `show`

    @property
    def is_library(self) -> bool:
        return self.library is not None

    def bytes_read(self, n: int, dtype: DType) -> int:
        """The bytes any correct reduction must read: every input element once."""
        return n * dtype.itemsize

    def supports(self, dtype: DType, block: int) -> bool:
        return dtype.name in self.dtypes and (self.is_library or block in self.blocks)

    def name_expression(self, element_cpp: str, acc_cpp: str, block: int,
                        params: dict[str, int] | None = None) -> str:
        values = {**self.params, **(params or {})}
        args = self.template.format(T=element_cpp, Acc=acc_cpp, block=block, **values)
        return f"{self.kernel}<{args}>"

    def plan(self, n: int, block: int, sm_count: int,
             params: dict[str, int] | None = None) -> Plan:
        if self.is_library or self.grid is None:
            raise ValueError(f"{self.name} is a library reference and has no launch plan")
        if self.max_elements is not None and n > self.max_elements:
            raise UsageError(f"rung {self.name} handles at most {self.max_elements} elements, "
                             f"not {n}")
        values = {**self.params, **(params or {})}
        planner = PLANNERS[self.finish]
        plan = planner(n, block, sm_count, self.grid, values,
                       "scratch" if self.in_place else "input")
        if self.in_place:
            plan = Plan(plan.launches, plan.zero_result, plan.acc_buffers, scratch_copy=True)
        return plan


ONE_PER_THREAD = GridRule(per_thread=1)

RUNGS: tuple[Rung, ...] = (
    Rung("gmem", "in-place tree in global memory (on a scratch copy)", "relaunch",
         "01_gmem.cu", "reduce_gmem", grid=ONE_PER_THREAD, dtypes=FULL_WORD_DTYPES,
         in_place=True),
    Rung("smem_interleaved", "shared-memory tree, interleaved addressing, divergent branch",
         "relaunch", "02_smem_interleaved.cu", "reduce_smem_interleaved",
         grid=ONE_PER_THREAD),
    Rung("smem_strided", "interleaved addressing, strided index: no divergence, bank conflicts",
         "relaunch", "03_smem_strided.cu", "reduce_smem_strided", grid=ONE_PER_THREAD),
    Rung("smem_sequential", "shared-memory tree, sequential addressing", "relaunch",
         "04_smem_sequential.cu", "reduce_smem_sequential", grid=ONE_PER_THREAD),
    Rung("first_add", "half the blocks: first add during the global load", "relaunch",
         "05_first_add.cu", "reduce_first_add", grid=GridRule(per_thread=2)),
    Rung("unroll_last_warp", "last warp unrolled (with __syncwarp, safe from Volta on)",
         "relaunch", "06_unroll_last_warp.cu", "reduce_unroll_last_warp",
         grid=GridRule(per_thread=2), blocks=(64, 128, 256, 512, 1024)),
    Rung("complete_unroll", "block size a template parameter, every loop unrolled",
         "relaunch", "07_complete_unroll.cu", "reduce_complete_unroll",
         grid=GridRule(per_thread=2), blocks=(64, 128, 256, 512, 1024)),
    Rung("gmem_unroll4", "4 elements per thread, then the in-place global tree", "relaunch",
         "08_unroll4.cu", "reduce_gmem_unroll4", grid=GridRule(per_thread=4),
         dtypes=FULL_WORD_DTYPES, in_place=True),
    Rung("smem_unroll4", "4 elements per thread, then the shared-memory tree", "relaunch",
         "08_unroll4.cu", "reduce_smem_unroll4", grid=GridRule(per_thread=4)),
    Rung("multi_elem", "grid-stride loop over a bounded grid, then the shared tree",
         "relaunch", "09_multi_elem.cu", "reduce_multi_elem",
         grid=GridRule(blocks_per_sm="blocks_per_sm"), params={"blocks_per_sm": 8},
         blocks=(64, 128, 256, 512, 1024)),
    Rung("shfl", "warp shuffles (__shfl_down_sync), shared memory only across warps",
         "relaunch", "10_shfl.cu", "reduce_shfl", grid=ONE_PER_THREAD),
    Rung("shfl_unroll", "shfl with several elements per thread loaded first", "relaunch",
         "11_shfl_unroll.cu", "reduce_shfl_unroll", template="{T}, {Acc}, {block}, {unroll}",
         grid=GridRule(per_thread="unroll"), params={"unroll": 4}),
    Rung("shfl_xor", "butterfly with __shfl_xor_sync: every lane ends with the sum",
         "relaunch", "12_shfl_xor.cu", "reduce_shfl_xor", grid=ONE_PER_THREAD),
    Rung("warp_atomic", "warp reduction, one atomicAdd per warp", "atomic",
         "13_warp_atomic.cu", "reduce_warp_atomic", grid=ONE_PER_THREAD,
         deterministic=False),
    Rung("gridstride_atomic", "grid-stride loop, block reduction, one atomicAdd per block",
         "atomic", "14_gridstride_atomic.cu", "reduce_gridstride_atomic",
         grid=GridRule(blocks_per_sm="blocks_per_sm"), params={"blocks_per_sm": 8},
         deterministic=False),
    Rung("vector_load", "16-byte loads, several in flight, grid-stride, one atomic per block",
         "atomic", "15_vector_load.cu", "reduce_vector_load",
         template="{T}, {Acc}, {block}, {loads}",
         grid=GridRule(blocks_per_sm="blocks_per_sm"),
         params={"blocks_per_sm": 4, "loads": 4}, deterministic=False),
    Rung("single_pass", "one launch: the last block sums the partials (ticket), deterministic",
         "single", "16_single_pass.cu", "reduce_single_pass",
         template="{T}, {Acc}, {block}, {loads}",
         grid=GridRule(blocks_per_sm="blocks_per_sm"),
         params={"blocks_per_sm": 4, "loads": 4}),
    Rung("cub", "reference: CuPy's sum through CUB (cub::DeviceReduce)", "library",
         library="cub", dtypes=("float32", "float64", "int32", "float16")),
    Rung("cupy", "reference: CuPy's own reduction kernel, CUB off", "library",
         library="cupy", dtypes=("float32", "float64", "int32", "float16")),
    Rung("torch", "reference: torch.sum (skipped without PyTorch)", "library",
         library="torch"),
)

LADDER: dict[str, Rung] = {r.name: r for r in RUNGS}
REFERENCE = "cub"


def get_rung(name: str) -> Rung:
    if name not in LADDER:
        raise UsageError(f"unknown rung {name!r}; accepted: {', '.join(LADDER)} or all")
    return LADDER[name]


def parse_rungs(text: str | list) -> list[Rung]:
    """Names or `all`, in ladder order as given."""
    items = text if isinstance(text, list) else str(text).split(",")
    names = [str(i).strip() for i in items if str(i).strip()]
    if not names:
        raise UsageError(f"no rung given; accepted: {', '.join(LADDER)} or all")
    chosen: list[Rung] = []
    for name in names:
        for rung in RUNGS if name == "all" else [get_rung(name)]:
            if rung not in chosen:
                chosen.append(rung)
    return chosen
