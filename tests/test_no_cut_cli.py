"""Every command's table at 80 and 200 columns: no number and no name is ever cut (rich
marks a cut with "…", U+2026; none may appear anywhere), and the figures and names of
the data appear whole. list, explain (and its full text form), run's table through a
fake device, info (without a GPU, and with a fake one), tune's summary and multigpu's
tables, fed with the figures of committed results files where there is one."""

import io
import re
import sys
import types
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from rich.console import Console

import reducebench.device
import reducebench.device.ceiling_timing
from reducebench.cli import cli
from reducebench.ladder.auto import Variant
from reducebench.ladder.registry import RUNGS
from reducebench.multigpu.loop import MultiGpuRecord
from reducebench.tune.search import BANDS, BandResult


REPO = Path(__file__).resolve().parent.parent
METRICS = REPO / "results" / "h100" / "metrics_f32_d016c49.csv"
SHARDED = REPO / "results" / "h200x4" / "multigpu_sharded_f32_9acad4a.csv"
NCCL = REPO / "results" / "h200x4" / "multigpu_nccl_f32_9acad4a.csv"
WIDTHS = (80, 200)
ELLIPSIS = "\u2026"


def invoke(width: int, *args) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": str(width)})
    assert result.exit_code in (0, 2), result.output
    return result.stdout    # the tables; an error is one line on stderr, however long


def assert_uncut(text: str, width: int, whole: list[str] = ()) -> None:
    assert ELLIPSIS not in text, next(line for line in text.splitlines() if ELLIPSIS in line)
    assert max(len(line) for line in text.splitlines()) <= width
    flat = " ".join(text.split())
    for word in whole:
        assert word in flat, word


def printed(renderable, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(renderable)
    return out.getvalue()


# ---- list -----------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_list_cuts_nothing(width):
    text = invoke(width, "list")
    names = [r.name for r in RUNGS]
    params = [f"{k}={v}" for r in RUNGS for k, v in r.params.items()]
    assert_uncut(text, width, names + params + ["bf16", "32-1024"])
    words = {w for r in RUNGS for w in r.title.split()}
    assert words <= set(text.split()), words - set(text.split())   # every word of prose


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_list_text_and_markdown_hold_every_title_whole(fmt):
    text = invoke(80, "list", "--format", fmt)
    assert ELLIPSIS not in text
    for rung in RUNGS:
        assert rung.title.replace("|", "\\|") in text, rung.name


# ---- explain ----------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS + (140,))
def test_explain_cuts_nothing(width):
    text = invoke(width, "explain", "--from", METRICS)
    assert_uncut(text, width, ["smem_interleaved", "long_scoreboard", "227.83k", "84.3"])


def test_explain_at_80_columns_indents_what_a_wrapped_line_continues():
    """Step names start at the margin; every other line, a wrapped one's continuation
    included, is indented, so a step still reads as one block."""
    lines = invoke(80, "explain", "--from", METRICS).splitlines()
    steps = [line for line in lines[1:] if not line.startswith((" ", "not shown"))]
    assert steps and all(" -> " in line and len(line.split()) == 3 for line in steps), steps
    why = next(i for i, line in enumerate(lines) if line.startswith("    why: "))
    assert lines[why + 1].startswith("      ") and not lines[why + 1].startswith("       ")


def test_explain_text_holds_each_note_whole():
    from reducebench.analysis.ladder_steps import source_note

    text = invoke(80, "explain", "--from", METRICS, "--format", "text")
    markdown = invoke(80, "explain", "--from", METRICS, "--format", "markdown")
    assert ELLIPSIS not in text + markdown
    note = source_note("smem_strided")
    assert len(note.changed) > 160          # longer than the 160 characters once kept
    for form in (text, markdown):
        assert note.changed in " ".join(form.split()), form[:300]


# ---- run, through a fake device ---------------------------------------------------------

@pytest.fixture
def fake_device(fake_device):
    """tests/conftest.py's, with cases of about 12 ms: the widest times a table shows."""
    fake_device.settings["times"] = (12208.48, 12090.02, 12300.0)
    return fake_device


@pytest.mark.parametrize("width", WIDTHS)
def test_run_table_cuts_nothing(fake_device, tmp_path, width):
    rungs = "smem_sequential,gridstride_atomic,vector_load,single_pass,pingpong,cub"
    text = invoke(width, "run", "--size", "2^12", "--rung", rungs, "--out",
                  tmp_path / "run.csv", "--seed", "1")
    assert "written to" in text
    assert_uncut(text, width, rungs.split(",") + ["12208.48"])


# ---- info -------------------------------------------------------------------------------

@pytest.mark.parametrize("width", WIDTHS)
def test_info_without_a_gpu_cuts_nothing(monkeypatch, width):
    monkeypatch.setitem(sys.modules, "cupy", None)
    text = invoke(width, "info")
    assert_uncut(text, width, ["NVRTC", "nvcc", "NVIDIA driver"])


def fake_h100():
    """What `info` reads, with results/logs/info_h100_6f78c21.txt's figures."""
    info = types.SimpleNamespace(name="NVIDIA H100 80GB HBM3", index=0,
                                 compute_capability="9.0", sm_count=132,
                                 l2_bytes=50 * 2**20, total_memory=int(79.2 * 2**30),
                                 peak_gbps=3352.0, memory_clock_khz=2619000,
                                 bus_width_bits=5120, driver="13.0", runtime="13.2",
                                 cupy="14.2.0")
    timer = types.SimpleNamespace(hold=True, floor_us=lambda rule, cold=True:
                                  3.04 if cold else 3.07)
    reads = {2**12: 3.94, 2**20: 5.22, 2**24: 24.51}  # results/logs/log_h100_c3dd291.txt
    return types.SimpleNamespace(info=info, timer=timer,
                                 same_size_reads=lambda sizes, hold=True:
                                 [(n, reads[n]) for n in sizes],
                                 copy_bandwidth_gbps=lambda: 2955.0,
                                 free_memory=lambda: int(78.6 * 2**30))


@pytest.mark.parametrize("width", WIDTHS)
def test_info_with_a_gpu_cuts_nothing(monkeypatch, width):
    ceiling = types.SimpleNamespace(gbps=3183.0,
                                    describe=lambda: "3183 GB/s (uint4 loads, 1 GiB)")
    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: fake_h100())
    monkeypatch.setattr(reducebench.device.ceiling_timing, "measure_ceiling", lambda b: ceiling)
    text = invoke(width, "info")
    assert_uncut(text, width, ["NVIDIA H100 80GB HBM3", "3352 GB/s", "5120-bit", "3.04 us",
                               "3183 GB/s", "95.0%", "79.2 GiB", "78.6 GiB"])


