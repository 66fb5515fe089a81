"""The one-line answers about a named cluster, without nodes: a failed first connection
(credentials before TLS before the network), what the sampler reads without JMX, why nodetool
cannot reach the nodes, 03's refusal, and nodes placed on addresses of their own."""

from __future__ import annotations

import ssl

import pytest
from cassandra import AuthenticationFailed, OperationTimedOut

from cassperf.cluster.base import connect_error_line
from cassperf.cluster.local import LocalCluster
from cassperf.cluster.remote import RemoteCluster
from cassperf.errors import ConfigError, NotAddressable
from cassperf.experiments.garbagecollect import GCStudy
from cassperf.sampler.sampler import reach_line

POINTS = ["10.60.0.1", "10.60.0.2"]
BAD = AuthenticationFailed('Failed to authenticate to 10.60.0.1:9042: Error from server: code=0100 [Bad credentials] '
                           'message="Provided username perf and/or password are incorrect"')
UNTRUSTED = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed "
                                            "certificate in certificate chain (_ssl.c:1000)")
NO_ROUTE = OSError(None, "Tried connecting to [('10.60.0.2', 9042)]. Last error: No route to host")


def test_connection_errors_name_the_node_and_the_one_fix():
    assert connect_error_line(POINTS, 9042, {"10.60.0.1:9042": BAD, "10.60.0.2:9042": NO_ROUTE}) == (
        "cannot connect to 10.60.0.1, 10.60.0.2 port 9042: 10.60.0.1: the node refused the username and password "
        "(bad credentials); check CASSPERF_USERNAME / CASSPERF_PASSWORD (docs/guides/your-cluster.md)")
    assert connect_error_line(POINTS, 9042, {"10.60.0.2:9042": NO_ROUTE, "10.60.0.1:9042": UNTRUSTED}) == (
        "cannot connect to 10.60.0.1, 10.60.0.2 port 9042: 10.60.0.1: its TLS certificate is not signed by a CA this "
        "client trusts (certificate verify failed); check that CASSPERF_SSL_CA names the CA that signed the nodes' "
        "certificates")
    assert connect_error_line(POINTS, 9042, {"10.60.0.1:9042": ConnectionRefusedError(111, "Connection refused"),
                                             "10.60.0.2:9042": NO_ROUTE}) == (
        "cannot connect to 10.60.0.1, 10.60.0.2 port 9042: 10.60.0.1: connection refused; 10.60.0.2: no route to host; "
        "check that the nodes are up and the contact points and port are right")
    assert connect_error_line(["10.60.0.1"], 9042, {"10.60.0.1:9042": AuthenticationFailed(
        "Remote end requires authentication")}).startswith(
        "cannot connect to 10.60.0.1 port 9042: 10.60.0.1: the node asks for a username and password and none were given")
    assert connect_error_line(["10.60.0.1"], 9042, {"10.60.0.1:9042": OSError("timed out")}) == (
        "cannot connect to 10.60.0.1 port 9042: 10.60.0.1: no answer (timed out); check that the nodes are up and the "
        "contact points and port are right")
    # the control connection connected, then its queries timed out: the driver's error says only "errors=None, ..."
    assert connect_error_line(["127.0.22.2"], 9042, {"127.0.22.2:9042": OperationTimedOut()}) == (
        "cannot connect to 127.0.22.2 port 9042: 127.0.22.2: it took the connection but did not answer the driver's "
        "first queries in time (timed out); check that the nodes are up and the contact points and port are right")


def test_what_the_sampler_reads_without_jmx():
    assert reach_line("no nodetool here (CASSANDRA_HOME unset and none on PATH)",
                      ["system_views.thread_pools", "system_views.sstable_tasks"]) == (
        "no JMX/Jolokia (no nodetool here (CASSANDRA_HOME unset and none on PATH)): node metrics (JVM GC, compactions, "
        "table and SSTable counters) not sampled; CQL virtual tables read: system_views.thread_pools, "
        "system_views.sstable_tasks")
    assert reach_line(None, []) == ("node metrics (JVM GC, compactions, table and SSTable counters) read over JMX; no "
                                    "CQL virtual tables read (Cassandra before 4.0, or CQL unreachable)")


def test_jmx_problem_of_a_named_cluster(tmp_path, monkeypatch):
    monkeypatch.delenv("CASSANDRA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert RemoteCluster("127.0.60.9").jmx_problem() == "no nodetool here (CASSANDRA_HOME unset and none on PATH)"
    tool = tmp_path / "bin" / "nodetool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("CASSANDRA_HOME", str(tmp_path))
    named = RemoteCluster("127.0.60.9", jmx_port=1)
    assert named.jmx_problem() == "JMX port 1 of 127.0.60.9: connection refused"
    with pytest.raises(NotAddressable, match=r"^the garbagecollect and placebo arms need nodetool \(JMX\) on every "
                                             r"node, and this cluster offers none here: JMX port 1 of 127\.0\.60\.9: "
                                             r"connection refused\. Nothing was run"):
        GCStudy().check_cluster(named)


def test_nodes_on_addresses_of_their_own(tmp_path):
    site = LocalCluster("site", "dc1:3", first_address="127.0.60.1", root=tmp_path,
                        node_addresses=["10.60.0.1", "10.60.0.2", "10.60.0.3"])
    assert [n.address for n in site.nodes] == ["10.60.0.1", "10.60.0.2", "10.60.0.3"]
    assert [n.ports.jmx for n in site.nodes] == [7199 + 60 * 256 + k for k in range(3)]
    assert site.contact_points == ["10.60.0.1"]
    with pytest.raises(ConfigError, match=r"^node_addresses=\['10\.60\.0\.1'\]: expected 3 distinct addresses, one "
                                          r"per node of dc1:3$"):
        LocalCluster("site", "dc1:3", root=tmp_path, node_addresses=["10.60.0.1"])
    with pytest.raises(ConfigError, match=r"^node_addresses: 'ten' is not an IPv4 address$"):
        LocalCluster("site", "dc1:1", root=tmp_path, node_addresses=["ten"])
