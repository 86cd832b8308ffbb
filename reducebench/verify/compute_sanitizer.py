"""Reading compute-sanitizer's report: which rung's kernel each error came from; and the
environment the checked program runs in.

`reducebench sanitize` runs `reducebench check` (each rung once, untimed) under each tool;
this module only parses the text and builds that environment, so it is tested without a
GPU."""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from reducebench.core.children import run_child
from reducebench.ladder.registry import ROW_RUNGS, RUNGS, Rung

TOOLS = ("memcheck", "racecheck", "synccheck")
# Set for the checked program: every buffer its own exact cudaMalloc allocation, without
# CuPy's memory pool (which rounds sizes up and packs buffers into shared chunks) and
# without the guards (verify/guard_regions.py) that pad each buffer in an ordinary run. memcheck
# then sees any access past a buffer's last byte, which inside a padded allocation it
# cannot.
EXACT_ALLOCATIONS_ENV = "REDUCEBENCH_EXACT_ALLOCATIONS"


def checked_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment `check` runs in under compute-sanitizer: ours, with exact
    allocations asked for."""
    return {**environ, EXACT_ALLOCATIONS_ENV: "1"}


def exact_allocations(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process was asked for exact allocations (checked_environment)."""
    return (os.environ if environ is None else environ).get(EXACT_ALLOCATIONS_ENV) == "1"


# memcheck and synccheck end with "ERROR SUMMARY: N errors"; racecheck with
# "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)".
_SUMMARY = re.compile(r"(?:ERROR SUMMARY:\s*|RACECHECK SUMMARY:.*?\()(\d+)\s+error")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


@dataclass
class ToolReport:
    tool: str
    total_errors: int | None                # None: no summary line (the tool did not finish)
    per_rung: dict[str, list[str]] = field(default_factory=dict)  # rung -> first messages
    unattributed: list[str] = field(default_factory=list)

    def verdict(self, rung: str) -> str:
        if self.total_errors is None:
            return "not run"
        messages = self.per_rung.get(rung, [])
        return "clean" if not messages else f"dirty ({len(messages)})"


def _rung_of_kernel(rungs: Iterable[Rung]) -> dict[str, str]:
    return {r.kernel: r.name for r in (*RUNGS, *ROW_RUNGS, *rungs) if r.kernel}


def parse_report(tool: str, text: str, rungs: Iterable[Rung] = ()) -> ToolReport:
    """Group the sanitizer's error blocks by the rung whose kernel they name: the
    ladder's, and those of `rungs` (the user's kernels, named as their rungs are)."""
    summary = _SUMMARY.search(text)
    report = ToolReport(tool, int(summary.group(1)) if summary else None)
    kernels = _rung_of_kernel(rungs)
    block: list[str] = []

    def close() -> None:
        if not block:
            return
        message = block[0].strip("= ").strip()
        names = [m for line in block for m in _IDENTIFIER.findall(line) if m in kernels]
        if names:
            report.per_rung.setdefault(kernels[names[0]], []).append(message)
        else:
            report.unattributed.append(message)
        block.clear()

    for line in text.splitlines():
        if not line.startswith("========="):
            continue
        body = line[len("========="):]
        starts_error = body.startswith(" ") and not body.startswith("  ") and \
            any(w in body for w in ("Invalid", "Error", "error", "Race", "Barrier", "Hazard"))
        if "ERROR SUMMARY" in body:
            close()
        elif starts_error:
            close()
            block.append(body)
        elif block:
            block.append(body)
    close()
    return report


# -- running `check` under each tool -------------------------------------------------------

@dataclass
class Sanitized:
    """What `sanitize` found: one report per tool run, its log, and the signal that
    stopped it (with the tool that was running) if one did."""

    reports: list[ToolReport] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    interrupted: BaseException | None = None
    tool: str = ""


def find_sanitizer() -> str:
    from reducebench.core.errors import DeviceUnavailable

    sanitizer = shutil.which("compute-sanitizer")
    if sanitizer is None:
        raise DeviceUnavailable("compute-sanitizer is not on the PATH (it ships with the "
                                "CUDA toolkit)")
    return sanitizer


def checked_rungs(rungs: list[Rung], blocks: list[int]) -> list[Rung]:
    """The rungs `sanitize` checks: the child `check` is given the rungs by name, so a
    ladder rung that takes none of the blocks (a skipped row under --rung all) would be
    refused there, and is left out; libraries run no kernel of ours."""
    return [r for r in rungs if not r.is_library and (
        r.origin != "ladder" or r.dispatch or any(b in r.blocks for b in blocks))]


def check_arguments(extent: dict[str, str], dtype: str, block: str, rungs: list[Rung],
                    user: Mapping[str, object]) -> list[str]:
    """What `check` is given under each tool: the extent (`--size N` or `--shape S`), the
    ladder's (or the row ladder's) rungs by name (`none` for only the user's), and the
    user's kernels (with --finish and --grid) and functions as they were given."""
    (option, value), = extent.items()
    ladder = ",".join(r.name for r in rungs if r.origin == "ladder") or "none"
    mine = [arg for spec in user["kernels"] for arg in ("--kernel", spec)]
    mine += [arg for spec in user["callables"] for arg in ("--callable", spec)]
    mine += [arg for o in ("finish", "grid") if user[o] for arg in (f"--{o}", user[o])]
    return [f"--{option}", str(value), "--dtype", dtype, "--rung", ladder, "--block", block,
            *mine]


def run_tools(tools: list[str], check_args: list[str], rungs: list[Rung],
              on_tool=lambda tool: None) -> Sanitized:
    """`reducebench check CHECK_ARGS` under each tool in turn, in a process group of its
    own, every buffer its own exact allocation (checked_environment)."""
    from reducebench.core.interrupt import Interrupted, stop_on_signals

    sanitizer = find_sanitizer()
    done = Sanitized()
    for tool in tools:
        on_tool(tool)
        command = [sanitizer, "--tool", tool, "--print-limit", "50", sys.executable, "-m",
                   "reducebench", "check", *check_args]
        try:
            with stop_on_signals():  # the tool and its program stop with us
                child = run_child(command, env=checked_environment(os.environ))
        except Interrupted as exc:
            done.interrupted, done.tool = exc, tool
            return done
        text = child.stdout + child.stderr
        done.logs.append(f"## {tool}\n\n$ {' '.join(command)}\n\n```\n{text}\n```\n")
        done.reports.append(parse_report(tool, text, rungs))
    return done
