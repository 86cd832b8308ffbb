"""The verdict from rounds: a change counts only when it stands out from what varies
between runs.

A case's samples within one round share that round's episode (where its buffers lie,
what ran before it: docs/samples.md), so a test over samples of one process finds a
"significant" difference between two runs of identical code whenever the two runs drew
different episodes. The unit that varies from run to run is the round. Each side's
round medians are therefore the observations:

1. Does it matter? |change| above the threshold (the ratio of the two rows' medians, as
   the table shows it); within it the case is SAME.
2. Does it stand out from the rounds? An exact two-sided Mann-Whitney test on the two
   sides' round medians (scipy.stats.mannwhitneyu, method "exact"), p < alpha, with the
   round medians' own median ratio on the same side of 1. With 5 rounds a side the
   smallest p is 2/252 = 0.0079: every round of one side beyond every round of the
   other. Beyond the threshold but not standing out: NOISY, with the rounds' spread
   named. NOISY is shown, and never fails the regression gate.

The drift reference: every round of a run also times the same-size read. When the read
itself moved between BASE and NEW (by the same test, and by more than half the
threshold: enough to push a case across it), the machine changed between the runs, not
only the code: each case of that size is then judged on its change relative to the
read's as well, and is FASTER or SLOWER only where both judgments agree (else NOISY,
the note giving both). Agreement is asked for, not the relative verdict alone, because
the read follows memory bandwidth and a case bound by something else (one block, the
launches) does not move with it: on an H200, one_block at 2^20 kept its time within
0.1% while the read moved 2.0%, and the relative judgment alone called it FASTER."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from reducebench.analysis.significance import format_p
from reducebench.core.numbers import number

FASTER, SLOWER, SAME, NOISY = "FASTER", "SLOWER", "SAME", "NOISY"
MIN_ROUNDS = 2           # a side with fewer has no between-round spread to judge by
# The read moved enough to matter when its change is beyond this share of the threshold.
REFERENCE_SHARE = 0.5


def rounds_p_value(base: Sequence[float], new: Sequence[float]) -> float:
    """Two-sided exact Mann-Whitney p of NEW's round medians against BASE's."""
    from scipy.stats import mannwhitneyu

    if len(base) < 1 or len(new) < 1:
        return math.nan
    if len(set(base) | set(new)) == 1:   # every round equal: nothing tells them apart
        return 1.0
    return float(mannwhitneyu(new, base, alternative="two-sided", method="exact").pvalue)


def spread_pct(medians: Sequence[float]) -> float:
    """(largest - smallest) / median of a side's round medians, in percent."""
    if len(medians) < 2:
        return math.nan
    middle = statistics.median(medians)
    return 100 * (max(medians) - min(medians)) / middle


@dataclass(frozen=True)
class RoundVerdict:
    verdict: str              # FASTER, SLOWER, SAME or NOISY
    change_pct: float         # of the rows' medians (what the table shows)
    p_value: float            # the exact test on the round medians
    spread_pct: float         # the larger side's between-round spread
    reason: str

    def describe(self) -> str:
        return f"p={format_p(self.p_value)} over rounds: {self.reason}"


def decide_rounds(base: Sequence[float], new: Sequence[float], ratio: float,
                  threshold_pct: float, alpha: float) -> RoundVerdict:
    """The verdict of one case from both sides' round medians and the rows' ratio."""
    change = 100.0 * (ratio - 1.0)
    p = rounds_p_value(base, new)
    spread = max(spread_pct(base), spread_pct(new))
    shown = number(change, "+.2f", "%")
    if abs(change) <= threshold_pct:
        return RoundVerdict(SAME, change, p, spread,
                            f"{shown} is within the {number(threshold_pct, 'g', '%')} threshold")
    rounds_ratio = statistics.median(new) / statistics.median(base)
    # equal round medians (quantised times) lie on neither side of 1: they agree with
    # neither direction, so swapping BASE and NEW mirrors the verdict
    agrees = rounds_ratio > 1.0 if ratio > 1.0 else rounds_ratio < 1.0
    if p < alpha and agrees:
        return RoundVerdict(SLOWER if ratio > 1.0 else FASTER, change, p, spread,
                            f"{shown}, beyond the {number(threshold_pct, 'g', '%')} threshold, "
                            f"and every round stands apart from the other run's (spread "
                            f"{number(spread, '.1f', '%')})")
    return RoundVerdict(NOISY, change, p, spread,
                        f"{shown} but the rounds overlap: this case moves "
                        f"{number(spread, '.1f', '%')} "
                        f"between rounds ({len(base)} base, {len(new)} new), so the "
                        "change is not told apart from run-to-run variation")


@dataclass(frozen=True)
class ReferenceShift:
    """How far the same-size read moved between BASE and NEW."""

    ratio: float              # median of NEW's read rounds / BASE's
    p_value: float
    moved: bool               # beyond REFERENCE_SHARE of the threshold, and standing out

    @property
    def change_pct(self) -> float:
        return 100.0 * (self.ratio - 1.0)


def reference_shift(base: Sequence[float], new: Sequence[float], threshold_pct: float,
                    alpha: float) -> ReferenceShift | None:
    """The read's move, or None where either side has too few read rounds."""
    if len(base) < MIN_ROUNDS or len(new) < MIN_ROUNDS:
        return None
    ratio = statistics.median(new) / statistics.median(base)
    p = rounds_p_value(base, new)
    moved = p < alpha and abs(100.0 * (ratio - 1.0)) > REFERENCE_SHARE * threshold_pct
    return ReferenceShift(ratio, p, moved)

