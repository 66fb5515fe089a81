"""The analysis contract: what a study concludes from its stored outcome.

The plan of a study (cassperf.experiments.study.Study) says what to run; its analysis says what
to conclude, in three methods that one machine (cassperf.workbook.study_page) calls for every
study, published or a user's own:

    figures(outcome)            one row per measured run and op (analysis.repeats.run_figures),
                                built by the one builder below from the study's hooks
    claims(outcome, figures)    the claims table (analysis.verdicts.claims_table): the A/A
                                control first, then each claim decided by a rule of verdicts
    sections(outcome, figures)  {key: builder of a Section}: the report's chart sections

The hooks of the builder (each with a default that suits a closed-loop run):

    window(run)       "mser5" (the steady window, the default), "trim", or a fixed Window
    OP_GROUPS         figures per named group of ops merged ({"write": ("write", "delete")})
    keeps_drift(run)  True where a run's trend is what it measures (kept, said in its window_note)
    extra(run, row)   a study's own columns per run and op (e.g. node CPU over the window)

A study's analysis compares arms with ``compare`` (cassperf.analysis.arms: across runs, paired
per block, pooled where the executor labelled a pool) and decides with the rules of
cassperf.analysis.verdicts; it never reaches into the report layer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from cassperf.analysis.repeats import WindowChoice, run_figures
from cassperf.analysis.resources import RESOURCE_COLUMNS, claim_limits, client_flag, resource_rows, run_resources
from cassperf.experiments.profile_evidence import ProfileEvidence, claim_why, profile_evidence


@dataclass
class Section:
    """One chart section of a report: a heading, a sentence, and what it shows (plotly figures,
    frames, HTML), in order."""

    title: str
    text: str
    items: list[Any] = field(default_factory=list)


#: a study's sections: key -> a builder called when the notebook shows that section
Sections = Mapping[str, Callable[[], Section]]


@dataclass
class Conclusions:
    """What an analysis concludes from one outcome: its figures, claims and sections."""

    figures: pd.DataFrame
    claims: pd.DataFrame
    sections: Sections
    profiles: ProfileEvidence | None = None


class Analysis:
    """The contract (module doc), made for one study's parameters (``study``: the Study as its
    runs ran). Subclass it, set the hooks that differ, implement ``claims`` and, for charts,
    ``sections``."""

    #: figures per named group of ops merged; None: one row per op the run has
    OP_GROUPS: ClassVar[Mapping[str, Sequence[str]] | None] = None

    def __init__(self, study: Any) -> None:
        self.study = study

    # -- the figures ---------------------------------------------------------------------------
    def window(self, run: Any) -> WindowChoice:
        """Where the run's figures are taken: the steady window (MSER-5) unless a study says."""
        return "mser5"

    def keeps_drift(self, run: Any) -> bool:
        """True for a run whose trend is what it measures (the drift rule would hide the effect)."""
        return False

    def extra(self, run: Any, row: Mapping[str, Any]) -> Mapping[str, Any]:
        """A study's own columns for one row of the figures (its run, op and window)."""
        return {}

    def figures(self, outcome: Any) -> pd.DataFrame:
        """The run figures of the outcome's measured runs, by the hooks (module doc), with each
        run's resource evidence over the same window (cassperf.analysis.resources: RESOURCE_COLUMNS
        and client_flag) and the study's own columns."""
        runs = list(outcome.runs)
        figs = run_figures(runs, window=self.window, op_groups=self.OP_GROUPS, keep_drift=self.keeps_drift)
        if figs.empty:
            return figs
        by_id = {r.run_id: r for r in runs}
        rows = figs.to_dict("records")
        evidence = _evidence(by_id, rows)
        for col in (*RESOURCE_COLUMNS, "client_flag"):
            figs[col] = [evidence.get(rid, {}).get(col, math.nan if col != "client_flag" else None)
                         for rid in figs["run_id"]]
        if type(self).extra is Analysis.extra:
            return figs
        extra = [dict(self.extra(by_id[rid], row)) if rid in by_id else {}
                 for rid, row in zip(figs["run_id"], rows, strict=True)]
        for col in dict.fromkeys(k for e in extra for k in e):
            figs[col] = [e.get(col, math.nan) for e in extra]
        return figs

    # -- the conclusions -----------------------------------------------------------------------
    def claims(self, outcome: Any, figures: pd.DataFrame) -> pd.DataFrame:
        raise NotImplementedError(f"{type(self).__name__}.claims: a study's analysis states its claims")

    def sections(self, outcome: Any, figures: pd.DataFrame) -> Sections:
        return {}

    def conclude(self, outcome: Any) -> Conclusions:
        """figures, then claims and sections from them: what the report machine asks of every study.
        Under every decided claim, the limit of the arms it compares (resources.claim_limits); under
        every claim on two profiled arms, where the nodes' time went differently between them
        (experiments.profile_evidence)."""
        figures = self.figures(outcome)
        claims = claim_limits(self.claims(outcome, figures), resource_rows(figures))
        profiles = profile_evidence(outcome, figures, claims)
        return Conclusions(figures, claim_why(claims, profiles), self.sections(outcome, figures), profiles)


def _evidence(by_id: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each run's resource figures over its figures window (the window of its first row; a run
    without one, or without samples, gets none), with its client flag."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        rid = row["run_id"]
        start, end = row.get("window_start_s"), row.get("window_end_s")
        if rid in out or rid not in by_id or not (isinstance(start, float) and math.isfinite(start)):
            continue
        res = run_resources(by_id[rid], start, end)
        out[rid] = {**res, "client_flag": client_flag(res, by_id[rid].manifest)}
    return out


__all__ = ["Analysis", "Conclusions", "Section", "Sections"]
