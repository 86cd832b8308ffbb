"""The `auto` rung through the runner, without a GPU: each case runs the variant its
tuning table (or the built-in defaults) gives for that size on the GPU in use, verified
like any rung, and its record says which variant ran and where the choice came from."""

from __future__ import annotations

import pytest

from reducebench.ladder import auto as tuning
from reducebench.measuring.settings import RunSettings
from reducebench.core.dtypes import DTYPES
from reducebench.measuring.hostexec import HostBackend
from reducebench.ladder.registry import LADDER
from reducebench.measuring.runner import expand_cases, run

pytestmark = pytest.mark.skipif("auto" not in LADDER or "one_block" not in LADDER,
                                reason="auto and one_block are not in the registry yet")

HOST_GPU = "host (numpy)"  # what HostBackend reports, with 132 SMs
# Two bands, the second naming only some of its variant's parameters (the others are
# the rung's defaults).
TABLE = tuning.TuningTable(
    gpu=HOST_GPU, sm_count=132, date="2026-11-23",
    bands=(tuning.Band(1, 65536, tuning.Variant.of("single_pass", 128, blocks_per_sm=2)),
           tuning.Band(65537, None, tuning.Variant.of("vector_load", 512, loads=8))))


@pytest.fixture
def no_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(tuning, "shipped_dir", lambda: tmp_path / "shipped")
    return tmp_path


def run_auto(sizes, dtypes=("float32", "int32")):
    settings = RunSettings(sizes=sizes, dtypes=[DTYPES[d] for d in dtypes],
                           rungs=[LADDER["auto"]], seed=3)
    return run(settings, HostBackend(), lambda record: None)


def test_auto_takes_no_block_of_its_own():
    settings = RunSettings(sizes=[2**20], rungs=[LADDER["auto"]], blocks=[128, 256])
    assert [case.block for case in expand_cases(settings)] == [0]


def test_without_a_table_auto_runs_the_defaults_and_says_so(no_tables):
    records = run_auto([2**10, 2**12, 2**12 + 1, 2**20])
    assert [r.status for r in records] == ["ok"] * 8
    assert all(r.rung == "auto" for r in records)
    small, large = records[0], records[-1]
    assert small.variant == "one_shot block=32 l2_prefetch=0 loads=4 (built-in defaults)"
    # 2^10 float32 in tiles of 32 threads x 4 loads x 4 floats (512 elements): two blocks
    assert (small.block, small.finish, small.grid) == (32, "pingpong", 2)
    assert large.variant == "one_shot block=512 l2_prefetch=0 loads=4 (built-in defaults)"
    assert large.finish == "pingpong" and not large.deterministic
    assert large.grid == 2**20 // (512 * 4 * 4)  # one block per tile of 512 x 4 float4


def test_with_a_table_auto_runs_what_it_names(no_tables):
    tuning.write_table(TABLE, tuning.user_path(HOST_GPU))
    small, large = run_auto([2**16, 2**20], dtypes=("float32",))
    assert small.variant == ("single_pass block=128 blocks_per_sm=2 l2_prefetch=0 loads=4 "
                             f"(tuned for {HOST_GPU} on 2026-11-23)")
    assert (small.block, small.finish, small.grid) == (128, "single", 2**16 // (128 * 16))
    assert large.variant.startswith("vector_load block=512 blocks_per_sm=8 l2_prefetch=0 "
                                    "loads=8 (tuned")
    assert large.status == small.status == "ok"
    # 2^16 float16 are as many bytes as 2^15 float32: the first band
    (half,) = run_auto([2**17], dtypes=("float16",))
    assert half.variant.startswith("single_pass")
