"""scripts/merge_tuning.py: a table whose small bands come from a retune and whose large
bands stay the shipped table's, for a retune that searched new variants only up to a
size."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest

from reducebench.ladder.auto import Variant, choose, load_table, write_table

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "merge_tuning.py"
spec = importlib.util.spec_from_file_location("merge_tuning", SCRIPT)
merge_tuning = importlib.util.module_from_spec(spec)
spec.loader.exec_module(merge_tuning)

SHIPPED = ROOT / "configs" / "tuning" / "nvidia-h200.toml"
ONE_WARP = Variant.of("one_shot", 32, loads=4, l2_prefetch=0)


def retuned(table):
    """The shipped table with every band's variant replaced by one_shot 32 x 4."""
    return replace(table, date="2099-01-01",
                   bands=tuple(replace(b, variant=ONE_WARP) for b in table.bands))


def test_sizes_up_to_the_split_run_the_new_table_and_larger_ones_the_old(tmp_path):
    old = load_table(SHIPPED)
    out = tmp_path / "merged.toml"
    assert merge_tuning.main([str(write_table(retuned(old), tmp_path / "new.toml")),
                              str(SHIPPED), "2^20", str(out)]) == 0
    table = load_table(out)  # loading checks that the bands cover every size once
    for n in (1, 2**12, 2**19 + 1, 2**20):
        assert choose(table, n, "float32") == ONE_WARP, n
    for n in (2**20 + 1, 2**24, 2**31):
        assert choose(table, n, "float32") == choose(old, n, "float32") != ONE_WARP, n
    assert table.date == "2099-01-01"


def test_a_split_inside_a_band_is_refused(tmp_path, capsys):
    new = write_table(retuned(load_table(SHIPPED)), tmp_path / "new.toml")
    assert merge_tuning.main([str(new), str(SHIPPED), "3000", str(tmp_path / "x.toml")]) == 2
    assert "no band of NEW ends at 3000" in capsys.readouterr().err
    assert not (tmp_path / "x.toml").exists()


def test_tables_of_two_gpus_are_not_merged():
    old = load_table(SHIPPED)
    with pytest.raises(ValueError, match="differ in gpu"):
        merge_tuning.merged(replace(old, gpu="NVIDIA H100 80GB HBM3"), old, 2**20)


def test_tables_of_other_element_sizes_are_not_merged():
    old = load_table(SHIPPED)
    with pytest.raises(ValueError, match="differ in element_bytes"):
        merge_tuning.merged(replace(old, element_bytes=2), old, 2**20)


def test_a_file_that_does_not_read_is_one_line_and_exit_2(tmp_path, capsys):
    assert merge_tuning.main([str(tmp_path / "missing.toml"), str(SHIPPED), "2^20",
                              str(tmp_path / "x.toml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("merge_tuning: ") and err.count("\n") == 1
