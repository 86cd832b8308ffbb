"""scripts/mutation_run.sh without a real mutation run: --help, --dry-run (what it would
copy, configure and run, for each module it has tests for), its refusals, a whole run
with a stand-in for mutmut (the scratch copy, the configuration it gets, the summary),
and the summary's counts (scripts/mutation_summary.py). The real runs take minutes and
are not part of the suite: tests/mutation/SURVIVORS.md."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "mutation_run.sh"
spec = importlib.util.spec_from_file_location("mutation_summary",
                                              ROOT / "scripts" / "mutation_summary.py")
mutation_summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutation_summary)

MODULES = ["reducebench/measuring/plausible.py", "reducebench/ladder/auto.py",
           "reducebench/multigpu/launch.py", "reducebench/verify/tolerance.py",
           "reducebench/verify/verdict.py"]


def script(*args: str, work: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "MUTATION_DIR": str(work), **env})


def test_help_says_how_to_run_it(tmp_path):
    result = script("--help", work=tmp_path)
    assert result.returncode == 0
    assert "scripts/mutation_run.sh [--dry-run] [--children N]" in result.stdout
    assert "--dry-run" in result.stdout and "MUTMUT" in result.stdout


def test_a_dry_run_says_what_each_module_would_run_and_runs_nothing(tmp_path):
    work = tmp_path / "work"
    result = script("--dry-run", *MODULES, work=work, MUTMUT="mutmut")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for module in MODULES:
        slug = module[:-3].replace("/", "_")
        assert f"\n{module}\n" in f"\n{out}"
        assert f'only_mutate = ["{module}"]' in out
        assert f"run: (cd {work}/{slug} && mutmut run --max-children 1)" in out
    assert ('pytest_add_cli_args_test_selection = ["tests/test_tuning.py", '
            '"tests/test_tuning_checks.py", "tests/test_auto.py"]') in out
    assert not work.exists()


def test_the_children_and_the_tests_can_be_given(tmp_path):
    result = script("--dry-run", "--children", "2", "--tests",
                    "tests/test_verdict.py tests/test_plausible.py",
                    "reducebench/results/files.py", work=tmp_path, MUTMUT="mutmut")
    assert result.returncode == 0, result.stderr
    assert "mutmut run --max-children 2" in result.stdout
    assert ('pytest_add_cli_args_test_selection = ["tests/test_verdict.py", '
            '"tests/test_plausible.py"]') in result.stdout


@pytest.mark.parametrize("args, line", [
    ([], "name at least one module, e.g. reducebench/ladder/auto.py"),
    (["--bogus"], "unknown option --bogus (see --help)"),
    (["reducebench/core/errors.py"], "no test selection for reducebench/core/errors.py: give "
                                     "one with --tests or add it to scripts/mutation_run.sh"),
    (["reducebench/nope.py"], "no such module: reducebench/nope.py"),
    (["--children", "0", MODULES[0]], "--children 0: expected a whole number of 1 or more"),
    (["--tests", "tests/none.py", MODULES[0]],
     f"{MODULES[0]}: no such test file tests/none.py"),
])
def test_a_bad_request_is_one_line_before_anything_runs(tmp_path, args, line):
    result = script(*args, work=tmp_path / "work", MUTMUT="mutmut")
    assert result.returncode == 2
    assert result.stderr == f"scripts/mutation_run.sh: {line}\n"
    assert not (tmp_path / "work").exists()


def test_the_projects_mutmut_table_leaves_the_module_and_tests_to_the_script():
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    assert table["source_paths"] == ["reducebench"]
    # the script adds these two keys; a second copy of a key is not TOML
    assert "only_mutate" not in table and "pytest_add_cli_args_test_selection" not in table


STAND_IN = """#!{python}
# mutmut's stand-in: checks the configuration the script wrote, then records three
# mutants of the module (two killed, one timed out) as mutmut 3 does
import json, sys, tomllib
from pathlib import Path
table = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["mutmut"]
assert sys.argv[1:] == ["run", "--max-children", "1"], sys.argv
module = table["only_mutate"][0]
assert table["pytest_add_cli_args_test_selection"] == ["tests/test_plausible.py"], table
assert table["source_paths"] == ["reducebench"] and Path(module).is_file()
assert table["also_copy"][0] == "results" and Path("results", "README.md").is_file(), table
meta = Path("mutants", module + ".meta")
meta.parent.mkdir(parents=True)
meta.write_text(json.dumps({{"exit_code_by_key": {{"a__mutmut_1": 1, "a__mutmut_2": 3,
                                                  "a__mutmut_3": 36}}}}))
