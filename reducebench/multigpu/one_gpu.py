"""The one-GPU cases of a launched run (docs/cluster.md): rank 0 alone.

Speed-up and efficiency divide a sharded sum's time on one GPU by its time on k GPUs
(shards.py). One process measures the k = 1 case itself (`multigpu --gpus 1,2`); a
launched world's cases span every rank, so under a launcher the cases for k = 1 run on
rank 0's GPU alone, driven as one process drives one GPU (device/one_process.py): the same
sharded sum over the whole n, the same sampler, rounds and stop rule as `multigpu
--gpus 1` on one host. Meanwhile every other rank waits (bounded by --timeout) for rank
0's outcome, which rank 0 broadcasts: every rank then holds the same measurement, writes
the same status and takes the same later rounds, as the loop (loop.py) asks of every
rank. The k = 1 rows are rows of their own, as in one process; the loop gives the
world's row its speed-up and efficiency from them."""

from __future__ import annotations

from typing import Callable

from reducebench.core.errors import CaseFailed, CaseSkipped
from reducebench.core.stats import StopRule
from reducebench.multigpu.cases import MultiGpuCase
from reducebench.multigpu.launch import BoundedComm
from reducebench.multigpu.loop import MultiMeasurement, Session
from reducebench.verify.inputs import HostInput

MEASURED, SKIPPED, FAILED = "measured", "skipped", "failed"


class RankZeroAlone:
    """The loop's Session for k = 1 under a launcher: on rank 0 the one-GPU session that
    open_session() makes (at its first case), on every rank rank 0's outcome."""

    def __init__(self, comm: BoundedComm, open_session: Callable[[], Session]) -> None:
        self.comm, self.open_session = comm, open_session
        self.session: Session | None = None

    def floor_us(self, stop: StopRule, cold: bool) -> float:
        return self._alone("the one-GPU timing floor", lambda s: s.floor_us(stop, cold))

    def sharded_sum(self, case: MultiGpuCase, host: HostInput, stop: StopRule,
                    cold: bool) -> MultiMeasurement:
        return self._alone(case.label, lambda s: s.sharded_sum(case, host, stop, cold))

    def collective(self, case: MultiGpuCase, stop: StopRule, cold: bool) -> MultiMeasurement:
        raise CaseSkipped("over one GPU a collective moves nothing")

    def new_round(self) -> None:
        if self.session is not None and hasattr(self.session, "new_round"):
            self.session.new_round()

    def close(self) -> None:
        if self.session is not None and hasattr(self.session, "close"):
            self.session.close()
        self.session = None

    def _alone(self, what: str, measure: Callable[[Session], object]):
        """measure() on rank 0, its outcome on every rank: the value, or the same
        CaseSkipped or CaseFailed. Anything else (an interruption, a lost peer) ends
        rank 0 without a broadcast, and the others' bounded wait ends them."""
        outcome = None
        if self.comm.rank == 0:
            try:
                if self.session is None:
                    self.session = self.open_session()
                outcome = (MEASURED, measure(self.session))
            except CaseSkipped as exc:
                outcome = (SKIPPED, str(exc))
            except CaseFailed as exc:
                outcome = (FAILED, str(exc))
        kind, value = self.comm.bcast(outcome, f"{what}: waiting for rank 0 alone")
        if kind == SKIPPED:
            raise CaseSkipped(value)
        if kind == FAILED:
            raise CaseFailed(value)
        return value
