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
    rate_ops_s: int = 600               # fixed rate of the mixed load (the study: 3,000/s)
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
