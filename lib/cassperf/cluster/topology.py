"""Cluster topology: parse a spec such as ``dc1:3,dc2:3`` into nodes with addresses and racks.

Nodes get consecutive loopback addresses (127.0.0.1, 127.0.0.2, ... by default), in DC order;
the first node of each DC is that DC's seed. Every node is in rack ``rack1`` unless a DC is
written ``dc1:3/2`` (3 nodes spread over 2 racks, round-robin).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from cassperf.errors import ConfigError

# dc1:3   or   dc1:3/2  (nodes over racks)
_DC_RE = re.compile(r"^(?P<dc>[A-Za-z][A-Za-z0-9_\-]*):(?P<nodes>[^/]*)(?:/(?P<racks>.*))?$")

_EXAMPLE = "expected DC:NODES[,DC:NODES...], e.g. 'dc1:3' or 'dc1:3,dc2:3'"


@dataclass(frozen=True)
class DataCenter:
    name: str
    nodes: int
    racks: int = 1


@dataclass(frozen=True)
class NodeSpec:
    index: int          # 1-based, cluster-wide
    name: str           # node1, node2, ...
    address: str        # listen/rpc address on loopback
    dc: str
    rack: str
    seed: bool


@dataclass(frozen=True)
class Topology:
    datacenters: tuple[DataCenter, ...]

    @property
    def node_count(self) -> int:
        return sum(dc.nodes for dc in self.datacenters)

    def spec(self) -> str:
        return ",".join(f"{dc.name}:{dc.nodes}" + (f"/{dc.racks}" if dc.racks != 1 else "")
                        for dc in self.datacenters)

    def nodes(self, first_address: str = "127.0.0.1") -> list[NodeSpec]:
        base = ipaddress.IPv4Address(first_address)
        out: list[NodeSpec] = []
        index = 0
        for dc in self.datacenters:
            for i in range(dc.nodes):
                index += 1
                address = base + (index - 1)
                if not address.is_loopback:
                    raise ConfigError(f"node{index} would get address {address}, outside 127.0.0.0/8; "
                                      f"choose a lower first address than {first_address}")
                out.append(NodeSpec(index=index, name=f"node{index}", address=str(address), dc=dc.name,
                                    rack=f"rack{i % dc.racks + 1}", seed=(i == 0)))
        return out

    def __str__(self) -> str:
        return self.spec()


def parse_topology(spec: str) -> Topology:
    """Parse ``dc1:3,dc2:3`` (optionally ``dc1:3/2`` for racks). Raises ConfigError naming the
    bad part: ``dc1:0``, ``dc1:x``, ``:3``, duplicate DC names, an empty spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"topology is empty; {_EXAMPLE}")
    dcs: list[DataCenter] = []
    seen: set[str] = set()
    for part in (p.strip() for p in spec.split(",")):
        m = _DC_RE.match(part)
        if not m:
            if part.startswith(":") or not part:
                raise ConfigError(f"topology {spec!r}: {part!r} has no data center name; {_EXAMPLE}")
            raise ConfigError(f"topology {spec!r}: cannot read {part!r}; {_EXAMPLE} "
                              "(DC names start with a letter: letters, digits, '_' and '-')")
        name, nodes_s, racks_s = m.group("dc"), m.group("nodes"), m.group("racks")
        if not nodes_s.isdigit():
            raise ConfigError(f"topology {spec!r}: node count of {name} is {nodes_s!r}, expected a whole number >= 1")
        nodes = int(nodes_s)
        if nodes < 1:
            raise ConfigError(f"topology {spec!r}: {name} has {nodes} nodes, expected at least 1")
        racks = 1
        if racks_s is not None:
            if not racks_s.isdigit() or not 1 <= int(racks_s) <= nodes:
                raise ConfigError(f"topology {spec!r}: racks of {name} is {racks_s!r}, expected 1..{nodes}")
            racks = int(racks_s)
        if name in seen:
            raise ConfigError(f"topology {spec!r}: data center {name!r} is named twice; give each DC one entry")
        seen.add(name)
        dcs.append(DataCenter(name, nodes, racks))
    return Topology(tuple(dcs))
