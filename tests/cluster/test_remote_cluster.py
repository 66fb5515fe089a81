"""A cluster the user names, reached with credentials from the environment. The node is a real
local one (PasswordAuthenticator, its role `cassperf`); RemoteCluster only knows its address and
gets the role's password from CASSPERF_PASSWORD."""

from __future__ import annotations

import json
import warnings

import pytest

from cassperf.cluster import RemoteCluster, connect
from cassperf.cluster.base import UnusedCredentialsWarning
from cassperf.errors import ClusterError, ToolError

pytestmark = pytest.mark.cluster


def test_named_cluster_with_env_credentials_and_clear_errors(make_cluster, monkeypatch, tmp_path):
    local = make_cluster("auth", "dc1:1", "127.0.13.1").start()

    monkeypatch.delenv("CASSPERF_USERNAME", raising=False)
    monkeypatch.delenv("CASSPERF_PASSWORD", raising=False)
    anonymous = RemoteCluster("127.0.13.1", local_dc="dc1")
    with pytest.raises(ClusterError, match=r"^cannot connect to 127\.0\.13\.1 port 9042: 127\.0\.13\.1: the node asks for a username and "
                       r"password and none were given; check CASSPERF_USERNAME / CASSPERF_PASSWORD "
                       r"\(docs/guides/your-cluster\.md\)$"):
        anonymous.session()

    monkeypatch.setenv("CASSPERF_USERNAME", "cassperf")
    monkeypatch.setenv("CASSPERF_PASSWORD", local.access().cql.password)
    named = connect("127.0.13.1", local_dc="dc1")
    try:
        assert isinstance(named, RemoteCluster)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnusedCredentialsWarning)   # the node asked: they were used
            assert named.cassandra_version() == "5.0.6"
        assert list(named.topology_frame()["address"]) == ["127.0.13.1"]
        assert local.access().cql.password not in json.dumps(named.description)
        monkeypatch.setenv("PATH", str(tmp_path))  # no nodetool on PATH, no CASSANDRA_HOME
        monkeypatch.delenv("CASSANDRA_HOME", raising=False)
        with pytest.raises(ToolError, match="set CASSANDRA_HOME to a Cassandra install or put nodetool on PATH"):
            named.nodetool(1, "status")
    finally:
        named.close()

    monkeypatch.setenv("CASSPERF_PASSWORD", "wrong")
    with pytest.raises(ClusterError, match=r"^cannot connect to 127\.0\.13\.1 port 9042: 127\.0\.13\.1: the node refused "
                                           r"the username and password \(bad credentials\); check CASSPERF_USERNAME"):
        RemoteCluster("127.0.13.1", local_dc="dc1").session()


def test_unreachable_cluster_names_the_contact_points():
    with pytest.raises(ClusterError, match=r"^cannot connect to 127\.0\.13\.99 port 9042: 127\.0\.13\.99: connection refused; check "
                       r"that the nodes are up and the contact points and port are right$"):
        RemoteCluster(["127.0.13.99"]).session()
