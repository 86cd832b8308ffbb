"""A case measured in rounds: what one round gives, and how a case's rounds add up.

Something fixed for a whole sampling episode moves a case's time between episodes:
every sample of one episode shifts together, while the samples inside it agree
(docs/samples.md has the study). Samples of one episode therefore say nothing about how
far a second run may land, and a verdict judged from them alone calls identical code
slower. So a timed case is measured in several rounds, interleaved with every other
case's (round 1 of every case, then round 2, ...), each round a fresh episode: the case
re-bound to new buffers, its input uploaded again, a new L2-flush buffer. The spread of
the round medians is then the run-to-run variation that `compare` judges against.

A round's stop rule is the case's shared out (StopRule.for_round), so a case in rounds
costs about as much sampling time as one without."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, replace

from reducebench.core import defaults
from reducebench.core.stats import RoundSummary, summarize
from reducebench.measuring.backend_protocol import Measurement, Sampled, Sampling
from reducebench.results.samples_file import CaseSamples

DEFAULT_ROUNDS = defaults.ROUNDS  # why 5: core/defaults.py
MAX_ROUNDS = 50


def round_sampling(sampling: Sampling | None, rounds: int, index: int) -> Sampling | None:
    """How to sample round `index` of `rounds`: the stop rule shared out, and energy
    (a burst of about a second) measured in the first round only."""
    if sampling is None:
        return None
    return replace(sampling, stop=sampling.stop.for_round(rounds),
                   energy=sampling.energy and index == 0)


@dataclass
class RoundsTaken:
    """The timed rounds of one case, in order."""

    measurements: list[Measurement] = field(default_factory=list)

    def add(self, measurement: Measurement) -> None:
        self.measurements.append(measurement)

    @property
    def count(self) -> int:
        return len(self.measurements)

    def times(self) -> list[float]:
        """Every round's summarised samples (kept, fastest phase), pooled in order."""
        return [t for m in self.measurements for t in m.times_us]

    def summary(self) -> RoundSummary:
        return RoundSummary(tuple(statistics.median(m.times_us)
                                  for m in self.measurements if m.times_us))

    def inner_noise(self) -> float:
        """The noise inside a round (stdev / mean of its samples, a fraction): the median
        over the rounds, so that one jumpy round does not stand for all of them."""
        noises = [summarize(m.times_us).noise for m in self.measurements if m.times_us]
        return statistics.median(noises) if noises else float("nan")

    def combined(self) -> Measurement:
        """One Measurement for the whole case's timing: every round's samples pooled,
        each tagged with its round, what sampling saw added up. Its values are empty:
        each round's values were verified as the round came in."""
        timings = [m.timing for m in self.measurements if m.timing is not None]
        if not timings:
            return Measurement([], self.times())
        samples = combine_rounds([t.samples for t in timings])
        sampled = Sampled(self.times(), samples,
                          throttled=any(t.throttled for t in timings),
                          discarded=sum(t.discarded for t in timings),
                          graph_k=timings[-1].graph_k,
                          energy=next((t.energy for t in timings if t.energy is not None),
                                      None))
        return Measurement([], self.times(), sampled)


def combine_rounds(rounds: list) -> CaseSamples | None:
    """Each round's CaseSamples in one, every sample tagged with its round (a round
    without samples, e.g. a host executor's, leaves the whole None)."""
    if not rounds or any(r is None for r in rounds):
        return None

    def joined(name: str, default):
        out: list = []
        for r in rounds:
            values = getattr(r, name)
            out.extend(values if values is not None else [default] * len(r.times_us))
        return out

    return CaseSamples(
        times_us=joined("times_us", None), phases=joined("phases", 0),
        sm_clock_mhz=joined("sm_clock_mhz", None), mem_clock_mhz=joined("mem_clock_mhz", None),
        kept=joined("kept", True),
        rounds=[index for index, r in enumerate(rounds) for _ in r.times_us])


def rounds_for(rounds: int, timed: bool, profile: bool) -> int:
    """Rounds a run takes: one for checking (untimed) and for profiling (three bare
    samples for a profiler's timeline), else as asked."""
    return 1 if not timed or profile else rounds

