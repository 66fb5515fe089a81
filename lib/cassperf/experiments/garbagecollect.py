"""The garbagecollect study (../shared/studies/002_*: `nodetool garbagecollect` on a live
LeveledCompactionStrategy + LZ4 table under a fixed-rate read:write:delete = 5:4:1 load) as a
plan of two runs.

1. ``part=load``: ``keys`` rows written (seq 1..keys) into one LCS + LZ4 table, then the
   memtables flushed and compactions left to finish, so the measured run starts settled.
2. ``part=gc``: the fixed-rate mixed load for ``steady_s + gc_budget_s + tail_s`` seconds;
   ``steady_s`` after measurement starts, ``nodetool garbagecollect`` runs on every node at
   once (or on ``gc_nodes``) inside the phase ``garbagecollect`` while the load goes on.
   Compaction throughput is lowered to ``compaction_mib_s`` for the run, so that
   garbagecollect takes long enough on small local data for its window to hold many
   intervals (it is put back to ``restore_compaction_mib_s`` when garbagecollect ends).

The windows: the recorded start and end of the ``garbagecollect`` phase, and a steady window
of the same length just before it (cassperf.analysis.windows). Latency is response time
(fixed rate: from each op's intended start, coordinated omission corrected).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cassperf.errors import ConfigError
from cassperf.experiments.node_actions import garbagecollect, on_every_node, set_compaction_throughput, \
    wait_for_compactions
from cassperf.experiments.sweep import Step
from cassperf.workload.spec import Compaction, Compression, Ratio, Replication, WorkloadSpec

STUDY = "garbagecollect"
PHASE = "garbagecollect"


@dataclass(frozen=True)
class GCStudy:
    """The study's parameters (the notebook's parameters cell, validated)."""

    keys: int = 20_000                  # rows loaded first (the study: 200+ GB per node)
    rate_ops_s: int = 300               # fixed rate of the mixed load (the study: 3,000/s)
    read: int = 5                       # read:write:delete ratio (the study: 5:4:1)
    write: int = 4
    delete: int = 1
    cl: str = "LOCAL_ONE"
    rf: int = 3
    dc: str = "dc1"
    keyspace: str = "gc_lcs_lz4"
    concurrency: int = 64
    load_concurrency: int = 64
    steady_s: int = 60                  # load before garbagecollect starts
    gc_budget_s: int = 120              # the load goes on this long after garbagecollect starts
    tail_s: int = 15                    # and this long after that
    compaction_mib_s: int = 2           # compaction throughput during the run (0: unthrottled)
    restore_compaction_mib_s: int = 64  # put back when garbagecollect ends (Cassandra 5.0's default)
    gc_nodes: Sequence[str] | None = None   # None: every node
    gc_jobs: int = 1                    # nodetool garbagecollect -j
    column_size: int = 818
    column_count: int = 5
    interval_s: float = 1.0
    tool: str = "engine"
    experiment: str = "local"

    def __post_init__(self) -> None:
        for name in ("keys", "rate_ops_s", "concurrency", "load_concurrency", "steady_s", "gc_budget_s", "rf"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name}={v!r}: expected a whole number >= 1")
        if min(self.read, self.write, self.delete) < 0 or self.read + self.write + self.delete == 0:
            raise ConfigError(f"read:write:delete = {self.read}:{self.write}:{self.delete}: expected shares >= 0, "
                              f"not all 0 (the study: 5:4:1)")

    @property
    def duration_s(self) -> int:
        return self.steady_s + self.gc_budget_s + self.tail_s

    def _table(self) -> dict[str, Any]:
        return {"keyspace": self.keyspace, "replication": Replication.network_topology({self.dc: self.rf}),
                "compaction": Compaction.of("LCS"), "compression": Compression("LZ4"),
                "column_count": self.column_count, "column_size": self.column_size, "local_dc": self.dc}

    def load_spec(self) -> WorkloadSpec:
        return WorkloadSpec(op="write", n=self.keys, warmup=False, cl=self.cl, concurrency=self.load_concurrency,
                            population=f"seq=1..{self.keys}", **self._table())

    def run_spec(self) -> WorkloadSpec:
        ratio = Ratio.of({k: v for k, v in (("read", self.read), ("write", self.write), ("delete", self.delete)) if v})
        return WorkloadSpec(op="mixed", ratio=ratio, duration=self.duration_s, warmup=True, cl=self.cl,
                            concurrency=self.concurrency, rate=f"fixed={self.rate_ops_s}/s",
                            population=f"uniform(1..{self.keys})", interval_s=self.interval_s, **self._table())


def settle(cluster: Any, study: GCStudy) -> str:
    """Before the measured run: flush, let compactions finish, then slow compaction down."""
    on_every_node(cluster, "flush", study.keyspace)
    waited = wait_for_compactions(cluster, timeout_s=600)
    slowed = set_compaction_throughput(cluster, study.compaction_mib_s)
    ok = all(r.ok for r in slowed)
    return (f"flushed, compactions settled after {waited:.0f} s; compaction throughput "
            f"{study.compaction_mib_s} MiB/s{'' if ok else ' NOT set on every node'}")


def gc_action(cluster: Any, study: GCStudy) -> Any:
    """The run's during action: wait steady_s, then garbagecollect on every node in its phase."""
    def during(writer: Any) -> None:
        time.sleep(study.steady_s)
        nodes = list(study.gc_nodes) if study.gc_nodes else None
        detail = (f"nodetool garbagecollect -j {study.gc_jobs} {study.keyspace} standard1 on "
                  f"{', '.join(nodes) if nodes else 'every node'}")
        try:
            with writer.phase(PHASE, detail):
                results = garbagecollect(cluster, study.keyspace, "standard1", nodes=nodes, jobs=study.gc_jobs)
            for r in results:
                writer.event(f"{PHASE}:node", f"{r.node} took {r.seconds:.1f} s")
        finally:
            set_compaction_throughput(cluster, study.restore_compaction_mib_s)
    return during


