"""NVTX ranges in the `reducebench` domain, so Nsight shows each case by name.

nvtx is a dependency; if it is missing anyway, ranges become no-ops rather than errors."""

from __future__ import annotations

import contextlib
from typing import Iterator

DOMAIN = "reducebench"

try:
    import nvtx as _nvtx
except ImportError:  # pragma: no cover - depends on the environment
    _nvtx = None


@contextlib.contextmanager
def nvtx_range(name: str, color: str = "blue") -> Iterator[None]:
    if _nvtx is None:
        yield
        return
    with _nvtx.annotate(message=name, color=color, domain=DOMAIN):
        yield
