"""The ladder as data. One entry per rung: its source, kernel, launch geometry, dtypes,
block sizes, how partial sums become one value, and what it must read. The device layer
only follows these entries; nothing anywhere picks kernels with a switch."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from reducebench.core.choices import comma_list, did_you_mean
from reducebench.core.dtypes import DTYPES, DType
from reducebench.core import defaults
from reducebench.core.errors import UsageError
from reducebench.ladder.geometry import (BLOCK_SIZES, PLANNERS, SPLIT_ATOMIC, SPLIT_CLUSTER,
                                         SPLIT_TWO_PASS, WHOLE_BLOCK, GridRule, plan_rows,
                                         plan_split_rows, plan_tiled_rows)
from reducebench.ladder.plan import Plan

ALL_DTYPES = tuple(DTYPES)
FULL_WORD_DTYPES = ("float32", "float64", "int32")  # rungs whose tree writes back into T
ALL_BLOCKS = BLOCK_SIZES
DEFAULT_BLOCK = defaults.BLOCK

def library_chain(n: int, threads: int | None = None) -> int:
    """How many elements one thread of a library reduction adds in sequence: n / threads
    where the registry knows its thread count (CuPy's own kernel sums a whole array with
    one block of 512), else sqrt(n), more than CUB or PyTorch use."""
    if threads:
        return max(1, -(-n // threads))
    return max(1, math.isqrt(n))


@dataclass(frozen=True)
class Rung:
    name: str
    title: str                     # one line for `list`
    finish: str                    # relaunch | atomic | single | pingpong | library
    source: str | None = None      # file under cuda_src/
    kernel: str | None = None      # the __global__ function template
    template: str | None = "{T}, {Acc}, {block}"  # its template arguments; None: not a template
    grid: GridRule | None = None
    dtypes: tuple[str, ...] = ALL_DTYPES
    blocks: tuple[int, ...] = ALL_BLOCKS
    params: dict[str, int] = field(default_factory=dict)  # tunable, swept with --param
    in_place: bool = False         # reduces a scratch copy of the input
    deterministic: bool = True     # same bits on every run of the same input
    library: str | None = None     # cub, cupy, torch, triton_*, callable: not our kernel
    atomic_scope: str = "block"    # "warp": one atomic per warp, not per block
    library_threads: int | None = None  # threads a library reduction sums with, if known
    notes: str = ""                # shown by `show`
    origin: str = "ladder"         # ladder: a file under cuda_src/; user, callable: a path
    # Sampled in this many phases, one untimed call apart, the fastest phase reported:
    # for a library whose time depends on the parity of its calls (cub; see notes).
    phases: int = 1
    # Runs another rung per case, chosen once the GPU is known (auto: its tuning table;
    # runner.run resolves it through tuning.resolve_auto_cases before planning).
    dispatch: bool = False
    # origin "callable": the user's Python function, resolved (callables.UserCallable);
    # library is then "callable" and source the file it came from.
    callable_ref: object | None = None
    # False: left out of `--rung all` (the default), measured only when named
    # (`--rung all,cupy`): a reference too slow to time on every run.
    in_all: bool = True
    # A row rung (finish "rows"): the threads that share a row, a number, a parameter's
    # name or WHOLE_BLOCK (geometry.lanes_per_row).
    lanes_per_row: int | str | None = None
    # A row rung whose rows are shared by several blocks: how their parts become the
    # row's sum (geometry.SPLIT_ATOMIC, SPLIT_TWO_PASS or SPLIT_CLUSTER); None: one
    # block holds whole rows.
    row_split: str | None = None
    # A row rung whose groups of lanes each own several rows (row_multi): the parameter
    # that says how many; a block then owns block / lanes x that many rows.
    group_rows: str | None = None
    # A row rung whose blocks each read their rows as one tile (row_tile): a block owns
    # as many whole rows as fit its tile (geometry.plan_tiled_rows), lanes_per_row unused.
    tiled: bool = False
    # The least compute capability the kernel runs on, and what it needs there (a case
    # on an older GPU is skipped, saying so): e.g. (9, 0) for thread-block clusters.
    min_cc: tuple[int, int] | None = None
    min_cc_for: str = ""

    @property
    def is_library(self) -> bool:
        return self.library is not None

    def name_expression(self, element_cpp: str, acc_cpp: str, block: int,
                        params: dict[str, int] | None = None) -> str:
        if self.template is None:  # extern "C" or a plain function: its own name
            return str(self.kernel)
        values = {**self.params, **(params or {})}
        args = self.template.format(T=element_cpp, Acc=acc_cpp, block=block, **values)
        return f"{self.kernel}<{args}>"

    def plan(self, n: int, dtype: DType, block: int, sm_count: int,
             params: dict[str, int] | None = None, rows: int = 1) -> Plan:
        """The one plan of a case: its launches and buffers, the shape of its summation,
        and the bytes any correct reduction must read (every input element once). A row
        rung reduces the n elements as `rows` rows of n / rows."""
        bytes_read = n * dtype.itemsize
        if self.dispatch:
            raise UsageError(f"{self.name} chooses its rung per case; resolve it first "
                             "(tuning.resolve_auto_cases)")
        if self.finish == ROWS and self.is_library:  # one value a row, from the library
            return Plan(library=self.library, bytes_read=bytes_read,
                        chain=library_chain(n // rows, self.library_threads), row_outputs=rows)
        if self.finish == ROWS and self.row_split:
            values = {**self.params, **(params or {})}
            acc_itemsize = 8 if dtype.acc_cpp == "double" else 4
            return replace(plan_split_rows(rows, n // rows, block, sm_count, self.row_split,
                                           values, itemsize=dtype.itemsize,
                                           acc_itemsize=acc_itemsize),
                           bytes_read=bytes_read)
        if self.finish == ROWS and self.tiled:
            values = {**self.params, **(params or {})}
            return replace(plan_tiled_rows(rows, n // rows, block, values,
                                           itemsize=dtype.itemsize), bytes_read=bytes_read)
        if self.finish == ROWS:
            values = {**self.params, **(params or {})}
            return replace(plan_rows(rows, n // rows, block, self.lanes_per_row, values,
                                     self.group_rows),
                           bytes_read=bytes_read)
        if self.is_library or self.grid is None:
            return Plan(library=self.library, bytes_read=bytes_read,
                        chain=library_chain(n, self.library_threads))
        values = {**self.params, **(params or {})}
        plan = PLANNERS[self.finish](n, block, sm_count, self.grid, values,
                                     "scratch" if self.in_place else "input",
                                     itemsize=dtype.itemsize)
        atomics = plan.atomics * block // WARP_SIZE if self.atomic_scope == "warp" \
            else plan.atomics
        return replace(plan, scratch_copy=self.in_place, atomics=atomics,
                       bytes_read=bytes_read)


WARP_SIZE = 32
ROWS = "rows"  # the finish of a row rung: one value per row, one launch (ladder/plan.ROW_SUMS)
ONE_PER_THREAD = GridRule(per_thread=1)
# Vector rungs: each thread's iteration reads `loads` 16-byte vectors (4 floats or ints;
# counting 4 elements per vector keeps the cap right for 4-byte types and generous for
# the others). Defaults tuned on the H100: docs/performance.md.
VECTOR_GRID = GridRule(blocks_per_sm="blocks_per_sm", work="loads", work_scale=4)

RUNGS: tuple[Rung, ...] = (
    Rung("gmem", "in-place tree in global memory (on a scratch copy)", "relaunch",
         "01_gmem.cu", "reduce_gmem", grid=ONE_PER_THREAD, dtypes=FULL_WORD_DTYPES,
         in_place=True,
         notes=("The simplest tree: each block owns BLOCK elements and halves them in place, "
                "in global memory, with a __syncthreads() between the log2(BLOCK) steps. It "
                "runs on a scratch copy because it overwrites its input with partial sums. "
                "Every step is a round trip through L1/L2, which is what the later rungs "
                "remove. The block totals are reduced by launching the same kernel again on "
                "them until one value is left.")),
    Rung("smem_interleaved", "shared-memory tree, interleaved addressing, divergent branch",
         "relaunch", "02_smem_interleaved.cu", "reduce_smem_interleaved",
         grid=ONE_PER_THREAD,
         notes=("Each thread copies one element into shared memory once, and the tree runs "
                "there. At the step of stride s only threads whose index is a multiple of 2s "
                "work, so every warp keeps a few active lanes and the rest idle (warp "
                "divergence), and the % costs extra instructions. It is the baseline the next "
                "three rungs improve step by step.")),
    Rung("smem_strided", "interleaved addressing, strided index: no divergence, bank conflicts",
         "relaunch", "03_smem_strided.cu", "reduce_smem_strided", grid=ONE_PER_THREAD,
         notes=("The same pairs as smem_interleaved, but thread t handles the pair at 2*s*t, "
                "so the working threads are packed at the front and whole warps retire "
                "together: no divergence. The price is shared-memory bank conflicts: "
                "consecutive threads touch words 2s apart, several fall in the same bank, and "
                "those accesses are serialised. "
                "Compare its time with smem_interleaved and smem_sequential to see each cost "
                "on its own.")),
    Rung("smem_sequential", "shared-memory tree, sequential addressing", "relaunch",
         "04_smem_sequential.cu", "reduce_smem_sequential", grid=ONE_PER_THREAD,
         notes=("Sequential addressing: at each step the first s threads add the element s "
                "places on. Active threads are contiguous (no divergence) and a warp touches "
                "32 consecutive words (no bank conflicts). Half the threads still go idle "
                "after the very first step, and the block does one element per thread, which "
                "the next rungs address.")),
    Rung("first_add", "half the blocks: first add during the global load", "relaunch",
         "05_first_add.cu", "reduce_first_add", grid=GridRule(per_thread=2),
         notes=("Each block covers 2*BLOCK elements and every thread adds two of them while "
                "loading, before the shared-memory tree. The grid halves, and the threads "
                "that would have idled after the first tree step now do useful work. Both "
                "loads are bounds-checked, so the last block may be partly empty.")),
    Rung("unroll_last_warp", "last warp unrolled (with __syncwarp, safe from Volta on)",
         "relaunch", "06_unroll_last_warp.cu", "reduce_unroll_last_warp",
         grid=GridRule(per_thread=2), blocks=(64, 128, 256, 512, 1024),
         notes=("Once 64 partial sums remain, warp 0 finishes the tree alone with six "
                "unrolled steps and no block barrier. The classic form relied on warp "
                "lockstep and volatile; from Volta on lanes may drift apart, so each step "
                "here is read, __syncwarp(), write, __syncwarp(). Needs BLOCK >= 64.")),
    Rung("complete_unroll", "block size a template parameter, every loop unrolled",
         "relaunch", "07_complete_unroll.cu", "reduce_complete_unroll",
         grid=GridRule(per_thread=2), blocks=(64, 128, 256, 512, 1024),
         notes=("With BLOCK a template parameter, every tree step is an if constexpr on "
                "BLOCK: the compiler emits exactly the steps this block size needs, with "
                "constant offsets and no loop counter or exit branch. The last warp works as "
                "in unroll_last_warp (with __syncwarp). It mostly saves instructions, so the "
                "gain is small once memory bound.")),
    Rung("gmem_unroll4", "4 elements per thread, then the in-place global tree", "relaunch",
         "08_unroll4.cu", "reduce_gmem_unroll4", grid=GridRule(per_thread=4),
         dtypes=FULL_WORD_DTYPES, in_place=True,
         notes=("Each thread first adds four elements, one from each of four BLOCK-sized "
                "quarters of the block's span, then the in-place global-memory tree of gmem "
                "runs on the sums. Four independent loads per thread overlap their latency "
                "and the grid shrinks fourfold. Compare with smem_unroll4 to see what the "
                "shared-memory tree is worth.")),
    Rung("smem_unroll4", "4 elements per thread, then the shared-memory tree", "relaunch",
         "08_unroll4.cu", "reduce_smem_unroll4", grid=GridRule(per_thread=4),
         notes=("Four elements per thread as in gmem_unroll4, then the complete-unrolled "
                "shared-memory tree of complete_unroll. With four loads in flight per thread "
                "and a quarter of the blocks, this is where the shared-memory rungs get close "
                "to memory bandwidth. "
                "Threads past the end of the input add zeros, so the last block may be partly "
                "empty.")),
    Rung("multi_elem", "grid-stride loop over a bounded grid, then the shared tree",
         "relaunch", "09_multi_elem.cu", "reduce_multi_elem",
         grid=GridRule(blocks_per_sm="blocks_per_sm"), params={"blocks_per_sm": 8},
         blocks=(64, 128, 256, 512, 1024),
         notes=("Harris's last step: a bounded grid (blocks_per_sm blocks per multiprocessor) "
                "whose threads walk the whole input with a grid-stride loop, summing many "
                "elements each in a register, then one complete-unrolled shared tree per "
                "block. The tree and per-block costs are paid a few thousand times in all "
                "instead of once per few hundred elements, and the re-launch only has a few "
                "thousand partials to sum. "
                "Each iteration adds two elements BLOCK apart, as in Harris's version.")),
    Rung("shfl", "warp shuffles (__shfl_down_sync), shared memory only across warps",
         "relaunch", "10_shfl.cu", "reduce_shfl", grid=ONE_PER_THREAD,
         notes=("Inside a warp, lanes add each other's registers with __shfl_down_sync: five "
                "steps, no shared memory, no barrier. Shared memory holds only the BLOCK/32 "
                "warp totals, which warp 0 sums with shuffles again. Threads past the end "
                "hold 0 rather than return, since a full-mask shuffle needs all 32 lanes.")),
    Rung("shfl_unroll", "shfl with several elements per thread loaded first", "relaunch",
         "11_shfl_unroll.cu", "reduce_shfl_unroll", template="{T}, {Acc}, {block}, {unroll}",
         grid=GridRule(per_thread="unroll"), params={"unroll": 4},
         notes=("Each thread loads `unroll` elements, BLOCK apart so every warp load is "
                "coalesced, into registers before adding any, then the shuffle block sum of "
                "shfl. The independent loads are all in flight at once, and the grid is "
                "`unroll` times smaller. "
                "Raise the unroll parameter to trade registers for more loads in flight.")),
    Rung("shfl_xor", "butterfly with __shfl_xor_sync: every lane ends with the sum",
         "relaunch", "12_shfl_xor.cu", "reduce_shfl_xor", grid=ONE_PER_THREAD,
         notes=("A butterfly: __shfl_xor_sync pairs lane l with lane l^m for m = 16..1, both "
                "sides add, and after five steps every lane holds the warp total, not just "
                "lane 0. The cost is the same as shfl; the gain is an all-reduce, useful when "
                "every thread needs the sum. "
                "Both lanes of a pair compute the same float sum, so every lane holds the "
                "same bits.")),
    Rung("warp_atomic", "warp reduction, one atomicAdd per warp", "atomic",
         "13_warp_atomic.cu", "reduce_warp_atomic", grid=ONE_PER_THREAD,
         deterministic=False, atomic_scope="warp",
         notes=("Each warp sums with shuffles and its lane 0 atomically adds the total to one "
                "accumulator that was zeroed before the launch: no shared memory, no block "
                "barrier, no re-launch. But that is n/32 atomics on one address, which the "
                "memory system handles one after another, so for large n the atomics become "
                "the bottleneck. Float results depend on the order of the atomics.")),
    Rung("gridstride_atomic", "grid-stride loop, block reduction, one atomicAdd per block",
         "atomic", "14_gridstride_atomic.cu", "reduce_gridstride_atomic",
         grid=GridRule(blocks_per_sm="blocks_per_sm"), params={"blocks_per_sm": 8},
         deterministic=False,
         notes=("A bounded grid walks the input with a grid-stride loop, each thread keeping "
                "a running sum; then a shuffle block sum and one atomicAdd per block into a "
                "zeroed accumulator. One launch, a few hundred atomics in all, and many loads "
                "per thread. Float atomics make the low bits depend on the order blocks "
                "finish in.")),
    Rung("vector_load", "16-byte loads, several in flight, grid-stride, one atomic per block",
         "atomic", "15_vector_load.cu", "reduce_vector_load",
         template="{T}, {Acc}, {block}, {loads}, {l2_prefetch}", grid=VECTOR_GRID,
         params={"blocks_per_sm": 8, "loads": 4, "l2_prefetch": 0}, deterministic=False,
         notes=("The grid-stride loop of gridstride_atomic with 16-byte loads (float4, int4, "
                "double2, or 8 halves as a uint4) and `loads` of them issued per thread "
                "before any add. Fewer load instructions for the same bytes and more bytes in "
                "flight per thread keep DRAM busy; scalar loads handle the elements before "
                "the first 16-byte boundary and after the last whole vector. Half types are "
                "converted to float before they are added.")),
    Rung("single_pass", "one launch: the last block sums the partials (ticket), deterministic",
         "single", "16_single_pass.cu", "reduce_single_pass",
         template="{T}, {Acc}, {block}, {loads}, {l2_prefetch}", grid=VECTOR_GRID,
         params={"blocks_per_sm": 8, "loads": 4, "l2_prefetch": 0},
         notes=("The vectorised body of vector_load, finished without a float atomic: each "
                "block writes its partial to a workspace, fences, and takes a ticket with an "
                "integer atomicAdd; the block with the last ticket adds all partials in a "
                "fixed order, writes the result and resets the ticket to 0. One launch, no "
                "zeroing, and the same bits on every run. "
                "The fences matter: a block's partial must reach device memory before its "
                "ticket does, or the last block could read a stale value.")),
    Rung("pingpong", "vector_load without the memset: each launch zeroes the next one's "
         "accumulator", "pingpong", "17_pingpong.cu", "reduce_pingpong",
         template="{T}, {Acc}, {block}, {loads}, {l2_prefetch}", grid=VECTOR_GRID,
         params={"blocks_per_sm": 8, "loads": 4, "l2_prefetch": 0}, deterministic=False,
         notes=("vector_load's body and its one atomicAdd per block, but no cudaMemsetAsync "
                "before the launch: the harness keeps two accumulators and swaps them after "
                "every launch, and each launch zeroes, from block 0, the one the next launch "
                "will add into. The memset is a separate operation on the stream; on the "
                "H100 it costs about 0.75 us, which matters most at small n. The price is "
                "state between launches: the pair must be zeroed once at allocation and "
                "used by one stream in order.")),
    Rung("one_block", "small n: one block reads everything and stores the result, one launch",
         "relaunch", "18_one_block.cu", "reduce_one_block",
         template="{T}, {Acc}, {block}, {loads}", grid=GridRule(fixed=1),
         params={"loads": 4},
         notes=("A single block walks the whole input with vector_load's body (16-byte "
                "loads, `loads` in flight per thread), sums it with the shuffle block sum "
                "and stores the total: no atomic, no memset, no second launch, the same "
                "bits every run. It is what CUB does below about 2^12 elements (one "
                "single-block launch). One multiprocessor streams it all, so its time grows "
                "with n; `auto` uses it only where `reducebench tune` found it fastest.")),
    Rung("one_shot", "pingpong's finish, no loop: one block per tile, like the fastest read",
         "pingpong", "19_one_shot.cu", "reduce_one_shot",
         template="{T}, {Acc}, {block}, {loads}, {l2_prefetch}",
         grid=GridRule(per_thread_vectors="loads"),
         params={"loads": 4, "l2_prefetch": 0}, deterministic=False,
         notes=("pingpong's body and finish without its grid-stride loop: the grid has one "
                "block per tile of block x `loads` 16-byte vectors, each thread issues its "
                "loads once, adds them pairwise, and the block adds its total with one "
                "atomicAdd (block 0 zeroes the next launch's accumulator, as in pingpong). "
                "It is the shape of the fastest pure read in cuda_src/ceiling.cu: the block "
                "scheduler gives each freed slot the next tile, so the read streams in "
                "order to the end instead of in lock-step sweeps of a persistent grid. The "
                "price is one atomic per tile (65,536 at 2^30 float32 with 1024 x 4) and "
                "a block's start-up per tile.")),
    Rung("auto", "the top rung: per size, the variant the GPU's tuning file chooses", "auto",
         template=None, dispatch=True, deterministic=False,
         notes=("Like a library's own dispatch: for each case the tuning table of this GPU "
                "(yours, $XDG_CONFIG_HOME/reducebench/tuning/<gpu>.toml, else the shipped "
                "configs/tuning/ copy, else built-in defaults) gives the rung, block size and "
                "parameters for that size, and the case runs exactly as that rung would. The "
                "`variant` column says which ran and where the choice came from; "
                "`reducebench tune` writes the table (docs/tuning.md). Deterministic when "
                "the variant is (one_block, single_pass).")),
    Rung("triton_atomic", "reference: Triton, grid-stride, one atomic per program", "library",
         library="triton_atomic", deterministic=False,
         notes=("The sum as a Triton user writes it (reducebench/triton_sum.py): 4 programs "
                "per SM of 8 warps walk the input with a grid-stride loop over 4096-element "
                "tiles, each lane keeping a running sum; tl.sum reduces the program and one "
                "tl.atomic_add adds its total. Triton chooses the vector widths and the "
                "in-program tree, so this shows what the compiler makes of gridstride_atomic's "
                "design. Skipped when Triton (and PyTorch) is not installed.")),
    Rung("triton_two_pass", "reference: Triton, per-program partials, then one program",
         "library", library="triton_two_pass",
         notes=("The same grid-stride loop, but each program stores its total, and a second "
                "launch of one program sums the partials: deterministic, for the price of a "
                "second launch (reducebench/triton_sum.py). Skipped without Triton.")),
    Rung("cub", "reference: CuPy's sum through CUB (cub::DeviceReduce)", "library",
         library="cub", dtypes=("float32", "float64", "int32"), phases=2,
         notes=("The reference: CuPy's sum routed through CUB's DeviceReduce, NVIDIA's "
                "tuned library reduction, which picks its tile sizes and vector widths per "
                "architecture. It is the speed the hand-written rungs are measured against. "
                "Matching it means reaching the same fraction of DRAM bandwidth with a kernel "
                "of a few dozen lines. "
                "On the H100 its time alternates between two levels with the parity of the "
                "number of calls made so far (1 us apart at 2^24), so it is sampled twice, "
                "one untimed call apart, and the faster phase is reported.")),
    Rung("cupy", "reference: CuPy's generic reduction, CUB off, one block (not in all)",
         "library", library="cupy", library_threads=512,
         dtypes=("float32", "float64", "int32", "float16"), in_all=False,
         notes=("CuPy's own generated reduction kernel with CUB switched off. For a sum of "
                "the whole array to one value, that generic kernel runs as a single block "
                "of 512 threads on one multiprocessor: the H100 counters show one kernel "
                "with a grid of 1 (ncu_grids 1), 25% achieved occupancy on that SM and "
                "0.05% SM throughput across the chip "
                "(results/h100/metrics_f32_d016c49.csv). Its time therefore measures one "
                "SM streaming the whole input (12,208 us at 2^24 float32 on the H100, "
                "against CUB's 27.81 us, results/h100/default_f32_803a10d.csv), not how "
                "far a generic array-library reduction is from a specialised one: "
                "torch.sum, also generic, is next to CUB. "
                "Left out of `--rung all` (the default): at 2^24 a sample takes about "
                "12 ms, and in that run its 41 samples were 0.50 s of the 1.23 s that the "
                "timed samples of all 25 cases took (samples x median). Name it to "
                "measure it: --rung all,cupy or --rung cupy.")),
    Rung("torch", "reference: torch.sum (skipped without PyTorch)", "library",
         library="torch",
         notes=("torch.sum on the same data, as a second library reference; skipped when "
                "PyTorch is not installed. PyTorch uses its own reduction kernels (not CUB) "
                "with vectorised loads and several accumulators per thread, so it shows "
                "another tuned design next to CUB. "
                "Half types are summed in float there too.")),
)

LADDER: dict[str, Rung] = {r.name: r for r in RUNGS}

# The row ladder: rungs that reduce each row of a row-major ROWS x COLS array to one value
# (`run --shape`), one launch each, the result buffer holding one value per row. Its
# kernels are a ladder of their own, in cuda_src/rows/, numbered in its order.
ROW_RUNGS: tuple[Rung, ...] = (
    Rung("row_thread", "rows: a thread per row, a sequential loop", ROWS,
         "rows/01_thread.cu", "reduce_rows_thread", lanes_per_row=1,
         notes=("Each thread owns one row and adds its COLS elements in order in a register, "
                "then writes the row's sum: no shuffle, no shared memory, no barrier. The "
                "baseline of the row ladder, for very narrow rows, where cooperating costs "
                "more than it shares. A warp's loads lie COLS elements apart, so they "
                "coalesce only for narrow rows.")),
    Rung("row_group", "rows: a group of `width` lanes per row, width-limited shuffles", ROWS,
         "rows/02_group.cu", "reduce_rows_group", template="{T}, {Acc}, {block}, {width}",
         params={"width": 8}, lanes_per_row="width",
         notes=("`width` consecutive lanes of a warp share a row (2 to 16, a power of two): "
                "lane k adds elements k, k + width, ..., and __shfl_down_sync with its width "
                "argument sums each group on its own, log2(width) steps, the group's first "
                "lane writing the row's sum. A warp load covers 32 / width rows in whole "
                "segments, for rows of a few dozen elements.")),
    Rung("row_warp", "rows: a warp per row, several rows per block", ROWS,
         "rows/03_warp.cu", "reduce_rows_warp", lanes_per_row=WARP_SIZE,
         notes=("A warp shares a row: lane k adds elements k, k + 32, ..., then five "
                "full-warp shuffles leave the row's sum in lane 0. A block holds block / 32 "
                "rows, and warps never wait for each other. Each warp load reads 32 "
                "consecutive elements of one row.")),
    Rung("row_block", "rows: a block per row, warp sums through shared memory", ROWS,
         "rows/04_block.cu", "reduce_rows_block", lanes_per_row=WHOLE_BLOCK,
         notes=("A block shares a row, as PyTorch's BlockReduceSum: thread t adds elements "
                "t, t + block, ..., each warp sums with shuffles, the warp totals meet in "
                "shared memory after one barrier and warp 0 adds them. For wide rows, "
                "where one warp per row leaves too few loads in flight.")),
    Rung("row_vec_group", "rows: `lanes` lanes per row, 16-byte loads, `loads` in flight",
         ROWS, "rows/05_vec_group.cu", "reduce_rows_vec_group",
         template="{T}, {Acc}, {block}, {lanes}, {loads}", params={"lanes": 1, "loads": 4},
         lanes_per_row="lanes",
         notes=("row_group with 16-byte loads: `lanes` consecutive lanes (1 to 32, a power "
                "of two) share a row, lane k reading the row's vectors k, k + lanes, ..., "
                "`loads` of them issued before the first add, so consecutive lanes read "
                "consecutive 16 bytes and a narrow row is a few vector loads. Each row's "
                "elements before its first 16-byte boundary and after its last whole vector "
                "(odd COLS, or COLS x element size not a multiple of 16) are read one by "
                "one. lanes = the row's vectors (1 for 4 floats, 2 for 8, 32 for a warp a "
                "row) keeps every load of a warp on whole 32-byte sectors.")),
    Rung("row_vec_block", "rows: a block per row, 16-byte loads, `loads` in flight", ROWS,
         "rows/06_vec_block.cu", "reduce_rows_vec_block",
         template="{T}, {Acc}, {block}, {loads}, {evict_first}",
         params={"loads": 4, "evict_first": 0}, lanes_per_row=WHOLE_BLOCK,
         notes=("row_block with 16-byte loads: thread t reads the row's vectors t, t + "
                "block, ..., `loads` of them in flight, then the same block sum through "
                "shared memory. A quarter (an eighth for half types) of the load "
                "instructions of row_block for the same bytes, and `loads` x 16 bytes asked "
                "for per thread before it waits. An unaligned row's head and tail are read "
                "one element a thread. `evict_first=1` gives the loads the streaming hint "
                "(as row_multi's).")),
    Rung("row_split", "rows: several blocks per row, one atomicAdd per block, no memset",
         ROWS, "rows/07_split.cu", "reduce_rows_split",
         template="{T}, {Acc}, {block}, {loads}, {l2_prefetch}, {evict_first}",
         params={"blocks_per_sm": 16, "loads": 4, "l2_prefetch": 1, "evict_first": 0},
         lanes_per_row=WHOLE_BLOCK, row_split=SPLIT_ATOMIC, deterministic=False,
         notes=("For few long rows, where a block per row leaves most of the GPU idle: "
                "each row is shared by enough blocks that the grid has blocks_per_sm "
                "blocks per multiprocessor (blocks_per_sm x SMs / ROWS, never more than "
                "the row has tiles of block x `loads` vectors). Block b sums part b % "
                "splits of row b / splits with row_vec_block's body, the row's tiles "
                "dealt round-robin to its parts, and adds its total to out[row] with one "
                "atomicAdd. No memset runs before it: as the 1-D pingpong rung, it adds "
                "into sums the previous launch zeroed, and each row's first block zeroes "
                "the row's slot of the other buffer for the next launch. Float atomics "
                "make the result depend on the order blocks finish in: not "
                "deterministic. `evict_first=1` gives the loads the streaming hint (as "
                "row_multi's).")),
    Rung("row_two_pass", "rows: several blocks per row, partials, then a second launch",
         ROWS, "rows/08_two_pass.cu", "reduce_rows_two_pass",
         template="{T}, {Acc}, {block}, {loads}", params={"blocks_per_sm": 8, "loads": 4},
         lanes_per_row=WHOLE_BLOCK, row_split=SPLIT_TWO_PASS,
         notes=("row_split's grid without atomics: block b writes its part's sum to "
                "partials[row][part], and a second launch of the same kernel sums each "
                "row's partials (a row of `splits` accumulators, a block per row) into "
                "out[row]. No zeroing and the same bits on every run, for the price of a "
                "second launch; where one block per row already fills the GPU the first "
                "launch writes out itself.")),
    Rung("row_cluster", "rows: a thread-block cluster per row, sums met in distributed shared "
         "memory", ROWS, "rows/09_cluster.cu", "reduce_rows_cluster",
         template="{T}, {Acc}, {block}, {cluster}, {loads}", params={"cluster": 8, "loads": 4},
         lanes_per_row=WHOLE_BLOCK, row_split=SPLIT_CLUSTER, min_cc=(9, 0),
         min_cc_for="thread-block clusters",
         notes=("Hopper's thread-block clusters: the `cluster` blocks of a cluster (2 to "
                "8, the portable most, compiled in with __cluster_dims__) share a row, "
                "each summing its part as row_split does; block 0 of the cluster reads "
                "the others' totals from "
                "their shared memory (distributed shared memory, map_shared_rank, between "
                "two cluster.sync()) and writes out[row]. One launch, no zeroing, no "
                "atomics, the same bits every run. Needs compute capability 9.0 or later; "
                "on an older GPU its cases are skipped.")),
    Rung("row_tile", "rows: a block's rows read as one tile of 16-byte loads, summed "
         "from shared memory", ROWS, "rows/10_tile.cu", "reduce_rows_tile",
         template="{T}, {Acc}, {block}, {loads}, {l2_prefetch}, {evict_first}",
         params={"loads": 4, "l2_prefetch": 0, "evict_first": 0}, tiled=True,
         notes=("For narrow rows and rows of any alignment: a block owns as many whole "
                "consecutive rows as fit a tile of block x `loads` 16-byte vectors (at most "
                "32 KB), reads them as one span (thread t loads vectors t, t + block, ..., "
                "all `loads` in flight, as the 1-D one-shot read does) into shared memory, "
                "and after one barrier sums each row there with a group of lanes (the "
                "most, a power of two up to 32, that give each of the block's rows a group "
                "at once; one a row where the rows outnumber the threads) and width-limited "
                "shuffles. A row's alignment does not matter: only the span's two ends are "
                "read one element at a time. `evict_first=1` gives the tile's loads the "
                "streaming hint (as row_multi's). Rows wider than the tile are skipped.")),
    Rung("row_multi", "rows: `lanes` lanes per row, `group_rows` rows a group, all their "
         "loads in flight", ROWS, "rows/11_multi.cu", "reduce_rows_multi",
         template="{T}, {Acc}, {block}, {lanes}, {group_rows}, {loads}, {l2_prefetch}, "
                  "{evict_first}",
         params={"lanes": 4, "group_rows": 1, "loads": 1, "l2_prefetch": 1, "evict_first": 0},
         lanes_per_row="lanes",
         group_rows="group_rows",
         notes=("For narrow rows whose starts lie on 16-byte boundaries (COLS x element "
                "size a multiple of 16): row_vec_group's groups of `lanes` lanes, each "
                "group owning `group_rows` rows (lane k: the row's vectors k, k + lanes, "
                "..., `loads` of each). The block's rows are dealt so that each round of "
                "its loads reads one contiguous span (group g has rows g, g + groups, "
                "...). Where lanes x loads = the row's vectors and the block's rows all "
                "exist (the fast path) a group issues the loads of all its rows before it "
                "adds any, each at a constant offset, and a block reads as the 1-D one-shot "
                "read does, `group_rows` x `loads` x block x 16 bytes in one go; other rows "
                "are read one after another (with one row a group, an aligned row as one "
                "round of `loads` and the rest after). `lanes=0` takes the lanes that make "
                "a row exactly one round of loads; `evict_first=1` gives its loads the "
                "streaming hint of the H200's fastest same-shape read.")),
    Rung("row_auto", "rows: per shape, the row rung the GPU's tuning file chooses", ROWS,
         template=None, dispatch=True, deterministic=False,
         notes=("The row ladder's `auto`: for each shape the tuning file of this GPU (its "
                "row bands, written by `reducebench tune --shapes`; else the built-in row "
                "defaults) gives the row rung, block size and parameters for "
                "that band of COLS and total size, and the case runs exactly as that rung "
                "would. The `variant` column says which ran and where the choice came "
                "from (docs/tuning.md); deterministic when the variant is.")),
    Rung("torch_rows", "reference: torch.sum(x, dim=1) (skipped without PyTorch)", ROWS,
         library="torch_rows",
         notes=("torch.sum(x, dim=1, dtype=Acc) on the same device buffer viewed as ROWS x "
                "COLS (no copy, through DLPack), on the run's stream: what a PyTorch user "
                "writes for a batch of rows. PyTorch picks its own reduction kernel and "
                "launch shape per shape. Skipped when PyTorch is not installed.")),
    Rung("cub_rows", "reference: CUB's segmented sum through CuPy "
         "(cub::DeviceSegmentedReduce)", ROWS, library="cub_rows",
         dtypes=("float32", "float64", "int32"),
         notes=("cub::DeviceSegmentedReduce::Sum through CuPy's CUB binding "
                "(cupy.cuda.cub.cub_reduction over axis 1 of the buffer viewed as ROWS x "
                "COLS, called directly, so that a fall-back to another kernel is never "
                "reported as CUB), on the run's stream: NVIDIA's library answer to one sum "
                "a segment, the rows being ROWS segments of COLS elements. CUB sums in the "
                "input type there, which is the accumulator for float32, float64 and "
                "int32; float16 would come back in half precision and CuPy has no "
                "bfloat16, so both are left out. Skipped where CuPy has no CUB or the "
                "array holds more than 2^31-1 elements (CuPy's binding counts in int).")),
    Rung("triton_rows", "reference: Triton, a program per block of rows, looping over COLS",
         ROWS, library="triton_rows",
         notes=("The row sum as a Triton user writes it (reducebench/device/triton_sum.py): "
                "each program owns a tile of rows x columns (columns: COLS rounded up to a "
                "power of two, at most 4096; rows: as many as fill a tile of 4096 "
                "elements), walks COLS tile by tile keeping a running sum per element in "
                "the accumulator type, and tl.sum reduces each row's lanes into its slot: "
                "one launch, no atomics, the same bits every run. Triton picks the vector "
                "widths and the in-program tree. Skipped without Triton (and PyTorch).")),
)

ROW_LADDER: dict[str, Rung] = {r.name: r for r in ROW_RUNGS}

# What each tunable may be set to (inclusive): --param values outside are refused.
PARAM_RANGES: dict[str, tuple[int, int]] = {
    "unroll": (1, 64),         # elements per thread loaded before the block sum
    "loads": (1, 16),          # 16-byte loads in flight per thread per iteration
    "blocks_per_sm": (1, 32),  # grid of a grid-stride rung, per multiprocessor
    "l2_prefetch": (0, 1),     # 1: loads ask L2 for the surrounding 256 bytes
    "width": (2, 16),          # row_group: lanes per row, a power of two
    "lanes": (1, 32),          # row_vec_group, row_multi: lanes per row, a power of two
    "group_rows": (1, 16),     # row_multi: rows a group of lanes owns, their loads in flight
    "cluster": (2, 8),         # row_cluster: blocks per cluster (a row); 8 is the portable most
    "evict_first": (0, 1),     # the row rungs' 16-byte loads: 1: they stream (evict first)
}
REFERENCE = "cub"


def display_rank(name: str) -> tuple[int, int]:
    """Where a rung's rows go in tables: the ladder's kernels, then the user's kernels (in
    the order they ran; sort stably), then the library references."""
    if name in ROW_LADDER:  # a table of row rungs: the row ladder's order
        return (2 if ROW_LADDER[name].is_library else 0, list(ROW_LADDER).index(name))
    if name not in LADDER:
        return (1, 0)
    index = list(LADDER).index(name)
    return (2 if LADDER[name].is_library else 0, index)


def get_rung(name: str, also: str = "") -> Rung:
    """One rung by name. An unknown name is one UsageError with the closest name (a
    typo's likely meaning) and the accepted ones; `also` names what else the caller takes
    (e.g. "all or none")."""
    if name in ROW_LADDER:
        raise UsageError(f"{name} sums each row of an array: give --shape ROWSxCOLS to "
                         "run the row rungs")
    if name not in LADDER:
        hint = did_you_mean(name, LADDER)
        accepted = ", ".join(LADDER) + (f", {also}" if also else "")
        raise UsageError(f"unknown rung {name!r}{hint}; accepted: {accepted} (your own "
                         "kernels come with --kernel FILE.cu:NAME)")
    return LADDER[name]


def parse_rungs(text: str | list) -> list[Rung]:
    """Names or `all` (every rung but those kept out of it: cupy), in ladder order as
    given; `none` for only the user's kernels."""
    names = comma_list(text, "rung")
    if not names:
        raise UsageError(f"no rung given; accepted: {', '.join(LADDER)}, all or none")
    if names == ["none"]:
        return []
    chosen: list[Rung] = []
    for name in names:
        named = [r for r in RUNGS if r.in_all] if name == "all" else [
            get_rung(name, also="all or none")]
        for rung in named:
            if rung not in chosen:
                chosen.append(rung)
    return chosen


def parse_row_rungs(text: str | list) -> list[Rung]:
    """The row rungs a --rung value names with --shape: names of the row ladder or `all`
    (every row rung), in the row ladder's order as given; `none` for only the user's row
    kernels and functions. A rung of the 1-D ladder is refused with one line: it sums one
    array to one value."""
    names = comma_list(text, "rung")
    if not names:
        raise UsageError(f"no rung given; with --shape: {', '.join(ROW_LADDER)}, all or none")
    if names == ["none"]:  # only the user's row kernels and functions
        return []
    chosen: list[Rung] = []
    for name in names:
        if name == "all":
            named = list(ROW_RUNGS)
        elif name in ROW_LADDER:
            named = [ROW_LADDER[name]]
        elif name in LADDER:
            raise UsageError(f"--shape runs the row rungs ({', '.join(ROW_LADDER)} or all); "
                             f"{name} sums the whole array to one value: give --size for it")
        else:
            raise UsageError(f"unknown row rung {name!r}{did_you_mean(name, ROW_LADDER)}; "
                             f"with --shape: {', '.join(ROW_LADDER)}, all or none")
        chosen += [rung for rung in named if rung not in chosen]
    return chosen
