"""Cluster control: the embedded LocalCluster, a RemoteCluster the user names, and one
interface (ClusterHandle) that experiments see for both."""

from cassperf.cluster.base import ClusterHandle
from cassperf.cluster.local import LocalCluster, NodeStatus
from cassperf.cluster.remote import RemoteCluster, connect
from cassperf.cluster.tls import TlsOptions
from cassperf.cluster.topology import Topology, parse_topology

__all__ = ["ClusterHandle", "LocalCluster", "NodeStatus", "RemoteCluster", "TlsOptions", "connect", "Topology", "parse_topology"]
