"""On the GPU: every mutant (tests/mutants/mutants.toml) is caught. For each mutant and
each finish it applies to, `reducebench check` runs it over its sizes and dtypes in one
subprocess; the exit code must be 1 and every row of the results CSV FAIL. A row that
passes (or errors instead) is named. The inputs are the default exact ones with the seed
tests/test_mutants.py checked the input-dependent mutants against."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from reducebench.results.files import read_results

from test_mutants import BLOCK, SEED

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parent.parent
MUTANTS_DIR = REPO / "tests" / "mutants"
MANIFEST = tomllib.loads((MUTANTS_DIR / "mutants.toml").read_text())
CASES = [(name, finish) for name, table in MANIFEST.items() for finish in table["kernels"]]
HUGE = 2**31


def free_device_memory() -> int:
    import cupy

    return cupy.cuda.runtime.memGetInfo()[0]


def check_command(table: dict, finish: str, out: Path) -> list[str]:
    kernel = f"{MUTANTS_DIR.relative_to(REPO) / table['file']}:{table['kernels'][finish]}"
    return [sys.executable, "-m", "reducebench", "check",
            "--size", ",".join(str(n) for n in table["sizes"]),
            "--dtype", ",".join(table["dtypes"]),
            "--rung", "none", "--block", str(BLOCK), "--seed", str(SEED),
            "--kernel", kernel, "--finish", finish, "--grid", table["grid"],
            "--out", str(out)]


def describe(row: dict) -> str:
    error = row["error"] if isinstance(row["error"], str) else ""  # empty cells read as NaN
    return (f"{row['dtype']} n={row['n']}: {row['status']} (result {row['result']}, "
            f"reference {row['reference']}) {error}")


@pytest.mark.parametrize("name, finish", CASES, ids=[f"{n}-{f}" for n, f in CASES])
def test_every_size_and_dtype_of_a_mutant_is_fail(name, finish, tmp_path):
    table = MANIFEST[name]
    huge = max(table["sizes"]) >= HUGE
    if huge and free_device_memory() < 10 * 2**30:
        pytest.skip("needs about 10 GiB of free device memory")
    out = tmp_path / "x.csv"
    done = subprocess.run(check_command(table, finish, out), cwd=REPO, capture_output=True,
                          text=True, timeout=900 if huge else 300,
                          env={**os.environ, "COLUMNS": "200"})
    output = done.stdout + done.stderr
    assert done.returncode == 1, f"exit code {done.returncode}\n{output}"

    rows = read_results(out).to_dict("records")
    seen = sorted((int(r["n"]), r["dtype"]) for r in rows)
    expected = sorted((n, d) for n in table["sizes"] for d in table["dtypes"])
    assert seen == expected, f"rows for {seen}, expected {expected}\n{output}"
    not_failed = [describe(r) for r in rows if r["status"] != "FAIL"]
    assert not not_failed, (f"{name} ({finish}) was not FAIL for:\n  "
                            + "\n  ".join(not_failed))
