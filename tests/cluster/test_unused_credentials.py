"""Credentials exported for a cluster that does not ask for them are not used, and the first
session says so once (issue 11, item 8). The node is a real local one run without authentication
(yaml_overrides: AllowAllAuthenticator; embedded clusters ask for their role otherwise)."""

from __future__ import annotations

import warnings

import pytest

from cassperf.cluster import RemoteCluster
from cassperf.cluster.base import UnusedCredentialsWarning

pytestmark = pytest.mark.cluster

NO_AUTH = {"authenticator": "AllowAllAuthenticator", "authorizer": "AllowAllAuthorizer"}
UNUSED = ("CASSPERF_USERNAME is set, but 127.0.3.1 port 9042 did not ask for credentials (the cluster runs "
          "without authentication), so they are not used")


def unused_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(r.message) for r in record if issubclass(r.category, UnusedCredentialsWarning)]


def test_credentials_for_a_cluster_without_authentication_are_reported_once(make_cluster, monkeypatch, caplog):
    local = make_cluster("harden-noauth", "dc1:1", "127.0.3.1", yaml_overrides=NO_AUTH).start()
    handles = [local]
    try:
        monkeypatch.setenv("CASSPERF_USERNAME", "bob")
        monkeypatch.setenv("CASSPERF_PASSWORD", "hunter2")
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            remote = RemoteCluster("127.0.3.1", local_dc="dc1")
            handles.append(remote)
            assert remote.cassandra_version() == "5.0.6"            # connected: the node never asked
            remote.session("system")                                # another session: not said again
            assert remote.topology_frame()["address"].tolist() == ["127.0.3.1"]
        assert unused_warnings(record) == [UNUSED]
        assert all("hunter2" not in str(r.message) for r in record)
        # cassandra-driver's own notice, a WARNING log line per connection, gives way to the one warning
        assert [r.getMessage() for r in caplog.records if "authentication challenge" in r.getMessage()] == []

        # the embedded cluster's handle (run without authentication) passes none; exported ones are reported too
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            local.session()
            local.session("system")
        assert unused_warnings(record) == [UNUSED]

        # nothing exported: nothing said
        monkeypatch.delenv("CASSPERF_USERNAME")
        monkeypatch.delenv("CASSPERF_PASSWORD")
        quiet = RemoteCluster("127.0.3.1", local_dc="dc1")
        handles.append(quiet)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            quiet.session()
        assert unused_warnings(record) == []
    finally:
        for handle in handles:
            handle.close()
