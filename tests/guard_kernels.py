"""The planted kernels of tests/fixtures/kernels/outside_buffers.cu as rungs, for the
guard tests: tests/test_guards.py compiles them (CPU), tests/test_gpu_guards.py runs them.
atomic, relaunch and single come through --kernel's own path (ladder/custom.py); --kernel
has no ping-pong finish, so that one is a rung made here as the registry makes pingpong's,
with the same grid rule."""

from pathlib import Path

from reducebench.ladder.custom import KernelSpec, parse_grid, user_rungs
from reducebench.ladder.registry import Rung

REPO = Path(__file__).resolve().parent.parent
KERNEL_FILE = REPO / "tests" / "fixtures" / "kernels" / "outside_buffers.cu"
BUGS = ("one_past_end", "one_before_start", "past_partials")
CORRECT = "in_bounds"
FINISHES = ("atomic", "relaunch", "single", "pingpong")
# A grid-stride grid: every relaunch pass reads all of its partials buffer, so a read past
# a pass's end lands in that buffer's guard.
GRID = "per-sm=8"


def planted_rung(kind: str, finish: str) -> Rung:
    """The kernel `<kind>_<finish>` of the file as a rung named after it."""
    name = f"{kind}_{finish}"
    if finish == "pingpong":
        return Rung(name, f"planted kernel {name}", "pingpong", source=str(KERNEL_FILE),
                    kernel=name, grid=parse_grid(GRID), deterministic=False, origin="user")
    return user_rungs([KernelSpec(str(KERNEL_FILE), name, finish, GRID)])[0]
