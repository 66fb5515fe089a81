"""A handle whose first connection failed connects afresh the next time: the driver shuts itself
down when its control connection cannot connect, and a cached one would answer every later call
"Cluster is already shut down" (what a study saw of a node that reset its first connection)."""

from __future__ import annotations

import socket

import pytest

from cassperf.cluster.remote import RemoteCluster
from cassperf.errors import ClusterError


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_failed_connect_leaves_no_dead_driver_behind() -> None:
    cluster = RemoteCluster(["127.0.0.1"], port=_free_port())
    cluster.driver_cluster = lambda **kw: type(cluster).driver_cluster(cluster, connect_timeout=2, **kw)
    for _ in range(2):
        with pytest.raises(ClusterError) as err:
            cluster.session()
        assert "already shut down" not in str(err.value)
        assert cluster._driver is None
