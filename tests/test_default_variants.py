"""The built-in table (DEFAULT_TABLE, for GPUs without a tuning file) holds, per range,
the variant scripts/default_variants.py ranks first over the latest committed tune
candidates of both GPUs: the rule docs/tuning.md says the defaults follow."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "default_variants.py"
spec = importlib.util.spec_from_file_location("default_variants", SCRIPT)
default_variants = importlib.util.module_from_spec(spec)
spec.loader.exec_module(default_variants)

LATEST = [str(ROOT / "results" / gpu / "tune_candidates_9db2346.csv") for gpu in ("h100", "h200")]


def as_listed(variant) -> str:
    """A variant as the script names it: rung, block, then the CSV's params column."""
    params = ";".join(f"{k}={v}" for k, v in sorted(variant.params))
    return f"{variant.rung} {variant.block} {params}"


def test_each_built_in_variant_is_ranked_first_over_both_gpus_tunes():
    for band, points, ranked in default_variants.rankings(LATEST):
        assert points >= 10, band  # float32 sample sizes of both GPUs, not float16 ones
        assert ranked.index[0] == as_listed(band.variant), (band, ranked.head(3))


def test_float16_confirmations_are_not_sample_sizes():
    """Up to 2^16 one_shot 32 x 4 was the fastest at every float32 sample size of both
    tunes (worst ratio 1.0); counting tune's float16 rows as sizes left no variant
    measured at all of them."""
    (band, points, ranked), *_ = default_variants.rankings(LATEST)
    assert points == 12  # 2^10 and 2^12..2^16 on each GPU
    assert ranked.iloc[0]["max"] == 1.0
