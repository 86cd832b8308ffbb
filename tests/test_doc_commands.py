"""Every `reducebench ...` command shown in a code block of README.md or docs/*.md runs as
shown and exits 0, where it needs no GPU; none writes into the repository.

A command is a code-block line (fenced or indented) whose first word is `reducebench` and
whose second is one of its commands (a `\\` continues it on the next line; a trailing
`# comment` is dropped). Lines starting with pip, pytest, nsys, ncu or python are not
checked here. Skipped, by rule, with the reason listed in GPU_RULES:
- the commands that measure on a GPU: run, check, tune, multigpu, info, sanitize, and
  shfl without --model-only or --explain;
- a command that reads a file one of those writes (`--out FILE` of a GPU command shown
  earlier in the same document).
Both are marked gpu too: without a GPU they are counted with the GPU tests.
The others run in-process (CliRunner) from a scratch folder that links the repository's
results/, configs/, examples/, docs/ and tests/; `/tmp/` in a command becomes a scratch
folder too. Afterwards `git status` of the repository must be unchanged: a command that
wrote next to a committed file (results/x.png) fails the test."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from reducebench.cli import cli

REPO = Path(__file__).resolve().parent.parent
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
GPU_COMMANDS = {"run", "check", "tune", "multigpu", "info", "sanitize"}
LINKED = ("results", "configs", "examples", "docs", "tests", "cuda_src")


def code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line inside a fenced or indented code block."""
    found, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            found.append((number, line))
    return found


def without_comment(line: str) -> str:
    """The line up to an unquoted `#` that starts a comment."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=False)
    lexer.whitespace_split, lexer.commenters = True, "#"
    return shlex.join(list(lexer))


def doc_commands(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, argv after `reducebench`) of each command shown in `path`."""
    commands, pending = [], None
    for number, line in code_lines(path.read_text()):
        text = line.strip().removeprefix("$ ")
        if pending is not None:
            pending[1] += " " + text.rstrip("\\")
            if not text.endswith("\\"):
                commands.append(tuple(pending))
                pending = None
        elif text.startswith("reducebench "):
            if text.endswith("\\"):
                pending = [number, text.rstrip("\\")]
            else:
                commands.append((number, text))
    out = []
    for number, text in commands:
        argv = shlex.split(without_comment(text))[1:]
        if argv and argv[0] in cli.commands:   # not e.g. `reducebench = "0.1.0"` in TOML
            out.append((number, argv))
    return out


def needs_gpu(argv: list[str]) -> str:
    """Why a command needs a GPU, or ""."""
    if argv[0] in GPU_COMMANDS:
        return f"`{argv[0]}` measures on a GPU"
    if argv[0] == "shfl" and "--model-only" not in argv and "--explain" not in argv:
        return "`shfl` without --model-only runs the shuffle on a GPU"
    if argv[0] == "calibrate" and ("--runs" in argv or "--" in argv):
        return "`calibrate --runs` measures its runs on a GPU"
    return ""


def out_files(argv: list[str]) -> set[str]:
    return {argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--out", "--records")}


def cases() -> list:
    params = []
    for path in DOCUMENTS:
        written: set[str] = set()     # files the GPU commands shown so far write
        for number, argv in doc_commands(path):
            where = f"{path.name}:{number}"
            reason = needs_gpu(argv)
            if reason:
                written |= out_files(argv)
            elif written & set(argv):
                reason = "reads a file a GPU command shown before it writes"
            marks = [pytest.mark.gpu, pytest.mark.skip(reason=reason)] if reason else []
            params.append(pytest.param(argv, id=f"{where} {' '.join(argv)}"[:120],
                                       marks=marks))
    return params


def test_the_documents_show_commands_of_both_kinds():
    # the extraction itself: README's own examples are found, GPU ones recognised
    every = [argv for path in DOCUMENTS for _, argv in doc_commands(path)]
    assert ["list"] in every and ["show", "shfl"] in every
    assert ["shfl", "--explain", "all"] in every
    assert any(needs_gpu(argv) for argv in every)
    assert sum(not needs_gpu(argv) for argv in every) >= 8


def git_status() -> str:
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    return done.stdout if done.returncode == 0 else ""


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A working folder that sees the repository's files but is not the repository."""
    here = tmp_path / "cwd"
    here.mkdir()
    for name in LINKED:
        (here / name).symlink_to(REPO / name, target_is_directory=True)
    monkeypatch.chdir(here)
    monkeypatch.setenv("COLUMNS", "120")
    return tmp_path


@pytest.mark.parametrize("argv", cases())
def test_a_documented_command_runs_as_shown(scratch, argv):
    elsewhere = scratch / "tmp"
    elsewhere.mkdir()
    argv = [a.replace("/tmp/", f"{elsewhere}/") for a in argv]
    before = git_status()
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, f"reducebench {' '.join(argv)}:\n{result.output}"
    assert "Traceback" not in result.output
    assert git_status() == before, "the command wrote into the repository"
