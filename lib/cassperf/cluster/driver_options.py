"""Options the cluster's own Python-driver connections share (ClusterHandle.driver_cluster, a
LocalCluster's ring wait). The engine's driver backend keeps its own (connect_timeout only): with
this control-connection timeout there, test_node_resources' RF-1 run counted 0.77 local writes per
write instead of 1.0 (cause not found, 2026-11-28)."""

from __future__ import annotations

# Timeouts, s. The control connection's first queries (system.local, peers, schema) took over the
# driver's 2 s on a node that had just become CQL-ready on 2 cores busy starting more nodes: 03's
# and 04's notebook tests failed on it beside another node test.
DRIVER_TIMEOUTS_S: dict[str, float] = {"connect_timeout": 10, "control_connection_timeout": 10}
