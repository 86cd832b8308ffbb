"""On the GPU: the real __shfl_*_sync against reducebench/shfl/model.py. Full warps (64
threads, full mask) must match the model on every lane, for every op, width, several
operands and every lab dtype. In partial warps (35 threads) and masked calls, the lanes
the model calls defined must match; the lanes it calls undefined are reported (printed,
see them with -s), never failed: the guide promises nothing there."""

from __future__ import annotations

import json

import pytest

from reducebench.shfl import (LAB_DTYPES, OPS, UNDEFINED, WIDTHS, ShflCall, convert_value,
                              same_value, simulate)

pytestmark = pytest.mark.gpu

OPERANDS = {
    "sync": (0, 1, 3, 5, 15, 17, 31, 100, -1),
    "up": (0, 1, 2, 3, 5, 8, 16, 31),
    "down": (0, 1, 2, 3, 5, 8, 16, 31),
    "xor": (0, 1, 2, 3, 5, 8, 16, 31),
}
MASKS = (0x0000FFFF, 0xAAAAAAAA, 0x0F0F0F0F, 0xFFFFFFFE, 0x7FFFFFFF, 0x00000001, 0x0)


def distinct_values(threads: int, dtype: str) -> list:
    """Distinct per thread and exact in every lab dtype (float16 included): no lane can
    match the model by accident of two lanes holding the same value."""
    return [convert_value((i * 37) % 1024 - 300, dtype) for i in range(threads)]


def run(call: ShflCall, values: list, dtype: str) -> list:
    from reducebench.device.warp_shuffle import run_shuffle

    return run_shuffle(call, values, dtype)


def compare(call: ShflCall, dtype: str):
    """(mismatches on defined lanes, undefined lanes with what the GPU returned)."""
    values = distinct_values(call.threads, dtype)
    got = run(call, values, dtype)
    mismatches, undefined = [], []
    for w in simulate(call, values):
        for lane in w.lanes:
            hw = got[lane.thread]
            if lane.status == UNDEFINED:
                undefined.append(f"{call.signature()} threads={call.threads} {dtype}: "
                                 f"warp {w.warp} lane {lane.lane} <- lane {lane.source}: "
                                 f"GPU gave {hw!r}")
            elif not same_value(lane.after, hw):
                mismatches.append(f"{call.signature()} threads={call.threads} {dtype}: "
                                  f"warp {w.warp} lane {lane.lane} ({lane.status}): "
                                  f"model {lane.after!r}, GPU {hw!r}")
    return mismatches, undefined


@pytest.mark.parametrize("dtype", list(LAB_DTYPES))
@pytest.mark.parametrize("op", OPS)
def test_full_warps_match_the_model(op, dtype):
    failures = []
    for width in WIDTHS:
        for operand in OPERANDS[op]:
            call = ShflCall(op, 64, width, 0xFFFFFFFF, operand)
            mismatches, undefined = compare(call, dtype)
            assert not undefined, "full warps with a full mask have no undefined lane"
            failures += mismatches
    assert not failures, "\n".join(failures[:30])


@pytest.mark.parametrize("dtype", list(LAB_DTYPES))
@pytest.mark.parametrize("op", OPS)
def test_partial_warps_and_masks(op, dtype):
    failures, reported = [], []
    for width in (4, 16, 32):
        for operand in OPERANDS[op][:6]:
            for threads, mask in [(35, 0xFFFFFFFF), (64, 0), (35, 0x0000FFFF)] + \
                    [(64, m) for m in MASKS]:
                mismatches, undefined = compare(ShflCall(op, threads, width, mask, operand),
                                                dtype)
                failures += mismatches
                reported += undefined
    if reported:
        print(f"\n{len(reported)} undefined lane(s) ({op}, {dtype}); first ones:")
        print("\n".join(reported[:12]))
    assert not failures, "\n".join(failures[:30])


def test_seed_examples_through_the_cli():
    from click.testing import CliRunner

    from reducebench.cli import cli

    for args in (["down", "--delta", "16", "--threads", "35"],
                 ["sync", "--src-lane", "17", "--width", "16"],
                 ["xor", "--lane-mask", "3"],
                 ["up", "--delta", "2", "--width", "16"]):
        result = CliRunner().invoke(cli, ["shfl", *args, "--format", "json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        assert data["source"] == "device" and data["mismatches"] == 0
        undefined = [(w["warp"], lane["lane"], lane["after"]) for w in data["warps"]
                     for lane in w["lanes"] if not lane["defined"]]
        if undefined:
            print(f"\nshfl {' '.join(args)}: undefined lanes (warp, lane, GPU value): "
                  f"{undefined}")
