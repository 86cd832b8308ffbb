"""`compare` decides from the raw samples when both runs kept them: synthetic samples
whose right answer is known by construction (the same distribution twice, 1% and 5%
slower), the p-value shown, and the ratio rule named where samples are missing."""

import numpy as np
from click.testing import CliRunner

from reducebench.cli import cli
from reducebench.analysis.compare import RATIO_RULE, SAMPLES_RULE, SAME, SLOWER, compare_runs
from reducebench.ladder.case import case_key
from reducebench.ladder.registry import LADDER
from reducebench.results.schema import Record
from reducebench.results.files import RowWriter, read_results
from reducebench.results.samples_file import CaseSamples, SamplesWriter, samples_for_results
from reducebench.results.naming import samples_path

META = {"schema_version": 2, "gpu": "Fake GPU", "mode": "cold", "timing": "single",
        "inputs": "exact", "run_id": "r1"}
RUNGS = ("shfl", "vector_load", "cub")


def write_run(path, times_by_rung, with_samples=True):
    writer = RowWriter(path)
    samples = SamplesWriter(samples_path(path))
    for rung, times in times_by_rung.items():
        block = 0 if LADDER[rung].is_library else 256
        record = Record(rung=rung, dtype="float32", n=2**24, block=block,
                        samples=len(times), median_us=float(np.median(times)),
                        noise_pct=100 * float(np.std(times, ddof=1) / np.mean(times)),
                        meta=dict(META))
        writer.write(record)
        if with_samples:
            samples.write_case("r1", case_key(rung, "float32", 2**24, block, ""),
                               CaseSamples(list(times)))
    return path


def noisy(median, count=200, seed=0, spread=0.01):
    rng = np.random.default_rng(seed)
    return median * (1 + spread * rng.standard_normal(count))


def test_the_same_distribution_is_same_and_five_percent_is_slower_with_its_p(tmp_path):
    base = write_run(tmp_path / "base.csv", {"shfl": noisy(60, seed=1),
                                             "vector_load": noisy(25, seed=2),
                                             "cub": noisy(27, seed=3)})
    new = write_run(tmp_path / "new.csv", {"shfl": noisy(60, seed=4),
                                           "vector_load": noisy(25 * 1.05, seed=5),
                                           "cub": noisy(27 * 1.01, seed=6)})
    result = compare_runs(read_results(base), read_results(new), 2.0,
                          samples_for_results(base), samples_for_results(new))
    rows = {r.rung: r for r in result.rows.itertuples()}
    assert all(r.rule == SAMPLES_RULE for r in rows.values())
    assert rows["shfl"].verdict == SAME
    assert rows["vector_load"].verdict == SLOWER and rows["vector_load"].p_value < 1e-6
    assert rows["vector_load"].ci_low > 1.0
    assert rows["cub"].verdict == SAME and "significant but small" in rows["cub"].note


def test_without_samples_the_ratio_rule_decides_and_says_so(tmp_path):
    base = write_run(tmp_path / "base.csv", {"shfl": noisy(60, seed=1)}, with_samples=False)
    new = write_run(tmp_path / "new.csv", {"shfl": noisy(60 * 1.05, seed=2)})
    result = compare_runs(read_results(base), read_results(new), 2.0,
                          samples_for_results(base), samples_for_results(new))
    (row,) = result.rows.itertuples()
    assert row.rule == RATIO_RULE and "no samples: ratio rule" in row.note


def test_the_cli_shows_p_and_gates_on_the_test(tmp_path):
    base = write_run(tmp_path / "base.csv", {"shfl": noisy(60, seed=1),
                                             "vector_load": noisy(25, seed=2)})
    new = write_run(tmp_path / "new.csv", {"shfl": noisy(60, seed=3),
                                           "vector_load": noisy(25 * 1.05, seed=4)})
    result = CliRunner().invoke(cli, ["compare", str(base), str(new), "--fail-on-regression"],
                                env={"COLUMNS": "160"})
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "<1e-4" in text and "2 decided from the raw samples" in text
    assert "1 regression(s)" in text and "vector_load" in text
