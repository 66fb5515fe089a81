"""Where the nodes spent their time, for a report: the CPU profiles of a study's measured runs
(cassperf.cluster.profiler records them, cassperf.parsers.jfr reads them) per arm, and per decided
claim what changed between the two arms it compares.

    found = profile_evidence(outcome, figures, claims)
    found.pools            # one row per arm: % of its CPU samples per thread pool (steady windows)
    found.claims           # per decided claim comparing two arms: change lines, a flame-graph tree
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

#: verdicts of a decided claim: the ones whose arms get a differential
DECIDED = ("holds", "does not hold")
#: pools shown by name in the per-arm table (the rest summed as "other")
TOP_POOLS = 8
#: a change smaller than this (points of the samples) is not a line of its own
MIN_POINTS = 1.0
#: the flame graph leaves out paths under this share of the samples in both arms
FLAME_MIN_SHARE_PCT = 0.5


@dataclass
class ClaimProfile:
    """What changed between a claim's arms A and B: ``lines`` (the pools, then the frames, whose
    share changed most), ``pools`` (the differential per pool), ``tree`` (flame_tree of B against
    A) or ``note`` where there is none."""

    claim: str
    arm_a: str
    arm_b: str
    lines: list[str] = field(default_factory=list)
    pools: pd.DataFrame | None = None
    tree: pd.DataFrame | None = None
    note: str = ""

    @property
    def summary(self) -> str:
        """One line for the claims row: the largest pool changes, or why there are none."""
        if self.note:
            return self.note
        return f"{self.arm_b} against {self.arm_a}: " + "; ".join(self.lines[:2]) if self.lines else \
            f"{self.arm_b} against {self.arm_a}: no thread pool's share changed by {MIN_POINTS:g} point or more"


@dataclass
class ProfileEvidence:
    pools: pd.DataFrame
    gc: pd.DataFrame
    claims: list[ClaimProfile]
    notes: list[str]
    period: str = ""
    runs: int = 0

    @property
    def empty(self) -> bool:
        return self.pools.empty


def _none(notes: Sequence[str]) -> ProfileEvidence:
    return ProfileEvidence(pd.DataFrame(), pd.DataFrame(), [], list(notes))


def _claim_profile(claim: Mapping[str, Any], by_arm: Mapping[str, pd.DataFrame]) -> ClaimProfile:
    a, b = str(claim.get("arm_a") or ""), str(claim.get("arm_b") or "")
    found = ClaimProfile(str(claim.get("claim", "")), a, b)
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


def profile_evidence(outcome: Any, figures: pd.DataFrame, claims: pd.DataFrame) -> ProfileEvidence:
    """The profiles of ``outcome``'s measured runs per arm (steady windows of ``figures``) and the
    differential of each decided claim's arms (module doc)."""
    from cassperf.parsers.jfr import JfrUnavailable, profile_samples

    study = outcome.study
    if not getattr(study, "profile", True):
        return _none(["no CPU profiles: the study ran with profile=False"])
    folders = [outcome.folders[r.run_id] for r in outcome.runs if r.run_id in getattr(outcome, "folders", {})]
    if not folders or figures.empty or "window_start_s" not in figures.columns:
        return _none(["no CPU profiles: no measured run of this study was recorded here"])
    try:
        got = profile_samples(folders)
    except (JfrUnavailable, CassperfError, OSError) as exc:
        return _none([f"the CPU profiles could not be read: {exc}"])
    if got.samples.empty:
        why = sorted({n.split(": ", 1)[-1] for n in got.notes}) or ["no recording held a stack sample"]
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
    decided = [c for c in claims.to_dict("records")[1:] if c.get("verdict") in DECIDED and c.get("arm_a")
               and c.get("arm_b")] if not claims.empty and "arm_a" in claims.columns else []
    found = [_claim_profile(c, by_arm) for c in decided]
    notes = list(dict.fromkeys(got.notes))
    notes = notes[:3] + ([f"and {len(notes) - 3} more lines like these"] if len(notes) > 3 else [])
    periods = sorted(set(got.periods.values()))
    return ProfileEvidence(pools, gc, found, notes, ", ".join(periods), samples["run_id"].nunique())


def claim_why(claims: pd.DataFrame, evidence: ProfileEvidence) -> pd.DataFrame:
    """``claims`` with a ``why`` column: for each decided claim whose arms were profiled, the
    largest changes of the thread pools' shares between them (ClaimProfile.summary)."""
    if claims.empty:
        return claims
    by_claim = {c.claim: c.summary for c in evidence.claims}
    return claims.assign(why=[by_claim.get(str(c), "") for c in claims["claim"]])


__all__ = ["ClaimProfile", "ProfileEvidence", "claim_why", "profile_evidence"]
