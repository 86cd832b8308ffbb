"""Tables at the width they are printed at: numbers are never cut (no "100.…"); text
gives way first (parameters to a legend, reasons under the table, block to the title,
headers on two lines, no borders), then whole low-priority columns, named under the
table. The run's table, its optional columns (error ulps with --inputs random, counters
with --metrics), and compare's tables, at 80 and 120 columns (and narrower)."""

import re
from pathlib import Path

import pytest
from rich.console import Console

from reducebench.render.run_tables import tables
from reducebench.results.schema import Record
from cli_runner import invoke

FIXTURES = Path(__file__).parent / "fixtures"
META = {"gpu": "NVIDIA H100 80GB HBM3", "mode": "cold", "inputs": "exact"}
VL = "blocks_per_sm=8;l2_prefetch=0;loads=4"

# (rung, params, median, min, noise, GB/s, % peak): a real H100 run's figures
# (results/h100/default_f32_run2_caa4c7e.csv), widest values included (cupy, torch's vs prev).
FIGURES = [
    ("gmem", "", 84.05, 83.55, 0.35, 798, 23.8),
    ("smem_strided", "", 101.18, 100.32, 0.49, 663, 19.8),
    ("multi_elem", "blocks_per_sm=8", 32.00, 30.66, 2.15, 2097, 62.6),
    ("shfl_unroll", "unroll=4", 31.17, 29.86, 2.46, 2153, 64.2),
    ("warp_atomic", "", 924.42, 924.03, 0.02, 73, 2.2),
    ("gridstride_atomic", "blocks_per_sm=8", 27.17, 26.62, 2.00, 2470, 73.7),
    ("vector_load", VL, 25.70, 25.38, 1.49, 2612, 77.9),
    ("single_pass", VL, 26.82, 26.53, 1.76, 2503, 74.7),
    ("pingpong", VL, 24.93, 24.67, 1.47, 2692, 80.3),
    ("cub", "", 27.84, 27.30, 5.28, 2411, 71.9),
    ("cupy", "", 12222.43, 12067.68, 0.69, 5, 0.2),
    ("torch", "", 30.16, 29.50, 2.11, 2225, 66.4),
]
# Ratios worked out by hand from the medians above: (rung, vs prev, vs first, vs cub)
RATIOS = [("smem_strided", "0.83", "0.83", "3.634"),        # 84.05/101.18; 101.18/27.84
          ("warp_atomic", "0.03", "0.09", "33.205"),        # 31.17/924.42; 924.42/27.84
          ("cupy", "0.00", "0.01", "439.024"),              # 27.84/12222.43; 12222.43/27.84
          ("torch", "405.25", "2.79", "1.083")]             # 12222.43/30.16; 30.16/27.84
LONG_ERROR = ("result 8388608.25 vs reference 8388608.0: error 0.25 > tolerance 0.0 "
              "(exact inputs: every rung must return the exact sum)")


def records(**meta) -> list[Record]:
    out = []
    for rung, params, median, low, noise, gbps, peak in FIGURES:
        block = 0 if rung in ("cub", "cupy", "torch") else 256
        out.append(Record(rung, "float32", 2**24, block, params=params, samples=100,
                          median_us=median, min_us=low, noise_pct=noise, gbps=gbps,
                          pct_peak=peak, meta={**META, **meta}))
    out.append(Record("shfl", "float32", 2**24, 256, status="FAIL", error=LONG_ERROR,
                      samples=0, meta={**META, **meta}))
    out.append(Record("smem_sequential", "float32", 2**24, 256, status="skipped",
                      error="smem_sequential does not take this block size",
                      meta={**META, **meta}))
    return out


