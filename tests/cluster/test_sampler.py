"""The cluster sampler against real nodes on 127.0.12.x: Jolokia + virtual tables, and the
nodetool fallback of a node started without the agent, give the same metric names and the
values Cassandra's own tools report."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import pandas as pd
import psutil
import pytest

from cassperf.parsers import parse_text
from cassperf.results.store import RunWriter, load_run
from cassperf.sampler import ClusterSampler
from tests.cluster.tables import two_flushed_sstables

pytestmark = pytest.mark.cluster

KS, TABLE = "ks", "lcs"
T = f"{KS}.{TABLE}"
LEVELS = 9          # Cassandra 5.0 LCS reports levels 0..8
#: Node metrics every JMX path must give (pools and sampler costs are checked separately).
NODE_METRICS = {
    "gc_count", "gc_time_ms", "compactions_pending", "compactions_completed", "compactions_active",
    "bytes_compacted", "read_timeouts", "write_timeouts", "dropped_messages", f"live_sstables:{T}",
    f"local_writes:{T}", f"local_reads:{T}", *(f"sstables_level_{n}:{T}" for n in range(LEVELS)),
    "process_cpu_pct", "process_rss_bytes", "process_read_bytes", "process_write_bytes",
}
#: what the host source reads of a node's process (no cgroup of its own here: no memory rows)
PROCESS_METRICS = {"process_cpu_pct", "process_rss_bytes", "process_read_bytes", "process_write_bytes"}
CORE_POOLS = ["MutationStage", "ReadStage", "CompactionExecutor", "MemtableFlushWriter", "Native-Transport-Requests"]
POOL_METRICS = {f"pool_{p}_{w}" for p in CORE_POOLS for w in ("pending", "blocked", "active", "completed")}
HOST = f"host:{socket.gethostname()}"
HOST_METRICS = {"host_cpu_pct", "host_cpu_user_pct", "host_cpu_system_pct", "host_cpu_iowait_pct",
                "host_cpu_steal_pct", "host_load_1m", "host_mem_used_bytes",
                "host_net_recv_bytes", "host_net_sent_bytes",
                *(("host_disk_read_bytes", "host_disk_write_bytes") if psutil.disk_io_counters() else ())}


def wait_for(what: str, predicate: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s:.0f} s")
        time.sleep(0.1)


def two_sstables_in_l0(cluster) -> None:
    """An LCS table with autocompaction off and two flushed SSTables of 1,000 rows each."""
    two_flushed_sstables(cluster, KS, TABLE, rows_each=1000, value_bytes=100, compaction="LeveledCompactionStrategy")


def tablestats_row(cluster) -> pd.Series:
    tables = parse_text(cluster.nodetool(1, "tablestats", T), format="nodetool-tablestats").tables["tables"]
    return tables.iloc[0]


def series(metrics: pd.DataFrame, metric: str, node: str = "node1") -> pd.Series:
    rows = metrics[(metrics["metric"] == metric) & (metrics["node"] == node)].sort_values("time")
    return rows.set_index("time")["value"]


def names(metrics: pd.DataFrame, node: str = "node1") -> set[str]:
    return set(metrics.loc[metrics["node"] == node, "metric"])


def test_jolokia_and_virtual_tables_sample_gc_sstables_compaction_pools_host_and_phases(make_cluster, tmp_path):
    cluster = make_cluster("sampler", "dc1:1", "127.0.12.1").start()
    two_sstables_in_l0(cluster)

    with RunWriter(tool="sampler-test", root=tmp_path) as run:
        with ClusterSampler(cluster, tables=[(KS, TABLE)], interval_s=1, writer=run) as sampler:
            assert [s.name for s in sampler.sources] == ["virtual_tables", "jolokia", "host", "client"]
            wait_for("3 samples", lambda: sampler.samples >= 3, 30)
            jolokia_live = cluster.jolokia(1).table_metric(KS, TABLE, "LiveSSTableCount")["Value"]
            stats = tablestats_row(cluster)
            with sampler.phase("compact", f"nodetool compact {KS} {TABLE}"):
                cluster.nodetool(1, "compact", KS, TABLE)
            with sampler.phase("garbagecollect", f"nodetool garbagecollect {KS} {TABLE}"):
                cluster.nodetool(1, "garbagecollect", KS, TABLE)
            after = sampler.samples
            wait_for("2 samples after garbagecollect", lambda: sampler.samples >= after + 2, 30)
            jolokia_live_after = cluster.jolokia(1).table_metric(KS, TABLE, "LiveSSTableCount")["Value"]
        samples = sampler.samples
        # without virtual tables, thread pools come from Jolokia's ThreadPools MBeans
        direct = ClusterSampler(cluster, tables=[(KS, TABLE)], writer=None, virtual_tables=False, host=False)
        assert [s.name for s in direct.sources] == ["jolokia"]
        pools_from_jmx = {r.metric for r in direct.sample_once() if r.metric.startswith("pool_")}
        direct.stop()
    # every source answered; a sample slower than its 1 s on a busy machine (make test runs two node
    # files at a time) is timing, which the nodetool test below asserts on its own
    assert [w for w in sampler.warnings if "took longer than" not in w] == []

    loaded = load_run(run.path)
    m = loaded.metrics
    disks = {n for n in set(m["node"]) if n.startswith("disk:")}          # the data folder's device, if any
    assert set(m["node"]) - disks == {"node1", HOST}
    for disk in disks:
        assert names(m, disk) == {"disk_read_bytes", "disk_write_bytes", "disk_reads", "disk_writes", "disk_busy_ms"}
        assert series(m, "disk_write_bytes", disk).is_monotonic_increasing
    assert NODE_METRICS | POOL_METRICS <= names(m)
    non_pool = {n for n in names(m) if not n.startswith("pool_")}
    assert non_pool == NODE_METRICS | {"sampler_virtual_tables_ms", "sampler_jolokia_ms", "sampler_host_ms"}
    assert POOL_METRICS <= pools_from_jmx
    assert names(m, HOST) == HOST_METRICS | {"sampler_host_ms"}

    # one value per metric per sample (`samples` counts the final one at stop), times inside the run
    assert len(series(m, "gc_count")) == samples
    started = pd.Timestamp(loaded.manifest["started_utc"])
    ended = pd.Timestamp(loaded.manifest["ended_utc"])
    assert m["time"].between(started, ended).all()

    gc = series(m, "gc_count")
    assert gc.is_monotonic_increasing and (gc >= 0).all()
    assert series(m, "gc_time_ms").is_monotonic_increasing

    events = loaded.events
    assert list(events["name"]) == ["compact:start", "compact:end", "garbagecollect:start", "garbagecollect:end"]
    assert list(events["detail"])[2] == f"nodetool garbagecollect {KS} {TABLE}"
    compact_start = events["time"].iloc[0]
    compact_end = events["time"].iloc[1]

    live = series(m, f"live_sstables:{T}")
    before = live[live.index < compact_start]
    assert len(before) >= 3
    assert jolokia_live == 2 and stats["sstable_count"] == 2 and stats["sstables_per_level"].startswith("[2, 0")
    assert (before == 2).all()
    assert (series(m, f"sstables_level_0:{T}")[lambda s: s.index < compact_start] == 2).all()
    assert live.iloc[-1] == jolokia_live_after == 1

    completed = series(m, "compactions_completed")
    compacted = series(m, "bytes_compacted")
    assert completed[completed.index > compact_end].min() > completed[completed.index < compact_start].max()
    assert compacted[compacted.index > compact_end].min() > compacted[compacted.index < compact_start].max()

    assert (series(m, "pool_CompactionExecutor_completed").diff().dropna() >= 0).all()
    cpu = series(m, "host_cpu_pct", HOST)
    assert len(cpu) == samples and cpu.between(0, 100).all()
    assert series(m, "host_net_recv_bytes", HOST).is_monotonic_increasing
    assert (series(m, "process_rss_bytes") > 100 * 2**20).all()

    costs = m[m["metric"].str.startswith("sampler_")].groupby("metric")["value"].median()
    print("\nmedian sampling cost per node per sample (ms):", costs.round(1).to_dict())


def test_nodetool_fallback_of_a_node_without_jolokia_gives_the_same_metric_names(make_cluster):
    cluster = make_cluster("samplernt", "dc1:1", "127.0.12.2", jolokia=False).start()
    two_sstables_in_l0(cluster)

    sampler = ClusterSampler(cluster, tables=[(KS, TABLE)], interval_s=1, final_sample=False)
    assert [s.name for s in sampler.sources] == ["virtual_tables", "nodetool", "host", "client"]
    with sampler:
        wait_for("2 samples", lambda: sampler.samples >= 2, 90)
    m = sampler.frame()
    assert {n for n in names(m) if not n.startswith("pool_")} == \
        NODE_METRICS | {"sampler_virtual_tables_ms", "sampler_nodetool_ms", "sampler_host_ms"}
    assert POOL_METRICS <= names(m)
    assert names(m, HOST) == HOST_METRICS | {"sampler_host_ms"}
    # a nodetool sample takes seconds: the 1 s ticks it overran are skipped and said once
    assert sampler.overruns >= 1
    assert len(sampler.warnings) == 1 and "took longer than interval_s=1 s" in sampler.warnings[0]

    stats = tablestats_row(cluster)
    assert (series(m, f"live_sstables:{T}") == stats["sstable_count"]).all() and stats["sstable_count"] == 2
    assert list(series(m, f"sstables_level_0:{T}")) == [2.0] * sampler.samples
    gc = series(m, "gc_count")
    assert len(gc) == sampler.samples and gc.is_monotonic_increasing
    assert (series(m, "compactions_completed") >= 0).all()

    # no virtual tables either: pools from `nodetool tpstats`, running tasks from compactionstats
    bare = ClusterSampler(cluster, tables=[(KS, TABLE)], virtual_tables=False, host=False)
    assert [s.name for s in bare.sources] == ["nodetool"]
    got = {r.metric for r in bare.sample_once()}
    bare.stop()
    assert {n for n in got if not n.startswith("pool_")} == \
        NODE_METRICS - PROCESS_METRICS | {"sampler_nodetool_ms"}
    assert POOL_METRICS <= got
    print(f"\nnodetool sample cost per node (ms): {series(m, 'sampler_nodetool_ms').round(0).tolist()}")
