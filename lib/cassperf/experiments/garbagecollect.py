"""The garbagecollect study (the published study: `nodetool garbagecollect` on a live
LeveledCompactionStrategy + LZ4 table under a fixed-rate read:write:delete = 5:4:1 load) on the
Study contract.

The table is loaded with ``keys`` rows first (a preparation). Each run is the fixed-rate mixed
load for ``steady_s + window_s + tail_s`` seconds; ``steady_s`` after measurement starts, an
operation runs on every node (or ``gc_nodes``) inside a recorded phase while the load goes on:

- arm ``garbagecollect``: what ``nodetool garbagecollect -j gc_jobs <keyspace> standard1`` does
  (StorageService.garbageCollect, granularity ROW), on every node at once;
- arm ``placebo``: the same invocation path (the same JMX client, on the same nodes, at the same
  moment of the run) on an empty table of the same keyspace, an operation that does no work. The
  difference between the two arms is garbagecollect's effect, apart from what asking for it
  costs on a machine whose cores the nodes and the client share;

The operations go over one JMX session per run (cassperf.cluster.jmx_ops.JmxSession), whose JVM
starts and connects before the load: nodetool starts a JVM per call and node, which on two
shared cores took 6 s per node even for the placebo's empty table, and its cost buried the
operation's. A cluster the session cannot reach (a named one) falls back to nodetool in both
arms alike, and the runs' notes say which path was taken;
- the A/A control: the placebo arm a second time.

One garbagecollect runs unmeasured after the warm-up, before block 1 (``baseline``): the first
one collects everything since the load, so block 1's would otherwise stand apart from the rest.

Before every run the memtables are flushed, compactions are left to finish and compaction
throughput is set to ``compaction_mib_s`` (0: unthrottled); it is put back to
``restore_compaction_mib_s`` after the operation. The windows: the operation's window is the
``window_s`` seconds from its recorded start; the steady window the ``steady_s`` seconds before
it. Latency is response time (fixed rate: from each op's intended start, coordinated omission
corrected). The fixed rate is ``rate_ops_s``, or, when 0, ``rate_share`` of the best throughput
that calibration found for the closed-loop mix.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from cassperf.constraints import Real, Whole, validate
from cassperf.errors import ConfigError, NotAddressable
from cassperf.cluster.jmx_ops import COMPACTION_PENDING, JmxOp, JmxOpsUnavailable, JmxSession
from cassperf.experiments.node_actions import (
    flush,
    garbagecollect,
    set_compaction_throughput,
    wait_for_compactions,
)
from cassperf.experiments.study import Arm, Calibrated, Preparation, Study
from cassperf.sampler.base import cluster_nodes
from cassperf.workload.spec import Compaction, Compression, Ratio, Replication, WorkloadSpec

STUDY = "garbagecollect"
#: the published study, by its title and what it was
SOURCE = ('"7019-Test: Perf Comparison [12/10 LCS]"'
          " (a test note: nodetool garbagecollect on a 3-node cluster of 200+ GB per node in one LCS + LZ4 "
          "table, under a 5:4:1 read:write:delete load at a fixed rate)")
PHASES = {"garbagecollect": "garbagecollect", "placebo": "placebo"}
PLACEBO_TABLE = "placebo_empty"


class _Jmx:
    """An arm's way to its nodes for one run: a JmxSession opened before the run (its JVM start
    and connections before the load; closed when the operation is done), or nodetool where one
    cannot run (a named cluster): then every call starts a JVM per node, in both arms alike."""

    def __init__(self) -> None:
        self.session: JmxSession | None = None
        self.path = "nodetool"

    def open(self, cluster: Any) -> JmxSession | None:
        self.close()
        try:
            self.session = JmxSession(cluster).open()
            self.session.run([JmxOp(n.handle, COMPACTION_PENDING, "get:Value") for n in cluster_nodes(cluster)])
            self.path = "over one JMX session opened before the run"
        except JmxOpsUnavailable as exc:
            self.close()
            self.path = f"by nodetool, a JVM per call and node ({exc})"
        return self.session

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
        self.session = None


@dataclass(frozen=True)
class GCStudy(Study):
    """The study's parameters (the notebook's parameters cell, validated)."""

    name: ClassVar[str] = STUDY
    title: ClassVar[str] = "nodetool garbagecollect on a live LCS + LZ4 table"
    source: ClassVar[str] = SOURCE
    ANALYSIS: ClassVar[str] = "cassperf.experiments.garbagecollect_analysis:GCAnalysis"
    #: what garbagecollect leaves may carry into the runs after it (suspected, not shown): with 4
    #: random blocks the placebo ran right after it more often than its A/A twin, and the A/A row
    #: found the twin's read latency significantly higher in two make reports (docs/measurements.md);
    #: all six orders once each put every arm after every other alike
    ALL_ORDERS: ClassVar[bool] = True

    repeats: int = 6                    # garbagecollect's spread is its own (no pool): 3 blocks leave 2 df, too
                                        # few for rises of 6x to be significant; 6 blocks are the six orders of
                                        # the three arms once each (ALL_ORDERS)
    keys: int = 40_000                  # rows loaded first (the study: 200+ GB per node)
    rate_ops_s: int = 0                 # fixed rate of the mixed load; 0: rate_share of the calibrated best
    rate_share: float = 0.25            # the fixed rate's share of the best closed-loop throughput
    read: int = 5                       # read:write:delete ratio (the study: 5:4:1)
    write: int = 4
    delete: int = 1
    cl: str = "LOCAL_ONE"
    rf: int = 3
    local_dc: str = "dc1"
    keyspace: str = "gc_lcs_lz4"
    concurrency: int = 64               # requests in flight that carry the fixed rate
    interval_s: float = 0.25
    steady_s: int = 4                   # load before the operation starts
    window_s: int = 6                   # the operation's window, from its start
    tail_s: int = 1                     # load after the window
    compaction_mib_s: int = 0           # compaction throughput during a run (0: unthrottled)
    restore_compaction_mib_s: int = 64  # put back after the operation (Cassandra 5.0's default)
    gc_nodes: Sequence[str] = ()        # empty: every node
    gc_jobs: int = 1                    # nodetool garbagecollect -j
    column_size: int = 818
    column_count: int = 5
    run_s: int = 0                      # derived: steady_s + window_s + tail_s

    CONSTRAINTS: ClassVar[dict[str, Any]] = {
        **{name: Whole(1) for name in ("keys", "concurrency", "steady_s", "window_s", "rf", "gc_jobs")},
        **{name: Whole(0) for name in ("rate_ops_s", "tail_s", "compaction_mib_s")},
        "rate_share": Real(0, 1, low_open=True, unit="a share", note="e.g. 0.5")}

    def __post_init__(self) -> None:
        validate(self, self.CONSTRAINTS)       # its own first: run_s is derived from them
        if min(self.read, self.write, self.delete) < 0 or self.read + self.write + self.delete == 0:
            raise ConfigError(f"read:write:delete = {self.read}:{self.write}:{self.delete}: expected shares >= 0, "
                              f"not all 0 (the study: 5:4:1)")
        object.__setattr__(self, "run_s", self.steady_s + self.window_s + self.tail_s)
        super().__post_init__()

    def check_parameters(self, parameters: Mapping[str, Any]) -> None:
        from cassperf.experiments.study import check_embedded_scale

        check_embedded_scale(str(parameters.get("contact_points", "")), keys=self.keys)

    def check_cluster(self, cluster: Any) -> None:
        """Both arms ask every node over JMX (nodetool garbagecollect, flush, compaction settings):
        a cluster nodetool cannot reach gets NotAddressable, one line naming what is missing."""
        problem = cluster.jmx_problem()
        if problem is not None:
            raise NotAddressable(f"the garbagecollect and placebo arms need nodetool (JMX) on every node, and this "
                                 f"cluster offers none here: {problem}. Nothing was run; to run them, install "
                                 f"Cassandra's tools here (CASSANDRA_HOME) and open the nodes' JMX port to this host "
                                 f"(credentials in CASSPERF_JMX_USERNAME / CASSPERF_JMX_PASSWORD)")

    # -- the plan ------------------------------------------------------------------------------
    def _table(self) -> dict[str, Any]:
        return {"keyspace": self.keyspace, "replication": Replication.network_topology({self.local_dc: self.rf}),
                "compaction": Compaction.of("LCS"), "compression": Compression("LZ4"),
                "column_count": self.column_count, "column_size": self.column_size, "local_dc": self.local_dc,
                "cl": self.cl, "interval_s": self.interval_s}

    def _mix(self, **spec: Any) -> WorkloadSpec:
        ratio = Ratio.of({k: v for k, v in (("read", self.read), ("write", self.write), ("delete", self.delete)) if v})
        return WorkloadSpec(op="mixed", ratio=ratio, population=f"uniform(1..{self.keys})", **self._table(), **spec)

    def preparations(self) -> list[Preparation]:
        return [Preparation("table", WorkloadSpec(op="write", n=self.keys, warmup=False, concurrency=32,
                                                  population=f"seq=1..{self.keys}", **self._table()))]

    def warm_spec(self) -> WorkloadSpec:
        return self._mix(duration=self.warm_step_s, concurrency=16)

    def calibration_spec(self) -> WorkloadSpec | None:
        return None if self.rate_ops_s else self._mix(duration=self.calibrate_s, concurrency=1)

    def baseline(self, contexts: Mapping[str, Any], runner: Any) -> Mapping[str, Any] | None:
        """One garbagecollect of the table, unmeasured, after the warm-up and before the blocks.
        The first one collects everything overwritten and deleted since the load; without it block
        1's operation window stood apart (read latency several times the other blocks'), and that
        one block decided the spread of every latency claim (docs/measurements.md). After it each
        measured one collects what about one block's load left."""
        cluster = next(iter(contexts.values()))
        jmx = _Jmx()
        t = time.monotonic()
        try:
            session = jmx.open(cluster)
            flush(cluster, self.keyspace, jmx=session)
            done = garbagecollect(cluster, self.keyspace, "standard1", nodes=list(self.gc_nodes) or None,
                                  jobs=self.gc_jobs, jmx=session)
        finally:
            jmx.close()
        return {"first_garbagecollect": f"{len(done)} nodes in {time.monotonic() - t:.1f} s, {jmx.path}"}

    def describe_baseline(self, found: Mapping[str, Any]) -> str:
        done = found.get("first_garbagecollect")
        return (f"One garbagecollect of the table ran unmeasured before block 1 ({done}): the first collects "
                f"everything since the load, each measured one after it about one block's load.") if done else ""

    def rate(self, calibrated: Calibrated | None) -> int:
        if self.rate_ops_s:
            return self.rate_ops_s
        return calibrated.rate(self.rate_share) if calibrated is not None else 300

    def arms(self, calibrated: Calibrated | None) -> list[Arm]:
        rate = self.rate(calibrated)
        spec = self._mix(duration=self.run_s, concurrency=self.concurrency, rate=f"fixed={rate}/s")
        labels = {"op": "mixed", "ratio": f"{self.read}:{self.write}:{self.delete}", "rate": str(rate),
                  "rf": str(self.rf), "cl": self.cl}
        tables = ((self.keyspace, "standard1"),)
        # garbagecollect's spread from run to run is its own (pool ""): the operation is what differs
        arms = []
        for name in ("garbagecollect", "placebo"):
            jmx = _Jmx()
            arms.append(Arm(name, {**labels, "operation": name}, spec=spec, tool=self.tool, before=self._settle(jmx),
                            during=self._operation(name, jmx), sampler_tables=tables,
                            pool="" if name == "garbagecollect" else None))
        return arms

    def aa_arm(self, arms: Sequence[Arm]) -> str:
        return "placebo"

    # -- what the arms do ----------------------------------------------------------------------
    def _settle(self, jmx: _Jmx) -> Callable[[Any], str]:
        def before(cluster: Any) -> str:
            """Before a run: the run's JMX session opened (its JVM starts now, not in the load),
            flush, let compactions finish, set compaction throughput; the placebo's empty table
            made (IF NOT EXISTS)."""
            cluster.session().execute(f"CREATE TABLE IF NOT EXISTS {self.keyspace}.{PLACEBO_TABLE} "
                                      f"(key blob PRIMARY KEY, c0 blob)")
            session = jmx.open(cluster)
            flush(cluster, self.keyspace, jmx=session)
            waited = wait_for_compactions(cluster, timeout_s=600, jmx=session)
            ok = all(r.ok for r in set_compaction_throughput(cluster, self.compaction_mib_s, jmx=session))
            return (f"flushed, compactions settled after {waited:.0f} s, compaction throughput "
                    f"{self.compaction_mib_s or 'unthrottled'}{' MiB/s' if self.compaction_mib_s else ''}"
                    f"{'' if ok else ' (NOT set on every node)'}; the node operations {jmx.path}")
        return before

    def _operation(self, arm: str, jmx: _Jmx) -> Callable[[Any, Any], None]:
        table = "standard1" if arm == "garbagecollect" else PLACEBO_TABLE
        nodes = list(self.gc_nodes) or None
        steady, jobs, keyspace, restore = self.steady_s, self.gc_jobs, self.keyspace, self.restore_compaction_mib_s

        def during(writer: Any, cluster: Any) -> None:
            time.sleep(steady)
            session = jmx.session
            detail = (f"garbagecollect -j {jobs} {keyspace} {table} on {', '.join(nodes) if nodes else 'every node'} "
                      f"{jmx.path}")
            try:
                with writer.phase(PHASES[arm], detail):
                    results = garbagecollect(cluster, keyspace, table, nodes=nodes, jobs=jobs, jmx=session)
                for r in results:
                    writer.event(f"{PHASES[arm]}:node", f"{r.node} took {r.seconds:.1f} s")
            finally:
                set_compaction_throughput(cluster, restore, jmx=session)
                jmx.close()
        return during

    # -- the analysis --------------------------------------------------------------------------
