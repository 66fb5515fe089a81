"""The garbagecollect study's analysis: the published table, the time series and the claims,
from a stored outcome.

Windows of a run: the operation's window is the ``window_s`` seconds from the recorded start of
its phase (garbagecollect, or the placebo); the steady window the ``steady_s`` seconds before it.
The claims compare the garbagecollect arm's operation windows with the placebo arm's, run for
run (paired by block): what garbagecollect does beyond what asking for it costs. The published
table shows Steady State against With GarbageCollect over the garbagecollect arm's runs, each
window's latency merged from the HDR histograms of every run's window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from cassperf.analysis.windows import Window
from cassperf.experiments.analysis import Analysis, Section, Sections
from cassperf.experiments.garbagecollect import PHASES
from cassperf.experiments.outcome import StudyOutcome, usable

#: the published Write rows are every mutation (writes and deletes)
WRITE_OPS = ("write", "delete")
#: the sampler's counters the time series and the claims use: (panel title, metric, per second)
COUNTER_PANELS = (("JVM GC collections per second", "gc_count"), ("JVM GC time (ms per second)", "gc_time_ms"),
                  ("compactions completed per second", "compactions_completed"),
                  ("bytes compacted per second (MiB/s)", "bytes_compacted"),
                  ("coordinator write timeouts per second", "write_timeouts"))
ONE_HOST = "every node and the client share this machine's cores"


#: the study's latencies rose from x2.1 (read average) to x115 (write p99) during garbagecollect; a
#: rise shown below this is not the effect it published
RISE_PCT = 50.0

def windows(run: Any, window_s: float, steady_s: float) -> tuple[Window, Window]:
    """(steady, operation) windows of a run of either arm (module doc)."""
    from cassperf.analysis import phase_window

    phase = phase_window(run, PHASES[str(run.labels.get("arm", "garbagecollect")).split(" (")[0]])
    op = Window(phase.start_s, phase.start_s + window_s, "operation", phase.unfinished, phase.note)
    return Window(max(0.0, op.start_s - steady_s), op.start_s, "steady state"), op


def published_table(outcome: StudyOutcome) -> pd.DataFrame:
    """Metric / Steady State / With GarbageCollect over the garbagecollect arm's usable runs:
    throughput as the runs' ops over their seconds, latency from the merge of every run's window."""
    from cassperf.analysis.arm_summary import merged_latency
    from cassperf.analysis.format import fmt_micros, fmt_rate
    from cassperf.analysis.samples import group_samples

    study = outcome.study
    runs = [r for r in outcome.runs_of("garbagecollect")]
    rows = []
    for name, ops in (("Read", ("read",)), ("Write", WRITE_OPS)):
        cells: dict[str, dict[str, float]] = {}
        for title, idx in (("Steady State", 0), ("With GarbageCollect", 1)):
            wins = [windows(r, study.window_s, study.steady_s)[idx] for r in runs]
            count = secs = 0.0
            for r, w in zip(runs, wins, strict=True):
                samples = group_samples(r, (name.lower(), list(ops)), w.start_s, w.end_s)[1]
                count += float(samples.count.sum())
                secs += float((samples.end_s - samples.start_s).sum())
            lat = merged_latency([_as_one(r, ops) for r in runs], [(w.start_s, w.end_s) for w in wins], ops[0])
            cells[title] = {"rate": count / secs if secs else math.nan, **lat}
        for metric, key, fmt in (("Throughput", "rate", fmt_rate), ("Latency avg.", "latency_mean_ms", None),
                                 ("Latency p95", "latency_p95_ms", None), ("Latency p99", "latency_p99_ms", None)):
            f = fmt or (lambda v: fmt_micros(v * 1000 if v == v else v))
            rows.append({"Metric": f"{name} {metric}", "Steady State": f(cells["Steady State"][key]),
                         "With GarbageCollect": f(cells["With GarbageCollect"][key])})
    return pd.DataFrame(rows)


def _as_one(run: Any, ops: Sequence[str]) -> Any:
    """The run with the histograms of every op of ``ops`` under the first op's tag, so that one
    merge holds them all (the Write rows: writes and deletes together)."""
    import dataclasses

    from cassperf.analysis.select import choose_tag

    tags = [t for t in (choose_tag(run, op)[0] for op in ops) if t]
    if len(tags) < 2:
        return run
    h = run.histograms
    return dataclasses.replace(run, histograms=h[h["tag"].astype(str).isin(tags)].assign(tag=tags[0]))


def sampled_figures(outcome: StudyOutcome) -> pd.DataFrame:
    """Per usable run: the sampler's counters per second (summed over nodes) in its operation
    window, one row per run and metric (metric, value, arm, block, run_id)."""
    from cassperf.analysis.series import metric_series

    study = outcome.study
    rows = []
    for run in outcome.runs:
        if not usable(run):
            continue
        _, op = windows(run, study.window_s, study.steady_s)
        for _title, metric in COUNTER_PANELS:
            s = metric_series(run, [metric], per_second=True)
            s = s[(s["time_s"] >= op.start_s) & (s["time_s"] < op.end_s)]
            value = float(s.groupby("node")["value"].mean().sum()) if not s.empty else math.nan
            rows.append({"run_id": run.run_id, "arm": run.labels.get("arm"), "block": run.labels.get("block"),
                         "metric": metric, "value": value})
    return pd.DataFrame(rows, columns=["run_id", "arm", "block", "metric", "value"])


def panels(run: Any, keyspace: str, table_name: str = "standard1") -> list[tuple[str, Any, str]]:
    """Time series for shaded_panels: throughput and p99 per op, sampler counters as rates
    (summed over nodes), live and level-0 (unleveled) SSTables per node."""
    import pandas as pd

    from cassperf.analysis.series import metric_series, table_metric, throughput_series

    iv = throughput_series(run)
    out = [("throughput (ops/s)", iv.assign(series=iv["op"], value=iv["rate_ops_s"]), "ops/s"),
           (f"latency p99 (ms, {run.manifest.get('latency_type')} time)",
            iv.assign(series=iv["op"], value=iv["latency_p99_ms"]), "ms")]
    for title, metric in COUNTER_PANELS:
        s = metric_series(run, [metric], per_second=True)
        if s.empty:
            continue
        if metric == "bytes_compacted":
            s = s.assign(value=s["value"] / 2**20)
        summed = s.assign(t=s["time_s"].round(0)).groupby("t", as_index=False)["value"].sum()
        out.append((title + ", all nodes", pd.DataFrame({"time_s": summed["t"], "value": summed["value"],
                                                          "series": "all nodes"}), ""))
    for title, base in (("live SSTables", "live_sstables"), ("unleveled SSTables (level 0)", "sstables_level_0")):
        s = metric_series(run, [table_metric(base, keyspace, table_name)])
        if not s.empty:
            out.append((title + " per node", s.assign(series=s["node"]), ""))
    return out


class GCAnalysis(Analysis):
    """What the garbagecollect study concludes (module doc): figures over each run's operation
    window, every mutation (writes and deletes) as "write"; a trend inside the window is what the
    operation does, so kept."""

    OP_GROUPS = {"read": ("read",), "write": WRITE_OPS}

    def window(self, run: Any) -> Window:
        study = self.study
        return windows(run, study.window_s, study.steady_s)[1]

    def keeps_drift(self, run: Any) -> bool:
        return True

    def compacted(self, outcome: StudyOutcome) -> Any:
        """Did garbagecollect do its work: the bytes compacted and the compactions completed in each
        run's operation window, garbagecollect's against the placebo's (manipulation.compacted)."""
        from cassperf.analysis import manipulation as took

        samples = sampled_figures(outcome)
        window_s = self.study.window_s

        def per_window(arm: str, metric: str, scale: float = 1.0) -> list[float]:
            values = samples[(samples["arm"] == arm) & (samples["metric"] == metric)]["value"]
            return [float(v) * window_s * scale for v in values if v == v]

        return took.compacted(per_window("garbagecollect", "bytes_compacted", 1e-6),
                              per_window("placebo", "bytes_compacted", 1e-6),
                              per_window("garbagecollect", "compactions_completed"))

    def claims(self, outcome: StudyOutcome, figs: pd.DataFrame) -> pd.DataFrame:
        """The published findings, garbagecollect against the placebo over the operation windows."""
        from cassperf.analysis.arms import compare
        from cassperf.analysis.verdicts import aa_control, claim, claims_table, directional, equivalent, tested

        src = outcome.study.source
        did = self.compacted(outcome)
        gc, placebo = "garbagecollect", "placebo"
        # on read latency: at a fixed rate the twins' throughput is the rate itself, a control that cannot fail
        aa = claim("A/A control: the placebo arm against its identical twin (read latency, average)", src,
                   aa_control(compare(figs, placebo, placebo + " (A/A)", "read", "latency_mean_ms")))
        rows = []
        for name in ("read", "write"):
            c = compare(figs, placebo, gc, name, "rate_ops_s")
            rows.append(claim(f"{name.capitalize()} throughput stays the same during garbagecollect (fixed rate)", src,
                              tested(equivalent(c, 5.0), did),
                              "a fixed rate holds its throughput unless the cluster falls behind"))
        for name in ("read", "write"):
            for metric, what in (("latency_p99_ms", "p99"), ("latency_mean_ms", "average")):
                c = compare(figs, placebo, gc, name, metric)
                rows.append(claim(f"{name.capitalize()} latency ({what}) rises during garbagecollect", src,
                                  tested(directional(c, +1, RISE_PCT), did), ONE_HOST))
        return claims_table(aa, rows)

    def sections(self, outcome: StudyOutcome, figures: pd.DataFrame) -> Sections:
        from cassperf.plots import studies as charts

        study = outcome.study

        def table() -> Section:
            t = published_table(outcome)
            runs = outcome.runs_of("garbagecollect")
            return Section("Steady State vs With GarbageCollect (the published table)",
                           f"Over the garbagecollect arm's {len(runs)} runs: the {study.steady_s} s before the "
                           f"operation and the {study.window_s} s from its start; latency is response time, in the "
                           f"study's style.", [t.style.hide(axis="index")])

        def series() -> Section:
            runs = outcome.runs_of("garbagecollect")
            placebo = outcome.runs_of("placebo")
            items = []
            for run, label in ((runs[0] if runs else None, "garbagecollect"),
                               (placebo[0] if placebo else None, "placebo")):
                if run is None:
                    continue
                steady, op = windows(run, study.window_s, study.steady_s)
                items.append(charts.shaded_panels(panels(run, study.keyspace), [(op.start_s, op.end_s, label),
                                                                               (steady.start_s, steady.end_s, "steady")],
                                                  f"The cluster during the {label} run of block "
                                                  f"{run.labels.get('block')}"))
            return Section("What the cluster did", "The first block's garbagecollect and placebo runs, the "
                           "operation's window shaded.", items)

        return {"table": table, "series": series}
