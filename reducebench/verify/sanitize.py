"""Reading compute-sanitizer's report: which rung's kernel each error came from.

`reducebench sanitize` runs `reducebench check` (each rung once, untimed) under each tool;
this module only parses the text, so it is tested without a GPU."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reducebench.ladder.registry import RUNGS

TOOLS = ("memcheck", "racecheck", "synccheck")
# memcheck and synccheck end with "ERROR SUMMARY: N errors"; racecheck with
# "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)".
_SUMMARY = re.compile(r"(?:ERROR SUMMARY:\s*|RACECHECK SUMMARY:.*?\()(\d+)\s+error")
_KERNEL = re.compile(r"\b(reduce_[A-Za-z0-9_]+)")


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


def _rung_of_kernel() -> dict[str, str]:
    return {r.kernel: r.name for r in RUNGS if r.kernel}


def parse_report(tool: str, text: str) -> ToolReport:
    """Group the sanitizer's error blocks by the rung whose kernel they name."""
    summary = _SUMMARY.search(text)
    report = ToolReport(tool, int(summary.group(1)) if summary else None)
    kernels = _rung_of_kernel()
    block: list[str] = []

    def close() -> None:
        if not block:
            return
        message = block[0].strip("= ").strip()
        names = [m for line in block for m in _KERNEL.findall(line) if m in kernels]
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
