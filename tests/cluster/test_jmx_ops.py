"""MBean operations from one JVM (cassperf.cluster.jmx_ops) on real nodes, and the cold-cache
step built on them: the flush really writes SSTables, the key cache really empties, a bad
operation is a failed result with the node's reason, and a cluster without the embedded JMX
credentials is told to use nodetool."""

from __future__ import annotations

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement

from cassperf.cluster.jmx_ops import (
    CACHES,
    COMPACTION_PENDING,
    STORAGE_SERVICE,
    JmxOp,
    JmxOpsUnavailable,
    JmxSession,
    run_ops,
)
from cassperf.experiments.node_actions import garbagecollect, make_cold, wait_for_compactions

pytestmark = pytest.mark.cluster

KS = "jmxops"


def _key_cache_entries(session) -> list[int]:
    """Each node's key cache entries (virtual tables answer for the node asked)."""
    hosts = sorted(session.cluster.metadata.all_hosts(), key=lambda h: str(h.endpoint))
    return [{r.name: r.entry_count for r in session.execute("SELECT name, entry_count FROM system_views.caches",
                                                            host=h)}["keys"] for h in hosts]


def _data_files(cluster, node: str) -> list:
    return list((cluster.node(node).layout.data / KS).glob("t-*/*-Data.db"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from cassperf.cluster import LocalCluster

    c = LocalCluster("jmxops", "dc1:2", first_address="127.0.20.1", heap_mb=512,
                     root=tmp_path_factory.mktemp("jmxops")).start()
    try:
        s = c.session()
        s.execute(f"CREATE KEYSPACE {KS} WITH replication = {{'class': 'NetworkTopologyStrategy', 'dc1': 2}}")
        s.execute(f"CREATE TABLE {KS}.t (k int PRIMARY KEY, v text)")
        for k in range(200):
            s.execute(f"INSERT INTO {KS}.t (k, v) VALUES (%s, %s)", (k, "x" * 100))
        yield c
    finally:
        c.destroy()


def test_flush_on_every_node_from_one_jvm_writes_sstables(cluster):
    nodes = ["node1", "node2"]
    assert all(_data_files(cluster, n) == [] for n in nodes)       # the rows are still in memtables
    results = run_ops(cluster, [JmxOp(n, STORAGE_SERVICE, "forceKeyspaceFlush", (KS, "")) for n in nodes])
    assert [(r.op.node, r.ok) for r in results] == [("node1", True), ("node2", True)]
    assert all(len(_data_files(cluster, n)) >= 1 for n in nodes)


def test_make_cold_empties_the_key_cache_and_says_what_it_did(cluster):
    s = cluster.session()
    run_ops(cluster, [JmxOp(n, STORAGE_SERVICE, "forceKeyspaceFlush", (KS, "")) for n in ("node1", "node2")])
    read = SimpleStatement(f"SELECT v FROM {KS}.t WHERE k = %s", consistency_level=ConsistencyLevel.ALL)
    for k in range(200):                                              # reads from SSTables fill both key caches
        s.execute(read, (k,))
    before = _key_cache_entries(s)
    assert len(before) == 2 and all(n > 0 for n in before), before
    said = make_cold(cluster, keyspace=KS)
    assert said.startswith("cold: memtables flushed, key and row caches invalidated, "
                           "nodes not restarted: the JVM stays warm (and a chunk cache, where file_cache_enabled turns "
                           "one on), ")
    assert _key_cache_entries(s) == [0, 0]                            # every node's cache, not just one



def test_a_bad_operation_is_a_failed_result_with_the_reason_and_the_rest_still_run(cluster):
    results = run_ops(cluster, [JmxOp("node1", STORAGE_SERVICE, "noSuchOperation"),
                                JmxOp("node2", STORAGE_SERVICE, "forceKeyspaceFlush", ("no_such_keyspace", "")),
                                JmxOp("node2", CACHES, "invalidateKeyCache")])
    assert [r.ok for r in results] == [False, False, True]
    assert results[0].output.startswith("IllegalArgumentException: no operation noSuchOperation taking 0 arguments")
    assert "no_such_keyspace" in results[1].output


def test_a_cluster_without_embedded_credentials_is_told_to_use_nodetool():
    class Remote:
        contact_points = ["127.0.0.1"]

    with pytest.raises(JmxOpsUnavailable, match="embedded cluster with JMX credentials"):
        run_ops(Remote(), [JmxOp("node1", CACHES, "invalidateKeyCache")])


def test_a_session_keeps_its_jvm_across_batches_sets_and_reads_attributes_and_garbagecollects(cluster):
    nodes = ["node1", "node2"]
    with JmxSession(cluster) as jmx:
        procs = list(jmx.procs.values())
        assert len(procs) == 1                                        # one DC, one JVM
        set_to = jmx.run([JmxOp(n, STORAGE_SERVICE, "set:CompactionThroughputMbPerSec", ("7",)) for n in nodes])
        assert [(r.op.node, r.ok, r.output) for r in set_to] == [("node1", True, "7"), ("node2", True, "7")]
        pending = jmx.run([JmxOp(n, COMPACTION_PENDING, "get:Value") for n in nodes])
        assert [r.ok and r.output.isdigit() for r in pending] == [True, True]
        assert wait_for_compactions(cluster, timeout_s=60, jmx=jmx) < 60
        done = garbagecollect(cluster, KS, "t", jmx=jmx)
        assert [(r.node, r.ok, r.output) for r in done] == [("node1", True, "0"), ("node2", True, "0")]
        bad = jmx.run([JmxOp("node1", STORAGE_SERVICE, "set:NoSuchAttribute", ("1",))])
        assert (bad[0].ok, bad[0].output) == (False, "IllegalArgumentException: no writable attribute NoSuchAttribute "
                                                     "on org.apache.cassandra.db:type=StorageService")
        jmx.run([JmxOp(n, STORAGE_SERVICE, "set:CompactionThroughputMbPerSec", ("64",)) for n in nodes])
        assert list(jmx.procs.values()) == procs and procs[0].poll() is None   # the same JVM all along
    assert procs[0].poll() is not None                                # closed with the session


def test_make_cold_with_restart_restarts_every_node_and_the_cluster_serves_again(cluster):
    """05's cold_restart=True (off by default; its test set leaves it off for time): every node stopped and
    started again, serving CQL with the rows it had. Last in the file: the nodes restart."""
    pids = {n.pid() for n in cluster.nodes}
    said = make_cold(cluster, restart=True, keyspace=KS)
    assert said.startswith("cold: memtables flushed, key and row caches invalidated, nodes restarted, "), said
    after = {n.pid() for n in cluster.nodes}
    assert None not in after and len(after) == 2 and not after & pids, (pids, after)
    read = SimpleStatement(f"SELECT v FROM {KS}.t WHERE k = %s", consistency_level=ConsistencyLevel.ALL)
    assert cluster.session().execute(read, (7,)).one() is not None
