"""A case (rung, dtype, n, block, parameters; rows for a case that sums each row) and its key: the one identity of a case in
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


# The rungs that run whatever the GPU's tuning table chooses (ladder/auto.py): per size,
# and per shape for the row ladder.
AUTO = "auto"
ROW_AUTO = "row_auto"
DISPATCHERS = (AUTO, ROW_AUTO)


# Parameters that rungs gained after results files had been written, at the value that
# runs the kernel those files measured: a case's key leaves them out at that value, so an
# older file's case (without the parameter) is the same case as a new one's in `compare`,
# `--resume` and the samples. `persistent=0` is row_tile's one-tile grid as the files of
# dd4ef6c name it (results/*/rows_tile_dd4ef6c.csv), measured while row_tile also had a
# persistent grid (slower, removed; docs/rows.md): the kernel every other file measured.
UNKEYED_DEFAULTS = {"evict_first": "0", "persistent": "0"}


def keyed_params(params: str) -> str:
    """The parameters text of a case's key: `params` ("k=v;k=v") without the parameters
    at their UNKEYED_DEFAULTS value."""
    kept = [item for item in params.split(";")
            if item and UNKEYED_DEFAULTS.get(item.partition("=")[0]) != item.partition("=")[2]]
    return ";".join(kept)


def case_key(rung: str, dtype: str, n: int, block: int, params: str, rows: int = 1) -> tuple:
    """A case as the user asked for it. `auto` (and `row_auto`) takes no block or parameters: its row
    shows the block and parameters it resolved to, which change with the tuning table,
    so they are not part of its key (a resumed sweep never measures it twice). A case
    of several rows adds its row count (1000x33 and 33x1000 have one n); a one-row
    case's key is the key every schema version has always had. A parameter at its
    UNKEYED_DEFAULTS value is left out (keyed_params)."""
    if str(rung) in DISPATCHERS:
        block, params = 0, ""
    key = (str(rung), str(dtype), int(n), int(block), keyed_params(str(params or "")))
    return key if int(rows) == 1 else (*key, int(rows))


@dataclass(frozen=True)
class Case:
    rung: "Rung"
    dtype: "DType"
    n: int
    block: int               # 0 for library references, which choose their own
    params: dict[str, int] = field(default_factory=dict, hash=False, compare=False)
    rows: int = 1            # n elements as rows x (n / rows), one value per row

    @property
    def cols(self) -> int:
        return self.n // self.rows

    @property
    def label(self) -> str:
        """The NVTX range name, and how progress and errors name the case."""
        extra = "".join(f" {k}={v}" for k, v in sorted(self.params.items()))
        block = f" block={self.block}" if self.block else ""
        size = f"shape={self.rows}x{self.cols}" if self.rung.finish == "rows" else f"n={self.n}"
        return f"{self.rung.name} {self.dtype.name} {size}{block}{extra}"

    def params_text(self) -> str:
        return ";".join(f"{k}={v}" for k, v in sorted(self.params.items()))

    @property
    def key(self) -> tuple:
        return case_key(self.rung.name, self.dtype.name, self.n, self.block, self.params_text(),
                        self.rows)
