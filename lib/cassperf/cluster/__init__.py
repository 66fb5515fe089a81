"""Cluster control: the embedded LocalCluster, a RemoteCluster the user names, and one
interface (ClusterHandle) that experiments see for both.

The names below are imported on first use (PEP 562): the engine's worker processes import
``cassperf.cluster.tls`` alone, and importing every cluster module with it (pandas among them)
cost each worker about 0.3 s of CPU at the start of every run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cassperf.cluster.base import ClusterHandle
    from cassperf.cluster.local import LocalCluster, NodeStatus
    from cassperf.cluster.remote import RemoteCluster, connect
    from cassperf.cluster.tls import TlsOptions
    from cassperf.cluster.topology import Topology, parse_topology

_WHERE = {"ClusterHandle": "base", "LocalCluster": "local", "NodeStatus": "local", "RemoteCluster": "remote",
          "connect": "remote", "TlsOptions": "tls", "Topology": "topology", "parse_topology": "topology"}

__all__ = ["ClusterHandle", "LocalCluster", "NodeStatus", "RemoteCluster", "TlsOptions", "connect", "Topology",
           "parse_topology"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'cassperf.cluster' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"cassperf.cluster.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