"""


def stand_in_mutmut(tmp_path: Path) -> Path:
    """STAND_IN as `mutmut` in a folder of its own, with the python the script looks for
    beside it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_in = bin_dir / "mutmut"
    stand_in.write_text(STAND_IN.format(python=sys.executable))
    stand_in.chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    return stand_in


def test_a_run_configures_a_scratch_copy_and_sums_up_what_mutmut_recorded(tmp_path):
    stand_in = stand_in_mutmut(tmp_path)
    work = tmp_path / "work"
    result = script(MODULES[0], work=work, MUTMUT=str(stand_in))
    assert result.returncode == 0, result.stderr + (work / "reducebench_measuring_plausible"
                                                    / "mutmut.log").read_text()
    # 2 killed and 1 timed out: all 3 detected
    assert result.stdout.startswith(f"{MODULES[0]}: 3 of 3 mutants detected (100.0%): "
                                    "2 killed, 1 timed out, 0 survived, 0 without tests; ")
    copy = work / "reducebench_measuring_plausible"
    assert (copy / MODULES[0]).read_text() == (ROOT / MODULES[0]).read_text()
    assert (copy / "survivors.txt").read_text() == ""


def test_several_modules_end_with_their_lines_and_the_total(tmp_path):
    stand_in = stand_in_mutmut(tmp_path)
    result = script("--tests", "tests/test_plausible.py", MODULES[0], MODULES[3],
                    work=tmp_path / "work", MUTMUT=str(stand_in))
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1]
    # 3 mutants a module, each 2 killed and 1 timed out
    assert last.startswith("total of 2 modules: 6 of 6 mutants detected (100.0%): 4 killed, "
                           "2 timed out, 0 survived, 0 without tests; ")


def test_the_summary_counts_each_outcome(tmp_path):
    # killed: codes 1, 1, 3; timed out: 36; survived: 0; no tests: 33 -> 4 of 6 detected
    meta = tmp_path / "mutants" / "reducebench" / "x.py.meta"
    meta.parent.mkdir(parents=True)
    codes = {"m.x_f__mutmut_1": 1, "m.x_f__mutmut_2": 1, "m.x_f__mutmut_3": 0,
             "m.x_f__mutmut_4": 33, "m.x_f__mutmut_5": 36, "m.x_f__mutmut_6": 3}
    meta.write_text(json.dumps({"exit_code_by_key": codes}))
    found = mutation_summary.outcomes(tmp_path, "reducebench/x.py")
    assert mutation_summary.summary_line("reducebench/x.py", found, 12.4) == (
        "reducebench/x.py: 4 of 6 mutants detected (66.7%): 3 killed, 1 timed out, "
        "1 survived, 1 without tests; 12 s")


def test_the_total_adds_up_each_modules_last_line():
    text = (
        "    reducebench/a.py: 9 of 10 mutants detected (90.0%): 8 killed, 1 timed out, "
        "1 survived, 0 without tests; 12 s\n"
        "not a summary line: 1 of 2 mutants\n"
        "reducebench/b.py: 3 of 5 mutants detected (60.0%): 3 killed, 0 timed out, "
        "1 survived, 0 without tests, 1 other; 4 s\n"
        "reducebench/a.py: 10 of 10 mutants detected (100.0%): 10 killed, 0 timed out, "
        "0 survived, 0 without tests; 20 s\n")
    # a.py's second line counts: 10 + 3 of 10 + 5
    assert mutation_summary.total_line(text) == (
        "total of 2 modules: 13 of 15 mutants detected (86.7%): 13 killed, 0 timed out, "
        "1 survived, 0 without tests, 1 other; 24 s")
