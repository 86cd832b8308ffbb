"""What every figure file shares (plot, show-samples): its resolution and the formats
it can be written in, chosen by the output's suffix."""

from __future__ import annotations

from pathlib import Path

from reducebench.core.errors import UsageError

DPI = 100
FORMATS = {".png": "png", ".svg": "svg"}  # output suffix -> matplotlib format


def output_format(out: str | Path) -> str:
    """The format an output name asks for: png or svg; UsageError for anything else."""
    suffix = Path(out).suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"--out {out}: the figure is written as PNG or SVG; give a name "
                         "ending in .png or .svg")
    return FORMATS[suffix]
