"""The repository describes the project as it is: no history of the work in BENCHMARKS.md,
docs/ (but for the four pages other engineers own: samples, architecture, verification,
report), results/README.md and scripts/, nor in file names under results/ or scripts/;
and BENCHMARKS.md stays short (tables first, at most 300 lines)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOT_CHECKED = {"samples.md", "architecture.md", "verification.md", "report.md"}
CHECKED = sorted([REPO / "BENCHMARKS.md", REPO / "results" / "README.md",
                  *(p for p in (REPO / "docs").glob("*.md") if p.name not in NOT_CHECKED),
                  *(p for p in (REPO / "scripts").iterdir() if p.is_file())])
HISTORY = re.compile(
    r"\bsessions?\b|closing note|superseded|\bearlier\b|\bno longer\b|\bwas\b|\buntil the\b"
    r"|\bwhat changed\b|\b(seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth)\b",
    re.IGNORECASE)
# Words of the code and its output, not of history: the measuring session
# (reducebench/measuring/session.py), ClusterSession and other classes, Popen's
# start_new_session, a process session, and two messages the tool prints.
ALLOWED = re.compile(r"start_new_session|\b\w*Session\b|\bsession\.py\b|measuring[./]session"
                     r"|process session|the CUDA context was lost|what changed in the source")


def history_words(text: str) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        found += [(number, m.group(0)) for m in HISTORY.finditer(ALLOWED.sub("", line))]
    return found


def test_the_rule_finds_history_and_spares_the_codes_words():
    assert history_words("What changed in the seventh session\nit was faster earlier") == [
        (1, "What changed"), (1, "seventh"), (1, "session"), (2, "was"), (2, "earlier")]
    assert history_words("measuring/session.py runs a ClusterSession; start_new_session=True;"
                         " `the CUDA context was lost in x`") == []


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: str(p.relative_to(REPO)))
def test_no_history_in_the_documents_of_the_present(path):
    found = history_words(path.read_text())
    assert not found, f"{path.relative_to(REPO)}: history words (line, word): {found[:8]}"


def test_no_file_under_results_or_scripts_is_named_after_a_session():
    files = subprocess.run(["git", "ls-files", "results", "scripts"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split()
    files = files or [str(p.relative_to(REPO)) for folder in ("results", "scripts")
                      for p in (REPO / folder).rglob("*")]
    named = [f for f in files if HISTORY.search(Path(f).name.replace("_", " "))]
    assert not named, f"file names with history in them: {named}"


def test_benchmarks_is_short():
    lines = (REPO / "BENCHMARKS.md").read_text().splitlines()
    assert len(lines) <= 300, f"BENCHMARKS.md has {len(lines)} lines (at most 300)"
