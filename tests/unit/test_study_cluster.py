"""A study notebook's cluster parameters name its embedded cluster after its shape."""

import pytest

from cassperf.cluster.study import cluster_name_for, study_cluster
from cassperf.errors import ConfigError


@pytest.mark.parametrize(("topology", "name"), [("dc1:6", "cassperf-dc1_6"), ("dc1:3,dc2:3", "cassperf-dc1_3-dc2_3"),
                                                ("dc1:3/2", "cassperf-dc1_3r2"), (" dc1:1 ", "cassperf-dc1_1")])
def test_cluster_name_follows_the_shape(topology, name):
    assert cluster_name_for("cassperf", topology) == name


def test_a_topology_that_cannot_name_a_cluster_is_refused():
    with pytest.raises(ConfigError, match=r"cluster_topology 'dc1:3;rm': expected DC:NODES"):
        cluster_name_for("cassperf", "dc1:3;rm")


def test_contact_points_give_a_remote_cluster_and_start_nothing():
    from cassperf.cluster.remote import RemoteCluster

    c = study_cluster(contact_points="10.0.0.5, 10.0.0.6", local_dc="dc2", cluster_topology="dc1:6")
    assert isinstance(c, RemoteCluster)
    assert c.contact_points == ["10.0.0.5", "10.0.0.6"] and c.local_dc == "dc2"


def test_embedded_cluster_unstarted_has_the_declared_shape(tmp_path, monkeypatch):
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path))
    c = study_cluster(cluster_topology="dc1:3", cluster_heap_mb=512, first_address="127.0.9.1", start=False)
    assert c.name == "cassperf-dc1_3" and c.heap_mb == 512
    assert [n.address for n in c.nodes] == ["127.0.9.1", "127.0.9.2", "127.0.9.3"]
