"""The embedded clusters the report pipeline runs notebooks on.

A notebook declares the cluster it needs in its parameters: `cluster_topology` (no such
parameter: it needs none), `cluster_name` (base name), `first_address`, `cluster_heap_mb`,
`cassandra_version`, `inter_dc_rtt_ms` (> 0: the DCs live that round trip apart, in network
namespaces), `cluster_page_cache_mb`, `cluster_read_mb_s`, `cluster_read_iops` (each node's page
cache bound and disk reads throttled: cassperf.cluster.cgroups), and `contact_points` (non-empty:
the user's own cluster, nothing started). A running cluster started here with another heap or
other bounds is started again with the ones asked.
The local cluster's name comes from the base name and the shape (`cluster_name_for`), so
clusters of different shapes never share a folder.

Before the first notebook the pipeline releases what a killed run left (cassperf.cluster.reaper:
one line each), but for the clusters it needs, which it adopts. Before a notebook it reuses a
running cluster of that name, or stops the clusters it started itself for earlier notebooks
(other shapes: their addresses would clash) and starts the one needed. At the end it stops
every cluster it started or adopted and leaves alone what ran before (a live owner's, or one
kept by `cassperf cluster start`).

A notebook that compares deployments (it declares a `deployments` parameter, e.g. 04) starts
and stops a cluster of its own per deployment (`cassperf.experiments.deployment`): the pipeline
provides none, runs it after the notebooks that need a pipeline cluster, and first stops the
clusters it started, which would otherwise share the CPU and the addresses with its nodes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def cluster_name_for(base: str, topology: str, inter_dc_rtt_ms: float | None = None) -> str:
    """The local cluster's name for a base name and a topology, e.g. cassperf-dc1_6."""
    from cassperf.cluster.study import cluster_name_for as name_for

    return name_for(base, topology, inter_dc_rtt_ms)


@dataclass(frozen=True)
class ClusterNeed:
    """An embedded cluster a notebook needs."""

    name: str
    topology: str
    first_address: str
    heap_mb: int | None
    version: str | None
    inter_dc_rtt_ms: float | None = None
    page_cache_mb: int | None = None
    read_mb_s: float | None = None
    read_iops: int | None = None

    @property
    def label(self) -> str:
        heap = f", heap {self.heap_mb} MB" if self.heap_mb else ""
        rtt = f", {self.inter_dc_rtt_ms:g} ms between DCs" if self.inter_dc_rtt_ms else ""
        cache = f", page cache {self.page_cache_mb} MiB per node" if self.page_cache_mb else ""
        return f"{self.name} ({self.topology} on {self.first_address}{heap}{rtt}{cache})"

    @property
    def bounds(self) -> dict[str, float | int | None]:
        """The bounds asked, as cluster.json records those a cluster was started with."""
        return {"page_cache_mb": self.page_cache_mb, "read_mb_s": self.read_mb_s, "read_iops": self.read_iops}


def cluster_need(effective: dict[str, Any]) -> ClusterNeed | None:
    """The embedded cluster these (effective) notebook parameters ask for, or None: no
    `cluster_topology` parameter, or `contact_points` names the user's own cluster."""
    topology = effective.get("cluster_topology")
    if not topology or str(effective.get("contact_points") or "").strip() or effective.get("analyse_only"):
        return None
    base = effective.get("cluster_name") or "cassperf"
    heap = effective.get("cluster_heap_mb")
    from cassperf.cluster.study import distance_problem

    rtt = effective.get("inter_dc_rtt_ms") or None
    rtt = float(rtt) if rtt and distance_problem(rtt) is None else None    # not here: the notebook says why
    cache, read_mb_s, read_iops = (effective.get(k) for k in ("cluster_page_cache_mb", "cluster_read_mb_s",
                                                               "cluster_read_iops"))
    return ClusterNeed(cluster_name_for(base, topology, rtt), str(topology),
                       effective.get("first_address") or "127.0.0.1", int(heap) if heap else None,
                       effective.get("cassandra_version") or None, rtt, int(cache) if cache else None,
                       float(read_mb_s) if read_mb_s else None, int(read_iops) if read_iops else None)


#: The parameter by which a notebook declares that it starts its own clusters, one per deployment.
OWN_CLUSTERS_PARAMETER = "deployments"


def starts_own_clusters(effective: dict[str, Any]) -> bool:
    """The notebook starts embedded clusters itself (see the module doc): it declares
    `deployments`, names no cluster of the user's and is not asked to only analyse."""
    return (OWN_CLUSTERS_PARAMETER in effective and bool(str(effective.get(OWN_CLUSTERS_PARAMETER) or "").strip())
            and not str(effective.get("contact_points") or "").strip() and not effective.get("analyse_only"))