def plan(study: GCStudy, cluster: Any) -> list[Step]:
    base = {"study": STUDY, "experiment": study.experiment, "rf": str(study.rf), "cl": study.cl}
    load = Step({**base, "part": "load", "op": "write"}, study.load_spec(), study.tool)
    mix = f"{study.read}:{study.write}:{study.delete}"
    run = Step({**base, "part": "gc", "op": "mixed", "ratio": mix, "rate": str(study.rate_ops_s)},
               study.run_spec(), study.tool, before=lambda c: settle(c, study), during=gc_action(cluster, study))
    return [load, run]


# -- analysis of the measured run (pure functions over the stored Run) ----------------------

WRITE_OPS = ("write", ["write", "delete"])   # the published Write rows: every mutation
SOURCE = "../shared/studies/002_6b376ac37883ce99.txt"
#: the sampler's metrics the time series show, per panel
COUNTER_PANELS = (("JVM GC collections per second", "gc_count"), ("JVM GC time (ms per second)", "gc_time_ms"),
                  ("compactions completed per second", "compactions_completed"),
                  ("bytes compacted per second (MiB/s)", "bytes_compacted"),
                  ("coordinator write timeouts per second", "write_timeouts"))


def windows(run: Any) -> tuple[Any, Any]:
    """(steady, garbagecollect): the phase as recorded, and a window as long just before it."""
    from cassperf.analysis import phase_window, window_before

    gc = phase_window(run, PHASE)
    steady = window_before(gc)
    steady = type(steady)(max(steady.start_s, 0.0), steady.end_s, "steady state", steady.unfinished,
                          "shortened: the run started less than one window before garbagecollect"
                          if steady.start_s < 0 else steady.note)
    return steady, gc


def table(run: Any, reps: int = 1000) -> Any:
    """The published table (read and write throughput and latency, steady vs garbagecollect)."""
    from cassperf.analysis import phase_table

    steady, gc = windows(run)
    return phase_table(run, steady, gc, ops=("read", WRITE_OPS), reps=reps)


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


