"""The cluster a study notebook runs against, from its parameters.

Every study notebook declares, in its ``parameters`` cell, the embedded cluster it needs
(``cluster_topology``, ``cluster_heap_mb``, ``cassandra_version``) and how to reach a real one
instead (``contact_points``, ``local_dc``). The report pipeline reads the same parameters to
start, reuse or replace embedded clusters between notebooks; a notebook run on its own (in
JupyterLab, or by plain papermill) starts its cluster itself through :func:`study_cluster`.

An embedded cluster is named after its base name and its shape (:func:`cluster_name_for`), so
a 6-node study and a 3-node study never share a name (LocalCluster refuses one name with two
topologies).
"""

from __future__ import annotations

import re
from typing import Any

from cassperf.cluster.base import ClusterHandle
from cassperf.errors import ConfigError

#: The parameters a notebook uses to declare its cluster.
CLUSTER_PARAMETERS = ("contact_points", "local_dc", "cluster_name", "first_address", "cluster_topology",
                      "cluster_heap_mb", "cassandra_version")


def cluster_name_for(base: str, topology: str) -> str:
    """``cassperf`` + ``dc1:6`` -> ``cassperf-dc1_6``; ``dc1:3,dc2:3`` -> ``cassperf-dc1_3-dc2_3``;
    ``dc1:3/2`` -> ``cassperf-dc1_3r2``."""
    slug = re.sub(r"\s+", "", topology).replace(":", "_").replace(",", "-").replace("/", "r")
    if not re.fullmatch(r"[A-Za-z0-9_\-]+", slug):
        raise ConfigError(f"cluster_topology {topology!r}: expected DC:NODES[,DC:NODES...], e.g. 'dc1:3'")
    return f"{base}-{slug}"


def study_cluster(*, contact_points: str = "", local_dc: str | None = None, cluster_name: str = "cassperf",
                  first_address: str = "127.0.0.1", cluster_topology: str = "dc1:1", cluster_heap_mb: int = 1024,
                  cassandra_version: str | None = None, start: bool = True, **local_options: Any) -> ClusterHandle:
    """A RemoteCluster when ``contact_points`` names one (credentials from the environment),
    else the embedded LocalCluster of this shape, started or reused (``start=False``: not
    started, e.g. for analyse_only). ``local_options`` go to LocalCluster (yaml_overrides,
    jvm_options, ...)."""
    if contact_points.strip():
        from cassperf.cluster.remote import RemoteCluster

        return RemoteCluster([p.strip() for p in contact_points.split(",") if p.strip()], local_dc=local_dc or None)
    from cassperf.cluster.local import DEFAULT_VERSION, LocalCluster

    cluster = LocalCluster(cluster_name_for(cluster_name, cluster_topology), cluster_topology,
                           version=cassandra_version or DEFAULT_VERSION, heap_mb=cluster_heap_mb,
                           first_address=first_address, **local_options)
    return cluster.start() if start else cluster
