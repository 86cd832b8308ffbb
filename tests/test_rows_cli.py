"""`run --shape` and `check --shape` end to end on the CPU (the test device: the host
executor of every plan): every row rung measured and verified, the shape in every row
of the results file and in its samples' keys, resumed case by case, compared shape by
shape; and each thing that does not go with a shape refused in one line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from reducebench.core.errors import UsageError
from reducebench.ladder.registry import ROW_RUNGS
from reducebench.results.files import read_results
from reducebench.results.samples_file import read_samples
from cli_runner import invoke, one_error_line


def test_run_measures_every_row_rung_at_each_shape(tmp_path, fake_device):
    out = tmp_path / "rows.csv"
    result = invoke("run", "--shape", "1000x33,33x1000", "--dtype", "int32,bfloat16",
                    "--out", out, "--seed", 3)
    assert result.exit_code == 0, result.output
    assert "shape = 1000x33" in result.output and "shape = 33x1000" in result.output
    raw = pd.read_csv(out)
    assert len(raw) == 2 * 2 * len(ROW_RUNGS)
    # every case but CUB's in bfloat16, which CuPy's binding cannot sum
    skipped = raw[raw["status"] == "skipped"]
    assert set(zip(skipped["rung"], skipped["dtype"])) == {("cub_rows", "bfloat16")}
    assert list(skipped["error"]) == ["cub_rows does not take bfloat16"] * 2
    assert set(raw["status"]) == {"ok", "skipped"} and set(raw["schema_version"]) == {6}
    assert set(zip(raw["rows"], raw["cols"], raw["n"])) == {(1000, 33, 33000),
                                                             (33, 1000, 33000)}
    options = json.loads(raw["options"].iloc[0])
    assert options["shape"] == ["1000x33", "33x1000"] and "size" not in options
    samples = read_samples(out.with_name("rows.samples.csv"))
    assert set(samples["rows"]) == {1000, 33}


def test_a_resumed_shape_run_measures_only_the_missing_case(tmp_path, fake_device):
    out = tmp_path / "rows.csv"
    assert invoke("run", "--shape", "1000x33,33x1000", "--rung", "row_warp,row_block",
                  "--out", out).exit_code == 0
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-1]))          # the last case (row_block 33x1000) lost
    result = invoke("run", "--resume", out)
    assert result.exit_code == 0, result.output
    frame = read_results(out)
    assert len(pd.read_csv(out)) == 4
    assert sorted(zip(frame["rung"], frame["rows"])) == [
        ("row_block", 33), ("row_block", 1000), ("row_warp", 33), ("row_warp", 1000)]


def test_compare_pairs_two_shapes_of_one_size_apart(tmp_path, fake_device):
    out = tmp_path / "rows.csv"
    assert invoke("run", "--shape", "1000x33,33x1000", "--rung", "row_warp",
                  "--out", out).exit_code == 0
    result = invoke("compare", out, out, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert sorted((r["rung"], r["rows"], r["n"]) for r in rows) == [
        ("row_warp", 33, 33000), ("row_warp", 1000, 33000)]


def test_check_verifies_each_row_and_names_the_shape(fake_device):
    result = invoke("check", "--shape", "3x5,1x1", "--dtype", "int32", "--rung", "row_group")
    assert result.exit_code == 0, result.output
    assert "row_group int32 shape=3x5 block=256 width=8: ok" in result.output
    assert "row_group int32 shape=1x1 block=256 width=8: ok" in result.output


def test_a_size_run_is_the_one_dimensional_ladder_as_before(tmp_path, fake_device):
    out = tmp_path / "one.csv"
    assert invoke("run", "--size", "2^10", "--rung", "shfl", "--out", out).exit_code == 0
    raw = pd.read_csv(out)
    assert list(raw["rung"]) == ["shfl"] and list(raw["rows"]) == [1]
    assert list(raw["cols"]) == [1024]
    assert json.loads(raw["options"].iloc[0])["size"] == [1024]


@pytest.mark.parametrize("args, says", [
    (("--shape", "4x"), "invalid shape '4x': no cols"),
    (("--shape", "4x4", "--size", "2^10"), "--size and --shape: give one"),
    (("--shape", "4x4", "--rung", "shfl"), "shfl sums the whole array to one value"),
    (("--shape", "4x4", "--rung", "row_wrap"), "unknown row rung 'row_wrap' (did you mean "
                                               "row_warp?)"),
    (("--size", "2^10", "--rung", "row_warp"), "row_warp sums each row of an array: give "
                                               "--shape"),
    (("--shape", "4x4", "--param", "width=6"), "parameter width: values must be powers of two"),
    (("--shape", "4x4", "--param", "unroll=2"), "--param unroll: none of the chosen rungs"),
])
def test_what_does_not_go_with_a_shape_is_one_line_before_any_gpu(args, says, fake_device):
    one_error_line(invoke("run", *args), says)
    assert not fake_device.opened


def test_list_shows_the_row_ladder_after_the_one_dimensional_one():
    listed = invoke("list", "--format", "text").output
    assert all(rung.name in listed for rung in ROW_RUNGS)
    assert listed.index("row_thread") > listed.index("one_shot")


@pytest.mark.parametrize("rung", ROW_RUNGS, ids=lambda r: r.name)
def test_show_a_row_rung_gives_its_facts_and_kernel(rung):
    result = invoke("show", rung.name, width=200)
    assert result.exit_code == 0, result.output
    assert "rows x cols x element size bytes" in result.output
    if not rung.is_library and not rung.dispatch:
        assert f"cuda_src/{rung.source}" in result.output


def test_a_baseline_is_taken_per_shape_not_per_size():
    from reducebench.analysis.compare.baseline import baseline_ratios

    frame = pd.DataFrame({
        "rung": ["row_warp", "torch_rows", "row_warp", "torch_rows"],
        "dtype": "float32", "n": 33000, "rows": [1000, 1000, 33, 33], "block": [256, 0, 256, 0],
        "params": "", "status": "ok", "median_us": [8.0, 4.0, 6.0, 12.0]})
    out = baseline_ratios(frame, "torch_rows")
    ratios = {(r.rung, r.rows): r.ratio for r in out.itertuples()}
    assert ratios == {("row_warp", 1000): 2.0, ("torch_rows", 1000): 1.0,
                      ("row_warp", 33): 0.5, ("torch_rows", 33): 1.0}


def test_compare_titles_each_group_by_its_shape(tmp_path, fake_device):
    out = tmp_path / "rows.csv"
    assert invoke("run", "--shape", "1000x33,33x1000", "--rung", "row_warp",
                  "--out", out).exit_code == 0
    shown = invoke("compare", out, out, width=200).output
    assert "1000x33" in shown and "33x1000" in shown


def test_measure_takes_shapes_with_a_row_rung(monkeypatch):
    import reducebench
    import reducebench.device
    from fakes import FakeCliBackend

    monkeypatch.setattr(reducebench.device, "open_backend", lambda device=0: FakeCliBackend())
    result = reducebench.measure("row_group,row_block", shape="1000x33,2x3", dtype="int32")
    assert [(r.rung, r.rows, r.cols) for r in result.records] == [
        ("row_group", 1000, 33), ("row_block", 1000, 33), ("row_group", 2, 3),
        ("row_block", 2, 3)]
    assert result.verified
    with pytest.raises(UsageError, match="--size and --shape: give one"):
        reducebench.measure("row_warp", size=1024, shape="4x4")


def test_a_shape_given_overrides_a_configs_size_and_a_size_given_its_shape(tmp_path):
    from reducebench.measuring.settings import merge, settings_from

    defaults = {"size": "2^24", "rung": "all"}
    with_size, with_shape = {"size": "2^20"}, {"shape": "4x4"}
    assert settings_from(merge(with_size, with_shape, defaults)).shapes == [(4, 4)]
    assert settings_from(merge(with_shape, {"size": "2^10"}, defaults)).sizes == [1024]
    assert settings_from(merge(with_shape, {}, defaults)).shapes == [(4, 4)]
    assert settings_from(merge({}, {}, defaults)).sizes == [2**24]
    with pytest.raises(UsageError, match="--size and --shape: give one"):
        settings_from(merge({}, {**with_size, **with_shape}, defaults))


def test_a_config_file_may_say_a_shape(tmp_path):
    from reducebench.measuring.settings import load_config, merge, settings_from

    config = tmp_path / "rows.toml"
    config.write_text('shape = ["4096x4096", "2^20x8"]\nrung = "row_block"\n')
    settings = settings_from(merge(load_config(config), {}, {"size": "2^24"}))
    assert settings.shapes == [(4096, 4096), (2**20, 8)] and not settings.sizes
    assert [r.name for r in settings.rungs] == ["row_block"]
