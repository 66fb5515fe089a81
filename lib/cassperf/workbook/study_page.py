"""The one machine that reports any study: a study's page that leads with its findings.

Every study notebook is the same few cells::

    from cassperf.workbook import study_report
    report = study_report(RFStudy, globals())   # parameters -> study -> run (or analyse only) -> outcome
    report.findings()                           # what was run and where, in one paragraph; the claims table
    report.section("writes")                    # one call per chart section of the study
    report.method()                             # warm-up, calibration, the order of runs, the statistics
    report.inventory()                          # collapsed: every run, its figures, the log, the parameters

``study_report`` validates the parameters before any cluster starts (a bad value is one
ConfigError line), starts or reuses the embedded cluster the parameters name (or connects to
``contact_points``), runs the study through the one executor, reads back what is stored, and
asks the study's analysis (the contract: cassperf.experiments.analysis) for its figures, claims
and sections.
With ``analyse_only`` it runs nothing. A cluster the study refuses as lacking what its claims need
(``NotAddressable``, e.g. no JMX for 03's garbagecollect) gets a report of no runs whose opening
says so.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import pandas as pd
from IPython.display import HTML, display

from cassperf.analysis.claims import VERDICTS
from cassperf.experiments.analysis import Analysis, Sections
from cassperf.experiments.outcome import StudyOutcome
from cassperf.experiments.profile_evidence import ProfileEvidence
from cassperf.experiments.study import Study
from cassperf.workbook.profile_page import show_profiles
from cassperf.workbook.text import esc as _esc

_STYLE = """<style>
.cp-find{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:14px;color:#1f2933;max-width:70rem}
.cp-find p.what{line-height:1.5;margin:4px 0 12px}
.cp-find table{border-collapse:collapse;font-size:13px;width:100%}
.cp-find th{background:#f1f4f7!important;text-align:left!important;padding:5px 8px!important;font-weight:600}
.cp-find td{padding:5px 8px!important;border-bottom:1px solid #e4e7eb!important;vertical-align:top;text-align:left!important}
.cp-find tr.aa td{background:#f8fafc!important}
.cp-find .v{font-weight:600;white-space:nowrap;border-radius:4px;padding:1px 6px}
.cp-find .holds{background:#e3f9e5;color:#14612a}.cp-find .fails{background:#ffe3e3;color:#8a1c1c}
.cp-find .none{background:#f1f4f7;color:#52606d}.cp-find .untested{background:#e8eefc;color:#28428c}.cp-find .withheld{background:#fff3c4;color:#7c5e10}
.cp-find .small{color:#52606d;font-size:12px}
.cp-find .count{margin:6px 0 10px;font-size:13px}
.cp-find details{margin:6px 0}.cp-find summary{cursor:pointer;color:#3e4c59;font-weight:600}
.cp-find code{font-size:12px;background:#f1f4f7;padding:0 3px;border-radius:3px}
.cp-find table.per-arm td:first-child{white-space:nowrap}
</style>"""

VERDICT_CLASS = {"holds": "holds", "does not hold": "fails", "not tested here": "untested", "not shown": "none",
                 "withheld": "withheld",
                 "control": "none"}


def claims_html(claims: pd.DataFrame, heading: str = "Published finding (our words)") -> str:
    """The claims table: claim (under ``heading``), verdict (coloured) and its reason, measured
    here with the manipulation check and the arms' limit, rule, note; the A/A control is the first
    row (cassperf.analysis.verdicts.claims_table) and not counted."""
    counts = claims["verdict"].iloc[1:].value_counts() if not claims.empty else pd.Series(dtype=int)
    summary = ", ".join(f"<b>{int(counts.get(v, 0))}</b> {v}" for v in VERDICTS
                        if v in counts or v in ("holds", "not shown"))
    rows = []
    for i, r in enumerate(claims.to_dict("records")):
        cls = VERDICT_CLASS.get(str(r.get("verdict")), "none")
        aa = " class='aa'" if i == 0 else ""
        reason = f"<div class='small'>{_esc(r.get('reason'))}</div>" if r.get("reason") else ""
        check = f"<div class='small check'><b>Did it take?</b> {_esc(r.get('check'))}</div>" if r.get("check") else ""
        limit = f"<div class='small limit'><b>Limit:</b> {_esc(r.get('limit'))}</div>" if r.get("limit") else ""
        why = (f"<div class='small why'><b>Where the time went:</b> {_esc(r.get('why'))}</div>"
               if isinstance(r.get("why"), str) and r.get("why") else "")
        rows.append(f"<tr{aa}><td>{_esc(r.get('claim'))}</td><td><span class='v {cls}'>{_esc(r.get('verdict'))}"
                    f"</span>{reason}</td><td>{_esc(r.get('measured'))}{check}{limit}{why}</td><td class='small'>"
                    f"{_esc(r.get('rule'))}{'<br>' + _esc(r.get('note')) if r.get('note') else ''}</td></tr>")
    return (f"<p class='count'>Claims checked here: {summary}.</p><table><thead><tr><th>{_esc(heading)}"
            f"</th><th>Verdict</th><th>Measured here</th><th>Rule, and what to keep in mind</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


class StudyReport:
    """The sections of one study's report (module doc). ``claims`` and ``figures`` (one row per
    run and op, from the runs the analysis used) are frames a test can compare with the
    analysis functions; ``sections`` maps a key to a Section builder."""

    def __init__(self, outcome: StudyOutcome, claims: pd.DataFrame, figures: pd.DataFrame,
                 sections: Sections, where: str, cluster: Mapping[str, Any] | None,
                 parameters: Mapping[str, Any], extra_json: Mapping[str, Any] | None = None,
                 profiles: ProfileEvidence | None = None) -> None:
        self.outcome, self.claims, self.figures, self.profiles = outcome, claims, figures, profiles
        self._sections, self.where, self.cluster, self.parameters = sections, where, cluster, parameters
        self.extra_json = dict(extra_json or {})

    # -- the opening ---------------------------------------------------------------------------
    def what_was_run(self) -> str:
        s, rec = self.outcome.study, self.outcome.record
        if not rec:
            return f"Nothing was run for this report: {self.outcome.note}."
        arms = len(rec.get("arms", []))
        used = sum(1 for r in self.outcome.runs if r.manifest.get("complete") and not r.manifest.get("failed"))
        cal = rec.get("calibration")
        lat = ", ".join(sorted({str(r.manifest.get("latency_type")) for r in self.outcome.runs})) or "service"
        order = ("one of the arms' orders, every order once and each block starting with the arm that ended the "
                 "one before, so every arm runs right after every other equally often" if s.ALL_ORDERS
                 else "a random order")
        if rec.get("imported"):
            blocks = len({b for b, _, _ in rec.get("order", [])})
            return (f"{len(self.outcome.runs)} runs of {arms} arms imported from logs, in {blocks} blocks by their "
                    f"labels, {used} of them usable; nothing was run here, so there is no A/A control, warm-up or "
                    f"calibration of this workbook's. Latency is {lat} time, percentiles merged from HDR histograms "
                    f"where the logs hold them. Differences are judged between runs (the run-to-run spread), never "
                    f"within one. Note: {self.outcome.note}.")
        parts = [f"{arms} arms (configurations, the A/A control among them) ran {s.repeats} times each, in "
                 f"{s.repeats} blocks that hold every arm once in {order} (seed {s.seed}): "
                 f"{len(self.outcome.runs)} runs of {s.run_s} s measured at {s.interval_s:g} s intervals, "
                 f"{used} of them usable, on {self.where}."]
        warm = rec.get("warmup") or []
        if warm:
            parts.append(f"The cluster was warmed first ({sum(len(w['runs']) for w in warm)} steps of "
                         f"{warm[0]['step_s']} s) and ")
        if cal:
            parts.append(f"{'calibrated' if warm else 'Calibration'}: throughput reached its knee at {cal['knee']} "
                         f"requests in flight ({cal['best_ops_s']:,.0f} ops/s at best, {cal['op']}), and the local "
                         f"runs take their concurrency and rates from it.")
        elif warm:
            parts.append("every concurrency and rate is the study's parameter.")
        parts += [said for said in (s.describe_baseline(found) for found in rec.get("baseline") or []) if said]
        parts.append(f"Latency is {lat} time, percentiles merged from HDR histograms. Differences are judged "
                     f"between runs (the run-to-run spread), never within one.")
        parts += setting_sentences(rec.get("setting") or {})
        if rec.get("notes"):
            parts.append("On this machine: " + "; ".join(rec["notes"]) + ".")
        if self.outcome.note:
            parts.append(f"Note: {self.outcome.note}.")
        return " ".join(parts)

    def findings(self) -> None:
        """One paragraph on what was run and where, then the claims table."""
        from cassperf.report.header import json_output

        display(HTML(f"{_STYLE}<div class='cp-find'><p class='what'>{_esc(self.what_was_run())}</p>"
                     f"{claims_html(self.claims, self.outcome.study.CLAIM_HEADING)}</div>"))
        figures = self.figures.drop(columns=["histogram"], errors="ignore")
        display(json_output({"claims": self.claims.to_dict(orient="records"),
                             "figures": figures.astype(object).where(figures.notna(), None)
                             .to_dict(orient="records"), "record": self.outcome.record.get("plan"),
                             **self.extra_json}), raw=True)

    # -- the charts ----------------------------------------------------------------------------
    def section(self, key: str) -> None:
        """One chart section (its heading, sentence, figures and tables)."""
        if key not in self._sections:
            raise KeyError(f"no report section {key!r}; sections: {', '.join(self._sections)}")
        sec = self._sections[key]()
        display(HTML(f"{_STYLE}<div class='cp-find'><h3>{_esc(sec.title)}</h3><p class='small'>{_esc(sec.text)}</p>"
                     f"</div>"))
        for item in sec.items:
            display(item)

    # -- the method ----------------------------------------------------------------------------
    def method(self) -> None:
        from cassperf.plots.method import calibration_figure, order_table, warmup_figure

        rec = self.outcome.record
        display(HTML(f"{_STYLE}<div class='cp-find'><h3>Method</h3><p class='small'>{_esc(METHOD_TEXT)}</p>"
                     f"<p class='small'>{_esc(self.runs_text())}</p></div>"))
        if rec.get("warmup"):
            display(warmup_figure(rec["warmup"]))
        if rec.get("calibration"):
            display(calibration_figure(rec["calibration"]))
        display(HTML(f"{_STYLE}<div class='cp-find'>{resources_html(self.figures)}</div>"))
        show_profiles(self.profiles, _STYLE)
        display(HTML(f"{_STYLE}<div class='cp-find'><h4>Order of the runs (seed {self.outcome.study.seed})</h4>"
                     f"{order_table(rec.get('order', []))}</div>"))

    def runs_text(self) -> str:
        """What the runs were: how many counted, their steady windows' intervals, the warm pass, the
        waits for idle nodes."""
        from cassperf.experiments.quiet import describe as describe_waits

        figs, study, rec = self.figures, self.outcome.study, self.outcome.record
        said = []
        if not figs.empty and "intervals" in figs.columns:
            ok = figs[figs["status"] == "ok"]
            runs = ok["run_id"].nunique()
            n = ok["intervals"]
            if runs:
                said.append(f"{runs} of {figs['run_id'].nunique()} measured runs counted; their steady windows held "
                            f"{int(n.min())} to {int(n.max())} intervals (median {int(n.median())}) of "
                            f"{study.interval_s:g} s.")
        warm = rec.get("warm_pass")
        if warm:
            said.append(f"Before block 1, a warm pass ran each arm once for {warm.get('step_s')} s, unmeasured "
                        f"({len(warm.get('runs', []))} runs), so that block 1 does not carry first reads and first "
                        f"runs at a concurrency.")
        said.append(describe_waits([s["quiet"] for s in (rec.get("slots") or {}).values() if s.get("quiet")],
                                   study.quiet_max_s))
        return " ".join(x for x in said if x)

    # -- the inventory -------------------------------------------------------------------------
    def inventory(self) -> None:
        from cassperf.report.header import header_html

        cols = [c for c in ("arm", "block", "position", "pool", "op", "rate_ops_s", "latency_p50_ms", "latency_p99_ms",
                            "intervals", "cv", "lag1", "drift_pct", "status", "reason", "run_id")
                if c in self.figures.columns]
        runs = self.figures[cols].to_html(index=False, float_format=lambda v: f"{v:,.2f}", na_rep="")
        log = "\n".join(self.outcome.record.get("log", []))
        display(HTML(f"{_STYLE}<div class='cp-find'><h3>Inventory</h3>"
                     f"<details><summary>Parameters and cluster</summary>{header_html(self.parameters, self.cluster)}"
                     f"</details><details><summary>Every run ({len(self.figures)} rows)</summary>{runs}</details>"
                     f"<details><summary>The executor's log</summary><pre>{_esc(log)}</pre></details></div>"))


#: the per-arm resource table's columns: (column, heading, format)
RESOURCE_TABLE = (("runs", "runs", "{:.0f}"), ("host_cpu_pct", "host CPU %", "{:.0f}"),
                  ("node_cpu_max_pct", "busiest node CPU % of a core", "{:.0f}"),
                  ("client_cpu_max_pct", "busiest client process % of a core", "{:.0f}"),
                  ("disk_busy_pct", "disk busy %", "{:.0f}"), ("disk_read_mb_s", "disk read MB/s", "{:.1f}"),
                  ("disk_write_mb_s", "disk write MB/s", "{:.1f}"), ("node_read_mb", "nodes read MB", "{:.1f}"),
                  ("page_cache_mb", "page cache MiB per node", "{:.0f}"), ("gc_pause_max_pct", "GC % (busiest node)",
                                                                          "{:.1f}"),
                  ("compactions_pending_max", "compactions pending (max)", "{:.0f}"),
                  ("dropped_messages", "dropped messages", "{:.0f}"), ("timeouts", "timeouts", "{:.0f}"),
                  ("flagged_runs", "runs with the client flagged", "{:.0f}"), ("limit", "limit", "{}"))


def resources_html(figures: pd.DataFrame) -> str:
    """The method's resource table: per arm the means over its counted runs (USE: utilization,
    saturation, errors; cassperf.analysis.resources) and the limit its figures name by the rule."""
    from cassperf.analysis.resources import LIMIT_RULE, arm_resources, resource_rows

    rows = resource_rows(figures)
    if rows.empty:
        return "<h4>Resources per arm</h4><p class='small'>No resource figures: the sampler recorded none here.</p>"
    table = arm_resources(rows)

    def cell(v: Any, fmt: str) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "–"
        return _esc(fmt.format(v))

    head = "".join(f"<th>{_esc(h)}</th>" for h in ("arm", *(h for _, h, _ in RESOURCE_TABLE)))
    body = "".join("<tr><td>" + _esc(r["arm"]) + "</td>" + "".join(f"<td>{cell(r.get(c), f)}</td>"
                                                                   for c, _, f in RESOURCE_TABLE) + "</tr>"
                   for r in table.to_dict("records"))
    return (f"<h4>Resources per arm</h4><p class='small'>Means over each arm's counted runs, over the same window as "
            f"its figures; '–': not measured here. The {_esc(LIMIT_RULE)}. A run whose busiest client process used "
            f"90% or more of a core, or that fell behind its schedule, is flagged, and a claim on its arm says "
            f"so.</p><div style='overflow-x:auto'><table class='per-arm'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"</div>")


def setting_sentences(setting: Mapping[str, Any]) -> list[str]:
    """One sentence per cluster of the study: its page-cache bound and each keyspace's data per
    node (experiments.setting, kept in the record)."""
    out = []
    for context, found in setting.items():
        where = f"On the {context} cluster" if context else "On the cluster"
        data = "; ".join(_data_on_disk(ks, max(sizes.values())) for ks, sizes in
                         (found.get("data_mb") or {}).items() if sizes)
        out.append(f"{where}: {found.get('bounds')}" + (f"; data on disk: {data}." if data else "."))
    return out


def _data_on_disk(keyspace: str, mb: float) -> str:
    """The most of a keyspace's data any node held on disk once it was loaded. None at all means
    its rows were all still in the memtables (a load that wrote nothing fails): say so, not "0 MB"."""
    if mb <= 0:
        return f"{keyspace} none yet per node (its rows were still in the memtables, not flushed)"
    return f"{keyspace} {mb:,.1f} MB per node" if mb < 10 else f"{keyspace} {mb:,.0f} MB per node"


METHOD_TEXT = (
    "Each run's figures are taken over its steady window (MSER-5 drops a start that differs from the rest). "
    "Every arm ran once per block and the blocks' orders were drawn at random, so time, warm-up and the machine's "
    "other load fall on every arm alike; the A/A control is one arm run a second time, identically, and its "
    "comparison shows what this machine's noise alone produces. Two arms are compared over their runs in the "
    "blocks they share: the change is the geometric mean of the per-block ratios, and its uncertainty comes from "
    "the run-to-run spread of every arm of the same kind in those blocks (the same op at the same load, runs from "
    "an emptied cache too; never an arm whose operation is what differs, such as garbagecollect), the residual of "
    "a randomized complete block analysis, or from "
    "the pair alone where fewer than three arms share it; each claim row says which and its degrees of freedom. "
    "Percentiles are read from the arms' merged HDR histograms, never averaged. "
    "A 'not shown' states its reason and the smallest change these runs could have detected (80% power, 5% level).")


def where_text(cluster: Mapping[str, Any] | None) -> str:
    """'an embedded cluster of 3 nodes in dc1 (Cassandra 5.0.6) on host h' from describe_cluster."""
    import platform

    if not cluster:
        return f"stored runs (nothing was run for this report), read on host {platform.node()}"
    dcs = ", ".join(f"{n} node{'s' if n != 1 else ''} in {dc}" for dc, n in (cluster.get("datacenters") or {}).items())
    kind = "an embedded cluster (every node on this machine)" if "embedded" in str(cluster.get("kind", "")) \
        else "your cluster"
    return f"{kind} of {dcs or 'unknown nodes'} (Cassandra {cluster.get('cassandra_version') or 'unknown'}) " \
           f"from host {platform.node()}"


def study_report(study_class: type[Study], namespace: Mapping[str, Any],
                 analysis: type[Analysis] | None = None) -> StudyReport:
    """Parameters (``globals()`` of the notebook) -> study -> run or analyse only -> StudyReport.
    ``analysis`` (an Analysis subclass) defaults to the study's own (``Study.ANALYSIS``)."""
    from cassperf.cluster.study import CLUSTER_PARAMETERS, study_cluster
    from cassperf.config import BATCH_ENV
    from cassperf.errors import NotAddressable
    from cassperf.experiments.executor import execute
    from cassperf.experiments.outcome import load_outcome, parse_label_filter
    from cassperf.plots import use_report_renderer
    from cassperf.report.header import describe_cluster, report_parameters

    use_report_renderer()
    params = report_parameters(namespace)
    study = study_class.from_parameters(params)
    analyse_only = bool(params.get("analyse_only"))
    cluster_desc, where, refused = None, "", ""
    if not analyse_only:
        study.check_parameters(params)
        cluster = None
        if str(params.get("contact_points", "")).strip() or not getattr(study, "OWN_CLUSTERS", False):
            cluster = study_cluster(**{k: params[k] for k in CLUSTER_PARAMETERS if k in params})
            cluster_desc = describe_cluster(cluster)
        where = study.describe_setting() if cluster is None else ""
        try:
            # in batch (cassperf report) no progress bar: ipykernel forwards even the kernel's own stderr
            # (fd 2) into the page, where 30 lines of a bar stood above the findings
            execute(study, cluster, progress=not os.environ.get(BATCH_ENV))
        except NotAddressable as exc:     # nothing ran: the report says why, with no stored run of elsewhere
            refused = f"not addressable on this cluster: {exc}"
    outcome = StudyOutcome(study, {}, [], note=refused) if refused else \
        load_outcome(study, empty_ok=analyse_only, **parse_label_filter(str(params.get("label_filter", ""))))
    found = (analysis(outcome.study) if analysis is not None else outcome.study.analysis()).conclude(outcome)
    claims = found.claims
    if refused and not claims.empty:
        claims = claims.assign(verdict="not shown", reason="not addressable on this cluster (the paragraph above says "
                                                           "what it lacks): nothing was run")
    return StudyReport(outcome, claims, found.figures, found.sections, where or where_text(cluster_desc), cluster_desc,
                       params, profiles=found.profiles)


__all__ = ["StudyReport", "claims_html", "study_report", "where_text"]
