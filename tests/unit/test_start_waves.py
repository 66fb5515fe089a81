"""The order an embedded cluster's nodes start in (cluster.local.start_waves): every DC's seed at
once, then each other node alone, in topology order."""

from __future__ import annotations

from pathlib import Path

from cassperf.cluster.local import LocalCluster, start_waves


def names(topology: str, tmp_path: Path) -> list[list[str]]:
    cluster = LocalCluster("waves", topology, first_address="127.0.97.1", root=tmp_path)
    return [[n.name for n in wave] for wave in start_waves(cluster.nodes)]


def test_one_dc_starts_one_node_at_a_time(tmp_path: Path) -> None:
    assert names("dc1:3", tmp_path) == [["node1"], ["node2"], ["node3"]]


def test_each_dcs_seed_starts_together_then_the_others_in_topology_order(tmp_path: Path) -> None:
    assert names("dc1:2,dc2:1,dc3:2", tmp_path) == [["node1", "node3", "node4"], ["node2"], ["node5"]]


def test_nodes_already_running_are_not_in_a_wave(tmp_path: Path) -> None:
    nodes = LocalCluster("waves", "dc1:2,dc2:2", first_address="127.0.97.1", root=tmp_path).nodes
    assert [[n.name for n in w] for w in start_waves([nodes[1], nodes[2], nodes[3]])] == [["node3"], ["node2"],
                                                                                            ["node4"]]
