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


def test_the_bound_parameters_reach_the_embedded_cluster_and_not_a_named_one(tmp_path, monkeypatch):
    from cassperf.cluster.study import CLUSTER_PARAMETERS

    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path))
    assert {"cluster_page_cache_mb", "cluster_read_mb_s", "cluster_read_iops"} <= set(CLUSTER_PARAMETERS)
    c = study_cluster(cluster_topology="dc1:1", first_address="127.0.9.1", cluster_page_cache_mb=64,
                      cluster_read_mb_s=50.0, cluster_read_iops=400, start=False)
    assert (c.bounds.page_cache_mb, c.bounds.read_mb_s, c.bounds.read_iops) == (64, 50.0, 400)
    assert c.bounds_line() == ("page cache bound 64 MiB per node (memory cgroup); disk reads throttled to 50 MB/s and "
                               "400 IOPS per node (block I/O cgroup)")
    assert c.description["page_cache_mb"] == 64
    assert study_cluster(cluster_topology="dc1:1", start=False).bounds_line() == \
        "page cache not bounded: each node may use the host's whole page cache"
    remote = study_cluster(contact_points="10.0.0.5", cluster_page_cache_mb=64)
    assert not hasattr(remote, "bounds")


def test_a_bad_bound_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path))
    with pytest.raises(ConfigError, match=r"page_cache_mb=-4: expected whole MiB >= 1 of page cache per node"):
        study_cluster(cluster_topology="dc1:1", cluster_page_cache_mb=-4, start=False)


def test_the_pipeline_needs_the_bounds_a_notebook_asks_for():
    from cassperf.report.clusters import ClusterNeed, cluster_need

    need = cluster_need({"cluster_topology": "dc1:1", "cluster_page_cache_mb": 64, "cluster_read_mb_s": 50})
    assert need == ClusterNeed("cassperf-dc1_1", "dc1:1", "127.0.0.1", None, None, None, 64, 50.0, None)
    assert need.bounds == {"page_cache_mb": 64, "read_mb_s": 50.0, "read_iops": None}
    assert need.label == "cassperf-dc1_1 (dc1:1 on 127.0.0.1, page cache 64 MiB per node)"
    assert cluster_need({"cluster_topology": "dc1:1"}).bounds == {"page_cache_mb": None, "read_mb_s": None,
                                                                 "read_iops": None}
