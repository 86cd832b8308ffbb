"""On the GPUs of one host: the sharded sum gives the exact total on every rank for every
dtype at odd sizes on 1 and 2 GPUs, NCCL's all-reduce and reduce give the elementwise sum
in place and out of place, and the timing method's floor is sane. Tests needing 2 GPUs
skip with the reason on a machine with one; all skip without NCCL."""

import pytest
from click.testing import CliRunner

from reducebench.core.dtypes import DTYPES
from reducebench.verify.inputs import RANDOM
from reducebench.verify.inputs import make_input
from reducebench.ladder.plan import Plan
from reducebench.multigpu.cases import DEFAULT_LOCAL_RUNG, SHARDED, MultiGpuCase
from reducebench.multigpu.shards import ALLREDUCE, REDUCE
from reducebench.ladder.registry import get_rung
from reducebench.core.stats import StopRule
from reducebench.verify.verdict import verify

pytestmark = pytest.mark.gpu

ODD_SIZES = (1, 7, 33, 1000003, 2**24 + 3)
QUICK = StopRule(min_samples=3, max_time=0.0, max_samples=3)


@pytest.fixture(scope="module")
def backend():
    from reducebench.device.one_process import open_multigpu

    multi = open_multigpu()
    reason = multi.unavailable_reason()
    if reason:
        multi.close()
        pytest.skip(reason)
    yield multi
    multi.close()


def session(backend, k):
    if backend.present() < k:
        pytest.skip(f"needs {k} GPUs; this machine has {backend.present()}")
    return backend.session(k)


def sharded_case(dtype, n, k, rung_name=DEFAULT_LOCAL_RUNG):
    rung = get_rung(rung_name)
    return MultiGpuCase(SHARDED, dtype, n, k, rung, 256, params=dict(rung.params))


def assert_sharded_sum_verifies(backend, k, dtype, rung_name, sizes, kind="exact"):
    failures = []
    for n in sizes:
        host = make_input(n, dtype, 31 * n + k, kind, workers=8)
        m = session(backend, k).sharded_sum(sharded_case(dtype, n, k, rung_name), host,
                                            QUICK, cold=False)
        assert len(m.results) == k and len(m.checks) == k
        verdict = verify([*m.results, *m.checks], host, dtype,
                         Plan(chain=m.chain, atomics=m.atomics))
        if not verdict.ok:
            failures.append(f"n={n}: {verdict.message}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_sharded_sum_is_right_on_every_rank_for_every_dtype(backend, k, dtype_name):
    assert_sharded_sum_verifies(backend, k, DTYPES[dtype_name], DEFAULT_LOCAL_RUNG, ODD_SIZES)


@pytest.mark.parametrize("rung_name", ["gmem", "shfl", "vector_load", "single_pass"])
def test_sharded_sum_with_other_local_rungs(backend, rung_name):
    """In place (a scratch copy per shard), several passes, an atomic finish with its
    memset, and a ticket finish."""
    assert_sharded_sum_verifies(backend, 2, DTYPES["float32"], rung_name, (33, 1000003))


def test_sharded_sum_of_random_inputs_is_within_tolerance(backend):
    assert_sharded_sum_verifies(backend, 2, DTYPES["float32"], DEFAULT_LOCAL_RUNG,
                                (1000003, 2**24 + 3), kind=RANDOM)


@pytest.mark.parametrize("k", [1, 2])
def test_sharded_sum_takes_at_least_the_time_to_read_its_shard(backend, k):
    """Catches an interval that does not cover the work: no GPU reads faster than its
    DRAM's peak."""
    n = 2**26
    host = make_input(n, DTYPES["float32"], 5, workers=8)
    m = session(backend, k).sharded_sum(sharded_case(DTYPES["float32"], n, k), host,
                                        StopRule(min_samples=5, max_time=0.1), cold=True)
    peak_gbps = float(backend.device_info().get("peak_gbps") or 0)
    if not peak_gbps:
        pytest.skip("the GPU's peak bandwidth is unknown here")
    least_us = (n // k) * 4 / (peak_gbps * 1e3)
    assert min(m.times_us) >= least_us, (m.times_us, least_us)


@pytest.mark.parametrize("in_place", [False, True], ids=["out-of-place", "in-place"])
@pytest.mark.parametrize("kind", [ALLREDUCE, REDUCE])
@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_nccl_collectives_give_the_elementwise_sum(backend, dtype_name, kind, in_place):
    two = session(backend, 2)
    for count in (1, 1000003):
        case = MultiGpuCase(kind, DTYPES[dtype_name], count, 2, in_place=in_place)
        m = two.collective(case, QUICK, cold=False)
        assert m.wrong == 0, f"{m.wrong} of {m.checked_elements} elements wrong at {count}"
        assert m.checked_elements >= count
        assert m.times_us and min(m.times_us) > 0


@pytest.mark.parametrize("dtype_name", ["float32", "bfloat16", "int32"])
def test_the_collective_check_counts_elements_that_are_not_the_sum(backend, dtype_name):
    """One rank's own input is not the sum over two ranks anywhere; the sum is right
    everywhere."""
    from reducebench.device.nccl_cases import pattern, wrong_elements

    two = session(backend, 2)
    cupy = two.cupy
    dtype, count = DTYPES[dtype_name], 4099
    case = MultiGpuCase(ALLREDUCE, dtype, count, 2)
    with two.ranks[0].active():
        own = pattern(cupy, 0, 0, count, dtype)
        assert wrong_elements(cupy, own, 2, case) == count
        ints = sum(pattern(cupy, r, 0, count, DTYPES["int32"]) for r in range(2))
        summed = ints.astype(own.dtype) if dtype_name != "bfloat16" else \
            (ints.astype("float32").view("uint32") >> 16).astype("uint16")
        assert wrong_elements(cupy, summed, 2, case) == 0


@pytest.mark.parametrize("k", [1, 2])
def test_timing_floor_is_positive_and_below_100_us(backend, k):
    floor = session(backend, k).floor_us(StopRule(min_samples=20, max_time=0.3), cold=False)
    assert 0 < floor < 100


def test_command_runs_end_to_end(backend, tmp_path):
    session(backend, 2)
    from reducebench.cli import ReducebenchGroup
    from reducebench.cli.multigpu import multigpu_command

    out = tmp_path / "multi.csv"
    group = ReducebenchGroup(commands={"multigpu": multigpu_command})
    result = CliRunner().invoke(group, ["multigpu", "--size", "1000003", "--gpus", "1,2",
                                        "--nccl", "--bytes", "4096", "--max-time", "0.05",
                                        "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.is_file() and "busbw" in result.output
