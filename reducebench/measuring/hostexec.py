"""An honest CPU executor of plans: numpy runs a case's plan pass by pass, with the same
buffers the device would use, so that a wrong plan (a pass too few, a grid that misses
elements, a buffer swapped, an accumulator left unzeroed) fails a CPU test.

What a kernel does to its buffers is modelled from the plan alone: each launch's blocks
sum the elements they cover (`Launch.per_block` of them each, or a grid-stride share of
all n) and leave the sums as `Launch.writes` says (model.PARTIALS, ATOMIC, TICKET,
PINGPONG); a row launch's blocks each sum their `Launch.rows_per_block` rows into those
rows' slots (ROW_SUMS), so a grid that misses rows leaves their slots poisoned; where
`Launch.splits` blocks share a row, block b sums part b % splits of row b // splits (the
row's tiles of `Launch.tile` elements dealt round-robin to its parts) and adds it into
the row's slot, zeroing the row's slot of the next run's sums (ROW_PINGPONG), writes it
as a partial (ROW_PARTIALS), or, a cluster a row, the row's parts are added and written
(ROW_CLUSTER), so a grid that misses a block
leaves its row short of a part. Rounding is not modelled: sums are exact (float64 or
int64, stored into the accumulator type), which is what exact inputs make of any correct
order. The kernels themselves are tested on the GPU.

Every buffer, the input included, sits between guards laid out as the device lays them
out (verify/guard_regions.py), checked after each verified run: a planted host "kernel" that
reads or writes outside a buffer fails verification here as it would on a GPU."""

from __future__ import annotations

import numpy as np

from reducebench.ladder.user_callables import HostCallable
from reducebench.measuring.execution import Sampler, run_case
from reducebench.verify.guard_regions import GuardedArray, InputGuards
from reducebench.verify.inputs import HostInput, bfloat16_bits_to_float32
from reducebench.results.samples_file import CaseSamples
from reducebench.core.errors import CaseFailed, CaseSkipped, ContextLost
from reducebench.ladder.case import Case
from reducebench.ladder.plan import (ATOMIC, PARTIALS, PINGPONG, ROW_CLUSTER, ROW_PINGPONG,
                                     ROW_PARTIALS, ROW_SUMS, TICKET, Launch, Plan)
from reducebench.measuring.backend_protocol import Measurement, Sampled, Sampling
from reducebench.measuring.bound_plan import BoundPlan

HOST_TIMES_US = (10.0, 11.0, 12.0)  # what a host "sample" takes: a fixed, known series


class HostBackend:
    """The runner's Backend protocol on the CPU."""

    def __init__(self, sm_count: int = 132, free: int = 2**40,
                 times: tuple[float, ...] = HOST_TIMES_US, peak_gbps: float = 3352.0,
                 compute_capability: str = "") -> None:
        """compute_capability: the GPU the host stands in for ("8.0"); "" for none, where
        every rung runs."""
        self._sm_count, self.free, self.times = sm_count, free, tuple(times)
        self.peak_gbps = peak_gbps
        self.compute_capability = compute_capability
        self.input_guards = InputGuards()

    def device_info(self) -> dict:
        return {"device": 0, "gpu": "host (numpy)",
                "compute_capability": self.compute_capability, "sm_count": self._sm_count,
                "l2_bytes": 0, "peak_gbps": self.peak_gbps, "driver": "", "runtime": "",
                "cupy": ""}

    def sm_count(self) -> int:
        return self._sm_count

    def free_memory(self) -> int:
        return self.free

    def upload(self, host: HostInput) -> np.ndarray:
        data = host.data
        if data.dtype == np.uint16:  # bfloat16 bits
            data = bfloat16_bits_to_float32(data)
        guarded = GuardedArray(np, "input", data.size, data.dtype)
        guarded.view[...] = data
        return self.input_guards.add(guarded)

    def release(self, handle: object) -> None:
        self.input_guards.forget(handle)

    def execute(self, case: Case, plan: Plan, handle: np.ndarray,
                sampling: Sampling | None) -> Measurement:
        try:
            return run_case(self.bind(case, plan, handle), sampling, self.sampler())
        except (CaseSkipped, CaseFailed, ContextLost):
            raise
        except Exception as exc:  # as the device layer does; never an Interrupted
            raise CaseFailed(f"{type(exc).__name__}: {exc}") from None

    def bind(self, case: Case, plan: Plan, handle: np.ndarray):
        if plan.library == "callable":  # the user's function, given the numpy input
            return HostCallable(case.rung.callable_ref, handle, case.dtype.acc_name,
                                plan.row_outputs)
        if plan.library and plan.row_outputs:
            return LibraryRowSums(handle, case.dtype.acc_name, plan.row_outputs)
        if plan.library:
            return LibrarySum(handle, case.dtype.acc_name)
        return PlanRun(plan, handle, case.dtype.acc_name, self.input_guards.of(handle))

    def sampler(self) -> Sampler:
        def sample(execution, sampling: Sampling) -> Sampled:
            for _ in self.times:
                execution.prepare()
                execution.enqueue()
            return Sampled(list(self.times), CaseSamples(list(self.times)))
        return sample

    def sm_clock_mhz(self) -> float | None:
        return None


