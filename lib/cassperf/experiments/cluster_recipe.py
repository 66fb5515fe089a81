"""What a worker on another process or host needs to make its own handle of the study's cluster.

Handles hold sockets and processes, so they are never sent to a Dask worker: ``handle_recipe``
describes the cluster in plain data (no credentials), and ``make_handle`` makes the handle again
where the client runs (experiments.clients places the clients, experiments.network measures
between the DCs with the same recipe).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cassperf.errors import ConfigError


def handle_recipe(cluster: Any, over_network: bool = False) -> tuple[str, dict[str, Any]]:
    """What a worker needs to make its own handle of `cluster` (handles hold sockets and
    processes: they are not sent, they are made again). ``over_network``: the workers are on
    client hosts, which reach an embedded cluster as a user's cluster (each DC's node addresses,
    port, its CA), never through its folder. No credentials inside (cluster_role)."""
    from cassperf.cluster.local import LocalCluster
    from cassperf.cluster.remote import RemoteCluster

    if isinstance(cluster, LocalCluster) and over_network:
        dcs = list(dict.fromkeys(n.spec.dc for n in cluster.nodes))
        return "reach", {"contact_points": {dc: cluster.dc_contact_points(dc) for dc in dcs}, "port": cluster.port,
                         "tls": cluster.tls}
    if isinstance(cluster, LocalCluster):
        return "local", {"name": cluster.name, "topology": cluster.topology.spec(), "version": cluster.version,
                         "heap_mb": cluster.heap_mb, "first_address": cluster.first_address,
                         "root": str(cluster.root.parent), "jolokia": cluster.use_jolokia,
                         "inter_dc_rtt_ms": cluster.network.rtt_ms if cluster.network is not None else None,
                         "tls": cluster.tls_enabled, "yaml_overrides": cluster.yaml_overrides}
    if isinstance(cluster, RemoteCluster):
        return "remote", {"contact_points": list(cluster.contact_points), "port": cluster.port,
                          "local_dc": cluster.local_dc}
    raise ConfigError(f"cannot place clients for a {type(cluster).__name__}: expected a LocalCluster or RemoteCluster")


def make_handle(recipe: tuple[str, dict[str, Any]], dc: str | None = None) -> Any:
    """The handle of `recipe` (handle_recipe); a "reach" recipe gives `dc`'s nodes as contact
    points with `dc` local (every DC's when None)."""
    kind, kwargs = recipe
    if kind == "reach":
        from cassperf.cluster.remote import RemoteCluster

        points = kwargs["contact_points"]
        return RemoteCluster(points[dc] if dc else [a for dc_points in points.values() for a in dc_points],
                             port=kwargs["port"], local_dc=dc, tls=kwargs["tls"])
    if kind == "local":
        from cassperf.cluster.local import LocalCluster

        kw = dict(kwargs)
        return LocalCluster(kw.pop("name"), kw.pop("topology"), root=Path(kw.pop("root")), **kw)
    from cassperf.cluster.remote import RemoteCluster

    return RemoteCluster(kwargs["contact_points"], port=kwargs["port"], local_dc=kwargs["local_dc"])
