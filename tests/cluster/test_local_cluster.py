"""Real Cassandra nodes on loopback. Every cluster is stopped in teardown (make_cluster)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
from cassandra import ConsistencyLevel
from cassandra.cluster import ExecutionProfile, EXEC_PROFILE_DEFAULT
from cassandra.policies import WhiteListRoundRobinPolicy

from cassperf.errors import ClusterError, ConfigError, ToolError
from cassperf.parsers.nodetool.status import parse as parse_status
from cassperf.results.store import load_run
from tests.conftest import cassperf_processes

pytestmark = pytest.mark.cluster


def test_one_node_starts_serves_rows_and_stops_without_leftovers(make_cluster):
    cluster = make_cluster("single", "dc1:1", "127.0.1.1")
    t0 = time.monotonic()
    cluster.start()
    print(f"\none node CQL-ready in {time.monotonic() - t0:.1f} s")
    [status] = cluster.status()
    assert status.up and status.pid is not None and status.address == "127.0.1.1"
    pid = status.pid

    s = cluster.session()
    s.execute("CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1}")
    s.execute("CREATE TABLE ks.t (k int PRIMARY KEY, v text)")
    insert = s.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
    for k in range(500):
        s.execute(insert, (k, f"value-{k}"))
    rows = {r.k: r.v for r in s.execute("SELECT k, v FROM ks.t")}
    assert rows == {k: f"value-{k}" for k in range(500)}
    assert cluster.cassandra_version() == "5.0.6"

    # nodetool with the client JVM options, parsed
    nodes = parse_status(cluster.nodetool("node1", "status")).tables["nodes"]
    assert list(nodes["address"]) == ["127.0.1.1"] and list(nodes["state"] + nodes["mode"]) == ["UN"]
    assert list(nodes["datacenter"]) == ["dc1"]
    cluster.nodetool(1, "flush", "ks", "t")

    # JMX over HTTP: GC and table metrics without a JVM start per sample
    jolokia = cluster.jolokia("node1")
    gc = jolokia.gc()
    assert set(gc) == {"G1 Young Generation", "G1 Old Generation"}
    assert gc["G1 Young Generation"]["collection_count"] >= 1
    assert jolokia.table_metric("ks", "t", "LiveSSTableCount")["Value"] == 1
    assert jolokia.table_metric("ks", "t", "WriteLatency")["Count"] == 500

    # the GC log is JDK unified logging
    gc_log = cluster.node(1).layout.gc_log.read_text()
    assert "[gc" in gc_log and "Using G1" in gc_log

    # failures of nodetool carry command, exit code and output
    with pytest.raises(ToolError) as err:
        cluster.nodetool(1, "nosuchcommand", timeout=60)
    assert err.value.returncode != 0 and "nosuchcommand" in err.value.cmd

    killed = cluster.stop()
    assert killed == []
    assert not cassperf_processes(cluster.root)
    assert not cluster.node(1).layout.pid_file.exists()
    with pytest.raises(Exception):
        os.kill(pid, 0)
    assert [s.up for s in cluster.status()] == [False]


def test_start_reuses_a_running_cluster_and_refuses_a_different_topology(make_cluster):
    first = make_cluster("reuse", "dc1:1", "127.0.6.1").start()
    pid = first.status()[0].pid
    again = make_cluster("reuse", "dc1:1", "127.0.6.1")
    t0 = time.monotonic()
    again.start()
    assert time.monotonic() - t0 < 5, "a running cluster is reused, not started twice"
    assert again.status()[0].pid == pid
    with pytest.raises(ConfigError, match=r"cluster 'reuse' already exists at .* as dc1:1 Cassandra 5\.0\.6 on "
                                          r"127\.0\.6\.1; asked for dc1:2 Cassandra 5\.0\.6 on 127\.0\.6\.1"):
        make_cluster("reuse", "dc1:2", "127.0.6.1").start()


def test_two_dcs_each_quorum_write_read_at_local_one_in_the_other_dc(make_cluster):
    cluster = make_cluster("twodc", "dc1:2,dc2:1", "127.0.2.1")
    t0 = time.monotonic()
    cluster.start()
    print(f"\n3 nodes in 2 DCs CQL-ready in {time.monotonic() - t0:.1f} s")
    s = cluster.session()
    s.execute("CREATE KEYSPACE ks2 WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}")
    s.execute("CREATE TABLE ks2.t (k int PRIMARY KEY, v int)")
    insert = s.prepare("INSERT INTO ks2.t (k, v) VALUES (?, ?)")
    insert.consistency_level = ConsistencyLevel.EACH_QUORUM
    for k in range(200):
        s.execute(insert, (k, k * k))

    # read through the dc2 node only, at LOCAL_ONE
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy(["127.0.2.3"]),
                               consistency_level=ConsistencyLevel.LOCAL_ONE)
    other = cluster.driver_cluster(contact_points=["127.0.2.3"], execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    try:
        rs = other.connect().execute("SELECT k, v FROM ks2.t")
        assert {r.k: r.v for r in rs} == {k: k * k for k in range(200)}
        assert rs.response_future.coordinator_host.address == "127.0.2.3"
    finally:
        other.shutdown()

    nodes = parse_status(cluster.nodetool("node3", "status")).tables["nodes"]
    assert sorted(zip(nodes["datacenter"], nodes["address"])) == [
        ("dc1", "127.0.2.1"), ("dc1", "127.0.2.2"), ("dc2", "127.0.2.3")]
    assert set(nodes["state"] + nodes["mode"]) == {"UN"}
    assert set(cluster.topology_frame()["datacenter"]) == {"dc1", "dc2"}


def test_a_node_that_dies_during_start_raises_with_its_last_log_lines(make_cluster):
    cluster = make_cluster("dies", "dc1:1", "127.0.18.1", yaml_overrides={"num_tokens": "not-a-number"})
    t0 = time.monotonic()
    with pytest.raises(ClusterError) as err:
        cluster.start()
    msg = str(err.value)
    assert msg.startswith("node1 of cluster dies died during start (exit code")
    assert "--- last" in msg and "system.log" in msg or "stdout.log" in msg
    assert "not-a-number" in msg or "num_tokens" in msg, msg
    assert time.monotonic() - t0 < 60
    assert not cassperf_processes(cluster.root)


def test_cli_start_status_stop(tmp_path):
    env = {**os.environ, "CASSPERF_HOME": str(tmp_path)}
    args = ["--name", "clitest"]       # start says how; status, stop and destroy find it by name
    run = lambda *a: subprocess.run([sys.executable, "-m", "cassperf.cli", "cluster", *a, *args], env=env,  # noqa: E731
                                    capture_output=True, text=True, timeout=300)
    try:
        started = run("start", "--topology", "dc1:1", "--first-address", "127.0.11.1", "--heap-mb", "512")
        assert started.returncode == 0, started.stderr
        assert "cluster clitest (dc1:1) CQL-ready in" in started.stdout
        up = run("status")
        assert up.returncode == 0 and "127.0.11.1" in up.stdout and "True" in up.stdout
        # the shell's cluster is the user's: kept, never reaped as a dead owner's (the start process is gone)
        listed = subprocess.run([sys.executable, "-m", "cassperf.cli", "cluster", "status"], env=env,
                                capture_output=True, text=True, timeout=120)
        assert re.fullmatch(r"cluster clitest: running, 1 of 1 nodes \(node1 127\.0\.11\.1 pid \d+\); "
                            r"kept \(cassperf cluster start\)\n", listed.stdout), listed.stdout
        # a workload from the shell on that cluster, by name, with the sampler beside it
        load = subprocess.run([sys.executable, "-m", "cassperf.cli", "run", "--cluster", "clitest", "--no-progress",
                               "--label", "purpose=cli", "--sample-interval", "1", "--processes", "1",
                               "write n=2000 cl=ONE -rate threads=8 -pop seq=1..2000 -col size=FIXED(100)"],
                              env=env, capture_output=True, text=True, timeout=300)
        assert load.returncode == 0, load.stderr
        first = load.stdout.splitlines()[0]
        assert first.startswith("run ") and first.endswith("(cassperf-engine, latency type: service)"), load.stdout
        stored = load_run(first.split()[1], root=tmp_path / "data" / "runs")
        assert stored.manifest["complete"] and stored.manifest["labels"] == {"purpose": "cli"}
        assert stored.summary.set_index("op").loc["write", "count"] == 2000
        assert {"write", "2000"} <= set(load.stdout.splitlines()[3].split())     # the summary row printed
        assert not stored.metrics.empty                                         # the sampler ran
    finally:
        stopped = run("stop")
    assert stopped.returncode == 0 and stopped.stdout.startswith("stopped cluster clitest")
    down = run("status")
    assert down.returncode == 3 and "False" in down.stdout
    assert not cassperf_processes(tmp_path / "data" / "clusters")
    destroyed = run("destroy")
    assert destroyed.returncode == 0 and not (tmp_path / "data" / "clusters" / "clitest").exists()
