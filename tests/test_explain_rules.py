"""`explain`'s rules one function at a time (analysis/ladder_steps.py), with values worked by
hand: kernel headers read into notes, counters summed and judged at their tolerance,
figures formatted, verdicts worded, and the rows and steps chosen from a results frame
with each refusal's exact words. tests/test_explain.py has the worked ladder steps."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from reducebench.analysis import ladder_steps as ex
from reducebench.core.errors import ResultsFileError, UsageError

N = 2**24
nan = math.nan


def row(rung: str, median_us: float = 10.0, n: int = N, dtype: str = "float32",
        block: int = 256, status: str = "ok", **counters) -> dict:
    record = dict(rung=rung, dtype=dtype, n=n, block=block, status=status,
                  median_us=median_us, noise_pct=1.0, ncu_version="2025.3",
                  ncu_clock_control="none", ncu_inst_per_elem=nan)
    record.update({f"ncu_{k}": v for k, v in counters.items()})
    return record


def frame(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


# -- kernel headers ---------------------------------------------------------------------------

def test_header_sections_labels_bodies_and_where_they_stop():
    text = ("// Rung x: the title: not a section\n"
            "// a line before any section\n"
            "//\n"
            "// Changed from y: one. Two.\n"
            "//   more of two.\n"
            "// Why faster: because.\n"
            "// Why no colon here\n"
            "// Still slow: a cost.\n"
            "// Preconditions: any n.\n"
            "code();\n"
            "// New cost: after the code, not read\n")
    assert ex.header_sections(text) == [
        ("Changed from y", "one. Two. more of two."),
        ("Why faster", "because. Why no colon here"),
        ("Still slow", "a cost."),
        ("Preconditions", "any n.")]
    assert ex.header_sections("#include <x>\n// Why: after code\n") == []


@pytest.mark.parametrize("text, first", [
    ("One. Two.", "One."),
    ("  One;  Two  ", "One;"),
    ("one. (Two) three", "one."),
    ("e.g. lower case goes on. Next", "e.g. lower case goes on."),
    ("x.Y no space", "x.Y no space")])
def test_the_first_sentence(text, first):
    assert ex.first_sentence(text) == first


def test_the_source_note_of_a_rung_from_its_kernel_file():
    assert ex.source_note("smem_strided") == ex.SourceNote(
        "smem_interleaved",
        "the same pairs are added, but thread t now handles the pair at index = 2 * stride "
        "* t, so the working threads are the first BLOCK/(2*stride) ones instead of every "
        "(2*stride)-th one.",
        "whole warps either work or skip the step together, so no warp carries idle lanes "
        "through the add, and the modulo is gone.",
        "consecutive threads touch words 2*stride apart, so several threads of a warp hit "
        "the same shared-memory bank (a 2-way conflict at stride 1, worse as stride grows) "
        "and their accesses are serialised; the next rung removes that.")
    interleaved = ex.source_note("smem_interleaved")
    assert interleaved.changed_from == "gmem"
    assert interleaved.changed == ("each thread first copies its element into a "
                                   "shared-memory array (0 past the end of the input), and "
                                   "the tree runs there instead of in global memory.")
    assert interleaved.cost == ("`tid % (2*stride) == 0` picks scattered threads, so every "
                                "warp stays busy with a few active lanes (divergence), and "
                                "% is a costly instruction.")


def test_no_note_without_a_kernel_file(monkeypatch, tmp_path):
    assert ex.source_note("cub") == ex.SourceNote()          # a library rung
    assert ex.source_note("no_such_rung") == ex.SourceNote()
    monkeypatch.setattr(ex, "source_path", lambda name: tmp_path / "gone.cu")
    assert ex.source_note("smem_strided") == ex.SourceNote()


# -- counters ----------------------------------------------------------------------------------

def test_a_counter_is_the_sum_of_its_columns_or_nan():
    conflicts = ex.COUNTERS["conflicts"]
    assert ex.counter_value({"ncu_smem_ld_conflicts": 3, "ncu_smem_st_conflicts": "4"},
                            conflicts) == 7.0
    assert math.isnan(ex.counter_value({"ncu_smem_ld_conflicts": 3,
                                        "ncu_smem_st_conflicts": ""}, conflicts))
    assert math.isnan(ex.counter_value({"ncu_smem_ld_conflicts": 3}, conflicts))
    assert math.isnan(ex.counter_value({"ncu_smem_ld_conflicts": None,
                                        "ncu_smem_st_conflicts": 1}, conflicts))


def test_tolerances():
    time, dram = ex.COUNTERS["time"], ex.COUNTERS["dram_pct"]
    assert ex.tolerance(dram, {"noise_pct": 50.0}, {"noise_pct": 50.0}) == 0.05
    assert ex.tolerance(time, {"noise_pct": 2.0}, {"noise_pct": nan}) == 0.03
    assert ex.tolerance(time, {"noise_pct": 2.5}, {"noise_pct": "x"}) == pytest.approx(0.03)
    assert ex.tolerance(time, {"noise_pct": 2.5}, {"noise_pct": 1.5}) == pytest.approx(0.04)
    assert ex.tolerance(time, {}, {}) == 0.03


@pytest.mark.parametrize("before, after, tol, seen", [
    (4.0, 5.0, 0.25, "same"), (4.0, 3.0, 0.25, "same"),     # exactly at the tolerance
    (4.0, 5.0, 0.2, "up"), (4.0, 3.0, 0.2, "down"),
    (0.0, 0.0, 0.0, "same"), (0.0, 2.0, 0.5, "up"), (0.0, -2.0, 0.5, "down"),
    (nan, 1.0, 0.1, None), (1.0, nan, 0.1, None)])
def test_directions(before, after, tol, seen):
    assert ex.direction(before, after, tol) == seen


@pytest.mark.parametrize("key, value, shown", [
    ("conflicts", nan, "-"),
    ("conflicts", 2.5e9, "2.50G"), ("conflicts", 1e9, "1.00G"), ("conflicts", 1e6, "1.00M"),
    ("conflicts", -2e6, "-2.00M"), ("conflicts", 1e3, "1.00k"), ("conflicts", 999.0, "999"),
    ("dram_pct", 45.67, "45.7%"),
    ("time", 9.994, "9.99 us"), ("time", 10.0, "10.0 us"), ("time", -5.0, "-5.00 us"),
    ("inst_per_elem", 123.45, "123.5")])
def test_values_as_shown(key, value, shown):
    assert ex.format_value(value, ex.COUNTERS[key]) == shown


@pytest.mark.parametrize("before, after, shown", [
    (nan, 1.0, ""), (1.0, nan, ""), (0.0, 0.0, ""), (0.0, 5.0, "new"),
    (100.0, 121.0, "+21%"), (100.0, 50.0, "-50%"), (100.0, 100.0, "+0%")])
def test_changes_as_shown(before, after, shown):
    assert ex.format_change(before, after) == shown


def test_a_counter_line():
    conflicts = ex.COUNTERS["conflicts"]
    assert ex.CounterLine(conflicts, 0.0, 0.0).text == "bank conflicts: 0 -> 0"
    assert ex.CounterLine(conflicts, 0.0, 5e6).text == "bank conflicts: 0 -> 5.00M (new)"
    assert ex.CounterLine(ex.COUNTERS["time"], 10.0, 12.0).text == \
        "time: 10.0 us -> 12.0 us (+20%)"


# -- verdicts ------------------------------------------------------------------------------------

def check(counter: str, direction: str, seen, before=1.0, after=1.0) -> ex.Check:
    return ex.Check(ex.Expect(counter, direction, "why"), before, after, seen)


def report(*checks: ex.Check) -> ex.StepReport:
    return ex.StepReport(ex.Step("a", "b", "who"), {}, {}, ex.SourceNote(),
                         checks=list(checks))


def test_each_outcome_and_its_words():
    assert report().outcome == ex.NO_CLAIM
    assert report().verdict() == "no textbook claim for this pair"
    held = check("time", "down", "down")
    assert held.held is True and report(held).outcome == ex.EXPECTED
    assert report(held).verdict() == "as the textbook says"
    unknown = check("conflicts", "down", None)
    assert unknown.held is None and report(held, unknown).outcome == ex.UNKNOWN
    assert report(held, unknown, check("dram_pct", "up", None)).verdict() == \
        "counters missing for: bank conflicts, DRAM % of peak"
    missed = check("time", "down", "same", 10.0, 10.1)
    wrong = check("dram_pct", "up", "down", 50.0, 40.0)
    assert missed.held is False
    assert report(held, unknown, missed, wrong).outcome == ex.FINDING
    assert report(missed, wrong).verdict() == (
        "finding: time did not change (+1%), the textbook says down; DRAM % of peak went "
        "down (-20%), the textbook says up")


def test_the_top_stall_as_shown():
    assert ex._stall_text({}) == "-"
    assert ex._stall_text({"ncu_stall_top": nan, "ncu_stall_top_pct": 5}) == "-"
    assert ex._stall_text({"ncu_stall_top": "", "ncu_stall_top_pct": 5}) == "-"
    assert ex._stall_text({"ncu_stall_top": "wait"}) == "wait"
    assert ex._stall_text({"ncu_stall_top": "wait", "ncu_stall_top_pct": "39.6"}) == "wait 40%"
    stalls = report()
    stalls.before, stalls.after = {"ncu_stall_top": "a"}, {"ncu_stall_top": "b"}
    assert stalls.stall == ("a", "b")


def test_a_step_compares_every_shown_counter_and_checks_the_claims_at_their_tolerance():
    step = ex.Step("shfl", "shfl_xor", "who", (ex.Expect("time", "same", "why"),
                                               ex.Expect("inst_per_elem", "same", "why")))
    before = row("shfl", 100.0, inst_per_elem=20.0)
    after = row("shfl_xor", 104.0, inst_per_elem=20.5)     # +4%, beyond max(3%, 1% + 1%)
    done = ex.compare_step(step, before, after)
    assert [line.counter.key for line in done.lines] == list(ex.SHOWN)
    assert (done.lines[0].before, done.lines[0].after) == (100.0, 104.0)
    assert [(c.expect.counter, c.before, c.after, c.seen) for c in done.checks] == [
        ("time", 100.0, 104.0, "up"), ("inst_per_elem", 20.0, 20.5, "same")]
    quiet = dict(after, noise_pct=1.5)          # noise 3% + 1.5%: +4% is within 4.5%
    assert ex.compare_step(step, dict(before, noise_pct=3.0), quiet).checks[0].seen == "same"
    assert done.note == ex.source_note("shfl_xor")


# -- rows and steps ------------------------------------------------------------------------------

def test_the_title():
    assert ex.Explanation(N, "float32", []).title == "n = 2^24 (16,777,216) float32"
    assert ex.Explanation(1000, "int32", [], read_us=12.345).title == \
        "n = 1000 (1,000) int32 · same-size read 12.35 us"


def test_counters_are_any_ncu_value_but_the_version_and_clock_setting():
    assert not ex._has_counters({"ncu_version": "1", "ncu_clock_control": "2", "x": 3})
    assert ex._has_counters({"ncu_dram_pct": "4.5"})
    assert not ex._has_counters({"ncu_dram_pct": ""})


def test_no_verified_rows_says_for_what(tmp_path):
    rows = frame(row("shfl", status="FAIL", dram_pct=1.0))
    with pytest.raises(UsageError) as refused:
        ex.pick_rows(rows, None, None, "run.csv")
    assert str(refused.value) == "run.csv: no verified rows"
    ok = frame(row("shfl", dram_pct=1.0))
    for size, dtype, said in ((2**20, None, " for n=2^20"), (None, "float64", " for float64"),
                              (2**20, "float64", " for n=2^20 float64")):
        with pytest.raises(UsageError) as refused:
            ex.pick_rows(ok, size, dtype, "run.csv")
        assert str(refused.value) == "run.csv: no verified rows" + said


def test_rows_without_counters_are_refused_in_one_line():
    with pytest.raises(ResultsFileError) as refused:
        ex.pick_rows(frame(row("shfl"), row("shfl", n=2**20)), None, None, "run.csv")
    assert str(refused.value) == ex.no_counters("run.csv") == (
        "run.csv has no hardware counters (no ncu_ values); measure them with "
        "`reducebench run --metrics`")
    # counters only at another size: refused for the size chosen
    with pytest.raises(ResultsFileError, match="no hardware counters"):
        ex.pick_rows(frame(row("shfl"), row("shfl", n=2**20, dram_pct=1.0)), N, None, "r")


def test_several_groups_ask_for_what_differs():
    rows = frame(row("shfl", dram_pct=1.0), row("shfl", n=2**20, dtype="float64"),
                 row("shfl", n=2**20))
    with pytest.raises(UsageError) as refused:
        ex.pick_rows(rows, None, None, "run.csv")
    assert str(refused.value) == ("run.csv holds several sizes or dtypes (float32 n=2^20, "
                                  "float64 n=2^20, float32 n=2^24); pick one with --size and "
                                  "--dtype")
    two_dtypes = frame(row("shfl", dram_pct=1.0), row("shfl", dtype="float64"))
    with pytest.raises(UsageError) as refused:
        ex.pick_rows(two_dtypes, None, None, "run.csv")
    assert str(refused.value).endswith("pick one with --dtype")
    n, dtype, picked = ex.pick_rows(two_dtypes, None, "float32", "run.csv")
    assert (n, dtype, list(picked)) == (N, "float32", ["shfl"])


def test_a_rungs_block_256_row_wins_and_otherwise_its_first():
    rows = frame(row("shfl", 1.0, block=512, dram_pct=1.0), row("shfl", 2.0, block=256,
                                                               dram_pct=1.0),
                 row("shfl", 3.0, block=128), row("cub", 4.0, block=0), row("cub", 5.0,
                                                                            block=64))
    n, dtype, picked = ex.pick_rows(rows, None, None, "r")
    assert picked["shfl"]["median_us"] == 2.0 and picked["cub"]["median_us"] == 4.0
    no_status = rows.drop(columns="status")
    assert ex.pick_rows(no_status, None, None, "r")[2]["shfl"]["median_us"] == 2.0
    text_blocks = rows.assign(block=rows["block"].astype(str))
    assert ex.pick_rows(text_blocks, None, None, "r")[2]["shfl"]["median_us"] == 2.0


def test_whole_numbers_of_a_cell():
    assert ex._int("256") == 256 and ex._int(256.0) == 256 and ex._int("") is None


def test_steps_by_default_named_one_or_several():
    rows = {"smem_strided": {}, "smem_sequential": {}, "shfl": {}}
    shown, skipped = ex.choose_steps([], rows, "r")
    assert [(s.before, s.after) for s in shown] == [("smem_strided", "smem_sequential"),
                                                     ("smem_sequential", "shfl")]
    assert len(skipped) == len(ex.STEPS) - 2 and not set(shown) & set(skipped)
    assert ex.choose_steps(["shfl"], rows, "r") == ([ex.STEP_BY_PAIR[("smem_sequential",
                                                                     "shfl")]], [])
    steps, skipped = ex.choose_steps(["shfl", "smem_strided"], rows, "r")
    assert steps == [ex.Step("shfl", "smem_strided", "")] and skipped == []


def test_steps_that_cannot_be_chosen_say_why():
    with pytest.raises(UsageError) as refused:
        ex.choose_steps([], {"shfl": {}, "cub": {}}, "run.csv")
    assert str(refused.value) == ("run.csv: no ladder step has rows for both its rungs; "
                                  "name the rungs to compare")
    with pytest.raises(UsageError) as refused:
        ex.choose_steps(["shfl", "shfll"], {"shfl": {}}, "run.csv")
    assert str(refused.value) == ("run.csv: no verified row for rung 'shfll' (not a rung of "
                                  "the ladder) (did you mean shfl?)")
    with pytest.raises(UsageError) as refused:
        ex.choose_steps(["cub"], {"shfl": {}}, "run.csv")
    assert str(refused.value) == "run.csv: no verified row for rung 'cub'"
    with pytest.raises(UsageError) as refused:
        ex.choose_steps(["gmem"], {"gmem": {}, "shfl": {}}, "run.csv")
    assert str(refused.value) == ("rung 'gmem' has no textbook predecessor with a row in "
                                  "run.csv; name two rungs to compare")


def test_explain_puts_it_together_with_the_same_size_read():
    rows = frame(dict(row("smem_strided", 100.0, dram_pct=20.0), read_us=nan),
                 dict(row("smem_sequential", 80.0, dram_pct=25.0), read_us=12.0))
    result = ex.explain(rows, ["smem_sequential"], where="run.csv")
    assert (result.n, result.dtype, result.read_us) == (N, "float32", 12.0)
    assert [(r.step.before, r.step.after) for r in result.reports] == [
        ("smem_strided", "smem_sequential")]
    assert result.reports[0].before["median_us"] == 100.0 and result.skipped == []
    assert math.isnan(ex.read_reference({"a": {"read_us": ""}, "b": {}}))
    assert ex.read_reference({"a": {"read_us": "x"}, "b": {"read_us": "7.5"}}) == 7.5


# -- the cases the tests above leave open ------------------------------------------------------

def test_a_header_line_without_a_space_and_a_body_with_a_colon():
    text = "//Why: the cost: one load.\n// Still slow:  two: three.\n"
    assert ex.header_sections(text) == [("Why", "the cost: one load."),
                                        ("Still slow", "two: three.")]


def test_a_kernel_file_with_only_some_sections_leaves_the_others_empty(monkeypatch,
                                                                        tmp_path):
    source = tmp_path / "k.cu"
    source.write_text("// Why: one. Two.\n__global__ void k() {}\n")
    monkeypatch.setattr(ex, "source_path", lambda name: source)
    assert ex.source_note("smem_strided") == ex.SourceNote("", "", "one.", "")


def test_a_counter_up_from_zero_by_less_than_one():
    assert ex.direction(0.0, 0.5, 0.05) == "up"
    assert ex.direction(0.0, -0.5, 0.05) == "down"


def test_a_percentage_below_ten_keeps_one_decimal():
    assert ex.format_value(5.0, ex.COUNTERS["dram_pct"]) == "5.0%"
    assert ex.format_value(5.0, ex.COUNTERS["time"]) == "5.00 us"


def test_of_two_block_256_rows_the_first_wins():
    rows = frame(row("shfl", 1.0, dram_pct=1.0), row("shfl", 2.0, dram_pct=2.0))
    assert ex.pick_rows(rows, None, None, "r")[2]["shfl"]["median_us"] == 1.0


def test_counters_only_in_a_row_not_chosen_are_refused_in_one_line():
    # the rung's block-256 row has none; its block-128 row's counters are not explained
    rows = frame(row("shfl", 1.0, block=128, dram_pct=1.0), row("shfl", 2.0))
    with pytest.raises(ResultsFileError) as refused:
        ex.pick_rows(rows, None, None, "run.csv")
    assert str(refused.value) == ("run.csv has no hardware counters (no ncu_ values); "
                                  "measure them with `reducebench run --metrics`")


def test_explain_passes_its_selection_and_file_name_on():
    with pytest.raises(ResultsFileError) as refused:
        ex.explain(frame(row("shfl")))
    assert str(refused.value).startswith("the results has no hardware counters")
    with pytest.raises(UsageError) as refused:
        ex.explain(frame(row("shfl", dram_pct=1.0)), size=2**20, where="run.csv")
    assert str(refused.value) == "run.csv: no verified rows for n=2^20"
    with pytest.raises(UsageError) as refused:
        ex.explain(frame(row("shfl", dram_pct=1.0)), ["cub"], where="run.csv")
    assert str(refused.value) == "run.csv: no verified row for rung 'cub'"
    two_dtypes = frame(row("smem_strided", 100.0, dram_pct=20.0),
                       row("smem_sequential", 80.0, dram_pct=25.0),
                       row("smem_strided", dtype="float64", dram_pct=1.0))
    result = ex.explain(two_dtypes, dtype="float32", where="run.csv")
    assert (result.n, result.dtype) == (N, "float32")
