"""Test tables on real nodes, shared by the cluster tests."""

from __future__ import annotations

from cassandra.concurrent import execute_concurrent_with_args


def two_flushed_sstables(cluster, keyspace: str, table: str, rows_each: int, value_bytes: int,
                         compaction: str | None = None) -> None:
    """keyspace.table (k int, v text) on node 1 with autocompaction off and exactly two flushed
    SSTables of `rows_each` rows (values of `value_bytes` letters); `compaction` a strategy class."""
    s = cluster.session()
    s.execute(f"CREATE KEYSPACE {keyspace} WITH replication = {{'class': 'NetworkTopologyStrategy', 'dc1': 1}}")
    options = f" WITH compaction = {{'class': '{compaction}'}}" if compaction else ""
    s.execute(f"CREATE TABLE {keyspace}.{table} (k int PRIMARY KEY, v text){options}")
    cluster.nodetool(1, "disableautocompaction", keyspace, table)
    insert = s.prepare(f"INSERT INTO {keyspace}.{table} (k, v) VALUES (?, ?)")
    for part in range(2):
        execute_concurrent_with_args(s, insert, [(k, "v" * value_bytes) for k in range(part * rows_each, (part + 1) * rows_each)],
                                     concurrency=32, raise_on_first_error=True)
        cluster.nodetool(1, "flush", keyspace, table)
