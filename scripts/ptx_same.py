"""Whether a change to cuda_src/ changed any kernel's code: every kernel rung, for every
dtype and block size the registry has, with its default parameters and each parameter
moved alone through its powers of two (loads 1..16, l2_prefetch 0 and 1, ...), compiled
with NVRTC (no GPU needed) from the working tree's cuda_src/ and from REV's, and their
PTX compared (comments dropped). Same PTX for an architecture, same SASS there: a
refactor that passes here cannot move a timing on it. Exit 1 if any differ.

    python3 scripts/ptx_same.py REV [--arch compute_90]
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from reducebench.core.dtypes import DTYPES
from reducebench.ladder import nvrtc
from reducebench.ladder import sources as kernels
from reducebench.ladder.registry import PARAM_RANGES, RUNGS

# Top-level lines that only declare (a global, a constant, an external): NVRTC writes them
# in the order the source declares them, which a moved declaration changes harmlessly.
DECLARATION = re.compile(r"^\.(global|const|shared|extern|weak \.global)\b[^{]*;$")


def code_lines(ptx: str) -> list[str]:
    """The PTX without comments, its one-line declarations sorted (DECLARATION), every
    other line, function bodies included, in its place."""
    lines = [line.strip() for line in ptx.splitlines()
             if line.strip() and not line.lstrip().startswith("//")]
    declared = sorted(line for line in lines if DECLARATION.match(line))
    return declared + [line for line in lines if not DECLARATION.match(line)]


def parameter_sets(rung) -> list[dict[str, int]]:
    """The defaults, then each parameter moved alone through the powers of two in its
    range (0 and 1 for a flag)."""
    sets = [{}]
    for name, default in rung.params.items():
        low, high = PARAM_RANGES[name]
        values = [low, high] if high - low == 1 else [1 << k for k in range(high.bit_length())
                                                       if low <= 1 << k <= high]
        sets += [{name: value} for value in values if value != default]
    return sets


def rung_ptx(rung, dtype_name: str, directory: str | None, arch: str) -> list[str]:
    expressions: list[str] = []
    for params in parameter_sets(rung):
        for block in rung.blocks:
            for expr in kernels.all_name_expressions(rung, DTYPES[dtype_name], block, params):
                if expr not in expressions:
                    expressions.append(expr)
    source = kernels.expanded_source(rung.source, directory)
    done = nvrtc.compile_source(source, expressions, arch=arch, file_name=rung.source,
                                options=kernels.COMPILE_OPTIONS)
    if not done.ok:
        raise SystemExit(f"ptx_same: {rung.source} ({dtype_name}) does not compile:\n{done.log}")
    return code_lines(done.ptx)


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print("usage: scripts/ptx_same.py REV [--arch compute_90]", file=sys.stderr)
        return 2
    rev = argv[0]
    arch = argv[argv.index("--arch") + 1] if "--arch" in argv else "compute_90"
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", rev, "cuda_src"], capture_output=True,
                                 check=False)
        if archive.returncode != 0:
            print(f"ptx_same: no cuda_src/ at {rev!r} (git archive: "
                  f"{archive.stderr.decode().strip().splitlines()[-1:]})", file=sys.stderr)
            return 2
        subprocess.run(["tar", "x", "-C", tmp], input=archive.stdout, check=True)
        old_dir = str(Path(tmp) / "cuda_src")
        for rung in RUNGS:
            if rung.is_library or rung.dispatch:
                continue
            for dtype_name in rung.dtypes:
                same = rung_ptx(rung, dtype_name, old_dir, arch) == rung_ptx(rung, dtype_name, None, arch)
                differ += not same
                print(f"{rung.name:22s} {dtype_name:9s} {'same' if same else 'DIFFERENT'}")
    print(f"{differ} rung/dtype pairs differ from {rev} ({arch})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
