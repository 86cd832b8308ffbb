"""The shuffle lab without a GPU: the model reproduces the seeds' worked examples and agrees
with the PTX ISA's shfl.sync rule on every lane, width and operand; --explain covers every
op; bad options are one-line usage errors (exit 2); --model-only --format json is the
model; no GPU is one line suggesting --model-only; cuda_src/shfl_lab.cu compiles with
NVRTC."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from reducebench.ladder import sources as kernels
from reducebench.ladder import nvrtc
from reducebench.cli import cli
from reducebench.core.errors import DeviceUnavailable, UsageError
from reducebench.shfl import (OPS, OWN, READ, SKIPPED, UNDEFINED, WIDTHS, ShflCall, explain,
                              iota, outcome_dict, parse_mask, parse_values, simulate,
                              source_lane)


def afters(call: ShflCall, values=None, warp: int = 0) -> list:
    values = list(range(call.threads)) if values is None else values
    return [lane.after for lane in simulate(call, values)[warp].lanes]


def statuses(call: ShflCall, warp: int = 0) -> list:
    return [lane.status for lane in simulate(call, list(range(call.threads)))[warp].lanes]


# ---- the seeds' worked examples --------------------------------------------------------

def test_sync_src_lane_17_width_16_reads_lane_1_of_each_segment():
    # seed 003: srcLane beyond the width is taken modulo width, within each 16-lane group
    out = afters(ShflCall("sync", 32, width=16, operand=17))
    assert out == [1] * 16 + [17] * 16
    lanes = simulate(ShflCall("sync", 32, width=16, operand=17), iota(32, "int32"))[0].lanes
    assert [lane.source for lane in lanes] == [1] * 16 + [17] * 16


def test_sync_broadcasts_inside_each_segment():
    # seed 003: srcLane 5 with width 32 and width 16; seed 004: srcLane 3 with width 16
    assert afters(ShflCall("sync", 32, operand=5)) == [5] * 32
    assert afters(ShflCall("sync", 32, width=16, operand=5)) == [5] * 16 + [21] * 16
    assert afters(ShflCall("sync", 32, width=16, operand=3)) == [3] * 16 + [19] * 16
    # seed 004: a 16-thread block, srcLane 2 with width 16
    assert afters(ShflCall("sync", 16, width=16, operand=2)) == [2] * 16


def test_down_16_full_warps():
    # seed 000: values i + 1; lanes 0..15 get lane + 16's value, lanes 16..31 keep theirs
    call = ShflCall("down", 64, operand=16)
    values = [i + 1 for i in range(64)]
    warps = simulate(call, values)
    assert [lane.after for lane in warps[0].lanes] == \
        [i + 17 for i in range(16)] + [i + 1 for i in range(16, 32)]
    assert [lane.after for lane in warps[1].lanes] == \
        [i + 17 for i in range(32, 48)] + [i + 1 for i in range(48, 64)]
    assert all(lane.defined for w in warps for lane in w.lanes)
    assert [lane.status for lane in warps[0].lanes] == [READ] * 16 + [OWN] * 16


def test_down_16_in_a_35_thread_block():
    # seed 000: the second warp has lanes 0..2 only; they read absent lanes 16..18
    call = ShflCall("down", 35, operand=16)
    values = [i + 1 for i in range(35)]
    warps = simulate(call, values)
    assert len(warps) == 2 and len(warps[1].lanes) == 3
    assert [lane.after for lane in warps[0].lanes] == \
        [i + 17 for i in range(16)] + [i + 1 for i in range(16, 32)]
    second = warps[1].lanes
    assert [lane.thread for lane in second] == [32, 33, 34]
    assert [lane.source for lane in second] == [16, 17, 18]
    assert [lane.status for lane in second] == [UNDEFINED] * 3
    assert [lane.after for lane in second] == [None] * 3
    assert all("absent" in lane.note for lane in second)


def test_down_2_in_a_16_thread_block():
    # seed 004: the top two lanes keep their values
    assert afters(ShflCall("down", 16, width=16, operand=2)) == list(range(2, 16)) + [14, 15]


def test_up_2_width_16():
    # seeds 003 and 004: the first two lanes of every 16-lane segment keep their values
    assert afters(ShflCall("up", 16, width=16, operand=2)) == [0, 1] + list(range(14))
    out = afters(ShflCall("up", 32, width=16, operand=2))
    assert out == [0, 1] + list(range(14)) + [16, 17] + list(range(16, 30))
    assert statuses(ShflCall("up", 32, width=16, operand=2)) == \
        ([OWN] * 2 + [READ] * 14) * 2


def test_xor_1_and_3():
    # seed 003: laneMask 1 swaps neighbours, laneMask 3 reverses groups of four
    assert afters(ShflCall("xor", 32, operand=1)) == [i ^ 1 for i in range(32)]
    assert afters(ShflCall("xor", 32, operand=3))[:8] == [3, 2, 1, 0, 7, 6, 5, 4]
    assert afters(ShflCall("xor", 32, operand=3))[-4:] == [31, 30, 29, 28]
    # seed 004: 16 threads, width 16
    assert afters(ShflCall("xor", 16, width=16, operand=1)) == \
        [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14]


def test_xor_reads_earlier_segments_but_not_later_ones():
    # the guide's rule for width < 32, noted in seed 003
    call = ShflCall("xor", 32, width=16, operand=16)
    assert afters(call) == list(range(16)) + list(range(16))
    assert statuses(call) == [OWN] * 16 + [READ] * 16


# ---- every lane, width and operand against the PTX ISA's shfl.sync ---------------------

def ptx_source(op: str, lane: int, b: int, width: int) -> int:
    """The lane shfl.sync reads, from the PTX ISA's pseudocode, with c as the CUDA headers
    build it: ((32 - width) << 8) | (0 for up, 0x1f otherwise)."""
    segmask = (32 - width) & 0x1F
    cval = 0 if op == "up" else 0x1F
    bval = b & 0x1F
    max_lane = (lane & segmask) | (cval & ~segmask & 0x1F)
    min_lane = lane & segmask
    if op == "up":
        j, ok = lane - bval, lane - bval >= max_lane
    elif op == "down":
        j, ok = lane + bval, lane + bval <= max_lane
    elif op == "xor":
        j, ok = lane ^ bval, (lane ^ bval) <= max_lane
    else:
        j = min_lane | (bval & ~segmask & 0x1F)
        ok = j <= max_lane
    return j if ok else lane


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("width", WIDTHS)
def test_model_matches_ptx_rule(op, width):
    operands = range(-40, 100) if op == "sync" else range(32)
    for operand in operands:
        for lane in range(32):
            _, source, _ = source_lane(op, lane, operand, width)
            assert source == ptx_source(op, lane, operand, width), (op, width, operand, lane)


# ---- mask and partial warps ------------------------------------------------------------

def test_lanes_outside_the_mask_are_skipped_and_their_readers_undefined():
    call = ShflCall("down", 32, mask=0x0000FFFF, operand=1)
    lanes = simulate(call, list(range(32)))[0].lanes
    assert [lane.status for lane in lanes[16:]] == [SKIPPED] * 16
    assert [lane.after for lane in lanes[16:]] == list(range(16, 32))  # untouched
    assert lanes[15].status == UNDEFINED and lanes[15].source == 16   # lane 16 did not call
    assert [lane.after for lane in lanes[:15]] == list(range(1, 16))


def test_own_value_is_defined_even_when_neighbours_are_absent():
    # 3-thread block: up by 1 reads lanes 0 and 1 (present), lane 0 keeps its own value
    call = ShflCall("up", 3, operand=1)
    assert afters(call) == [0, 0, 1]
    assert statuses(call) == [OWN, READ, READ]


def test_each_warp_is_its_own_shuffle():
    call = ShflCall("sync", 70, operand=0)
    warps = simulate(call, list(range(70)))
    assert [len(w.lanes) for w in warps] == [32, 32, 6]
    for w in warps:
        assert {lane.after for lane in w.lanes} == {w.warp * 32}


# ---- parsing -----------------------------------------------------------------------------

def test_parse_mask_and_values():
    assert parse_mask("0xffffffff") == 0xFFFFFFFF
    assert parse_mask("ffff") == 0xFFFF
    assert parse_values(None, 4, "int32") == [0, 1, 2, 3]
    assert parse_values("1, -2, 0x10", 3, "int32") == [1, -2, 16]
    assert parse_values("0.1", 1, "float16") == [pytest.approx(0.0999755859375)]
    assert parse_values("0.1", 1, "float64") == [0.1]
    for bad in ("0xg", "", "0x100000000"):
        with pytest.raises(UsageError):
            parse_mask(bad)
    with pytest.raises(UsageError):
        parse_values("1,2", 3, "int32")
    with pytest.raises(UsageError):
        parse_values("2147483648", 1, "int32")
    with pytest.raises(UsageError):
        ShflCall("down", 32, width=3)


# ---- --explain ---------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_explain_every_op(op):
    text = explain(op)
    assert len(text.splitlines()) >= 5
    assert f"_{'shfl' if op == 'sync' else 'shfl_' + op}" in text
    assert "width" in text and "mask" in text.lower() and "undefined" in text
    result = CliRunner().invoke(cli, ["shfl", "--explain", op])
    assert result.exit_code == 0, result.output
    assert result.output.split() == text.split()   # re-wrapped to the terminal, word for word


def test_explain_specifics():
    assert "srcLane % width" in explain("sync")
    assert "own value" in explain("up") and "own value" in explain("down")
    assert "earlier" in explain("xor") and "own value" in explain("xor")
    result = CliRunner().invoke(cli, ["shfl", "--explain", "all"])
    assert result.exit_code == 0
    assert all(f"__shfl_{s}sync" in result.output for s in ("", "up_", "down_", "xor_"))


# ---- the CLI -----------------------------------------------------------------------------

BAD = [
    ["down", "--width", "3"],
    ["down", "--threads", "0"],
    ["down", "--threads", "2000"],
    ["down", "--delta", "-1"],
    ["up", "--delta", "32"],
    ["xor", "--lane-mask", "40"],
    ["down", "--mask", "0xnothex"],
    ["down", "--mask", "0x1ffffffff"],
    ["down", "--threads", "4", "--values", "1,2,3"],
    ["down", "--dtype", "int8"],
    ["sync", "--threads", "2", "--values", "1,x"],
]


@pytest.mark.parametrize("args", BAD, ids=" ".join)
def test_bad_options_exit_2_with_one_line(args):
    for extra in ([], ["--model-only"]):
        result = CliRunner().invoke(cli, ["shfl", *args, *extra])
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("reducebench: error:"), result.output


def test_bad_option_types_exit_2():
    for args in (["down", "--delta", "two"], ["down", "--format", "xml"], ["--explain", "foo"]):
        result = CliRunner().invoke(cli, ["shfl", *args])
        assert result.exit_code == 2, result.output


def test_explain_unknown_topic_lists_every_accepted_topic_including_all():
    result = CliRunner().invoke(cli, ["shfl", "--explain", "foo"])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reducebench: error:"), result.output
    assert "'foo'" in lines[0]
    accepted = lines[0].split("accepted:")[1]
    assert [topic.strip() for topic in accepted.split(",")] == \
        ["sync", "up", "down", "xor", "all"]


@pytest.mark.parametrize("output_format", ["table", "json"])
def test_no_gpu_says_the_hardware_run_needs_one_and_suggests_model_only(monkeypatch,
                                                                         output_format):
    import reducebench.device

    asked = []

    def no_gpu():
        asked.append(True)
        raise DeviceUnavailable("no CUDA GPU found")

    monkeypatch.setattr(reducebench.device, "import_cupy", no_gpu)
    result = CliRunner().invoke(cli, ["shfl", "down", "--delta", "16", "--threads", "35",
                                      "--format", output_format])
    assert asked, "the lab must ask reducebench.device.import_cupy for CuPy"
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reducebench: error:"), result.output
    assert "no CUDA GPU found" in lines[0]        # the reason is kept
    assert "needs a GPU" in lines[0] and "--model-only" in lines[0]


CLI_CASES = [
    (["down", "--delta", "16", "--threads", "35"], ShflCall("down", 35, operand=16), "int32"),
    (["sync", "--src-lane", "17", "--width", "16"], ShflCall("sync", 32, 16, operand=17),
     "int32"),
    (["xor", "--lane-mask", "3", "--dtype", "float16"], ShflCall("xor", 32, operand=3),
     "float16"),
    (["up", "--delta", "2", "--width", "16", "--mask", "0x0000fff0", "--threads", "40",
      "--dtype", "float64"], ShflCall("up", 40, 16, 0x0000FFF0, 2), "float64"),
]


@pytest.mark.parametrize("args, call, dtype", CLI_CASES,
                         ids=[" ".join(case[0]) for case in CLI_CASES])
def test_model_only_json_is_the_model(args, call, dtype):
    result = CliRunner().invoke(cli, ["shfl", *args, "--model-only", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data.pop("source") == "model"
    expected = outcome_dict(call, dtype, simulate(call, iota(call.threads, dtype)))
    assert data == json.loads(json.dumps(expected))
    assert [len(w["lanes"]) for w in data["warps"]] == \
        [min(32, call.threads - 32 * w) for w in range(call.warps)]


def test_model_only_json_with_values():
    result = CliRunner().invoke(cli, ["shfl", "xor", "--lane-mask", "1", "--threads", "4",
                                      "--values", "10,20,30,nan", "--dtype", "float32",
                                      "--model-only", "--format", "json"])
    assert result.exit_code == 0, result.output
    lanes = json.loads(result.output)["warps"][0]["lanes"]
    assert [lane["after"] for lane in lanes] == [20.0, 10.0, "nan", 30.0]


def test_model_only_table_shows_warps_and_marks():
    result = CliRunner().invoke(cli, ["shfl", "down", "--delta", "16", "--threads", "35",
                                      "--model-only"])
    assert result.exit_code == 0, result.output
    assert "warp 0" in result.output and "warp 1" in result.output
    assert result.output.count("UNDEFINED") == 3
    assert "own value" in result.output


def test_subcommand_help_needs_no_gpu():
    for op in OPS:
        result = CliRunner().invoke(cli, ["shfl", op, "--help"])
        assert result.exit_code == 0 and "--model-only" in result.output


def test_the_lab_command_module_imports_on_its_own():
    # reducebench.cli registers it through a shim, so importing it first must not loop
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import reducebench.cli.shfl"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ---- the kernel compiles -----------------------------------------------------------------

def test_shfl_lab_compiles_with_nvrtc():
    pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")
    if not nvrtc.available():
        pytest.skip("NVRTC or the CUDA headers (cuda_fp16.h) are missing")
    from reducebench.device.warp_shuffle import NAME_EXPRESSIONS

    assert NAME_EXPRESSIONS == ["shfl_lab<int>", "shfl_lab<float>", "shfl_lab<double>",
                                "shfl_lab<__half>"]
    result = nvrtc.compile_source(kernels.expanded_source("shfl_lab.cu"), NAME_EXPRESSIONS,
                                  arch="sm_90", file_name="shfl_lab.cu",
                                  options=kernels.COMPILE_OPTIONS)
    assert result.ok, result.log
    assert "warning" not in result.log.lower(), result.log
    assert all(result.lowered.get(e) for e in NAME_EXPRESSIONS)


@pytest.mark.parametrize("columns", [80, 200])
def test_explain_fits_the_terminal_and_breaks_no_word(columns, monkeypatch):
    """The explanations are written at about 90 columns: at 80 they are re-wrapped
    between words, never cut inside one, and at 200 no line is joined past the width."""
    from click.testing import CliRunner

    from reducebench.cli import cli
    from reducebench.shfl import explain as source

    monkeypatch.setenv("COLUMNS", str(columns))
    result = CliRunner().invoke(cli, ["shfl", "--explain", "all"])
    assert result.exit_code == 0
    assert max(len(line) for line in result.output.splitlines()) <= columns
    assert result.output.split() == source("all").split()