def _window_values(run: Any, metric: str, window: Any, per_second: bool) -> Any:
    from cassperf.analysis.series import metric_series

    s = metric_series(run, [metric], per_second=per_second)
    return s[(s["time_s"] >= window.start_s) & (s["time_s"] < window.end_s)]["value"].to_numpy()


def claims(run: Any, keyspace: str, reps: int = 1000) -> Any:
    """The published findings checked on this run (cassperf.analysis.claims)."""
    from cassperf.analysis.claims import FAILS, HOLDS, NOT_SHOWN, Claim, alike, claims_frame, higher, sample_test
    from cassperf.analysis.compare import compare_samples
    from cassperf.analysis.samples import group_samples
    from cassperf.analysis.series import table_metric

    steady, gc = windows(run)

    def samples(op: Any, w: Any) -> Any:
        return group_samples(run, op, w.start_s, w.end_s)[1]

    def cmp(op: Any, metric: str) -> Any:
        return compare_samples(samples(op, steady), samples(op, gc), metric, reps)

    one_host = "every node and the client share this machine's cores"
    rows: list[Claim] = []
    for name, op in (("read", "read"), ("write", WRITE_OPS)):
        c = cmp(op, "rate_ops_s")
        rows.append(Claim(f"{name.capitalize()} throughput stays the same during garbagecollect (fixed rate)", SOURCE,
                          f"{name} ops/s {c.verdict}", alike(c, 5.0),
                          "the 95% CI of the change lies within +-5% (no CI, e.g. unstable or autocorrelated "
                          "intervals: not shown)"))
    for name, op, metric in (("Read", "read", "latency_p99_ms"), ("Read", "read", "latency_mean_ms"),
                             ("Write", WRITE_OPS, "latency_p99_ms"), ("Write", WRITE_OPS, "latency_mean_ms")):
        c = cmp(op, metric)
        what = "p99" if "p99" in metric else "average"
        verdict = higher(c)
        rows.append(Claim(f"{name} latency ({what}) rises during garbagecollect", SOURCE,
                          f"{name.lower()} {what} (response time): {c.verdict}", verdict,
                          "a significant increase (95% CI of the change above 0)", one_host))

    def sampled(claim: str, metric: str, per_second: bool, direction: int, unit: str, scale: float = 1.0) -> None:
        t = sample_test(_window_values(run, metric, steady, per_second) * scale,
                        _window_values(run, metric, gc, per_second) * scale)
        if t is None:
            rows.append(Claim(claim, SOURCE, f"{metric}: fewer than 3 samples in a window", NOT_SHOWN,
                              "Welch's t-test on the sampler's values of every node in each window"))
            return
        verdict = NOT_SHOWN if not t.significant else HOLDS if (t.mean_b - t.mean_a) * direction > 0 else FAILS
        rows.append(Claim(claim, SOURCE, f"{t.mean_a:,.2f} -> {t.mean_b:,.2f} {unit} (mean of {t.n_a} and {t.n_b} "
                                         f"node samples, p={t.p_value:.3g})", verdict,
                          "Welch's t-test on the sampler's values of every node in each window, p < 0.05 "
                          "(successive samples are not independent, so this p-value is optimistic)"))

    sampled("Write timeouts appear during garbagecollect", "write_timeouts", True, +1, "timeouts/s per node")
    sampled("JVM GC collections become more frequent", "gc_count", True, +1, "collections/s per node")
    sampled("JVM GC time rises", "gc_time_ms", True, +1, "ms of GC per second per node")
    sampled("Compaction tasks complete at a higher rate", "compactions_completed", True, +1, "tasks/s per node")
    sampled("Bytes compacted per second fall (smaller SSTables compacted)", "bytes_compacted", True, -1,
            "MiB/s per node", 1 / 2**20)
    sampled("Live SSTables decrease", table_metric("live_sstables", keyspace, "standard1"), False, -1,
            "SSTables per node")
    sampled("Unleveled SSTables (level 0) increase", table_metric("sstables_level_0", keyspace, "standard1"), False,
            +1, "SSTables per node")
    return claims_frame(rows)
