"""Options every Python-driver connection to a cluster shares. A module of its own: the engine's
worker processes import it, and cluster.base would bring pandas with it (about 0.25 s each)."""

from __future__ import annotations

# Timeouts, s. The control connection's first queries (system.local, peers, schema) took over the
# driver's 2 s on a node that had just become CQL-ready on 2 cores busy starting more nodes: 03's
# and 04's notebook tests failed on it beside another node test.
DRIVER_TIMEOUTS_S: dict[str, float] = {"connect_timeout": 10, "control_connection_timeout": 10}
