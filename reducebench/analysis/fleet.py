"""The fleet check: which GPUs of a fleet are slower than the fleet's median, from every
GPU's raw samples (`run --device all` under a launcher; docs/cluster.md).

For each case timed on at least two GPUs, the fleet median is the median of the GPUs'
medians (with two, their mean). GPU g is SLOWER on a case
when both hold:
1. its median is more than `threshold_pct` (default 2%) above the fleet median;
2. a two-sided Mann-Whitney U test (significance.mann_whitney) of g's samples against
   the pooled samples of every other GPU gives p < alpha (default 0.01), in the
   direction of g slower (P(a sample of g > a sample of the others) > 1/2).
The size test alone would flag noise, the rank test alone a real but negligible gap. A
GPU is flagged when it is SLOWER on at least one case; its worst case is reported. With
fewer than MIN_SAMPLES samples on either side the test is not trusted and the case is
left undecided for that GPU, and said so."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from reducebench.analysis.significance import ALPHA, MIN_SAMPLES, mann_whitney
from reducebench.core.numbers import number
from reducebench.results.schema import OK, SUSPECT

DEFAULT_THRESHOLD_PCT = 2.0
MIN_GPUS = 2  # with two, the fleet median is their mean: the slower one can stand out


@dataclass(frozen=True)
class CaseJudgement:
    case: str
    median_us: float
    fleet_median_us: float
    p_value: float
    slower: bool
    reason: str = ""   # why not decided, where it was not

    @property
    def ratio(self) -> float:
        return self.median_us / self.fleet_median_us


@dataclass
class GpuJudgement:
    gpu: int                                  # the rank
    cases: list[CaseJudgement] = field(default_factory=list)

    @property
    def slower_cases(self) -> list[CaseJudgement]:
        return [c for c in self.cases if c.slower]

    @property
    def flagged(self) -> bool:
        return bool(self.slower_cases)

    @property
    def worst(self) -> CaseJudgement | None:
        """Its slowest case relative to the fleet (flagged cases first)."""
        pool = self.slower_cases or [c for c in self.cases if not c.reason]
        return max(pool, key=lambda c: c.ratio, default=None)


@dataclass
class FleetReport:
    gpus: dict[int, GpuJudgement]
    threshold_pct: float
    alpha: float
    cases: int          # cases judged (timed on at least MIN_GPUS GPUs)

    @property
    def flagged(self) -> list[int]:
        return [g for g, j in self.gpus.items() if j.flagged]

    def rule(self) -> str:
        return (f"SLOWER: median > fleet median x {number(1 + self.threshold_pct / 100, 'g')} "
                f"and a two-sided Mann-Whitney U test against the other GPUs' pooled samples with "
                f"p < {number(self.alpha, 'g')} (at least {MIN_SAMPLES} samples a side)")


def judge_fleet(samples: Mapping[str, Mapping[int, Sequence[float]]],
                threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                alpha: float = ALPHA) -> FleetReport:
    """samples: case name -> GPU (rank) -> that GPU's kept samples of the case, in us."""
    gpus: dict[int, GpuJudgement] = {}
    judged = 0
    for case, per_gpu in samples.items():
        timed = {g: list(s) for g, s in per_gpu.items() if len(s)}
        for g in per_gpu:
            gpus.setdefault(g, GpuJudgement(g))
        if len(timed) < MIN_GPUS:
            continue
        judged += 1
        medians = {g: statistics.median(s) for g, s in timed.items()}
        fleet = statistics.median(medians.values())
        for g, mine in timed.items():
            others = [t for h, s in timed.items() if h != g for t in s]
            gpus[g].cases.append(_judge(case, mine, others, medians[g], fleet,
                                        threshold_pct, alpha))
    return FleetReport(dict(sorted(gpus.items())), threshold_pct, alpha, judged)


def _judge(case: str, mine: list[float], others: list[float], median: float, fleet: float,
           threshold_pct: float, alpha: float) -> CaseJudgement:
    if len(mine) < MIN_SAMPLES or len(others) < MIN_SAMPLES:
        return CaseJudgement(case, median, fleet, float("nan"), False,
                             f"fewer than {MIN_SAMPLES} samples")
    test = mann_whitney(mine, others)
    slower = (median > fleet * (1 + threshold_pct / 100) and test.p_value < alpha
              and test.prob_new_slower > 0.5)
    return CaseJudgement(case, median, fleet, test.p_value, slower)


def fleet_samples(records: list) -> dict:
    """case -> rank -> the kept samples of that case on that rank (raw, from each record)."""
    out: dict = {}
    for r in records:
        raw = getattr(r, "raw_samples", None)
        if r.status not in (OK, SUSPECT) or raw is None:
            continue
        kept = raw.kept if raw.kept is not None else [True] * len(raw.times_us)
        times = [t for t, k in zip(raw.times_us, kept) if k]
        case = f"{r.rung} {r.dtype} n={r.n} block={r.block} {r.params}".strip()
        out.setdefault(case, {})[int(r.meta.get("rank", 0))] = times
    return out


def rank_frames(path) -> tuple[dict, dict]:
    """A fleet's one results file split by rank: rank -> its rows, and rank ->
    "host:device gpu" (what names it in the tables)."""
    from reducebench.results.files import read_results

    frame = read_results(path)
    ranks = sorted(int(r) for r in frame["rank"].dropna().unique())
    frames = {r: frame[frame["rank"] == r] for r in ranks}
    names = {}
    for r in ranks:
        row = frames[r].iloc[0]
        names[r] = f"{row['host']}:{int(row['device'])} {row['gpu']}"
    return frames, names
