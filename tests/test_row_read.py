"""The same-shape read on the CPU: a row case's read_us and pct_read come from the read of
its own shape (its ROWS x COLS input, one accumulator written a row), measured once per
shape in each round, never from the 1-D read of ROWS x COLS elements, and never shared
by two shapes of one n; `compare` judges each shape's cases against that shape's read;
the kernels in cuda_src/row_read.cu are the ceiling's read kernels with a row sum's
writes, and compile."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from reducebench.analysis.compare import NOISY, SLOWER, compare_runs
from reducebench.core.dtypes import DTYPES
from reducebench.ladder.case import Case
from reducebench.ladder.registry import LADDER, ROW_LADDER
from reducebench.measuring.read_ceiling import KERNELS, ROW_READ_SOURCE, row_write_words
from reducebench.measuring.runner import run
from reducebench.measuring.settings import settings_from

from cli_runner import invoke
from fakes import FakeBackend, FakeCliBackend

MEDIAN = 11.0  # the fake's median of every case (10, 11, 12 us)


def row_read_us(rows: int, cols: int, itemsize: int, acc_itemsize: int) -> float:
    """The fakes' same-shape read: its bytes (read and written) over 1000 bytes a us, so
    every shape, itemsize and accumulator size has a figure of its own."""
    return (rows * cols * itemsize + rows * acc_itemsize) / 1000


def flat_read_us(n: int, itemsize: int) -> float:
    return 1000.0 + n * itemsize / 1000   # far from any row read: a mix-up shows


class RowReading:
    """A fake device's same-size and same-shape reads, each call recorded."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.flat_calls: list[tuple] = []
        self.row_calls: list[tuple] = []

    def read_reference_us(self, handle, n, itemsize, sampling):
        self.flat_calls.append((n, itemsize))
        return flat_read_us(n, itemsize)

    def row_read_reference_us(self, handle, rows, cols, itemsize, acc_itemsize, sampling):
        assert handle.size == rows * cols  # the case's own input
        self.row_calls.append((rows, cols, itemsize, acc_itemsize))
        return row_read_us(rows, cols, itemsize, acc_itemsize)


class ReadingBackend(RowReading, FakeBackend):
    pass


class ReadingCliBackend(RowReading, FakeCliBackend):
    pass


class FlatOnly(FakeBackend):
    """A device with the 1-D read only."""

    def read_reference_us(self, handle, n, itemsize, sampling):
        return flat_read_us(n, itemsize)


def _cases(shapes, dtypes=("float32",), rungs=("row_warp", "row_block")):
    return [Case(ROW_LADDER[name], DTYPES[dtype], rows * cols, 256, dict(ROW_LADDER[name].params),
                 rows=rows)
            for rows, cols in shapes for dtype in dtypes for name in rungs]


def _run(backend, cases, rounds=1):
    settings = settings_from({"size": "2^10", "seed": 5, "rounds": rounds})
    return run(settings, backend, lambda record: None, cases=cases)


def test_each_shape_gets_its_own_read_and_two_shapes_of_one_n_never_share_one():
    backend = ReadingBackend()
    records = _run(backend, _cases([(1000, 33), (33, 1000)]))
    assert backend.row_calls == [(1000, 33, 4, 4), (33, 1000, 4, 4)]  # once a shape
    assert backend.flat_calls == []  # a row case is never measured against the 1-D read
    assert [(r.rows, r.read_us) for r in records] == [
        (1000, 132.0 + 4.0), (1000, 136.0), (33, 132.0 + 0.132), (33, 132.132)]
    for r in records:
        assert math.isclose(r.pct_read, 100 * r.read_us / MEDIAN)


def test_the_read_writes_one_accumulator_a_row_of_its_dtype():
    backend = ReadingBackend()
    records = _run(backend, _cases([(7, 5)], ("float32", "int32", "float64", "float16",
                                             "bfloat16"), ("row_warp",)))
    # float32 and int32 share one read (4-byte elements, 4-byte sums), float16 and
    # bfloat16 another (2-byte elements, float sums); float64 sums in double: 8 bytes
    assert backend.row_calls == [(7, 5, 4, 4), (7, 5, 8, 8), (7, 5, 2, 4)]
    reads = {r.dtype: r.read_us for r in records}
    assert reads == {"float32": 0.168, "int32": 0.168, "float64": 0.336,
                     "float16": 0.098, "bfloat16": 0.098}


def test_each_round_reads_each_shape_once_and_the_record_keeps_every_round():
    class Drifting(ReadingBackend):
        def row_read_reference_us(self, handle, rows, cols, itemsize, acc_itemsize, sampling):
            base = super().row_read_reference_us(handle, rows, cols, itemsize, acc_itemsize,
                                                 sampling)
            return base + len(self.row_calls)  # call k (from 1) adds k us

    backend = Drifting()
    records = _run(backend, _cases([(1000, 33), (33, 1000)], rungs=("row_warp",)), rounds=3)
    assert backend.row_calls == [(1000, 33, 4, 4), (33, 1000, 4, 4)] * 3
    wide, tall = (next(r for r in records if r.rows == rows) for rows in (33, 1000))
    # 1000x33 was read in calls 1, 3 and 5 (136 + 1, 3, 5); 33x1000 in calls 2, 4, 6
    assert tall.read_rounds_us == "137.0000;139.0000;141.0000" and tall.read_us == 139.0
    assert wide.read_rounds_us == "134.1320;136.1320;138.1320"
    assert math.isclose(wide.read_us, 136.132)