# ---- tune ---------------------------------------------------------------------------------

def band_results() -> list[BandResult]:
    long = Variant.of("pingpong", 256, blocks_per_sm=8, l2_prefetch=0, loads=4)
    other = Variant.of("one_block", 1024, loads=16)
    return [BandResult(band, band.sizes, long if i % 2 else other,
                       tuple(1234.56 * (i + 1) for _ in band.sizes),
                       other if i % 2 else long,
                       tuple(2345.67 * (i + 1) for _ in band.sizes),
                       tuple(1111.11 * (i + 1) for _ in band.sizes), candidates=12,
                       read_us=tuple(900.0 * (i + 1) for _ in band.sizes),
                       same_bytes_dtype="float16",
                       same_bytes_us=tuple(1100.0 * (i + 1) for _ in band.sizes),
                       same_bytes_read_us=tuple(1000.0 * (i + 1) for _ in band.sizes))
            for i, band in enumerate(BANDS)]


@pytest.mark.parametrize("width", WIDTHS)
def test_tune_summary_cuts_nothing(width):
    from reducebench.render.tune_table import summary

    text = printed(summary(band_results(), "NVIDIA H100 80GB HBM3"), width)
    assert_uncut(text, width, ["pingpong", "blocks_per_sm=8", "l2_prefetch=0", "loads=4",
                               "one_block", "loads=16", "6172.80", "11728.35", "5555.55",
                               "1.111", "2^16", "float16", "90.9"])


# ---- multigpu -------------------------------------------------------------------------------

def records_from(path: Path) -> list[MultiGpuRecord]:
    """The committed file's rows as the records `multigpu` prints."""
    fields = MultiGpuRecord.__dataclass_fields__
    frame = pd.read_csv(path, keep_default_na=False)
    out = []
    for row in frame.to_dict("records"):
        values = {k: v for k, v in row.items() if k in fields and k != "meta"}
        values["in_place"] = str(values.get("in_place")) == "True"
        for key in ("result", "reference", "median_us", "spread_us", "floor_us", "gbps",
                    "algbw_gbps", "busbw_gbps", "speedup", "efficiency", "min_us"):
            values[key] = float(values[key]) if values.get(key) not in ("", None) else \
                float("nan")
        out.append(MultiGpuRecord(**values, meta={"gpu": row["gpu"], "mode": row["mode"]}))
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_multigpu_tables_cut_nothing(width):
    from reducebench.render.multigpu_tables import render

    sharded, nccl = records_from(SHARDED), records_from(NCCL)
    out = io.StringIO()
    render(Console(file=out, width=width, color_system=None), sharded + nccl)
    text = out.getvalue()
    medians = [f"{r.median_us:.2f}" for r in sharded + nccl if r.case != "timing_floor"]
    assert_uncut(text, width, ["allreduce", "2^33", "2^30"] + medians)
    assert re.search(r"18\d{3}", text)    # the 4-GPU aggregate GB/s, whole
