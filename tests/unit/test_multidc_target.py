"""Where an engine client sends its load: the WorkloadSpec's local DC, not the handle's first DC
(issue 13: a client of dc2 routes DC-aware and token-aware to dc2's nodes). No nodes needed:
the handles are built, never started."""

from __future__ import annotations

import pytest

from cassperf.cluster import LocalCluster
from cassperf.cluster.remote import RemoteCluster
from cassperf.errors import ConfigError
from cassperf.workload.backends.base import Target


def test_a_client_of_dc2_targets_dc2s_nodes_and_routes_to_dc2() -> None:
    cluster = LocalCluster("multidc-target", "dc1:2,dc2:2", first_address="127.0.21.1")
    role = str(cluster.root / "access" / "cql.credentials")      # the cluster's role, read by the client itself
    assert Target.of(cluster) == Target(("127.0.21.1", "127.0.21.3"), 9042, "dc1", credentials_file=role)
    assert Target.of(cluster, "dc2") == Target(("127.0.21.3",), 9042, "dc2", credentials_file=role)
    assert Target.of(cluster, "dc1") == Target(("127.0.21.1",), 9042, "dc1", credentials_file=role)


def test_a_dc_the_cluster_has_not_is_refused_naming_its_dcs() -> None:
    cluster = LocalCluster("multidc-target", "dc1:1,dc2:1", first_address="127.0.21.1")
    with pytest.raises(ConfigError, match=r"^cluster multidc-target has no data center 'dc3'; DCs: dc1, dc2$"):
        Target.of(cluster, "dc3")


def test_with_distance_the_dc2_client_targets_dc2s_namespace_addresses() -> None:
    cluster = LocalCluster("multidc-target", "dc1:1,dc2:2", first_address="127.0.21.1", inter_dc_rtt_ms=27)
    assert Target.of(cluster, "dc2").contact_points == ("10.21.2.1",)
    assert Target.of(cluster, "dc2").local_dc == "dc2"


def test_a_remote_cluster_keeps_its_contact_points_and_takes_the_specs_dc() -> None:
    remote = RemoteCluster("10.0.0.4,10.1.0.4", local_dc="dc1")
    for dc, want in (("dc2", "dc2"), (None, "dc1")):
        target = Target.of(remote, dc)
        assert (target.contact_points, target.port, target.local_dc) == (("10.0.0.4", "10.1.0.4"), 9042, want)
