"""Metric names the cluster sampler writes, with their units and kinds.

Rows are long format (time UTC, node, metric, value); the unit is in the metric's name. Three
name shapes:

    gc_count                         node-wide
    live_sstables:keyspace1.standard1   per table: "<base>:<keyspace>.<table>"
    pool_MutationStage_pending       per thread pool: "pool_<pool name>_<what>" (pool names as
                                     Cassandra prints them, e.g. Native-Transport-Requests)

`split_metric()` takes a name apart again. Kinds: a *counter* only grows while the process
lives (cumulative since the JVM started, unless its doc says otherwise): take differences for
rates; a *gauge* is a level at the sample's time.

The `node` column holds the node's name (a LocalCluster's "node1", a remote node's address);
host rows carry "host:<hostname>" (the machine the sampler runs on: for a LocalCluster, the
nodes' machine; for a remote cluster, the client's); disk rows "disk:<kernel name>" (a block
device holding a local node's data or commit log, e.g. "disk:vda"); client rows
"client:<label>" (one process of the load generator: "client:engine" the engine's parent,
"client:worker-0" its first worker, "client:cassandra-stress" a tool's process,
"client:cassandra-stress/java-4242" a process the tool started).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["counter", "gauge"]


@dataclass(frozen=True)
class MetricInfo:
    kind: Kind
    doc: str


#: Node-wide and per-table metrics (per-table ones are written as "<base>:<ks>.<table>").
METRICS: dict[str, MetricInfo] = {
    "gc_count": MetricInfo("counter", "JVM collections, all collectors summed (java.lang GarbageCollector "
                                      "CollectionCount)"),
    "gc_time_ms": MetricInfo("counter", "JVM time spent collecting, all collectors summed, ms "
                                        "(CollectionTime)"),
    "compactions_pending": MetricInfo("gauge", "compaction tasks the node estimates it still has to run"),
    "compactions_completed": MetricInfo("counter", "compactions completed (TotalCompactionsCompleted)"),
    "compactions_active": MetricInfo("gauge", "SSTable operations running now (compactions, garbagecollect, "
                                              "cleanup, ...)"),
    "bytes_compacted": MetricInfo("counter", "bytes compacted (BytesCompacted)"),
    "read_timeouts": MetricInfo("counter", "coordinator read timeouts (ClientRequest scope=Read Timeouts)"),
    "write_timeouts": MetricInfo("counter", "coordinator write timeouts (ClientRequest scope=Write Timeouts)"),
    "dropped_messages": MetricInfo("counter", "messages the node dropped (timed out in its queues), every message "
                                              "type summed (DroppedMessage scope=* Dropped Count; nodetool tpstats' "
                                              "dropped section)"),
    "local_writes": MetricInfo("counter", "per table: writes the node applied as a replica (Table WriteLatency "
                                          "Count; nodetool tablestats' Local write count)"),
    "local_reads": MetricInfo("counter", "per table: reads the node served as a replica (Table ReadLatency Count; "
                                         "nodetool tablestats' Local read count)"),
    "live_sstables": MetricInfo("gauge", "per table: live SSTables (LiveSSTableCount)"),
    "sstables_level_": MetricInfo("gauge", "per table and level N (sstables_level_0, _1, ...): SSTables in "
                                           "level N (LCS only; level 0 holds the unleveled ones)"),
}

#: Thread pool metrics, written as "pool_<name>_<what>".
POOL_FIELDS: dict[str, MetricInfo] = {
    "pending": MetricInfo("gauge", "tasks queued"),
    "blocked": MetricInfo("gauge", "tasks blocked because the queue is full"),
    "active": MetricInfo("gauge", "tasks running"),
    "completed": MetricInfo("counter", "tasks completed"),
}

#: Host rows (node "host:<hostname>") and per-node process rows (local nodes only).
HOST_METRICS: dict[str, MetricInfo] = {
    "host_cpu_pct": MetricInfo("gauge", "host CPU busy since the previous sample, % of all cores"),
    "host_cpu_iowait_pct": MetricInfo("gauge", "host CPU waiting for I/O since the previous sample, %"),
    "host_cpu_user_pct": MetricInfo("gauge", "host CPU in user mode (user + nice, guests included) since the "
                                             "previous sample, % of all cores"),
    "host_cpu_system_pct": MetricInfo("gauge", "host CPU in the kernel (system + irq + softirq) since the previous "
                                               "sample, % of all cores"),
    "host_cpu_steal_pct": MetricInfo("gauge", "host CPU taken by the hypervisor for other guests (steal) since the "
                                              "previous sample, % of all cores"),
    "host_load_1m": MetricInfo("gauge", "host load average over 1 minute"),
    "host_mem_used_bytes": MetricInfo("gauge", "host memory in use (total - available)"),
    "host_net_recv_bytes": MetricInfo("counter", "bytes received, all interfaces (loopback included), since boot"),
    "host_net_sent_bytes": MetricInfo("counter", "bytes sent, all interfaces (loopback included), since boot"),
    "host_disk_read_bytes": MetricInfo("counter", "bytes read, all disks, since boot"),
    "host_disk_write_bytes": MetricInfo("counter", "bytes written, all disks, since boot"),
    "process_cpu_pct": MetricInfo("gauge", "a local node's JVM CPU since the previous sample, % of one core"),
    "process_rss_bytes": MetricInfo("gauge", "a local node's JVM resident memory"),
    "process_read_bytes": MetricInfo("counter", "bytes a local node's JVM made the kernel fetch from storage (page "
                                                "cache misses and readahead; /proc/<pid>/io read_bytes), since its start"),
    "process_write_bytes": MetricInfo("counter", "bytes a local node's JVM sent toward storage (counted as its pages "
                                                 "were dirtied; /proc/<pid>/io write_bytes), since its start"),
    "node_page_cache_bytes": MetricInfo("gauge", "a local node's page cache: file pages charged to its memory cgroup "
                                                 "(active + inactive file; only for nodes in a cgroup of their own)"),
    "node_anon_bytes": MetricInfo("gauge", "a local node's anonymous memory charged to its memory cgroup (heap, "
                                           "metaspace, direct buffers, stacks)"),
    "node_own_memory_bytes": MetricInfo("gauge", "a local node's cgroup usage that is not clean page cache "
                                                 "(anonymous, kernel, tmpfs, dirty file pages): what its limit is "
                                                 "set above"),
    "node_memory_limit_bytes": MetricInfo("gauge", "a local node's memory cgroup limit (v2: memory.high), when it "
                                                   "has one: its own memory + the page-cache bound"),
    "node_disk_reads": MetricInfo("counter", "reads a local node issued to its throttled disks, from its I/O cgroup "
                                             "(v1 blkio.throttle.io_serviced Read; only for nodes whose reads are "
                                             "throttled: read_iops, read_mb_s)"),
    "node_read_iops_limit": MetricInfo("gauge", "the reads per second a local node's disk reads are throttled to "
                                                "(read_iops)"),
    "disk_read_bytes": MetricInfo("counter", "bytes read from a data device (node disk:<name>; /proc/diskstats "
                                             "sectors read x 512), since boot"),
    "disk_write_bytes": MetricInfo("counter", "bytes written to a data device, since boot"),
    "disk_reads": MetricInfo("counter", "reads completed by a data device, since boot"),
    "disk_writes": MetricInfo("counter", "writes completed by a data device, since boot"),
    "disk_busy_ms": MetricInfo("counter", "time a data device had I/O in flight, ms (/proc/diskstats io_ticks: "
                                          "its utilization is the increase per ms of wall time)"),
    "client_cpu_s": MetricInfo("counter", "CPU seconds (user + system) of one load-generator process (node "
                                          "client:<label>), since the process started"),
}

#: Sampling cost rows: "sampler_<source>_ms" per node, the wall time one source took for it.
SAMPLER_COST_PREFIX = "sampler_"

HOST_PREFIX = "host:"
DISK_PREFIX = "disk:"
CLIENT_PREFIX = "client:"

# live_sstables:keyspace1.standard1 | sstables_level_0:ks.t
_TABLE_METRIC_RE = re.compile(r"^(?P<base>[a-z0-9_]+):(?P<keyspace>[A-Za-z0-9_]+)\.(?P<table>[A-Za-z0-9_]+)$")
# pool_Native-Transport-Requests_pending
_POOL_METRIC_RE = re.compile(r"^pool_(?P<pool>.+)_(?P<what>pending|blocked|active|completed)$")


def table_metric(base: str, keyspace: str, table: str) -> str:
    """'live_sstables', 'ks', 't' -> 'live_sstables:ks.t'."""
    return f"{base}:{keyspace}.{table}"


def level_metric(level: int, keyspace: str, table: str) -> str:
    """0, 'ks', 't' -> 'sstables_level_0:ks.t'."""
    return table_metric(f"sstables_level_{level}", keyspace, table)


def pool_metric(pool: str, what: str) -> str:
    """'MutationStage', 'pending' -> 'pool_MutationStage_pending'."""
    if what not in POOL_FIELDS:
        raise ValueError(f"thread pool field {what!r} is not one of {', '.join(POOL_FIELDS)}")
    return f"pool_{pool}_{what}"


def host_node(hostname: str) -> str:
    return f"{HOST_PREFIX}{hostname}"


def disk_node(device: str) -> str:
    """'vda' -> 'disk:vda'."""
    return f"{DISK_PREFIX}{device}"


def client_node(label: str) -> str:
    """'worker-0' -> 'client:worker-0'."""
    return f"{CLIENT_PREFIX}{label}"


@dataclass(frozen=True)
class MetricName:
    """A metric name taken apart: base ('live_sstables', 'pool_pending', 'gc_count'), and the
    table ('ks.t') or pool it is about, where it has one."""

    base: str
    table: str | None = None
    pool: str | None = None


def split_metric(name: str) -> MetricName:
    """'live_sstables:ks.t' -> (live_sstables, table ks.t); 'pool_ReadStage_pending' ->
    (pool_pending, pool ReadStage); anything else -> (name)."""
    m = _TABLE_METRIC_RE.match(name)
    if m:
        return MetricName(m["base"], table=f"{m['keyspace']}.{m['table']}")
    m = _POOL_METRIC_RE.match(name)
    if m:
        return MetricName(f"pool_{m['what']}", pool=m["pool"])
    return MetricName(name)
