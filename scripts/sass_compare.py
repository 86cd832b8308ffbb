"""Does a change to cuda_src/ change any kernel's machine code? Compiles every ladder
rung's kernels (every dtype and block size, default parameters: the name expressions the
harness itself instantiates) from two source folders with nvcc for one architecture,
disassembles them with cuobjdump, and prints per rung `same` or how many SASS lines
differ. A refactor that prints `same` everywhere cannot change what a GPU computes or how
fast, so it needs no GPU to check; anything else does (`pytest -m gpu`).

    git archive HEAD~1 cuda_src | tar -x -C /tmp/before
    python3 scripts/sass_compare.py /tmp/before/cuda_src cuda_src [--arch sm_90]

Needs nvcc and cuobjdump on PATH (CUDA toolkit, or `pip install nvidia-cuda-nvcc
nvidia-cuda-cuobjdump`), and the package importable (no GPU, no CuPy)."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.registry import LADDER
from reducebench.ladder.sources import rung_expressions

_ADDRESS = re.compile(r"/\* 0x[0-9a-f]+ \*/")


def instantiation_file(source_dir: Path, rung) -> str:
    """A translation unit that takes the address of every kernel the harness would
    instantiate for the rung, so nvcc compiles each one."""
    expressions = sorted({e for dtype in DTYPES.values() if dtype.name in rung.dtypes
                          for e in rung_expressions(rung, dtype, None)})
    keep = ",\n".join(f"    (void*)&{e}" for e in expressions)
    return f'#include "{source_dir / rung.source}"\nvoid* keep_{rung.name}[] = {{\n{keep}\n}};\n'


def sass(source_dir: Path, rung, arch: str, work: Path) -> str:
    unit = work / f"{rung.name}.cu"
    unit.write_text(instantiation_file(source_dir, rung))
    cubin = work / f"{rung.name}.cubin"
    subprocess.run(["nvcc", "-std=c++17", f"-arch={arch}", "-cubin", f"-I{source_dir}",
                    "-o", str(cubin), str(unit)], check=True, capture_output=True, text=True)
    dump = subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True,
                          capture_output=True, text=True).stdout
    return "\n".join(" ".join(_ADDRESS.sub("", line).split()) for line in dump.splitlines())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args(argv)
    for tool in ("nvcc", "cuobjdump"):
        if shutil.which(tool) is None:
            print(f"sass_compare: {tool} is not on PATH", file=sys.stderr)
            return 2
    rungs = [r for r in LADDER.values() if r.source and (args.after / r.source).exists()]
    differing = 0
    with tempfile.TemporaryDirectory() as tmp:
        for rung in rungs:
            old_dir, new_dir = Path(tmp, "before", rung.name), Path(tmp, "after", rung.name)
            old_dir.mkdir(parents=True)
            new_dir.mkdir(parents=True)
            old = sass(args.before.resolve(), rung, args.arch, old_dir).splitlines()
            new = sass(args.after.resolve(), rung, args.arch, new_dir).splitlines()
            changed = sum(a != b for a, b in zip(old, new)) + abs(len(old) - len(new))
            differing += changed > 0
            print(f"{rung.name:20s} {'same' if not changed else f'{changed} SASS lines differ'}")
    print(f"{len(rungs) - differing} of {len(rungs)} rungs compile to the same SASS ({args.arch})")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
