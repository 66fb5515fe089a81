"""The replication-factor study's analysis (the contract: cassperf.experiments.analysis): its
claims and chart sections from a stored outcome.

The claims are the published study's findings in the project's words, each decided by a rule of
cassperf.analysis.verdicts fixed before the data, on the runs of the arms it compares, the A/A
control first. The figures are every study's: each run over its steady window.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from cassperf.experiments.analysis import Analysis, Section, Sections
from cassperf.experiments.outcome import StudyOutcome

NONE = "No run of this part is stored."
SHARED = ("all nodes and the client share this machine's cores: a replica costs CPU here, not a network hop or "
          "another server's disk")


def _arms(outcome: StudyOutcome, figures: pd.DataFrame) -> pd.DataFrame:
    from cassperf.analysis.arm_summary import arm_table

    used = figures[figures["status"] == "ok"]
    table = arm_table(used, outcome.runs)
    for col in ("rf", "concurrency"):
        if col in table.columns:
            table[col] = pd.to_numeric(table[col], errors="coerce").astype("Int64")
    return table


class RFAnalysis(Analysis):
    """What the replication-factor study concludes (module doc)."""

    def cache_sizes(self, outcome: StudyOutcome, rf: int) -> tuple[float, float, float | None]:
        """(MB the reads of RF ``rf`` touch, summed over its nodes: its whole keyspace, read
        uniformly; MB of its data per node; MiB of page cache a node may hold, None when not
        bounded), from the setting the executor measured (experiments.setting)."""
        from cassperf.experiments.setting import data_per_node_mb

        setting = (outcome.record.get("setting") or {}).get("", {})
        keyspace = self.study.keyspace(rf)
        sizes = (setting.get("data_mb") or {}).get(keyspace) or {}
        room = setting.get("page_cache_mb")
        return (sum(sizes.values()) if sizes else math.nan, data_per_node_mb(setting, keyspace),
                float(room) if room else None)
    def claims(self, outcome: StudyOutcome, figs: pd.DataFrame) -> pd.DataFrame:
        """The claims table (cassperf.analysis.verdicts), the A/A control first."""
        from cassperf.analysis import manipulation as took
        from cassperf.analysis.arms import compare
        from cassperf.analysis.resources import resource_rows
        from cassperf.analysis.verdicts import (aa_control, all_of, claim, claims_table, directional, equivalent,
                                                plateau, tested)

        study, src = outcome.study, outcome.study.source
        cal = outcome.calibrated
        writes, reads, sweep = study.threads(cal)
        low = min(study.rfs)
        res = resource_rows(figs)

        def cmp(a: str, b: str, op: str, metric: str = "rate_ops_s") -> Any:
            return compare(figs, a, b, op, metric)

        def replicas(*pairs: tuple[str, int]) -> Any:
            """Each write of these (arm, RF) reached RF replicas (manipulation.replicas_applied)."""
            return took.all_took(*(took.replicas_applied(took.of_arm(res, arm), rf) for arm, rf in pairs))

        aa_name = study.aa_arm([])
        aa = claim(f"A/A control: '{aa_name}' against its identical twin", src,
                   aa_control(cmp(aa_name, aa_name + " (A/A)", "write")))
        rows = []
        higher_rfs = [rf for rf in study.rfs if rf > low]
        if higher_rfs:
            parts = [tested(directional(cmp(f"write rf={low}", f"write rf={rf}", "write"), -1),
                            replicas((f"write rf={low}", low), (f"write rf={rf}", rf))) for rf in higher_rfs]
            rows.append(claim(f"Writes at RF {low} are much faster than at any higher RF ({study.cl})", src,
                              all_of(parts, f"every higher RF's write ops/s significantly below RF {low}'s"), SHARED,
                              measured="; ".join(f"RF {rf}: {p.comparison.text}" for rf, p in zip(higher_rfs, parts,
                                                                                                   strict=True))))
        if 2 in study.rfs and 3 in study.rfs:
            rows.append(claim(f"RF 2 and RF 3 write at about the same rate at {study.cl} (both wait for 2 replicas)", src,
                              tested(equivalent(cmp("write rf=2", "write rf=3", "write"), 15.0),
                                     replicas(("write rf=2", 2), ("write rf=3", 3))), SHARED))
        rr = sorted(study.read_rfs)
        if len(rr) >= 2:
            rows.append(claim(f"Reads slow down from RF {rr[0]} to RF {rr[-1]} (warm run b)", src,
                              directional(cmp(f"read rf={rr[0]} run=b", f"read rf={rr[-1]} run=b", "read"), -1),
                              SHARED))
            cold, warm = f"read rf={rr[-1]} run=a", f"read rf={rr[-1]} run=b"
            rows.append(claim(f"Cold reads (run a) are slower than warm reads (run b) at RF {rr[-1]}", src,
                              tested(directional(cmp(warm, cold, "read"), -1),
                                     took.cache_emptied(took.of_arm(res, cold), took.of_arm(res, warm),
                                                        *self.cache_sizes(outcome, rr[-1]))),
                              "run a follows flushed memtables, invalidated key and row caches and a dropped page cache; "
                              "without a node restart Cassandra's chunk cache stays warm (cold_restart restarts the "
                              "nodes)"))
        rf_cl = study.cl_sweep_rf
        if "ONE" in study.cl_sweep and low in study.read_rfs:
            rows.append(claim(f"Reads at CL ONE on RF {rf_cl} run about as fast as RF {low} reads", src,
                              equivalent(cmp(f"read rf={low} run=b", f"read rf={rf_cl} cl=ONE", "read"), 15.0), SHARED))
        if "TWO" in study.cl_sweep and rf_cl in study.read_rfs:
            rows.append(claim(f"Reads at CL TWO on RF {rf_cl} run about as fast as {study.cl} reads on RF {rf_cl} "
                              f"(both read 2 replicas)", src,
                              equivalent(cmp(f"read rf={rf_cl} run=b", f"read rf={rf_cl} cl=TWO", "read"), 15.0), SHARED))
        mixed = sorted(study.mixed_rfs)
        if len(mixed) >= 2:
            parts = [tested(directional(cmp(f"mixed rf={a}", f"mixed rf={b}", "read"), -1),
                            replicas((f"mixed rf={a}", a), (f"mixed rf={b}", b)))
                     for a, b in zip(mixed, mixed[1:], strict=False)]
            rows.append(claim("50/50 mixed throughput falls as RF rises", src,
                              all_of(parts, "each higher RF's ops/s (the reads of the mix) significantly below the one "
                                            "before"), SHARED,
                              measured="; ".join(p.comparison.text for p in parts)))
        if len(sweep) >= 3:
            for rf in study.thread_sweep_rfs:
                points = {float(t): (f"write rf={rf}" if t == writes and rf in study.rfs else f"write rf={rf} threads={t}")
                          for t in sweep}
                knee = float(sorted(sweep)[1])
                rows.append(claim(f"Write ops/s stop growing at high client thread counts (RF {rf})", src,
                                  plateau(figs, points, knee, "write"),
                                  "the study saw the taper above ~256 threads on 6 servers; on this machine's shared "
                                  "cores it comes far sooner"))
        return claims_table(aa, rows)

    def sections(self, outcome: StudyOutcome, figures: pd.DataFrame) -> Sections:
        from cassperf.plots import studies as charts

        arms = _arms(outcome, figures)
        lat = ", ".join(sorted(set(figures.get("latency_type", pd.Series(dtype=str)).dropna()))) or None

        def part(name: str) -> pd.DataFrame:
            if arms.empty or "part" not in arms.columns:
                return arms.iloc[0:0]
            out = arms[(arms["part"] == name) & (arms.get("aa", pd.Series(pd.NA, index=arms.index)).isna())]
            return out.sort_values([c for c in ("rf", "concurrency", "run", "cl") if c in out.columns])

        def writes() -> Any:
            w = part("rf-write")
            if w.empty:
                return Section("Writes by replication factor", NONE)
            return Section("Writes by replication factor", f"Each bar is the mean of an arm's {outcome.study.repeats} "
                           f"runs with its 95% CI; latency percentiles are merged over the runs.",
                           [charts.bars(w, "rf", "rate_ops_s", "Write ops/s by replication factor", "ops/s",
                                        x_title="replication factor"),
                            charts.latency_bars(w, "rf", "Write latency by replication factor", lat,
                                                x_title="replication factor")])

        def threads() -> Any:
            t = pd.concat([part("threads-write"), part("rf-write")])
            if t.empty:
                return Section("Writes against requests in flight", NONE)
            t = t[t["rf"].isin(list(outcome.study.thread_sweep_rfs))]
            return Section("Writes against requests in flight", "The point at the RF's own write concurrency is its write arm.",
                           [charts.lines(t, "concurrency", "rate_ops_s", "rf", "Write ops/s vs requests in flight", "ops/s",
                                         x_title="requests in flight", log_x=True),
                            charts.latency_lines(t, "concurrency", "rf", "Write latency vs requests in flight", lat,
                                                 x_title="requests in flight", log_x=True)])

        def reads() -> Any:
            r = part("rf-read")
            if r.empty:
                return Section("Reads by replication factor: cold run a, warm run b", NONE)
            r = r.assign(point="RF " + r["rf"].astype(str) + " run " + r["run"].astype(str))
            return Section("Reads by replication factor: cold run a, warm run b",
                           "Run a follows an emptying of the caches; run b follows it at once.",
                           [charts.bars(r, "run", "rate_ops_s", "Read ops/s, run a (cold) and b (warm), by RF", "ops/s",
                                        color="rf", x_title="run"),
                            charts.latency_bars(r, "point", "Read latency by RF and run", lat, x_title="RF and run")])

        def consistency() -> Any:
            rf = outcome.study.cl_sweep_rf
            c = pd.concat([part("cl-read"), part("rf-read")])
            if c.empty:
                return Section(f"Reads by consistency level on RF {rf}", NONE)
            c = c[(c["rf"] == rf) & (c["run"] == "b")]
            return Section(f"Reads by consistency level on RF {rf}", "",
                           [charts.bars(c, "cl", "rate_ops_s", f"Read ops/s by consistency level, RF {rf}", "ops/s",
                                        x_title="consistency level"),
                            charts.latency_bars(c, "cl", f"Read latency by consistency level, RF {rf}", lat,
                                                x_title="consistency level")])

        def mixed() -> Any:
            m = part("mixed")
            if m.empty:
                return Section("50/50 mixed by replication factor", NONE)
            m = m.assign(point="RF " + m["rf"].astype(str) + " " + m["op"].astype(str))
            return Section("50/50 mixed by replication factor", "A mixed run has a row per operation.",
                           [charts.bars(m, "rf", "rate_ops_s", "Mixed 50/50: ops/s by RF and operation", "ops/s",
                                        color="op", x_title="replication factor"),
                            charts.latency_bars(m, "point", "Mixed 50/50: latency by RF and operation", lat,
                                                x_title="RF and operation")])

        return {"writes": writes, "threads": threads, "reads": reads, "consistency": consistency, "mixed": mixed}