def render(items, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    for item in items:
        console.print(item)
    return console.export_text()


def row_line(text: str, rung: str) -> str:
    """The first table row naming `rung` (after any group columns such as dtype and n)."""
    for line in text.splitlines():
        if re.match(rf"[\s│┃]*(?:\S+\s+│\s+)*{re.escape(rung)}\b", line):
            return line
    raise AssertionError(f"no row for {rung} in\n{text}")


def whole(token: str, line: str) -> bool:
    """`token` appears as a whole number: no digit, point or ellipsis glued to it."""
    return re.search(rf"(?<![\d.…]){re.escape(token)}(?![\d.…])", line) is not None


def left_out(text: str) -> str:
    found = re.search(r"left out at this width: ([^(]*)", " ".join(text.split()))
    return found[1] if found else ""


@pytest.mark.parametrize("width", [80, 120])
def test_every_figure_of_every_row_is_whole(width):
    text = render(tables(records()), width)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    for rung, params, median, low, noise, gbps, peak in FIGURES:
        line = row_line(text, rung)
        for token in (f"{median:.2f}", f"{low:.2f}", f"{noise:.2f}", str(gbps),
                      f"{peak:.1f}"):
            assert whole(token, line), (rung, token, line)
    for rung, vs_prev, vs_first, vs_cub in RATIOS:
        line = row_line(text, rung)
        for token in (vs_prev, vs_first, vs_cub):
            assert whole(token, line), (rung, token, line)
    assert left_out(text) == ""   # at 80 columns this run still shows every column


def test_at_80_columns_the_text_gives_way_and_says_where_it_went():
    text = render(tables(records()), 80)
    assert "block 256" in text.splitlines()[0]           # one block size: in the title
    assert VL not in row_line(text, "vector_load")         # parameters: in a legend
    tag = re.search(r"vector_load (\[\d+\])", text)[1]
    assert f"{tag} {VL}" in text
    assert row_line(text, "pingpong").find(tag) > 0        # the same parameters, one tag
    assert LONG_ERROR[:40] not in row_line(text, "shfl")   # the reason: under the table
    assert f"shfl: FAIL: {LONG_ERROR}" in " ".join(text.split())


def test_at_full_width_the_table_is_as_it_was():
    short_reasons = [r for r in records() if r.status != "FAIL"]
    text = render(tables(short_reasons), 200)
    assert VL in row_line(text, "vector_load")
    assert "block" in text.splitlines()[2] and "verified" in text
    assert "does not take this block size" in row_line(text, "smem_sequential")
    # a long reason goes under the table before anything else gives way
    text = render(tables(records()), 200)
    assert VL in row_line(text, "vector_load")
    assert f"shfl: FAIL: {LONG_ERROR}" in " ".join(text.split())


@pytest.mark.parametrize("width", [40, 50, 60, 70])
def test_narrower_still_columns_are_left_out_whole_and_named(width):
    text = render(tables(records()), width)
    assert "…" not in text
    dropped = left_out(text)
    for rung, params, median, low, noise, gbps, peak in FIGURES:
        line = row_line(text, rung)
        for header, token in (("median us", f"{median:.2f}"), ("min us", f"{low:.2f}"),
                              ("noise %", f"{noise:.2f}"), ("GB/s", str(gbps)),
                              ("% peak", f"{peak:.1f}")):
            assert whole(token, line) or header in dropped, (width, header, line)
    assert "median us" not in dropped


def test_too_narrow_for_any_table_every_figure_is_printed_as_lines():
    text = render(tables(records()), 24)
    joined = " ".join(text.split())
    for rung, params, median, *_ in FIGURES:
        assert rung in joined and f"median us {median:.2f}" in joined


def test_error_ulps_column_only_with_random_inputs():
    exact = records()
    assert "error" not in render(tables(exact), 200).splitlines()[2]
    random = records(inputs="random")
    for record, ulps in zip(random, (0.5, 3.0, 1234.5)):
        record.error_ulps = ulps
    for width in (80, 120, 200):
        text = render(tables(random), width)
        assert "ulps" in text and "…" not in text
        for record, ulps in zip(random, ("0.5", "3.0", "1234.5")):
            assert whole(ulps, row_line(text, record.rung)), (width, ulps)


COUNTERS = {"ncu_dram_pct": 91.27, "ncu_dram_read_per_input": 1.0031, "ncu_l2_hit_pct": 3.4,
            "ncu_occupancy_pct": 87.65, "ncu_threads_per_inst": 31.87,
            "ncu_inst_per_elem": 1.52, "ncu_smem_ld_conflicts": 120,
            "ncu_smem_st_conflicts": 7, "ncu_stall_top": "long_scoreboard",
            "ncu_stall_top_pct": 61.2}


def test_counters_get_a_second_table_only_with_metrics():
    plain = records()
    assert "hardware counters" not in render(tables(plain), 200)
    measured = records()
    measured[6].metrics = dict(COUNTERS)                    # vector_load
    measured[0].ncu_error = "ncu found no kernel in the NVTX range"   # gmem
    for width in (80, 120, 200):
        text = render(tables(measured), width)
        assert "hardware counters" in text and "…" not in text
        counters = text[text.index("hardware counters"):]
        line = row_line(counters, "vector_load")
        # 120 + 7 bank conflicts summed; the top stall with its share
        for header, token in (("DRAM %", "91.3"), ("DRAM read / input", "1.003"),
                              ("L2 hit %", "3.4"), ("occupancy %", "87.7"),
                              ("threads / inst", "31.87"), ("inst / elem", "1.52"),
                              ("smem conflicts", "127")):
            assert whole(token, line) or header in left_out(counters), (width, token, line)
        if width >= 120:
            assert left_out(counters) == ""
        assert "long_scoreboard 61.2%" in " ".join(counters.split())
        assert "no counters" in counters


# ---- compare ----------------------------------------------------------------------------------


COMPARED = {  # rung at 2^24 -> (base us, new us, new/base, change): the fixtures' figures
    "smem_sequential": ("84.26", "89.32", "1.060", "+6.0%"),
    "shfl": ("65.36", "57.51", "0.880", "-12.0%"),
    "vector_load": ("27.14", "28.23", "1.040", "+4.0%"),
    "cub": ("31.84", "32.32", "1.015", "+1.5%"),
}


@pytest.mark.parametrize("width", [80, 120])
def test_compare_tables_keep_every_number_whole(width):
    result = invoke("compare", FIXTURES / "compare_base.csv", FIXTURES / "compare_new.csv",
                    width=width)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "…" not in text and max(map(len, text.splitlines())) <= width
    at_2_24 = text[text.rfind("\n", 0, text.index("2^24")) + 1:]
    for rung, figures in COMPARED.items():
        line = row_line(at_2_24, rung)
        for token in figures:
            assert whole(token, line), (width, rung, token, line)


@pytest.mark.parametrize("width", [80, 120])
def test_compare_baseline_table_keeps_every_number_whole(width):
    result = invoke("compare", FIXTURES / "sweep_small.csv", "--baseline", "cub", width=width)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "…" not in text and max(map(len, text.splitlines())) <= width
    # at 2^10: smem_sequential 8.00 us against cub's 5.00: ratio 1.600, speedup 0.62x
    at_2_10 = text[text.rfind("\n", 0, text.index("2^10")) + 1:]
    line = row_line(at_2_10, "smem_sequential")
    for token in ("8.00", "5.00", "1.600", "0.62x"):
        assert whole(token, line), (width, token, line)
