"""results/ stays navigable: every results path the docs cite exists, every committed
file is in results/README.md's index, and every results file follows the one naming
scheme, results/<gpu>/<what>_<commit>.csv (samples and figures beside it)."""

import itertools
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results"
INDEX = RESULTS / "README.md"
DOCS = [REPO / "README.md", REPO / "BENCHMARKS.md", *sorted((REPO / "docs").glob("*.md"))]
GPUS = {"h100", "h200", "h200x2", "h200x4"}
# Paths the docs use as examples of what a command writes, not committed files.
EXAMPLES = {"results/run.csv", "results/run.samples.csv", "results/run.png",
            "results/run.gpu1.csv", "results/<run>.csv", "results/<run>.samples.csv"}
# A path starts at "results/" (or "../results/" from docs/), not after "<commit>:" (a
# `git show` of a file since removed) nor inside another word or path.
CITED = re.compile(r"(?<![\w:/.<-])(?:\.\./)?results/(?:\{[^}\s]*\}|[^\s)`'\",;|\]{])*")


def _expand(path: str) -> list[str]:
    """results/a_run{1,2,3}.csv -> its three paths."""
    parts = re.split(r"\{([^}]*)\}", path)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c) for c in itertools.product(*choices)]


def cited_paths(text: str) -> list[str]:
    paths = []
    for match in CITED.finditer(text):
        path = match.group(0).removeprefix("../").rstrip(".:")
        paths.extend(_expand(path))
    return paths


def committed_files() -> list[str]:
    """Files under results/ relative to it: git's list where there is one (a local run's
    output in results/ is not committed), else the folder's."""
    try:
        out = subprocess.run(["git", "ls-files", "results"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split()
        files = [path.removeprefix("results/") for path in out]
    except (OSError, subprocess.CalledProcessError):
        files = []
    if not files:
        files = [str(p.relative_to(RESULTS)) for p in RESULTS.rglob("*") if p.is_file()]
    return sorted(f for f in files if f != "README.md" and (RESULTS / f).exists())


def test_the_citation_pattern_reads_what_the_docs_write():
    text = ("(results/h100/a_1234567.csv; results/logs/x_{1,2}_abc.txt.) `git show "
            "723fcdf:results/old.csv` ../results/h200/f.png and notresults/x.csv")
    assert cited_paths(text) == ["results/h100/a_1234567.csv", "results/logs/x_1_abc.txt",
                                 "results/logs/x_2_abc.txt", "results/h200/f.png"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_results_path_a_doc_cites_exists(doc):
    missing = []
    for path in cited_paths(doc.read_text()):
        if path in EXAMPLES:
            continue
        if "*" in path:
            found = list(REPO.glob(path))
        else:
            found = [REPO / path] if (REPO / path).exists() else []
        if not found:
            missing.append(path)
    assert not missing, f"{doc.name} cites results paths that do not exist: {missing}"


def test_every_file_under_results_is_indexed():
    index = INDEX.read_text()
    listed = set(re.findall(r"[\w./-]+", index))
    missing = [f for f in committed_files() if f not in listed]
    assert not missing, f"not in results/README.md: {missing}"


def test_every_file_follows_the_naming_scheme():
    name = re.compile(r"(?P<gpu>[a-z0-9]+)/[a-z0-9_]+_[0-9a-f]{7}(\.gpu\d+)?"
                      r"(\.samples\.csv|\.csv|\.png|\.md)")
    wrong = []
    for path in committed_files():
        if path.startswith("logs/"):
            continue
        match = name.fullmatch(path)
        if not match or match["gpu"] not in GPUS:
            wrong.append(path)
        elif path.endswith(".samples.csv"):
            if not (RESULTS / path.replace(".samples.csv", ".csv")).exists():
                wrong.append(path + " (no CSV beside it)")
    assert not wrong, f"not results/<gpu>/<what>_<commit>.csv: {wrong}"
