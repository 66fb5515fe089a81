"""Where the nodes spent their time, for a report: the CPU profiles of a study's measured runs
(cassperf.cluster.profiler records them, cassperf.parsers.jfr reads them) per arm, and for each
pair of arms a claim compares (the A/A control's first) what changed between them.

    found = profile_evidence(outcome, figures, claims)
    found.pools            # one row per arm: % of its CPU samples per thread pool (steady windows)
    found.pairs            # per pair of arms a claim compares: change lines, a flame-graph tree
    found.notes            # one line per thing that could not be read, and why

Each run counts only inside its steady window (the window its figures were taken over), and only
runs whose figures count (status "ok"). A study without profiles (``profile=False``, a named
cluster, container nodes, a stress tool's runs) gets a note saying so, never an empty table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from cassperf.analysis.profiles import (arm_samples, change_lines, differential, flame_tree, gc_pauses,
                                        pool_share_table)
from cassperf.analysis.select import AnalysisError
from cassperf.errors import CassperfError

#: pools shown by name in the per-arm table (the rest summed as "other")
TOP_POOLS = 8
#: a change smaller than this (points of the samples) is not a line of its own
MIN_POINTS = 1.0
#: the flame graph leaves out paths under this share of the samples in both arms
FLAME_MIN_SHARE_PCT = 0.5


@dataclass
class PairProfile:
    """What changed between arms A and B, for the claims that compare them (``claims``; the A/A
    control's pair too: how far shares move between identical arms): ``lines`` (the pools, then
    the frames, whose share changed most), ``pools`` (the differential per pool), ``tree``
    (flame_tree of B against A) or ``note`` where there is none."""

    claims: list[str]
    arm_a: str
    arm_b: str
    lines: list[str] = field(default_factory=list)
    pools: pd.DataFrame | None = None
    tree: pd.DataFrame | None = None
    note: str = ""
    control: bool = False

    @property
    def summary(self) -> str:
        """One line for a claims row: the largest pool changes, or why there are none."""
        if self.note:
            return self.note
        return f"{self.arm_b} against {self.arm_a}: " + "; ".join(self.lines[:2]) if self.lines else \
            f"{self.arm_b} against {self.arm_a}: no thread pool's share changed by {MIN_POINTS:g} point or more"


@dataclass
class ProfileEvidence:
    pools: pd.DataFrame
    gc: pd.DataFrame
    pairs: list[PairProfile]
    notes: list[str]
    period: str = ""
    runs: int = 0

    @property
    def empty(self) -> bool:
        return self.pools.empty


def _none(notes: Sequence[str]) -> ProfileEvidence:
    return ProfileEvidence(pd.DataFrame(), pd.DataFrame(), [], list(notes))


def _pair_profile(a: str, b: str, by_arm: Mapping[str, pd.DataFrame]) -> PairProfile:
    found = PairProfile([], a, b)
    missing = [arm for arm in (a, b) if arm not in by_arm]
    if missing:
        found.note = f"no profile of arm {missing[0]!r}: no CPU samples in its counted runs' steady windows"
        return found
    try:
        found.pools = differential(by_arm[a], by_arm[b], "pool")
        frames = differential(by_arm[a], by_arm[b], "self")
        found.tree = flame_tree(by_arm[b], by_arm[a], min_share_pct=FLAME_MIN_SHARE_PCT)
    except AnalysisError as exc:
        found.note = f"no comparison of the profiles: {exc}"
        return found
    found.lines = change_lines(found.pools, 3, min_points=MIN_POINTS) + \
        [f"frame {line}" for line in change_lines(frames, 2, min_points=MIN_POINTS)]
    return found


def _pairs(claims: pd.DataFrame, by_arm: Mapping[str, pd.DataFrame]) -> list[PairProfile]:
    """One PairProfile per pair of arms the claims compare, in the claims' order (the A/A
    control's first), each naming its claims."""
    if claims.empty or "arm_a" not in claims.columns:
        return []
    pairs: dict[tuple[str, str], PairProfile] = {}
    for i, c in enumerate(claims.to_dict("records")):
        a, b = c.get("arm_a"), c.get("arm_b")
        if not (isinstance(a, str) and a and isinstance(b, str) and b):
            continue
        if (a, b) not in pairs:
            pairs[(a, b)] = _pair_profile(a, b, by_arm)
            pairs[(a, b)].control = i == 0
        pairs[(a, b)].claims.append(str(c.get("claim", "")))
    return list(pairs.values())


def profile_evidence(outcome: Any, figures: pd.DataFrame, claims: pd.DataFrame) -> ProfileEvidence:
    """The profiles of ``outcome``'s measured runs per arm (steady windows of ``figures``) and the
    differential of each pair of arms ``claims`` compare (module doc)."""
    from cassperf.parsers.jfr import UNRECORDED, JfrUnavailable, profile_samples

    if not outcome.study.profile:
        return _none(["no CPU profiles: the study ran with profile=False"])
    folders = [outcome.folders[r.run_id] for r in outcome.runs if r.run_id in outcome.folders]
    if not folders or figures.empty or "window_start_s" not in figures.columns:
        return _none(["no CPU profiles: no measured run of this study was recorded here"])
    try:
        got = profile_samples(folders)
    except (JfrUnavailable, CassperfError, OSError) as exc:
        return _none([f"the CPU profiles could not be read: {exc}"])
    if got.samples.empty:
        why = sorted({n.split(": ", 1)[-1] for n in got.notes}) or ["no recording held a stack sample"]
        if why == [UNRECORDED]:
            why = ["the runs were recorded without one (runs of cassandra-stress or latte, and 02's clients per DC, "
                   "are not profiled)"]
        return _none([f"no CPU profiles: {why[0]}" + (f" (and {len(why) - 1} more reasons)" if len(why) > 1 else "")])
    samples = arm_samples(got.samples, figures)
    if samples.empty:
        return _none(["no CPU samples inside the runs' steady windows"])
    order = [a for a in outcome.arm_names if a in set(samples["arm"].dropna())] or None
    pools = pool_share_table(samples, "arm", order=order, top=TOP_POOLS)
    gc = pd.DataFrame()
    if not got.gc.empty and "time_s" in got.gc.columns:
        gc = gc_pauses(arm_samples(got.gc, figures), by="arm")
    by_arm = {str(arm): group for arm, group in samples.groupby("arm", observed=True, sort=False)}
    found = _pairs(claims, by_arm)
    notes = list(dict.fromkeys(got.notes))
    notes = notes[:3] + ([f"and {len(notes) - 3} more lines like these"] if len(notes) > 3 else [])
    periods = sorted(set(got.periods.values()))
    return ProfileEvidence(pools, gc, found, notes, ", ".join(periods), samples["run_id"].nunique())


def claim_why(claims: pd.DataFrame, evidence: ProfileEvidence) -> pd.DataFrame:
    """``claims`` with a ``why`` column: for each claim whose two arms were profiled, the largest
    changes of the thread pools' shares between them (PairProfile.summary)."""
    if claims.empty:
        return claims
    by_claim = {claim: pair.summary for pair in evidence.pairs for claim in pair.claims}
    return claims.assign(why=[by_claim.get(str(c), "") for c in claims["claim"]])


__all__ = ["PairProfile", "ProfileEvidence", "claim_why", "profile_evidence"]
