"""Your question's analysis (the contract: cassperf.experiments.analysis): the A/A control, then
each claim as its text says (cassperf.analysis.claim_text -> a rule of analysis.verdicts), on the
runs of the two arms it names for the workload it names, resting on the check that each arm's
table and node were what it asked; and three sections: throughput, latency, what each arm was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from cassperf.experiments.analysis import Analysis, Section, Sections
from cassperf.experiments.outcome import StudyOutcome
from cassperf.experiments.question import QuestionStudy
from cassperf.experiments.question_arms import took
from cassperf.experiments.study import AA_SUFFIX

CHECK_RULE = "each arm's table (and node) as the cluster reports it is what the arm asks"
NONE = "No run of this study is stored."


def measured_settings(record: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """The last execution's baseline: each arm's table and node as measured, by arm name ({}: none,
    e.g. imported logs)."""
    entries = [b for b in record.get("baseline") or [] if b.get("settings")]
    return {str(s["setting"]): s for s in entries[-1]["settings"]} if entries else {}


def check(study: QuestionStudy, arms: Sequence[str], found: Mapping[str, Mapping[str, str]]) -> Any:
    """The manipulation check of a claim on ``arms``: did each one's table and node take."""
    from cassperf.analysis.verdicts import Check

    parts = [took(study.setting(a), found[a]) if a in found else (None, f"{a}: not measured") for a in arms]
    ok = None if any(t is None for t, _ in parts) else all(t for t, _ in parts)
    return Check("the arms' settings", ok, "; ".join(f for _, f in parts), CHECK_RULE)


class QuestionAnalysis(Analysis):
    """What your question concludes (module doc)."""

    def claims(self, outcome: StudyOutcome, figs: pd.DataFrame) -> pd.DataFrame:
        from cassperf.analysis.arms import compare
        from cassperf.analysis.verdicts import aa_control, claim, claims_table, tested

        study: QuestionStudy = outcome.study
        first = study.parsed_workloads[0]
        aa = study.aa_arm([])
        control = claim(f"A/A control: '{aa}' against its identical twin", study.source,
                        aa_control(compare(figs, aa, aa + AA_SUFFIX, first.op)))
        found = measured_settings(outcome.record)
        rows = []
        for rule in study.claim_rules:
            w = study.workload(rule.workload)
            v = rule.decide(figs, study.arm_name(rule.arm_a, w.name), study.arm_name(rule.arm_b, w.name), w.op)
            if found:
                v = tested(v, check(study, [rule.arm_a, rule.arm_b], found))
            note = f"workload {w.name}" + (f": {w.command}" if w.command != w.name else "") + (
                "; a mixed workload is judged on its reads" if w.spec.op == "mixed" else "")
            rows.append(claim(rule.text, study.source, v, note))
        return claims_table(control, rows)

    def sections(self, outcome: StudyOutcome, figures: pd.DataFrame) -> Sections:
        from cassperf.analysis.arm_summary import arm_table
        from cassperf.plots import studies as charts

        study: QuestionStudy = outcome.study
        lat = ", ".join(sorted(set(figures.get("latency_type", pd.Series(dtype=str)).dropna()))) or None

        def table() -> pd.DataFrame:
            used = figures[figures["status"] == "ok"] if not figures.empty else figures
            arms = arm_table(used, outcome.runs)
            if arms.empty or "workload" not in arms.columns:
                return arms.iloc[0:0]
            ops = {w.name: w.op for w in study.parsed_workloads}
            twin = arms["aa"].notna() if "aa" in arms.columns else pd.Series(False, index=arms.index)
            order = {a.name: i for i, a in enumerate(study.parsed_arms)}
            mine = arms[~twin & (arms["op"] == arms["workload"].map(ops))]
            return mine.sort_values("setting", key=lambda names: names.map(order), kind="stable")

        def throughput() -> Section:
            t = table()
            if t.empty:
                return Section("Throughput per arm", NONE)
            mixed = "; a mixed workload shows its reads" if any(w.spec.op == "mixed" for w in study.parsed_workloads) \
                else ""
            return Section("Throughput per arm", f"Each bar is the mean of an arm's runs (one per block, "
                           f"{study.repeats} blocks) with its 95% CI{mixed}.",
                           [charts.bars(t, "setting", "rate_ops_s", "ops/s per arm and workload", "ops/s",
                                        color="workload", x_title="arm")])

        def latency() -> Section:
            t = table()
            if t.empty:
                return Section("Latency per arm", NONE)
            return Section("Latency per arm", "Percentiles of the HDR histograms of every run of the arm merged "
                           "over their steady windows (never an average of percentiles).",
                           [charts.latency_bars(part, "setting", f"Latency per arm: {w}", lat, x_title="arm")
                            for w, part in t.groupby("workload", sort=False)])

        def settings() -> Section:
            return Section("What each arm was", "As asked, and as the cluster reported it before the first block "
                           "(system_schema.tables, system.local, the node's command line); then each workload as "
                           "it ran, as a cassandra-stress command line.",
                           [arms_frame(study, outcome.record).style.hide(axis="index"),
                            workloads_frame(study, outcome.calibrated).style.hide(axis="index")])

        return {"throughput": throughput, "latency": latency, "settings": settings}


def arms_frame(study: QuestionStudy, record: Mapping[str, Any]) -> pd.DataFrame:
    """One row per arm: what it asked, its keyspace, what was measured and whether it took."""
    found = measured_settings(record)
    rows = []
    for s in study.parsed_arms:
        asked = ", ".join(f"{k} {v}" for k, v in s.labels().items() if k != "setting") or "the server's defaults"
        m = found.get(s.name)
        ok, figure = took(s, m) if m else (None, "not measured (no baseline: imported logs, or not run yet)")
        rows.append({"arm": s.name, "asked": asked, "keyspace": study.keyspace(s),
                     "measured": figure.split(": ", 1)[-1], "took": {True: "yes", False: "NO", None: ""}[ok]})
    return pd.DataFrame(rows)


def workloads_frame(study: QuestionStudy, calibrated: Any) -> pd.DataFrame:
    """One row per workload: as given, and the command line its runs ran (keyspace1 stands for
    each arm's own)."""
    from cassperf.workload.runners.stress_cmdline import to_stress_command

    specs = {a.labels["workload"]: a.spec for a in study.arms(calibrated)}
    return pd.DataFrame([{"workload": w.name, "given": w.command,
                          "ran as": to_stress_command(_plain(specs[w.name]))} for w in study.parsed_workloads])


def _plain(spec: Any) -> Any:
    import dataclasses

    return dataclasses.replace(spec, keyspace="keyspace1", compaction=None, compression=None)
