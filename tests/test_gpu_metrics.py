"""Counters on the GPU, through ncu: vector_load reads its input once from DRAM, and the
strided tree has the bank conflicts that sequential addressing removes. Needs a GPU, CuPy
and Nsight Compute; run with `pytest -m gpu tests/test_gpu_metrics.py`."""

from __future__ import annotations

import pytest

from reducebench.measuring import counters as metrics
from reducebench.core.errors import UsageError

pytestmark = pytest.mark.gpu
N = 2**24
TIMEOUT_S = 600


@pytest.fixture(scope="module")
def ncu() -> str:
    try:
        return metrics.find_ncu()
    except UsageError as exc:
        pytest.skip(str(exc))


def counters(ncu: str, tmp_path, rung: str, label: str, launches: int) -> dict:
    argv = ["run", "--size", str(N), "--dtype", "float32", "--rung", rung, "--block", "256",
            "--profile", "--out", str(tmp_path / f"{rung}.csv")]
    return metrics.collect(label, argv, launches, N, 4, TIMEOUT_S, ncu=ncu)


def test_vector_load_reads_its_input_once_from_dram(ncu, tmp_path):
    label = "vector_load float32 n=16777216 block=256 blocks_per_sm=8 l2_prefetch=0 loads=4"
    row = counters(ncu, tmp_path, "vector_load", label, launches=1)
    assert row["ncu_dram_read_bytes"] == pytest.approx(N * 4, rel=0.05)
    assert row["ncu_kernels"] == 1


def test_strided_addressing_has_more_bank_conflicts_than_sequential(ncu, tmp_path):
    def conflicts(rung: str) -> int:
        # 2^24 at 256 per block: 65536 blocks, then 256, then 1
        row = counters(ncu, tmp_path, rung, f"{rung} float32 n=16777216 block=256", 3)
        assert row["ncu_grids"] == "65536+256+1"
        return row["ncu_smem_ld_conflicts"] + row["ncu_smem_st_conflicts"]

    assert conflicts("smem_strided") > conflicts("smem_sequential")
