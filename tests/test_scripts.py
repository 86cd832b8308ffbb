"""scripts/ holds maintained tools only: each one is listed in scripts/README.md and runs
here on the CPU (its --help, and the helpers on committed files), the `reducebench`
commands the shell scripts give use options the command has, and no script reaches into
the package's internals: it uses the command line, or `reducebench.measure`, and reads
results files itself. scripts/variation_study.py, a study in progress, is exempt from
the last two rules until it becomes a command."""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from reducebench.cli import cli
from reducebench.ladder.auto import gpu_slug

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
IN_PROGRESS = {"variation_study.py"}
ALL = sorted(p for p in SCRIPTS.iterdir() if p.is_file() and p.name != "README.md")
SHELL = [p for p in ALL if p.suffix == ".sh"]
PYTHON = [p for p in ALL if p.suffix == ".py" and p.name not in IN_PROGRESS]
PUBLIC = {"measure", "Result", "__version__"}  # what `import reducebench` offers


def env(tmp_path: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO), "OUT": str(tmp_path / "out"),
            "REDUCEBENCH_COMMIT": "0000000"}


def git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                          text=True).stdout


def test_the_readme_lists_every_script_and_no_other():
    readme = (SCRIPTS / "README.md").read_text()
    listed = {name for cell in re.findall(r"^\| ([^|]+) \|", readme, re.M)
              for name in re.split(r",\s*", cell.strip())}
    assert listed - {"script"} == {p.name for p in ALL}


@pytest.mark.parametrize("script", SHELL + PYTHON, ids=lambda p: p.name)
def test_each_script_prints_its_help_and_does_nothing_else(tmp_path, script):
    before = git_status()
    command = ["bash", str(script)] if script.suffix == ".sh" else [sys.executable, str(script)]
    done = subprocess.run(command + ["--help"], cwd=REPO, env=env(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) >= 2 and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists(), "--help made the output folders"
    assert git_status() == before


@pytest.mark.parametrize("script", PYTHON, ids=lambda p: p.name)
def test_no_python_script_imports_the_packages_internals(script):
    wrong = []
    for node in ast.walk(ast.parse(script.read_text())):
        if isinstance(node, ast.Import):
            wrong += [a.name for a in node.names if a.name.startswith("reducebench.")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reducebench"):
            if node.module != "reducebench":
                wrong.append(node.module)
            wrong += [a.name for a in node.names if a.name not in PUBLIC]
    assert not wrong, f"{script.name} imports {wrong}: use the command line or reducebench.measure"


@pytest.mark.parametrize("script", SHELL, ids=lambda p: p.name)
def test_no_shell_script_imports_the_package(script):
    found = re.findall(r"(?:from|import) reducebench\.\w+", script.read_text())
    assert not found, f"{script.name}: {found}"


def commands(text: str) -> list[list[str]]:
    """The argv after `reducebench` of each command a shell script gives: `$RB CMD ...`,
    `-m reducebench CMD ...` and `$M ...` (M="$RB multigpu"), continuation lines joined,
    simple variables (NAME="...") put in, up to a redirection or pipe."""
    text = re.sub(r"\\\n\s*", " ", text)
    assigned = dict(re.findall(r'^\s*([A-Z_]+)="([^"$]*)"', text, re.M))
    found = []
    for line in text.splitlines():
        if re.fullmatch(r'\s*[A-Z_]+=("[^"]*"|\S*)\s*', line):  # an assignment alone
            continue
        line = line.replace("$M ", "$RB multigpu ")
        for name, value in assigned.items():
            line = re.sub(rf"\${name}\b", value, line)
        for match in re.finditer(r"(?:\$RB|-m reducebench) (.*)", line):
            words = []
            for word in shlex.split(match[1].split(" > ")[0].split(" | ")[0].split(" 2>")[0],
                                    comments=True):
                if word in (">", "|", "&&", ";") or word.startswith((">", "2>")):
                    break
                words.append(word)
            if words and words[0] in cli.commands:
                found.append(words)
    return found


def test_the_command_reader_finds_options_across_lines():
    text = 'T="--size 2^10"\n$RB run $T --rung auto \\\n    --out $R/x.csv > log 2>&1\n$M --nccl\n'
    assert commands(text) == [["run", "--size", "2^10", "--rung", "auto", "--out", "$R/x.csv"],
                              ["multigpu", "--nccl"]]


@pytest.mark.parametrize("script", SHELL, ids=lambda p: p.name)
def test_the_reducebench_commands_of_a_shell_script_use_real_options(script):
    for argv in commands(script.read_text()):
        command = cli.commands[argv[0]]
        known = {o for p in command.params for o in p.opts + p.secondary_opts}
        unknown = [w for w in argv[1:] if w.startswith("--") and w.split("=")[0] not in known]
        assert not unknown, f"{script.name}: reducebench {argv[0]} has no {unknown}"


@pytest.mark.parametrize("name", ["NVIDIA H100 80GB HBM3", "NVIDIA H200", "Tesla V100-SXM2-16GB",
                                  "  ", "A100 (PCIe)"])
def test_the_shell_gpu_slug_names_the_file_reducebench_reads(tmp_path, name):
    done = subprocess.run(["bash", "-c", 'source scripts/lib.sh; gpu_slug "$1"', "-", name],
                          cwd=REPO, env=env(tmp_path), capture_output=True, text=True, check=True)
    assert done.stdout.strip() == gpu_slug(name)


def run_helper(tmp_path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=REPO, env=env(tmp_path),
                          capture_output=True, text=True, timeout=120)


def test_the_multigpu_helpers_read_the_committed_files(tmp_path):
    files = ["results/h200x4/multigpu_sharded_f32_9acad4a.csv",
             "results/h200x4/multigpu_nccl_f32_9acad4a.csv"]
    summary = run_helper(tmp_path, "scripts/multigpu_summary.py", *files)
    assert summary.returncode == 0 and "sharded sum" in summary.stdout
    figure = tmp_path / "scaling.png"
    drawn = run_helper(tmp_path, "scripts/multigpu_plot.py", *files, str(figure))
    assert drawn.returncode == 0 and figure.stat().st_size > 10_000, drawn.stderr


def test_the_results_index_is_checked_by_its_script(tmp_path):
    assert run_helper(tmp_path, "scripts/results_index.py", "--check").returncode == 0


def test_every_script_a_document_names_exists():
    named = set()
    for doc in [REPO / "README.md", REPO / "BENCHMARKS.md", *(REPO / "docs").glob("*.md"),
                SCRIPTS / "README.md"]:
        named |= {(doc.name, m) for m in re.findall(r"scripts/([\w.-]+\.(?:py|sh|cu))",
                                                    doc.read_text())}
    missing = sorted((doc, name) for doc, name in named if not (SCRIPTS / name).is_file())
    assert not missing, f"documents name scripts that do not exist: {missing}"
