"""The built-in table (DEFAULT_TABLE, for GPUs without a tuning file) holds, per range,
the variant scripts/default_variants.py ranks first over the committed tune candidates of
both GPUs: the rule docs/tuning.md says the defaults follow."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from reducebench.ladder.auto import DEFAULT_TABLE

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "default_variants.py"
spec = importlib.util.spec_from_file_location("default_variants", SCRIPT)
default_variants = importlib.util.module_from_spec(spec)
spec.loader.exec_module(default_variants)

LATEST = [str(ROOT / "results" / gpu / "tune_candidates_9db2346.csv") for gpu in ("h100", "h200")]
UPPERS = [band.n_max for band in DEFAULT_TABLE.bands[:-1]]


def as_listed(variant) -> str:
    """A variant as the script names it: rung, block, then the CSV's params column."""
    params = ";".join(f"{k}={v}" for k, v in sorted(variant.params))
    return f"{variant.rung} {variant.block} {params}"


def test_the_ranges_are_the_built_in_tables():
    assert default_variants.ranges(UPPERS) == [(b.n_min, b.n_max) for b in DEFAULT_TABLE.bands]


def test_each_built_in_variant_is_ranked_first_over_both_gpus_tunes():
    found = default_variants.rankings(LATEST, UPPERS)
    for band, (_, points, ranked) in zip(DEFAULT_TABLE.bands, found):
        assert points >= 10, band  # float32 sample sizes of both GPUs, not float16 ones
        assert ranked.index[0] == as_listed(band.variant), (band, ranked.head(3))


def test_float16_confirmations_are_not_sample_sizes():
    """Up to 2^16 one_shot 32 x 4 is the fastest at every float32 sample size of both
    tunes (worst ratio 1.0); counting tune's float16 rows as sizes would leave no variant
    measured at all of them."""
    (_, points, ranked), *_ = default_variants.rankings(LATEST, UPPERS)
    assert points == 12  # 2^10 and 2^12..2^16 on each GPU
    assert ranked.iloc[0]["max"] == 1.0


def test_the_command_line_prints_each_range(capsys):
    assert default_variants.main(["--ranges", "2^16,2^24", *LATEST]) == 0
    out = capsys.readouterr().out
    assert "1..65536: 12 sample sizes" in out and "16777217..up" in out
    assert default_variants.main(["--help"]) == 0
    assert default_variants.main(LATEST) == 2  # no --ranges: the usage, not a guess
