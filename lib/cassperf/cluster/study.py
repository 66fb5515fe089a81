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
                      "cluster_heap_mb", "cassandra_version", "inter_dc_rtt_ms", "cluster_page_cache_mb",
                      "cluster_read_mb_s", "cluster_read_iops")


def cluster_name_for(base: str, topology: str, inter_dc_rtt_ms: float | None = None) -> str:
    """``cassperf`` + ``dc1:6`` -> ``cassperf-dc1_6``; ``dc1:3,dc2:3`` -> ``cassperf-dc1_3-dc2_3``;
    ``dc1:3/2`` -> ``cassperf-dc1_3r2``; with a delay between the DCs (``inter_dc_rtt_ms=27``)
    ``cassperf-dc1_3-dc2_3-rtt27`` (a cluster with distance is another cluster)."""
    slug = re.sub(r"\s+", "", topology).replace(":", "_").replace(",", "-").replace("/", "r")
    if not re.fullmatch(r"[A-Za-z0-9_\-]+", slug):
        raise ConfigError(f"cluster_topology {topology!r}: expected DC:NODES[,DC:NODES...], e.g. 'dc1:3'")
    if inter_dc_rtt_ms:
        slug += f"-rtt{inter_dc_rtt_ms:g}".replace(".", "p")
    return f"{base}-{slug}"


def distance_problem(inter_dc_rtt_ms: float | None) -> str | None:
    """Why this machine cannot put ``inter_dc_rtt_ms`` between the embedded cluster's DCs (not
    root, no iproute2, no namespaces, neither netem nor TUN), one line; None when it can or
    when no distance is asked for. A study then runs without distance and says so."""
    if not inter_dc_rtt_ms:
        return None
    from cassperf.cluster import netns

    try:
        netns.check_support(float(inter_dc_rtt_ms))
    except ConfigError as exc:
        return str(exc)
    return None


def study_cluster(*, contact_points: str = "", local_dc: str | None = None, cluster_name: str = "cassperf",
                  first_address: str = "127.0.0.1", cluster_topology: str = "dc1:1", cluster_heap_mb: int = 1024,
                  cassandra_version: str | None = None, inter_dc_rtt_ms: float | None = None,
                  cluster_page_cache_mb: int | None = None, cluster_read_mb_s: float | None = None,
                  cluster_read_iops: int | None = None, start: bool = True, **local_options: Any) -> ClusterHandle:
    """A RemoteCluster when ``contact_points`` names one (credentials from the environment),
    else the embedded LocalCluster of this shape, started or reused (``start=False``: not
    started, e.g. for analyse_only; before a start, what dead owners left is released and a running
    cluster of this shape that a dead owner left is adopted: cassperf.cluster.reaper). ``inter_dc_rtt_ms`` (> 0): the DCs of the embedded cluster
    live that round trip apart (LocalCluster(inter_dc_rtt_ms=...); 0 or None: no distance; where
    this machine cannot, see distance_problem, the cluster has none: the study says so).
    ``cluster_page_cache_mb``: each embedded node's page cache bound to that many MiB (0 or None:
    no bound), and
    ``cluster_read_mb_s`` / ``cluster_read_iops`` its disk reads throttled (LocalCluster's
    page_cache_mb, read_mb_s, read_iops; where the machine refuses, the cluster's
    ``bounds_line()`` says so); a named cluster keeps its own memory and disks.
    ``local_options`` go to LocalCluster (yaml_overrides, jvm_options, ...)."""
    if contact_points.strip():
        from cassperf.cluster.remote import RemoteCluster

        return RemoteCluster([p.strip() for p in contact_points.split(",") if p.strip()], local_dc=local_dc or None)
    from cassperf.cluster.jars import DEFAULT_VERSION
    from cassperf.cluster.local import LocalCluster

    rtt = float(inter_dc_rtt_ms) if inter_dc_rtt_ms and distance_problem(inter_dc_rtt_ms) is None else None
    cluster = LocalCluster(cluster_name_for(cluster_name, cluster_topology, rtt), cluster_topology,
                           version=cassandra_version or DEFAULT_VERSION, heap_mb=cluster_heap_mb,
                           first_address=first_address, inter_dc_rtt_ms=rtt, page_cache_mb=cluster_page_cache_mb or None,
                           read_mb_s=cluster_read_mb_s or None, read_iops=cluster_read_iops or None, **local_options)
    if not start:
        return cluster
    from cassperf.cluster.reaper import reap

    reap([cluster.root])
    return cluster.start()
