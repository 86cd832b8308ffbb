"""The one way results reach disk: a case is committed as its samples, then its row.

The row is the commit mark. Both files are appended, flushed and fsynced, samples first,
inside one `deferred()` block (a signal waits until both are on disk), so a kill at any
instant leaves a pair of files in which every row has its samples, and at most one block
of samples without a row (the case being written), which every reader ignores and a
resumed run measures again. `run`, `check`, `tune`, `multigpu`, each GPU's child of
`run --device all` and `reducebench.measure` all write through ResultsStore."""

from __future__ import annotations

from pathlib import Path

from reducebench.core.interrupt import deferred
from reducebench.ladder.case import case_key
from reducebench.results.files import RowWriter
from reducebench.results.samples_file import SamplesWriter
from reducebench.results.naming import samples_path
from reducebench.results.schema import SINGLE, columns_of


def record_key(record) -> tuple:
    """The case key of a record (a row about to be written)."""
    return case_key(record.rung, record.dtype, record.n, record.block, record.params)


class ResultsStore:
    """A results file and, for single-GPU records, its samples file beside it. With
    `resume`, both are appended (an older file must have been upgraded first:
    RowWriter refuses another layout)."""

    def __init__(self, path: Path, kind: str = SINGLE, resume: bool = False) -> None:
        self.path = Path(path)
        self.kind = kind
        if not resume:  # results are never overwritten (naming.check_writable says so)
            for existing in (self.path, samples_path(self.path)):
                if existing.exists():
                    raise FileExistsError(existing)
        self._rows = RowWriter(self.path, columns_of(kind))
        self._samples = SamplesWriter(samples_path(self.path), append=resume)

    @property
    def rows(self) -> int:
        """Rows committed by this store (not counting those the file held before)."""
        return self._rows.rows

    @property
    def samples_path(self) -> Path:
        return self._samples.path

    @property
    def samples_written(self) -> int:
        """Cases whose samples this store committed."""
        return self._samples.cases

    def commit(self, record) -> None:
        """The case's samples (if it has any), then its row, both on disk when this
        returns; a signal meanwhile is raised after both."""
        with deferred():
            samples = getattr(record, "raw_samples", None)
            if samples is not None:
                self._samples.write_case(record.meta["run_id"], record_key(record), samples)
            self._rows.write(record)

    def saved(self) -> str:
        """What is on disk, naming only files that exist: for the last line of a run."""
        if not self.path.exists():
            return "nothing saved"
        where = f" (every sample in {self.samples_path})" if self.samples_written else ""
        return f"{self.rows} case(s) saved in {self.path}{where}"
