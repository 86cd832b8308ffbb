"""`info`: what the GPU is and what the timing method can resolve on it. Without a GPU it
prints what it can (versions of reducebench, Python, CuPy, NVRTC, nvcc, the driver), the
whole reason there is no GPU with its fix, and what works without one; then one line
with exit code 2 like every command that needs a GPU and has none."""

from __future__ import annotations

import click

from reducebench.render.console import make_console
from rich.markup import escape

from reducebench.core.errors import DeviceUnavailable, UsageError
from reducebench.core.sizes import format_size
from reducebench.render.flex import FlexColumn, FlexTable
from reducebench.core.stats import StopRule


@click.command("info")
@click.option("--device", default=0, show_default=True, help="CUDA device index.")
@click.option("--profile", is_flag=True,
              help="Time without the stream hold, as `run --profile` does: for running "
                   "under Nsight, which serialises launches (a held stream would wait for "
                   "the hold's timeout).")
def info(device: int, profile: bool) -> None:
    """GPU, bandwidth (theoretical and a measured copy), versions and the timing floor.
    Without a GPU: the versions found, then why the GPU part is unavailable (exit 2)."""
    from reducebench.device import WITHOUT_GPU, host_facts, open_backend

    if device < 0:
        raise UsageError(f"--device {device}: a CUDA device index is 0 or more")
    try:
        backend = open_backend(device)
    except DeviceUnavailable as exc:
        # the whole reason here, where there is room; the error line stays short
        facts = [*host_facts(), ("GPU", "unavailable (why, below)")]
        notes = [f"GPU unavailable: {getattr(exc, 'reason', exc)}",
                 f"Without a GPU these work: {WITHOUT_GPU}"]
        make_console().print(facts_table(facts, notes))
        cause = getattr(exc, "cause", None)
        raise DeviceUnavailable("the GPU part of info is unavailable" +
                                (f": no CUDA GPU: {cause}" if cause else f": {exc}")) from None
    backend.timer.hold = not profile
    gpu = backend.info
    copy = backend.copy_bandwidth_gbps()
    from reducebench.device.ceiling import measure_ceiling

    ceiling = measure_ceiling(backend)
    floor_cold = backend.timer.floor_us(StopRule(max_time=0.5))
    floor_warm = backend.timer.floor_us(StopRule(max_time=0.5), cold=False)
    reads = backend.same_size_reads(READ_SIZES, hold=not profile)
    rows = [
        ("GPU", f"{gpu.name} (device {gpu.index})"),
        ("compute capability", gpu.compute_capability),
        ("multiprocessors", str(gpu.sm_count)),
        ("L2 cache", f"{gpu.l2_bytes / 2**20:.0f} MiB"),
        ("memory", f"{gpu.total_memory / 2**30:.1f} GiB, free "
                   f"{backend.free_memory() / 2**30:.1f} GiB"),
        ("theoretical DRAM bandwidth", f"{gpu.peak_gbps:.0f} GB/s "
         f"({gpu.memory_clock_khz / 1e3:.0f} MHz x {gpu.bus_width_bits}-bit bus x 2)"),
        ("measured read ceiling", f"{ceiling.describe()}, "
                                  f"{100 * ceiling.gbps / gpu.peak_gbps:.1f}% of theoretical"),
        ("measured D2D copy", f"{copy:.0f} GB/s (read + write, 1 GiB)"),
        ("timing floor", f"{floor_cold:.2f} us cold, {floor_warm:.2f} us warm "
                         "(empty kernel, stream held, median)"),
        ("same-size read (cold)", ", ".join(f"{format_size(n)} {t:.2f} us"
                                           for n, t in reads)
         + " float32 (the fastest ceiling kernel over n elements: `% read` divides by it)"),
        ("driver / runtime", f"{gpu.driver} / {gpu.runtime}"),
        ("CuPy", gpu.cupy),
    ]
    make_console().print(facts_table(rows))


def facts_table(rows: list[tuple[str, str]], notes: list[str] = ()) -> FlexTable:
    """(what, value) rows, both wrapped at spaces, never cut; notes (plain text) below."""
    columns = (FlexColumn("what", prose=True), FlexColumn("value", prose=True))
    cells = [(f"[dim]{escape(key)}[/]", escape(value)) for key, value in rows]
    return FlexTable("reducebench info", columns, cells, notes=[escape(n) for n in notes],
                     show_header=False)



# The sizes info shows the same-size read at: CUB's one-block size, where bandwidth starts
# to matter, and where it dominates (float32 elements).
READ_SIZES = (2**12, 2**20, 2**24)


COMMANDS = [info]
