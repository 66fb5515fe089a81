"""What a study's setting was on each of its clusters, measured once the data is loaded: the page
cache each node may hold (its memory cgroup's bound, cassperf.cluster.cgroups) and the size of
each keyspace's data on each node's disk. A report states both, and the cache checks
(cassperf.analysis.manipulation) weigh the one against the other.

    measure_setting(cluster, keyspaces) -> {"bounds": line, "page_cache_mb": 64 | None,
                                            "read_mb_s": ..., "read_iops": ...,
                                            "data_mb": {keyspace: {node: MB}}}

A named cluster's disks and memory are not this machine's: its bounds line says so and its
data sizes are not measured (an empty mapping).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def folder_mb(folder: Path) -> float:
    """MB (10^6 bytes) of the files under ``folder`` (0 when it is absent)."""
    if not folder.is_dir():
        return 0.0
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def measure_setting(cluster: Any, keyspaces: Iterable[str]) -> dict[str, Any]:
    """The setting of ``cluster`` (module doc)."""
    nodes = getattr(cluster, "nodes", None)
    local = bool(nodes) and hasattr(nodes[0], "layout")
    state: Mapping[str, Any] = cluster.bounds_state() if hasattr(cluster, "bounds_state") else {}
    line = cluster.bounds_line() if hasattr(cluster, "bounds_line") else \
        "a named cluster: its page cache and disks are its own, not bounded or measured here"
    data = {ks: {n.name: round(folder_mb(n.layout.data / ks), 3) for n in nodes} for ks in dict.fromkeys(keyspaces)} \
        if local else {}
    return {"bounds": line, "page_cache_mb": state.get("page_cache_mb"), "read_mb_s": state.get("read_mb_s"),
            "read_iops": state.get("read_iops"), "data_mb": data}


def data_per_node_mb(setting: Mapping[str, Any], keyspace: str) -> float:
    """The largest data of ``keyspace`` any node held (MB), NaN when not measured."""
    sizes = (setting.get("data_mb") or {}).get(keyspace) or {}
    return max(sizes.values()) if sizes else float("nan")
