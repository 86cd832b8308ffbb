"""A case (rung, dtype, n, block, parameters) and its key: the one identity of a case in
results files, resume, compare and samples."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reducebench.core.dtypes import DType
    from reducebench.ladder.registry import Rung


# The columns that identify a case in a results file: the one key of a case everywhere
# (resume, compare, samples).
KEY_COLUMNS = ("rung", "dtype", "n", "block", "params")


def case_key(rung: str, dtype: str, n: int, block: int, params: str) -> tuple:
    return (str(rung), str(dtype), int(n), int(block), str(params or ""))


@dataclass(frozen=True)
class Case:
    rung: "Rung"
    dtype: "DType"
    n: int
    block: int               # 0 for library references, which choose their own
    params: dict[str, int] = field(default_factory=dict, hash=False, compare=False)

    @property
    def label(self) -> str:
        """The NVTX range name, and how progress and errors name the case."""
        extra = "".join(f" {k}={v}" for k, v in sorted(self.params.items()))
        block = f" block={self.block}" if self.block else ""
        return f"{self.rung.name} {self.dtype.name} n={self.n}{block}{extra}"

    def params_text(self) -> str:
        return ";".join(f"{k}={v}" for k, v in sorted(self.params.items()))

    @property
    def key(self) -> tuple:
        return case_key(self.rung.name, self.dtype.name, self.n, self.block, self.params_text())
