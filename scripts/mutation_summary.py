"""What a mutmut run of one module found: how many mutants the tests killed, and the
change each survivor made (scripts/mutation_run.sh calls this after each module).

    python scripts/mutation_summary.py WORK_DIR MODULE SECONDS [--survivors FILE]
    python scripts/mutation_summary.py --total FILE...

WORK_DIR is where mutmut ran (it holds mutants/MODULE.meta), MODULE the file mutated
(reducebench/ladder/auto.py), SECONDS how long the run took. Prints one line; with
--survivors, writes every mutant not killed, with its diff, to FILE.

--total adds up the lines this prints, as found in each FILE (- for standard input; a
module's last line counts, where it has several): one line for all of them.

A mutant is detected when its tests failed (killed) or never finished (timeout, a
crash): either way the suite did not pass with the bug in place."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

# mutmut 3's exit codes per mutant (mutmut/stats.py)
OUTCOMES = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests",
            34: "skipped", 35: "suspicious", 36: "timeout", 24: "timeout", -24: "timeout",
            152: "timeout", 255: "timeout", -11: "crashed", -9: "crashed",
            37: "caught by type check", None: "not checked"}
DETECTED = ("killed", "timeout", "crashed")


def outcomes(work_dir: Path, module: str) -> dict[str, str]:
    """Mutant name -> outcome, from mutmut's record of the module."""
    meta = Path(work_dir) / "mutants" / f"{module}.meta"
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    return {name: OUTCOMES.get(code, "suspicious") for name, code in codes.items()}


def summary_line(module: str, found: dict[str, str], seconds: float) -> str:
    total = len(found)
    count = {kind: sum(1 for o in found.values() if o == kind)
             for kind in ("killed", "timeout", "survived", "no tests")}
    detected = sum(1 for o in found.values() if o in DETECTED)
    other = total - detected - count["survived"] - count["no tests"]
    rate = 100.0 * detected / total if total else 0.0
    return (f"{module}: {detected} of {total} mutants detected ({rate:.1f}%): "
            f"{count['killed']} killed, {count['timeout']} timed out, {count['survived']} "
            f"survived, {count['no tests']} without tests" +
            (f", {other} other" if other else "") + f"; {seconds:.0f} s")


LINE = re.compile(r"(?P<module>\S+\.py): (?P<detected>\d+) of (?P<total>\d+) mutants detected "
                  r"\([\d.]+%\): (?P<killed>\d+) killed, (?P<timeout>\d+) timed out, "
                  r"(?P<survived>\d+) survived, (?P<no_tests>\d+) without tests"
                  r"(?:, (?P<other>\d+) other)?; (?P<seconds>\d+) s$")
FIGURES = ("detected", "total", "killed", "timeout", "survived", "no_tests", "other",
           "seconds")


def total_line(text: str) -> str:
    """All modules' summary lines in `text` added up (a module's last line counts)."""
    latest = {}
    for line in text.splitlines():
        found = LINE.search(line.strip())
        if found:
            latest[found["module"]] = {k: int(found[k] or 0) for k in FIGURES}
    sums = {k: sum(figures[k] for figures in latest.values()) for k in FIGURES}
    rate = 100.0 * sums["detected"] / sums["total"] if sums["total"] else 0.0
    return (f"total of {len(latest)} modules: {sums['detected']} of {sums['total']} mutants "
            f"detected ({rate:.1f}%): {sums['killed']} killed, {sums['timeout']} timed out, "
            f"{sums['survived']} survived, {sums['no_tests']} without tests" +
            (f", {sums['other']} other" if sums["other"] else "") + f"; {sums['seconds']} s")


def survivor_diffs(work_dir: Path, module: str, found: dict[str, str]) -> str:
    """Each mutant not detected, with the lines it changed."""
    left = [(name, outcome) for name, outcome in found.items() if outcome not in DETECTED]
    if not left:
        return ""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    here = os.getcwd()
    os.chdir(work_dir)  # mutmut reads mutants/ relative to where it ran
    try:
        parts = []
        for name, outcome in left:
            diff = get_diff_for_mutant(name, path=Path(module)).splitlines()[2:]
            changed = [line for line in diff if line[:1] in "+-"]
            parts.append("\n".join([f"== {name.rsplit('.', 1)[-1]} ({outcome})", *changed]))
        return "\n".join(parts) + "\n"
    finally:
        os.chdir(here)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--total"]:
        texts = [sys.stdin.read() if name == "-" else Path(name).read_text()
                 for name in argv[1:]]
        print(total_line("\n".join(texts)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work_dir", type=Path)
    parser.add_argument("module")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--survivors", type=Path)
    args = parser.parse_args(argv)
    found = outcomes(args.work_dir, args.module)
    print(summary_line(args.module, found, args.seconds))
    if args.survivors:
        args.survivors.write_text(survivor_diffs(args.work_dir.resolve(), args.module, found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
