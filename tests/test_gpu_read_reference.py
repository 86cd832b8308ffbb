"""On the GPU: the same-size read (issue #27) really reads the case's bytes (its time
grows with them, and stays under what the theoretical peak allows), is timed as the case
is (graph replay takes the launch cost out), and a timed run records it on every row."""

import math

import pytest

from reducebench.core.stats import StopRule
from reducebench.measuring.backend_protocol import Sampling
from reducebench.measuring.runner import run
from reducebench.measuring.settings import settings_from

pytestmark = pytest.mark.gpu

STOP = StopRule(min_samples=10, max_noise=0.01, max_time=0.2)


@pytest.fixture(scope="module")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


@pytest.fixture(scope="module")
def buffer(backend):
    cupy = backend.cupy
    return cupy.arange(2**28, dtype=cupy.int32) | 1  # 1 GiB, no zero word


def test_the_read_takes_longer_for_more_bytes_and_never_beats_the_peak(backend, buffer):
    sampling = Sampling(STOP)
    small = backend.read_reference_us(buffer, 2**26, 4, sampling)
    large = backend.read_reference_us(buffer, 2**28, 4, sampling)
    assert 3.0 < large / small < 4.6, (small, large)
    # bytes / time under the theoretical peak: a read that skipped loads would beat it
    assert 2**30 / (large * 1e3) <= backend.info.peak_gbps, large
    # the same bytes as float16 elements: the same read
    half = backend.read_reference_us(buffer, 2**29, 2, sampling)
    assert abs(half / large - 1) < 0.05, (half, large)


def test_graph_timing_takes_the_launch_cost_out_of_a_small_read(backend, buffer):
    single = backend.read_reference_us(buffer, 2**12, 4, Sampling(STOP))
    graph = backend.read_reference_us(buffer, 2**12, 4, Sampling(STOP, graph=True))
    assert graph < single, (graph, single)


def test_a_timed_run_records_the_read_on_every_row(backend):
    settings = settings_from({"size": "2^12,2^24", "rung": "auto,cub", "seed": 1,
                              "max_time": 0.1})
    records = run(settings, backend, lambda record: None)
    assert [r.status for r in records] == ["ok"] * 4
    for n in (2**12, 2**24):
        reads = {r.read_us for r in records if r.n == n}
        assert len(reads) == 1, reads  # measured once per size in a run
    for r in records:
        assert r.read_us > 0 and math.isclose(r.pct_read, 100 * r.read_us / r.median_us)
        # no reduction reads its input much faster than the pure read does
        assert r.pct_read < 110, (r.rung, r.n, r.pct_read)
