"""The closing table of every study: "what the published study found, checked here".

Each row: the published claim in the project's own words, the source file, what was measured
on this run (with its uncertainty where a test applies), and a verdict: "holds", "does not
hold", "not tested here" (the runs did not make the setting the claim is about: its manipulation
did not take, e.g. a cache claim on reads that never left memory; the figure says so), "not
shown" (the runs cannot decide it: too few intervals, unstable runs, a run missing), with a
sentence where this machine cannot show it. Verdicts come from fixed rules
stated in the ``rule`` column; a run is never tuned to make a claim hold.

`Claim` is the row. The method across repeated runs (analysis.verdicts: claims by kind from
analysis.arms comparisons) fills its reason, change, CI, p, n and MDE fields and publishes them
with verdicts.claims_table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HOLDS, FAILS, NOT_SHOWN = "holds", "does not hold", "not shown"
#: the claim's manipulation did not take in these runs: no verdict on the claim, and not "not shown" either
NOT_TESTED = "not tested here"
#: every verdict word, in the order reports count them
VERDICTS = (HOLDS, FAILS, NOT_TESTED, NOT_SHOWN)


@dataclass(frozen=True)
class Claim:
    claim: str          # the published finding, in the project's words
    source: str         # the published study: its title and what it was
    measured: str       # the figures measured here
    verdict: str        # holds / does not hold / not tested here / not shown
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
    check: str = ""                     # the manipulation check's figure: did the setting the claim is about take
    check_took: bool | None = None      # True / False (then "not tested here") / None (not measured)
    arm_a: str = ""                     # the arms the verdict compares (its resource evidence is theirs)
    arm_b: str = ""
