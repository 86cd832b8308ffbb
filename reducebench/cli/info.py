"""`info`: what the GPU is and what the timing method can resolve on it. Without a GPU it
prints what it can (versions of reducebench, Python, CuPy, NVRTC, nvcc, the driver), the
whole reason there is no GPU with its fix, and what works without one; then one line
with exit code 2 like every command that needs a GPU and has none."""

from __future__ import annotations

import click

from reducebench.cli._options import options
from reducebench.core.errors import DeviceUnavailable, UsageError
from reducebench.core.stats import StopRule
from reducebench.render.console import make_console
from reducebench.render.info_table import facts_table, gpu_facts


@click.command("info")
@options("device")
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
    copy = backend.copy_bandwidth_gbps()
    from reducebench.device.ceiling_timing import measure_ceiling

    ceiling = measure_ceiling(backend)
    floor_cold = backend.timer.floor_us(StopRule(max_time=0.5))
    floor_warm = backend.timer.floor_us(StopRule(max_time=0.5), cold=False)
    reads = backend.same_size_reads(READ_SIZES, hold=not profile)
    rows = gpu_facts(backend.info, backend.free_memory(), ceiling, copy, floor_cold,
                     floor_warm, reads)
    make_console().print(facts_table(rows))


# The sizes info shows the same-size read at: CUB's one-block size, where bandwidth starts
# to matter, and where it dominates (float32 elements).
READ_SIZES = (2**12, 2**20, 2**24)


COMMANDS = [info]
