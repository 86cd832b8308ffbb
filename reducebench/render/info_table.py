"""`info`'s table: what the GPU is and what the timing method resolves on it, or, without
a GPU, the versions found and why there is none."""

from __future__ import annotations

from rich.markup import escape

from reducebench.core.sizes import format_size
from reducebench.core.numbers import number
from reducebench.render.flex import FlexColumn, FlexTable


def facts_table(rows: list[tuple[str, str]], notes: list[str] = ()) -> FlexTable:
    """(what, value) rows, both wrapped at spaces, never cut; notes (plain text) below."""
    columns = (FlexColumn("what", prose=True), FlexColumn("value", prose=True))
    cells = [(f"[dim]{escape(key)}[/]", escape(value)) for key, value in rows]
    return FlexTable("reducebench info", columns, cells, notes=[escape(n) for n in notes],
                     show_header=False)


def gpu_facts(gpu, free_bytes: int, ceiling, copy_gbps: float, floor_cold: float,
              floor_warm: float, reads: list[tuple[int, float]]) -> list[tuple[str, str]]:
    """The GPU's rows: its properties, the measured read ceiling and copy, the timing
    floor and the same-size reads."""
    return [
        ("GPU", f"{gpu.name} (device {gpu.index})"),
        ("compute capability", gpu.compute_capability),
        ("multiprocessors", str(gpu.sm_count)),
        ("L2 cache", number(gpu.l2_bytes / 2**20, ".0f", " MiB")),
        ("memory", f"{number(gpu.total_memory / 2**30, '.1f')} GiB, "
                   f"free {number(free_bytes / 2**30, '.1f')} GiB"),
        ("theoretical DRAM bandwidth", f"{number(gpu.peak_gbps, '.0f')} GB/s "
         f"({number(gpu.memory_clock_khz / 1e3, '.0f')} MHz x {gpu.bus_width_bits}-bit bus x 2)"),
        ("measured read ceiling", f"{ceiling.describe()}, "
                                  f"{number(100 * ceiling.gbps / gpu.peak_gbps, '.1f')}% "
                                  "of theoretical"),
        ("measured D2D copy", f"{number(copy_gbps, '.0f')} GB/s (read + write, 1 GiB)"),
        ("timing floor", f"{number(floor_cold, '.2f')} us cold, "
                         f"{number(floor_warm, '.2f')} us warm "
                         "(empty kernel, stream held, median)"),
        ("same-size read (cold)", ", ".join(f"{format_size(n)} {number(t, '.2f', ' us')}"
                                            for n, t in reads)
         + " float32 (the fastest ceiling kernel over n elements: `% read` divides by it)"),
        ("driver / runtime", f"{gpu.driver} / {gpu.runtime}"),
        ("CuPy", gpu.cupy),
    ]
