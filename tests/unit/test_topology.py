import pytest

from cassperf.cluster.topology import parse_topology
from cassperf.errors import ConfigError


def test_two_dcs_get_consecutive_loopback_addresses_and_one_seed_each():
    topo = parse_topology("dc1:2,dc2:1")
    nodes = topo.nodes()
    assert [(n.name, n.address, n.dc, n.rack, n.seed) for n in nodes] == [
        ("node1", "127.0.0.1", "dc1", "rack1", True),
        ("node2", "127.0.0.2", "dc1", "rack1", False),
        ("node3", "127.0.0.3", "dc2", "rack1", True),
    ]
    assert topo.node_count == 3
    assert topo.spec() == "dc1:2,dc2:1"


def test_racks_are_assigned_round_robin_and_first_address_moves_the_range():
    nodes = parse_topology("dc1:3/2").nodes("127.0.1.1")
    assert [(n.address, n.rack) for n in nodes] == [("127.0.1.1", "rack1"), ("127.0.1.2", "rack2"),
                                                    ("127.0.1.3", "rack1")]


@pytest.mark.parametrize("spec, message", [
    ("dc1:0", "topology 'dc1:0': dc1 has 0 nodes, expected at least 1"),
    ("dc1:x", "topology 'dc1:x': node count of dc1 is 'x', expected a whole number >= 1"),
    (":3", "topology ':3': ':3' has no data center name; expected DC:NODES[,DC:NODES...], e.g. 'dc1:3' or 'dc1:3,dc2:3'"),
    ("dc1:1,dc1:2", "topology 'dc1:1,dc1:2': data center 'dc1' is named twice; give each DC one entry"),
    ("", "topology is empty; expected DC:NODES[,DC:NODES...], e.g. 'dc1:3' or 'dc1:3,dc2:3'"),
    ("dc1", "topology 'dc1': cannot read 'dc1'; expected DC:NODES"),
    ("dc1:3/4", "topology 'dc1:3/4': racks of dc1 is '4', expected 1..3"),
])
def test_malformed_topologies_are_rejected_with_the_bad_part_named(spec, message):
    with pytest.raises(ConfigError) as err:
        parse_topology(spec)
    assert str(err.value).startswith(message)


def test_addresses_outside_loopback_are_refused():
    with pytest.raises(ConfigError, match=r"node2 would get address 128\.0\.0\.0, outside 127\.0\.0\.0/8"):
        parse_topology("dc1:2").nodes("127.255.255.255")
