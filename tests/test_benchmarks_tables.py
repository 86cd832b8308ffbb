"""Every table of BENCHMARKS.md is printed from committed results files by the command
written above it (`Table: \\`python3 scripts/....py ...\\``): the test runs each command
and checks that the document holds exactly what it prints, and that no table stands
without such a command (a figure typed by hand)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS = REPO / "BENCHMARKS.md"
COMMAND = re.compile(r"^Table: `python3 (scripts/\w+\.py) ([^`]+)`$")


def script(path: str):
    spec = importlib.util.spec_from_file_location(Path(path).stem, REPO / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def printed(path: str, args: list[str]) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        script(path).main(args)
    return out.getvalue().rstrip("\n").splitlines()


def tables(lines: list[str]) -> list[tuple[int, str, list[str]]]:
    """(line index, script, arguments) of each table command of the document."""
    return [(i, m[1], shlex.split(m[2])) for i, line in enumerate(lines)
            if (m := COMMAND.match(line))]


LINES = BENCHMARKS.read_text().splitlines()


def test_the_document_shows_its_tables_by_command():
    assert len(tables(LINES)) >= 10


@pytest.mark.parametrize("index,path,args", tables(LINES),
                         ids=[f"line {i + 1} {a[0]}" for i, _, a in tables(LINES)])
def test_a_table_is_what_its_command_prints(monkeypatch, index, path, args):
    monkeypatch.chdir(REPO)
    expected = printed(path, args)
    assert LINES[index + 1] == "", f"line {index + 2}: a blank line after the command"
    shown = LINES[index + 2:index + 2 + len(expected)]
    assert shown == expected, f"BENCHMARKS.md line {index + 3}: not what `{path}` prints"


def test_no_table_without_its_command(monkeypatch):
    monkeypatch.chdir(REPO)
    generated = set()
    for index, path, args in tables(LINES):
        generated.update(range(index + 2, index + 2 + len(printed(path, args))))
    typed = [i + 1 for i, line in enumerate(LINES) if line.startswith("|") and i not in generated]
    assert not typed, f"BENCHMARKS.md table lines without a command: {typed[:5]}"


def test_the_document_stays_short():
    assert len(LINES) <= 300
