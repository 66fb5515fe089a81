"""The closing table of every study: "what the published study found, checked here".

Each row: the published claim in the project's own words, the source file, what was measured
on this run (with its uncertainty where a test applies), and a verdict: "holds", "does not
hold", "not shown" (the runs cannot decide it: too few intervals, unstable runs, a run
missing), with a sentence where this machine cannot show it. Verdicts come from fixed rules
stated in the ``rule`` column; a run is never tuned to make a claim hold.

`Claim` is the row of both methods. The method across repeated runs (analysis.verdicts: claims
by kind from analysis.arms comparisons) fills its reason, change, CI, p, n and MDE fields and
publishes them with verdicts.claims_table. The old within-run method (decidable, directional,
higher, lower, alike over analysis.compare's Comparison, and claims_frame) stays until the
studies are ported to repeats.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from cassperf.analysis.compare import Comparison

HOLDS, FAILS, NOT_SHOWN = "holds", "does not hold", "not shown"


@dataclass(frozen=True)
class Claim:
    claim: str          # the published finding, in the project's words
    source: str         # ../shared/studies/<file>
    measured: str       # the figures measured here
    verdict: str        # holds / does not hold / not shown
    rule: str           # how the verdict was decided
    note: str = ""      # why this machine cannot show it, or what to keep in mind
    reason: str = ""    # one line: why this verdict (every "not shown" states its MDE)
    change_pct: float = math.nan        # the comparison behind the verdict (analysis.arms), B against A
    ci_low_pct: float = math.nan        # its 95% CI
    ci_high_pct: float = math.nan
    p_value: float | None = None
    n_a: int | None = None              # runs counted a side (blocks when paired)
    n_b: int | None = None
    mde_pct: float = math.nan           # the change these runs could detect (80% power, 5% level)


def claims_frame(claims: list[Claim]) -> pd.DataFrame:
    """The old method's claims table (claim, measured, verdict, rule, note, source); tables of
    verdicts across repeats come from analysis.verdicts.claims_table."""
    return pd.DataFrame([asdict(c) for c in claims], columns=["claim", "measured", "verdict", "rule", "note",
                                                              "source"])


def decidable(c: Comparison | None) -> bool:
    """Old method (within-run comparisons; verdicts across repeats: analysis.verdicts).
    The comparison can settle a claim: both sides stable, enough intervals, a test applied."""
    return not (c is None or c.unstable_a or c.unstable_b or "too few" in c.verdict
                or "autocorrelated" in c.verdict)


def directional(c: Comparison | None, sign: int) -> str:
    """Old method (within-run comparisons; across repeats: analysis.verdicts.directional).
    A claimed rise (sign +1) or fall (-1) of b against a: holds when the change is
    significant that way, does not hold when it is significant the other way, and is not shown
    when the runs cannot decide (no significant difference, unstable runs, too few intervals):
    the absence of a detected difference is not evidence either way."""
    if not decidable(c) or not c.significant:
        return NOT_SHOWN
    return HOLDS if c.change_pct * sign > 0 else FAILS


def higher(c: Comparison | None) -> str:
    """Old method: directional(c, +1)."""
    return directional(c, +1)


def lower(c: Comparison | None) -> str:
    """Old method: directional(c, -1)."""
    return directional(c, -1)


def alike(c: Comparison | None, within_pct: float) -> str:
    """Old method (within-run comparisons; across repeats: analysis.verdicts.equivalent, TOST).
    Holds when the whole 95% CI of the change lies within +-within_pct (equivalence: a
    difference that is merely not significant does not make two things alike); does not hold
    when the whole CI lies outside the band; otherwise not shown."""
    if c is None or c.ci_low_pct is None or c.ci_high_pct is None or not np.isfinite(c.ci_low_pct):
        return NOT_SHOWN
    if c.unstable_a or c.unstable_b:
        return NOT_SHOWN
    if -within_pct <= c.ci_low_pct and c.ci_high_pct <= within_pct:
        return HOLDS
    if c.ci_low_pct > within_pct or c.ci_high_pct < -within_pct:
        return FAILS            # the whole interval is outside the band: a real difference
    return NOT_SHOWN            # the interval straddles the band's edge: the runs cannot tell


def describe(c: Comparison | None, what: str) -> str:
    if c is None:
        return f"{what}: a run is missing"
    return f"{what}: {c.verdict}"


@dataclass(frozen=True)
class SampleTest:
    mean_a: float
    mean_b: float
    change_pct: float
    p_value: float
    n_a: int
    n_b: int

    @property
    def significant(self) -> bool:
        return bool(np.isfinite(self.p_value) and self.p_value < 0.05)


def sample_test(a: np.ndarray, b: np.ndarray) -> SampleTest | None:
    """Welch's t-test of two sets of sampled values (e.g. per-second GC time of every node's
    samples in two windows); None with fewer than 3 samples a side."""
    a = np.asarray(a, dtype="float64")[np.isfinite(a)]
    b = np.asarray(b, dtype="float64")[np.isfinite(b)]
    if len(a) < 3 or len(b) < 3:
        return None
    ma, mb = float(a.mean()), float(b.mean())
    if np.all(a == a[0]) and np.all(b == b[0]):
        p = 0.0 if a[0] != b[0] else 1.0
    else:
        p = float(sps.ttest_ind(a, b, equal_var=False).pvalue)
    change = (mb - ma) / abs(ma) * 100 if ma else (np.inf if mb > 0 else 0.0)
    return SampleTest(ma, mb, change, p, len(a), len(b))
