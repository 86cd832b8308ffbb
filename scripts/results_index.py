"""results/README.md, written from the tree: the layout of results/, then every committed
file under it with what cites it. A file stays in results/ only while something cites it:
a document (README.md, BENCHMARKS.md, docs/*.md) or the code and configuration
(reducebench/, cuda_src/, configs/, scripts/) by its path `results/...`, or a test by
its name (tests/). A samples file (`X.samples.csv`) goes with its `X.csv`.
tests/test_results_index.py checks that the index is up to date and that every file is
cited.

    python3 scripts/results_index.py            write results/README.md
    python3 scripts/results_index.py --check    exit 1 if it is not up to date, or if a
                                                file is cited by nothing (listed)
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results"
INDEX = RESULTS / "README.md"
DOCUMENTS = ("README.md", "BENCHMARKS.md", "docs/*.md")
CODE = ("reducebench/**/*.py", "reducebench/**/*.j2", "cuda_src/**/*", "configs/**/*",
        "scripts/*")
TESTS = ("tests/**/*.py",)
# A path starts at "results/" (or "../results/" from docs/), not after "<commit>:" (a
# `git show` of a file since removed) nor inside another word or path.
CITED = re.compile(r"(?<![\w:/.<-])(?:\.\./)?results/(?:\{[^}\s]*\}|[^\s)`'\",;|\]{])*")

HEADER = """# results/

What reducebench wrote on real GPUs, and what README.md, BENCHMARKS.md and docs/ copy
their figures from. One naming scheme:

    results/<gpu>/<what>_<commit>.csv          a results file (its rows record the commit
                                               in `git_commit` and the command's options
                                               in `options`)
    results/<gpu>/<what>_<commit>.samples.csv  its per-sample times, beside it
    results/<gpu>/<what>_<commit>.png          a figure drawn from it
    results/logs/                              what commands printed: tables, test logs, probes

`<gpu>` is `h100` (one H100 80GB HBM3), `h200` (one H200), `h200x2` and `h200x4` (two or
four H200s of one host); `<commit>` is the commit of the code that measured. The scripts
of scripts/ write in this layout under `$OUT`, so their files can be copied in as they
are. A file stays here while a document, the code or a test cites it; git keeps the
others. This index is written by `python3 scripts/results_index.py` (run it after adding
or citing a file; tests/test_results_index.py fails while it is out of date or while a
file is cited by nothing).

| file | cited by |
|---|---|
"""


def expand(path: str) -> list[str]:
    """results/a_run{1,2,3}.csv -> its three paths."""
    parts = re.split(r"\{([^}]*)\}", path)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c) for c in itertools.product(*choices)]


def cited_paths(text: str) -> list[str]:
    """The results paths a text cites, as `results/...`."""
    paths = []
    for match in CITED.finditer(text):
        paths.extend(expand(match.group(0).removeprefix("../").rstrip(".:")))
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


# The index and its checks name files without citing them.
NOT_CITERS = {INDEX, Path(__file__).resolve(), REPO / "tests" / "test_results_index.py"}


def sources(patterns: tuple[str, ...]) -> list[Path]:
    found = {p for pattern in patterns for p in REPO.glob(pattern) if p.is_file()}
    return sorted(p for p in found if p not in NOT_CITERS and p.suffix not in (".png", ".whl"))


def read(path: Path) -> str:
    try:
        return path.read_text()
    except UnicodeDecodeError:
        return ""


def owner(path: str) -> str:
    """X.samples.csv -> X.csv: a samples file goes with its results file."""
    return path.replace(".samples.csv", ".csv") if path.endswith(".samples.csv") else path


def citations(files: list[str]) -> dict[str, list[str]]:
    """Per committed file: what cites it (documents and code by path, tests by name)."""
    by_path: dict[str, set[str]] = {f: set() for f in files}
    for source in sources(DOCUMENTS + CODE):
        name = str(source.relative_to(REPO))
        for path in cited_paths(read(source)):
            target = path.removeprefix("results/")
            for f in files:
                if target == f or owner(f) == target:
                    by_path[f].add(name)
    test_texts = {str(p.relative_to(REPO)): read(p) for p in sources(TESTS)}
    for f in files:
        for name, text in test_texts.items():
            if Path(f).name in text or Path(owner(f)).name in text:
                by_path[f].add(name)
    return {f: sorted(c) for f, c in by_path.items()}


def index_text(cited: dict[str, list[str]]) -> str:
    rows, grouped = [], {}
    for f, citers in cited.items():
        grouped.setdefault(owner(f), []).append(f)
    for stem, members in sorted(grouped.items()):
        shown = ", ".join(sorted(members, key=lambda m: (m != stem, m)))
        citers = sorted({c for m in members for c in cited[m]})
        rows.append(f"| {shown} | {', '.join(citers)} |")
    return HEADER + "\n".join(rows) + "\n"


def main(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    cited = citations(committed_files())
    uncited = [f for f, c in cited.items() if not c]
    text = index_text(cited)
    if "--check" in argv:
        stale = not INDEX.is_file() or INDEX.read_text() != text
        for f in uncited:
            print(f"cited by nothing: results/{f}")
        if stale:
            print("results/README.md is not up to date: python3 scripts/results_index.py")
        return 1 if uncited or stale else 0
    INDEX.write_text(text)
    print(f"wrote {INDEX.relative_to(REPO)}: {len(cited)} files, {len(uncited)} cited by nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