@dataclass(frozen=True)
class Provision:
    """What providing a cluster took: reused or started, and the seconds spent (stops included)."""

    need: ClusterNeed
    started: bool
    seconds: float
    stopped: tuple[str, ...]


def _running_heap_mb(recorded: dict[str, Any]) -> int | None:
    """The heap per node (MB) a running cluster was started with (its recorded state), if known."""
    try:
        return int(recorded["heap_mb"])
    except (ValueError, KeyError, TypeError):
        return None


def _running_bounds(recorded: dict[str, Any]) -> dict[str, Any]:
    """The page-cache bound and read throttle a running cluster was started with (its recorded
    state; None each where it has none)."""
    return {k: recorded.get(k) for k in ("page_cache_mb", "read_mb_s", "read_iops")}


class PipelineClusters:
    """The clusters one pipeline run provides; `stop_all()` stops only those it started or
    adopted from a dead owner. `log` gets what was found of dead owners, one line each."""

    def __init__(self, root: Path | None = None, log: Callable[[str], None] | None = None) -> None:
        self.root = root
        self.log = log
        self.started: dict[str, Any] = {}     # name -> LocalCluster started (or adopted) here

    def release_left(self, needs: Iterable[ClusterNeed]) -> list[str]:
        """Release what dead owners left, but for the clusters of `needs` (provide adopts them)."""
        from cassperf import config
        from cassperf.cluster import owners
        from cassperf.cluster.reaper import reap

        base = self.root or config.clusters_dir()
        return reap([base / need.name for need in needs], say=self.log or owners.say)

    def _cluster(self, need: ClusterNeed) -> Any:
        from cassperf.cluster.local import LocalCluster

        kwargs: dict[str, Any] = {"first_address": need.first_address}
        if need.heap_mb:
            kwargs["heap_mb"] = need.heap_mb
        if need.version:
            kwargs["version"] = need.version
        if self.root is not None:
            kwargs["root"] = self.root
        if need.inter_dc_rtt_ms:
            kwargs["inter_dc_rtt_ms"] = need.inter_dc_rtt_ms
        kwargs.update(need.bounds)
        cluster = LocalCluster(need.name, need.topology, **kwargs)
        if self.log is not None:
            cluster.say = self.log
        return cluster

    def provide(self, need: ClusterNeed) -> Provision:
        """Reuse the running cluster `need.name`, or start it (after stopping the clusters this
        pipeline started for other shapes). Raises ClusterError/ConfigError as LocalCluster does."""
        t0 = time.monotonic()
        cluster = self._cluster(need)
        stopped = []
        if all(s.up for s in cluster.status()):
            recorded = cluster.recorded_state()          # its cluster.json, read once
            running_heap = _running_heap_mb(recorded)
            running_bounds = _running_bounds(recorded)
            if running_bounds != need.bounds:
                if need.name in self.started:     # ours: started again with the bounds asked
                    self.started.pop(need.name).stop()
                    stopped.append(need.name)
                elif self.log is not None:        # the user's: reused as it runs, and said
                    self.log(f"{need.name} runs with bounds {running_bounds}, not the {need.bounds} asked; reused as "
                             f"it runs (stop it to get them)")
            if not stopped and need.heap_mb and running_heap and running_heap != need.heap_mb:
                if need.name in self.started:     # ours, started for another notebook: restart with the heap asked
                    self.started.pop(need.name).stop()
                    stopped.append(need.name)
                else:                             # the user's: reused as it runs, and said
                    cluster.heap_mb = running_heap
                    if self.log is not None:
                        self.log(f"{need.name} runs with {running_heap} MB heaps, not the {need.heap_mb} MB asked; "
                                 f"reused as it runs (stop it to get {need.heap_mb} MB)")
            if not stopped:
                cluster.start()   # checks that the running cluster is the one asked for; starts nothing
                if cluster.adopted:                   # a dead owner's: this run stops it at the end
                    self.started[need.name] = cluster
                return Provision(need, False, time.monotonic() - t0, ())
        for name in [n for n in self.started if n != need.name]:
            self.started.pop(name).stop()
            stopped.append(name)
        self.started[need.name] = cluster
        cluster.start()
        return Provision(need, True, time.monotonic() - t0, tuple(stopped))

    def stop_all(self) -> list[str]:
        """Stop every cluster this pipeline started; return their names."""
        names = list(self.started)
        errors = []
        for name in names:
            try:
                self.started.pop(name).stop()
            except Exception as exc:  # keep stopping the others; report at the end
                errors.append(f"{name}: {exc}")
        if errors:
            from cassperf.errors import ClusterError
            raise ClusterError("could not stop " + "; ".join(errors))
        return names