class LibrarySum:
    def __init__(self, x: np.ndarray, acc_name: str) -> None:
        self.x, self.acc, self.value = x, np.dtype(acc_name), None

    def prepare(self) -> None:
        pass

    def poison(self) -> None:
        self.value = None

    def enqueue(self) -> None:
        self.value = _store(exact_sum(self.x), self.acc)

    def read(self):
        return self.value.item()

    def check_guards(self) -> list[str]:
        return []


class LibraryRowSums(LibrarySum):
    """A library's sum of each row (torch.sum(x, dim=1)): exact, as LibrarySum's."""

    def __init__(self, x: np.ndarray, acc_name: str, rows: int) -> None:
        super().__init__(x, acc_name)
        self.rows = rows

    def enqueue(self) -> None:
        self.value = _store(row_sums(self.x, self.rows, self.x.size // self.rows), self.acc)

    def read(self):
        return self.value.copy()


class PlanRun(BoundPlan):
    """A plan bound to numpy buffers named as the device's are (measuring/bound_plan.py),
    each kernel modelled by launch()."""

    def __init__(self, plan: Plan, x: np.ndarray, acc_name: str,
                 input_guard: GuardedArray | None = None) -> None:
        super().__init__(plan, x, np.dtype(acc_name),
                         lambda name, size, dtype: GuardedArray(np, name, size, dtype),
                         input_guard)

    def zero(self, buffer: np.ndarray) -> None:
        buffer[:] = 0

    def launch(self, launch: Launch) -> None:
        """What the kernel does with its arguments, bound as the device binds them:
        (src, dst, n) and, by write mode, (next) or (workspace, ticket); a row launch
        (src, dst, rows, cols), and (splits) where several blocks share a row."""
        if launch.writes == ROW_SUMS:
            src, dst, rows, cols = self.arguments(launch)
            covered = min(rows, launch.grid * launch.rows_per_block)
            dst[:covered] = _store(row_sums(src[:covered * cols], covered, cols), self.acc)
            return
        if launch.writes in (ROW_PINGPONG, ROW_PARTIALS, ROW_CLUSTER):
            self.split_rows(launch, *self.arguments(launch))
            return
        src, dst, n, *extra = self.arguments(launch)
        partials = block_sums(src[:n], launch.grid, launch.block, launch.per_block)
        if launch.writes == PARTIALS:
            dst[:launch.grid] = _store(partials, self.acc)
        elif launch.writes == ATOMIC:
            dst[0] = _store(_widen(dst[0]) + exact_sum(partials), self.acc)
        elif launch.writes == TICKET:
            workspace, ticket = extra
            self.finish_with_ticket(launch.grid, partials, dst, workspace, ticket)
        elif launch.writes == PINGPONG:
            (next_accumulator,) = extra
            next_accumulator[0] = 0
            dst[0] = _store(_widen(dst[0]) + exact_sum(partials), self.acc)
        else:
            raise ValueError(f"unknown write mode {launch.writes!r}")

    def split_rows(self, launch: Launch, src: np.ndarray, dst: np.ndarray, rows: int,
                   cols: int, splits: int, *next_sums: np.ndarray) -> None:
        """Blocks 0..grid-1, block b summing part b % splits of row b // splits, each
        leaving its part's sum as launch.writes says; blocks past the last row return.
        A ping-pong launch's part-0 blocks also zero their row's slot of `next_sums`."""
        if launch.writes == ROW_CLUSTER and launch.grid % splits:
            raise ValueError(f"a grid of {launch.grid} blocks is not a whole number of "
                             f"clusters of {splits}")
        parts = row_part_sums(src[:rows * cols], rows, cols, splits, launch.tile)
        ran = np.arange(rows * splits) < launch.grid  # (row, part) of each block launched
        parts = np.where(ran.reshape(rows, splits), parts, 0)
        if launch.writes == ROW_PARTIALS:
            count = min(launch.grid, rows * splits)
            dst[:count] = _store(parts.reshape(-1)[:count], self.acc)
        elif launch.writes == ROW_PINGPONG:
            (following,) = next_sums
            first_parts_ran = ran.reshape(rows, splits)[:, 0]
            following[:rows][first_parts_ran] = 0
            dst[:rows] = _store(_widen_array(dst[:rows]) + parts.sum(axis=1), self.acc)
        else:  # a cluster writes its row once all its blocks have added their parts
            covered = min(rows, launch.grid // splits)
            dst[:covered] = _store(parts[:covered].sum(axis=1), self.acc)

    def finish_with_ticket(self, grid: int, partials: np.ndarray, dst: np.ndarray,
                           workspace: np.ndarray, ticket: np.ndarray) -> None:
        """Every block writes its partial and draws a ticket; the block that draws the
        last one sums the workspace into dst and resets the ticket."""
        workspace[:grid] = _store(partials, self.acc)
        first_ticket = int(ticket[0])
        ticket[0] = first_ticket + grid
        if first_ticket == 0:  # only then does one block draw ticket grid - 1, the last
            dst[0] = _store(exact_sum(workspace[:grid]), self.acc)
            ticket[0] = 0

    def read(self):
        if self.plan.row_outputs:  # one value per row, as the device reads them back
            return self.buffers[self.written][:self.plan.row_outputs].copy()
        return self.buffers[self.written][0].item()


def row_sums(src: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The exact sum of each of `rows` consecutive rows of `cols` elements."""
    return _widen_array(src).reshape(rows, cols).sum(axis=1)


def row_part_sums(src: np.ndarray, rows: int, cols: int, splits: int,
                  tile: int) -> np.ndarray:
    """rows x splits: the exact sum of each part of each row, tile i of a row (elements
    i x tile .. (i + 1) x tile - 1) going to part i % splits."""
    values = _widen_array(src).reshape(rows, cols)
    if splits == 1:
        return values.sum(axis=1, keepdims=True)
    tile_sums = np.add.reduceat(values, np.arange(0, cols, tile), axis=1)  # rows x tiles
    sets = -(-tile_sums.shape[1] // splits)
    dealt = np.zeros((rows, sets * splits), dtype=values.dtype)
    dealt[:, :tile_sums.shape[1]] = tile_sums
    return dealt.reshape(rows, sets, splits).sum(axis=1)


def block_sums(src: np.ndarray, grid: int, block: int, per_block: int | None) -> np.ndarray:
    """Each block's sum of the elements it covers: `per_block` consecutive elements each
    (elements past grid x per_block are covered by no block), or with a grid-stride
    loop, every block-sized tile i goes to block i % grid."""
    values = _widen_array(src)
    if per_block is not None:
        covered = values[:grid * per_block]
        padded = np.zeros(grid * per_block, dtype=values.dtype)
        padded[:covered.size] = covered
        return padded.reshape(grid, per_block).sum(axis=1)
    owner = (np.arange(values.size) // block) % grid
    if values.dtype.kind == "i":
        sums = np.zeros(grid, dtype=np.int64)
        np.add.at(sums, owner, values)
        return sums
    return np.bincount(owner, weights=values, minlength=grid)


def exact_sum(values: np.ndarray):
    wide = _widen_array(values)
    return wide.sum()


def _widen(value):
    return float(value) if isinstance(value, (float, np.floating)) else int(value)


def _widen_array(values: np.ndarray) -> np.ndarray:
    return values.astype(np.int64 if values.dtype.kind in "iu" else np.float64)


def _store(value, acc: np.dtype):
    """Into the accumulator type; int32 wraps modulo 2^32 as the device's does."""
    if acc.kind == "i":
        return np.asarray(value, dtype=np.int64).astype(acc)
    return np.asarray(value, dtype=np.float64).astype(acc)
