"""`compare` and `show-samples` at 80 and 200 columns: no "…" anywhere (so none inside a
number or a name), no line wider than the terminal, every figure and every name whole,
and every row's note of a comparison printed (#26 items 1 and 5)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from reducebench.analysis.compare import compare_runs
from reducebench.ladder.case import case_key
from reducebench.results.files import RowWriter, read_results
from reducebench.results.samples_file import CaseSamples, SamplesWriter, samples_for_results
from reducebench.results.naming import samples_path
from reducebench.results.schema import SCHEMA_VERSION, Record
from cli_runner import invoke

FIXTURES = Path(__file__).parent / "fixtures"
WIDTHS = [80, 200]
META = {"schema_version": SCHEMA_VERSION, "gpu": "NVIDIA H100 80GB HBM3", "mode": "cold",
        "timing": "single", "inputs": "exact", "run_id": "r1"}
VL = "blocks_per_sm=8;l2_prefetch=0;loads=4"
# A default run's 25 cases at 2^24 float32 (results/h100/default_f32_803a10d.csv): rung,
# params, block, median us. cupy's 12208.480 is the widest figure, one_block's params
# and gridstride_atomic the longest names.
LADDER = [
    ("gmem", "", 256, 84.752), ("smem_interleaved", "", 256, 83.36),
    ("smem_strided", "", 256, 101.232), ("smem_sequential", "", 256, 81.152),
    ("first_add", "", 256, 48.128), ("unroll_last_warp", "", 256, 37.248),
    ("complete_unroll", "", 256, 37.28), ("gmem_unroll4", "", 256, 47.264),
    ("smem_unroll4", "", 256, 30.944), ("multi_elem", "blocks_per_sm=8", 256, 31.904),
    ("shfl", "", 256, 62.496), ("shfl_unroll", "unroll=4", 256, 31.04),
    ("shfl_xor", "", 256, 62.528), ("warp_atomic", "", 256, 924.192),
    ("gridstride_atomic", "blocks_per_sm=8", 256, 27.104), ("vector_load", VL, 256, 25.6),
    ("single_pass", VL, 256, 26.72), ("pingpong", VL, 256, 24.896),
    ("one_block", "loads=4", 256, 1937.072), ("auto", VL, 256, 24.896),
    ("triton_atomic", "", 0, 27.008), ("triton_two_pass", "", 0, 29.216),
    ("cub", "", 0, 28.704), ("cupy", "", 0, 12208.48), ("torch", "", 0, 30.016),
]


def whole(token: str, text: str) -> bool:
    """`token` stands whole in `text`: no digit, dot, letter or "…" glued to it."""
    return re.search(rf"(?<![\w.…]){re.escape(token)}(?![\w.…])", text) is not None


def flat(text: str) -> str:
    return " ".join(text.split())


def check_fits(text: str, width: int) -> None:
    assert "…" not in text, text
    assert max(map(len, text.splitlines())) <= width, text


# ---- show-samples ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ladder_samples(tmp_path_factory) -> Path:
    """The 25 cases, three samples each: median - 1, median, median + 1 us."""
    path = tmp_path_factory.mktemp("ladder") / "run.samples.csv"
    writer = SamplesWriter(path)
    for rung, params, block, median in LADDER:
        writer.write_case("r1", case_key(rung, "float32", 2**24, block, params),
                          CaseSamples([median - 1.0, median, median + 1.0]))
    return path


@pytest.mark.parametrize("width", WIDTHS)
def test_show_samples_keeps_every_number_and_name_whole(ladder_samples, width):
    result = invoke("show-samples", ladder_samples, "--no-plot", width=width)
    assert result.exit_code == 0, result.output
    text = result.stdout
    check_fits(text, width)
    dropped = next((line for line in text.splitlines() if "left out at this width" in line),
                   "")
    for rung, params, _, median in LADDER:
        assert whole(rung, text), (width, rung)
        for param in params.split(";") if params else ():
            assert whole(param, text), (width, param)
        assert whole(f"{median:.3f}", text), (width, rung, median)
        if "min us" not in dropped:
            assert whole(f"{median - 1:.3f}", text), (width, rung)
        if "max us" not in dropped:
            assert whole(f"{median + 1:.3f}", text), (width, rung)
    assert whole("12208.480", text) and whole("smem_interleaved", text)


# ---- compare -----------------------------------------------------------------------------

def test_every_rows_note_is_under_the_table_at_any_width():
    base, new = FIXTURES / "compare_base.csv", FIXTURES / "compare_new.csv"
    notes = [r.note for r in compare_runs(read_results(base), read_results(new))
             .rows.itertuples() if r.note]
    assert any("new FAIL: result 8388608.25" in note for note in notes)
    for width in WIDTHS:
        result = invoke("compare", base, new, width=width)
        assert result.exit_code == 0, result.output
        check_fits(result.stdout, width)
        for note in notes:
            assert flat(note) in flat(result.stdout), (width, note)


def write_run(path: Path, factors: dict[str, float], statuses: dict[str, str]) -> Path:
    """A run of the 25 cases with samples (2^24 float32): each median times its factor,
    200 samples around it; `statuses` marks cases FAIL, error or suspect."""
    writer, samples = RowWriter(path), SamplesWriter(samples_path(path))
    rng = np.random.default_rng(len(path.name))
    for rung, params, block, median in LADDER:
        status = statuses.get(rung, "ok")
        times = median * factors.get(rung, 1.0) * (1 + 0.005 * rng.standard_normal(200))
        writer.write(Record(rung=rung, dtype="float32", n=2**24, block=block, params=params,
                            status=status, samples=len(times),
                            error="CUDA_ERROR_LAUNCH_FAILED" if status == "error" else "",
                            median_us=float(np.median(times)), meta=dict(META)))
        samples.write_case("r1", case_key(rung, "float32", 2**24, block, params),
                           CaseSamples(list(times)))
    return path


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_of_a_whole_ladder_with_samples_keeps_everything_whole(tmp_path, width):
    base = write_run(tmp_path / "base.csv", {}, {})
    new = write_run(tmp_path / "new.csv", {"shfl": 0.9, "cupy": 1.05, "vector_load": 1.01},
                    {"warp_atomic": "error", "single_pass": "suspect"})
    result = invoke("compare", base, new, width=width)
    assert result.exit_code == 0, result.output
    text = result.stdout
    check_fits(text, width)
    c = compare_runs(read_results(base), read_results(new), 2.0, samples_for_results(base),
                     samples_for_results(new))
    dropped = next((line for line in text.splitlines() if "left out at this width" in line),
                   "")
    for r in c.rows.itertuples():
        assert whole(r.rung, text), (width, r.rung)
        # a samples-decided note's p-value and interval are the table's p and CI cells
        reason = re.sub(r"^p=[^,]+, 99% CI [\d.]+-[\d.]+: ", "", r.note)
        assert flat(reason) in flat(text), (width, r.note)
        if r.rule == "samples":
            assert reason != r.note
            if "99% CI" not in dropped:
                assert whole(f"{r.ci_low:.3f}-{r.ci_high:.3f}", text), (width, r.rung)
        if r.base_status == "ok":
            assert whole(f"{r.base_us:.2f}", text), (width, r.rung, r.base_us)
    for verdict in ("FASTER", "SLOWER", "SAME", "FAILED", "SUSPECT"):
        assert verdict in text, (width, verdict)
    assert "see each row's note" not in text or "notes" in text
