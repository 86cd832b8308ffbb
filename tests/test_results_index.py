"""results/ holds what something cites, and nothing else: every results path a document or
the code cites exists, every committed file is cited by a document or the code (by its
path) or named by a test, results/README.md (written by scripts/results_index.py) lists
every file with what cites it, and every file follows the one naming scheme,
results/<gpu>/<what>_<commit>.csv (samples and figures beside it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results"
spec = importlib.util.spec_from_file_location("results_index", REPO / "scripts" / "results_index.py")
index = importlib.util.module_from_spec(spec)
spec.loader.exec_module(index)

GPUS = {"h100", "h200", "h200x2", "h200x4"}
# Paths the docs and the code use as examples of what a command writes, not committed files.
EXAMPLES = {"results/run.csv", "results/run.samples.csv", "results/run.png",
            "results/run.gpu1.csv", "results/<run>.csv", "results/<run>.samples.csv",
            "results/FILE.csv", "results/a_old.csv", "results/b_new.csv", "results/z_base.csv",
            "results/a_new.csv", "results/20250101T000000Z_h100.csv",
            "results/20250101T000000Z_h100.samples.csv"}
CITERS = index.sources(index.DOCUMENTS + index.CODE)


def test_the_citation_pattern_reads_what_the_docs_write():
    text = ("(results/h100/a_1234567.csv; results/logs/x_{1,2}_abc.txt.) `git show "
            "723fcdf:results/old.csv` ../results/h200/f.png and notresults/x.csv")
    assert index.cited_paths(text) == ["results/h100/a_1234567.csv", "results/logs/x_1_abc.txt",
                                       "results/logs/x_2_abc.txt", "results/h200/f.png"]


@pytest.mark.parametrize("source", CITERS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_results_path_cited_exists(source):
    missing = []
    for path in index.cited_paths(index.read(source)):
        # "<" in a path: a pattern (results/<gpu>/...); a trailing "_": a path that a
        # comment breaks across two lines (reducebench/measuring/read_ceiling.py)
        if path in EXAMPLES or "<" in path or path.endswith("_") or path == "results/":
            continue
        found = list(REPO.glob(path)) if "*" in path else [REPO / path]
        if not any(p.exists() for p in found):
            missing.append(path)
    assert not missing, f"{source.name} cites results paths that do not exist: {missing}"


def test_every_committed_file_is_cited():
    cited = index.citations(index.committed_files())
    uncited = [f for f, citers in cited.items() if not citers]
    assert not uncited, (f"cited by no document, code or test (git rm them, or cite them): "
                         f"{uncited}")


def test_a_file_nothing_cites_is_found(monkeypatch):
    files = index.committed_files() + ["h100/stray_0000000.csv"]
    assert [f for f, c in index.citations(files).items() if not c] == ["h100/stray_0000000.csv"]


def test_a_samples_file_goes_with_its_results_file():
    cited = index.citations(["h100/harris_20f55eb.csv", "h100/harris_20f55eb.samples.csv"])
    assert cited["h100/harris_20f55eb.samples.csv"] == cited["h100/harris_20f55eb.csv"] != []


def test_the_index_is_up_to_date():
    expected = index.index_text(index.citations(index.committed_files()))
    assert index.INDEX.read_text() == expected, \
        "results/README.md is out of date: python3 scripts/results_index.py"


def test_every_file_follows_the_naming_scheme():
    import re

    name = re.compile(r"(?P<gpu>[a-z0-9]+)/[a-z0-9_]+_[0-9a-f]{7}(\.gpu\d+)?"
                      r"(\.samples\.csv|\.csv|\.png|\.md)")
    wrong = []
    for path in index.committed_files():
        if path.startswith("logs/"):
            continue
        match = name.fullmatch(path)
        if not match or match["gpu"] not in GPUS:
            wrong.append(path)
        elif path.endswith(".samples.csv"):
            if not (RESULTS / path.replace(".samples.csv", ".csv")).exists():
                wrong.append(path + " (no CSV beside it)")
    assert not wrong, f"not results/<gpu>/<what>_<commit>.csv: {wrong}"
