"""Where the package's data lives: cuda_src/ and configs/ are copied into an installed
wheel (reducebench/_data) and sit beside the package in a source checkout."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
CHECKOUT_DIR = PACKAGE_DIR.parent


def data_dir(*parts: str) -> Path | None:
    """reducebench/_data/<parts> of a wheel, else <parts> of the checkout; None if neither."""
    for candidate in (PACKAGE_DIR / "_data" / Path(*parts), CHECKOUT_DIR / Path(*parts)):
        if candidate.is_dir():
            return candidate
    return None