def test_without_a_same_shape_read_a_row_case_has_no_read_not_the_flat_one():
    records = _run(FlatOnly(), _cases([(1000, 33)]))
    assert all(r.status == "ok" and math.isnan(r.read_us) and math.isnan(r.pct_read)
               for r in records)
    # a 1-D case of the same n still gets the same-size read
    (flat,) = _run(FlatOnly(), [Case(LADDER["shfl"], DTYPES["float32"], 33000, 256)])
    assert flat.read_us == flat_read_us(33000, 4)


def test_run_shape_all_shows_percent_of_each_shapes_read_end_to_end(tmp_path, monkeypatch):
    import reducebench.device

    monkeypatch.setattr(reducebench.device, "open_backend",
                        lambda device=0: ReadingCliBackend())
    out = tmp_path / "rows.csv"
    result = invoke("run", "--shape", "1000x33,33x1000", "--rung", "all", "--out", out,
                    width=220)
    assert result.exit_code == 0, result.output
    assert "% read" in result.output
    frame = pd.read_csv(out)
    assert set(frame["status"]) == {"ok"}
    for row in frame.itertuples():
        assert row.read_us == pytest.approx(row_read_us(row.rows, row.cols, 4, 4))
        assert row.pct_read == pytest.approx(100 * row.read_us / row.median_us)


# -- compare: each shape against its own read ------------------------------------------------

STEADY = [24.352, 24.384, 24.352, 24.320, 24.352]
READ = [20.0, 20.02, 19.98, 20.01, 20.0]


def _side(rows: int, drift: float, read_drift: float) -> dict:
    return dict(rung="row_warp", dtype="float32", n=33000, rows=rows, cols=33000 // rows,
                block=256, params="", status="ok", error="", note="", noise_pct=0.5,
                source="", source_hash="", run_id=f"run{drift}",
                median_us=24.352 * drift,
                round_medians_us=";".join(str(x * drift) for x in STEADY),
                read_rounds_us=";".join(str(x * read_drift) for x in READ))


def test_compare_judges_each_shape_against_its_own_shapes_read():
    # NEW: both shapes 2.8% slower; only 1000x33's read moved with it
    base = pd.DataFrame([_side(1000, 1.0, 1.0), _side(33, 1.0, 1.0)])
    new = pd.DataFrame([_side(1000, 1.028, 1.028), _side(33, 1.028, 1.0)])
    c = compare_runs(base, new, 2.0)
    rows = c.rows.set_index("rows")
    assert rows.loc[1000, "verdict"] == NOISY and rows.loc[1000, "raw_verdict"] == SLOWER
    assert rows.loc[1000, "note"].startswith("the same-shape read moved +2.80% between the "
                                             "runs; raw: SLOWER +2.80%; against the read: "
                                             "SAME +0.00%")
    assert rows.loc[33, "verdict"] == SLOWER and not rows.loc[33, "read_moved"]
    moved = [w for w in c.warnings if "itself moved" in w]
    assert moved == ["the same-shape read itself moved +2.80% at shape=1000x33 float32 "
                     "between BASE and NEW: the machine changed; its 1 case(s) are judged "
                     "against the read and, where 5 or more others were timed, against "
                     "the other cases' median move (each note gives the raw verdict)"]


# -- the kernels ----------------------------------------------------------------------------

def test_a_row_sum_writes_one_word_a_row_or_two_for_a_double():
    assert row_write_words(1000, 4) == 1000 and row_write_words(1000, 8) == 2000
    assert row_write_words(1, 4) == 1


def test_each_read_kernel_has_a_twin_with_the_row_writes():
    twins = [k.row_expression for k in KERNELS]
    assert twins[0] == "read_rows_one_shot<1024, 4, 0u>"
    assert "read_rows_grid_stride<512, 4, 3, 0u>" in twins
    assert twins[-1] == "read_rows_one_shot<512, 2, 2u, true>"
    assert [t.replace("read_rows_", "read_", 1) for t in twins] == \
        [k.expression for k in KERNELS]


def test_the_row_read_source_opens_saying_what_it_is_and_why_it_is_the_yardstick():
    from reducebench.ladder.sources import source_path

    text = source_path(ROW_READ_SOURCE).read_text()
    opening = text[:text.index("#include")]
    assert opening.startswith("// The same-shape read: the yardstick of the row ladder")
    for part in ("// What: ", "// Why: ", "// Preconditions: "):
        assert part in opening, part
    assert '#include "ceiling.cu"' in text


@pytest.mark.parametrize("arch", ["sm_75", "sm_90"])
def test_every_row_read_kernel_compiles(arch):
    from reducebench.ladder import nvrtc
    from reducebench.ladder import sources

    if not nvrtc.available():
        pytest.skip("NVRTC or the CUDA headers are missing")
    expressions = [k.row_expression for k in KERNELS]
    result = nvrtc.compile_source(sources.expanded_source(ROW_READ_SOURCE), expressions,
                                  arch=arch, file_name=ROW_READ_SOURCE,
                                  options=sources.COMPILE_OPTIONS)
    assert result.ok, result.log
    assert all(result.lowered.get(e) for e in expressions)
    warnings = [line for line in result.log.splitlines() if "warning" in line.lower()]
    # only sm_75's: 3 blocks of 512 cannot all be resident on 1024 threads an SM
    assert all(".minnctapersm will be ignored" in line for line in warnings), warnings
    assert arch == "sm_75" or not warnings

