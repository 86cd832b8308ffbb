"""What every figure file shares (plot, show-samples): its resolution and the formats
it can be written in, chosen by the output's suffix."""

from __future__ import annotations

from pathlib import Path

from reducebench.core.errors import UsageError
from reducebench.results.naming import check_writable, unused_names

DPI = 100
FORMATS = {".png": "png", ".svg": "svg"}  # output suffix -> matplotlib format


def output_format(out: str | Path) -> str:
    """The format an output name asks for: png or svg; UsageError for anything else."""
    suffix = Path(out).suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"--out {out}: {WRONG_SUFFIX}")
    return FORMATS[suffix]


WRONG_SUFFIX = "the figure is written as PNG or SVG; give a name ending in .png or .svg"


def check_figure(out: Path) -> Path:
    """A figure about to be written (replacing one there): writable, PNG or SVG."""
    return check_writable(out, "--out", replace=True, suffixes=FORMATS,
                          wrong_suffix=WRONG_SUFFIX)


def figure_names(first: Path, count: int) -> list[Path]:
    """`x.png` for one figure; `x_p1of3.png`, `x_p2of3.png`, ... for several."""
    if count == 1:
        return [first]
    return [first.with_name(f"{first.stem}_p{i}of{count}{first.suffix}")
            for i in range(1, count + 1)]


def default_figure(samples_file: Path, count: int = 1) -> list[Path]:
    """Where `count` figures of a samples file go by default, in the current folder
    (never beside the samples file, which may be in a repository): `run.samples.png`,
    or for several `run.samples_p1of3.png`, ...; `_1`, `_2`, ... after the stem until
    none of them is an existing file."""
    name = samples_file.name
    stem = name[:-len(".csv")] if name.endswith(".csv") else samples_file.stem
    return unused_names(lambda tail: figure_names(Path(f"{stem}{tail}.png"), count))
