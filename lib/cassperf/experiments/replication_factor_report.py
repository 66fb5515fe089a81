"""The replication-factor study's analysis: its claims and chart sections from a stored outcome.

The claims are the published study's findings (../shared/studies/000_*) in the project's words,
each decided by a rule fixed before the data (cassperf.analysis.claims) on the runs of the arms
it compares, the A/A control first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from cassperf.experiments.outcome import StudyOutcome, run_figures

SHARED = ("all nodes and the client share this machine's cores: a replica costs CPU here, not a network hop or "
          "another server's disk")


def _arms(outcome: StudyOutcome, figures: pd.DataFrame) -> pd.DataFrame:
    from cassperf.analysis.arm_summary import arm_table

    used = figures[figures["status"] == "used"]
    table = arm_table(used, outcome.runs)
    for col in ("rf", "threads"):
        if col in table.columns:
            table[col] = pd.to_numeric(table[col], errors="coerce").astype("Int64")
    return table


def claims(outcome: StudyOutcome) -> pd.DataFrame:
    """The claims table (cassperf.analysis.claims), the A/A row first."""
    from cassperf.analysis.claims import Claim, alike, claims_frame, describe, higher, lower
    from cassperf.analysis.compare import compare_groups

    study = outcome.study
    arms = set(outcome.arm_names)

    def cmp(a: str, b: str, op: str, metric: str = "rate_ops_s") -> Any:
        ra, rb = outcome.runs_of(a), outcome.runs_of(b)
        return compare_groups(ra, rb, op, metric) if a in arms and b in arms and ra and rb else None

    rows: list[Claim] = []
    aa = study.aa_arm([])
    c = cmp(aa, aa + " (A/A)", "write")
    rows.append(Claim(f"A/A control: '{aa}' against its identical twin", study.source,
                      describe(c, "twin vs original write ops/s"), "control" if c is None or not c.significant
                      else "noise beyond the method", "no significant difference expected", ""))
    others = [rf for rf in study.rfs if rf > min(study.rfs)]
    low = min(study.rfs)
    comps = {rf: cmp(f"write rf={low}", f"write rf={rf}", "write") for rf in others}
    verdicts = [lower(x) for x in comps.values()]
    verdict = "not shown" if not verdicts or "not shown" in verdicts else \
        "holds" if all(v == "holds" for v in verdicts) else "does not hold"
    rows.append(Claim(f"Writes at RF {low} are much faster than at any higher RF ({study.cl})", study.source,
                      "; ".join(describe(x, f"RF {rf} vs RF {low}") for rf, x in comps.items()) or "needs two RFs",
                      verdict, f"every higher RF's write ops/s significantly below RF {low}'s", SHARED))
    if 2 in study.rfs and 3 in study.rfs:
        c23 = cmp("write rf=2", "write rf=3", "write")
        rows.append(Claim(f"RF 2 and RF 3 write at about the same rate at {study.cl} (both wait for 2 replicas)",
                          study.source, describe(c23, "RF 3 vs RF 2 write ops/s"), alike(c23, 15.0),
                          "the 95% CI of the difference lies within ±15%", SHARED))
    rr = sorted(study.read_rfs)
    if len(rr) >= 2:
        lo, hi = rr[0], rr[-1]
        ca = cmp(f"read rf={lo} run=a", f"read rf={hi} run=a", "read")
        cb = cmp(f"read rf={lo} run=b", f"read rf={hi} run=b", "read")
        rows.append(Claim(f"Reads slow down from RF {lo} to RF {hi}, on the warm run b", study.source,
                          f"{describe(ca, 'run a')}; {describe(cb, 'run b')}", lower(cb),
                          f"RF {hi}'s run-b read ops/s significantly below RF {lo}'s",
                          "run a is cold by flushed memtables, invalidated caches and a dropped page cache; the "
                          "data of this small run fits in memory, so run a is only partly cold"))
    rf_cl = study.cl_sweep_rf
    if "ONE" in study.cl_sweep and min(study.rfs) in study.read_rfs:
        c1 = cmp(f"read rf={min(study.read_rfs)} run=b", f"read rf={rf_cl} cl=ONE", "read")
        rows.append(Claim(f"Reads at CL ONE on RF {rf_cl} run about as fast as RF {min(study.read_rfs)} reads",
                          study.source, describe(c1, f"CL ONE on RF {rf_cl} vs RF {min(study.read_rfs)}"),
                          alike(c1, 15.0), "the 95% CI of the difference lies within ±15%", SHARED))
    if "TWO" in study.cl_sweep and rf_cl in study.read_rfs:
        c2 = cmp(f"read rf={rf_cl} run=b", f"read rf={rf_cl} cl=TWO", "read")
        rows.append(Claim(f"Reads at CL TWO on RF {rf_cl} run about as fast as {study.cl} reads on RF {rf_cl}",
                          study.source, describe(c2, f"CL TWO vs {study.cl} on RF {rf_cl}"), alike(c2, 15.0),
                          "the 95% CI of the difference lies within ±15%", SHARED))
    mixed = sorted(study.mixed_rfs)
    steps = [(a, b, cmp(f"mixed rf={a}", f"mixed rf={b}", "read")) for a, b in zip(mixed, mixed[1:], strict=False)]
    if steps:
        vs = [lower(x) for *_, x in steps]
        verdict = "not shown" if "not shown" in vs else "holds" if all(v == "holds" for v in vs) else "does not hold"
        rows.append(Claim("50/50 mixed throughput falls as RF rises", study.source,
                          "; ".join(describe(x, f"RF {b} vs RF {a} (reads of the mix)") for a, b, x in steps), verdict,
                          "each higher RF's ops/s significantly below the one before", SHARED))
    frame = claims_frame(rows)
    frame.insert(0, "kind", ["control"] + ["claim"] * (len(frame) - 1))
    return frame


def sections(outcome: StudyOutcome, figures: pd.DataFrame) -> dict[str, Callable[[], Any]]:
    from cassperf.plots import studies as charts
    from cassperf.report.study_report import Section

    arms = _arms(outcome, figures)
    lat = ", ".join(sorted(set(figures.get("latency_type", pd.Series(dtype=str)).dropna()))) or None

    def part(name: str) -> pd.DataFrame:
        if arms.empty or "part" not in arms.columns:
            return arms.iloc[0:0]
        out = arms[(arms["part"] == name) & (arms.get("aa", pd.Series(pd.NA, index=arms.index)).isna())]
        return out.sort_values([c for c in ("rf", "threads", "run", "cl") if c in out.columns])

    def writes() -> Any:
        w = part("rf-write")
        return Section("Writes by replication factor", f"Each bar is the mean of an arm's {outcome.study.repeats} "
                       f"runs with its 95% CI; latency percentiles are merged over the runs.",
                       [charts.bars(w, "rf", "rate_ops_s", "Write ops/s by replication factor", "ops/s",
                                    x_title="replication factor"),
                        charts.latency_bars(w, "rf", "Write latency by replication factor", lat,
                                            x_title="replication factor")])

    def threads() -> Any:
        t = pd.concat([part("threads-write"), part("rf-write")])
        t = t[t["rf"].isin(list(outcome.study.thread_sweep_rfs))]
        return Section("Writes against client threads", "The point at the RF's own write concurrency is its write arm.",
                       [charts.lines(t, "threads", "rate_ops_s", "rf", "Write ops/s vs requests in flight", "ops/s",
                                     x_title="requests in flight", log_x=True),
                        charts.latency_lines(t, "threads", "rf", "Write latency vs requests in flight", lat,
                                             x_title="requests in flight", log_x=True)])

    def reads() -> Any:
        r = part("rf-read")
        r = r.assign(point="RF " + r["rf"].astype(str) + " run " + r["run"].astype(str))
        return Section("Reads by replication factor: cold run a, warm run b",
                       "Run a follows an emptying of the caches; run b follows it at once.",
                       [charts.bars(r, "run", "rate_ops_s", "Read ops/s, run a (cold) and b (warm), by RF", "ops/s",
                                    color="rf", x_title="run"),
                        charts.latency_bars(r, "point", "Read latency by RF and run", lat, x_title="RF and run")])

    def consistency() -> Any:
        rf = outcome.study.cl_sweep_rf
        c = pd.concat([part("cl-read"), part("rf-read").query("run == 'b'")])
        c = c[c["rf"] == rf]
        return Section(f"Reads by consistency level on RF {rf}", "",
                       [charts.bars(c, "cl", "rate_ops_s", f"Read ops/s by consistency level, RF {rf}", "ops/s",
                                    x_title="consistency level"),
                        charts.latency_bars(c, "cl", f"Read latency by consistency level, RF {rf}", lat,
                                            x_title="consistency level")])

    def mixed() -> Any:
        m = part("mixed")
        m = m.assign(point="RF " + m["rf"].astype(str) + " " + m["op"].astype(str))
        return Section("50/50 mixed by replication factor", "A mixed run has a row per operation.",
                       [charts.bars(m, "rf", "rate_ops_s", "Mixed 50/50: ops/s by RF and operation", "ops/s",
                                    color="op", x_title="replication factor"),
                        charts.latency_bars(m, "point", "Mixed 50/50: latency by RF and operation", lat,
                                            x_title="RF and operation")])

    return {"writes": writes, "threads": threads, "reads": reads, "consistency": consistency, "mixed": mixed}


def parts(outcome: StudyOutcome) -> tuple[pd.DataFrame, pd.DataFrame, Mapping[str, Callable[[], Any]]]:
    figures = run_figures(outcome)
    return claims(outcome), figures, sections(outcome, figures)
