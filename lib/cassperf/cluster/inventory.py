"""Every local cluster this data folder knows, and its state: `cassperf cluster status` with no name.

Known are the cluster folders under <data>/clusters that hold a cluster.json, and every owner
record (cassperf.cluster.owners): clusters elsewhere (on a loop mount, under a test's folder),
DC networks and loop filesystems. One line each, read-only (nothing is stopped here):

    cluster NAME: running, 1 of 1 nodes (node1 127.0.0.1 pid 4242); owner pid 99 (cassperf report), alive
    cluster NAME: stopped, 0 of 3 nodes; no owner record
    cluster NAME: running, ...; folder F on loop filesystem /dev/loop3 at M; owner pid 7 (python -c), dead
    DC network NETID: namespaces A, B, C, delay router pid 77; owner pid 7 (python -c), dead
    loop filesystem /dev/loop3 at M: mounted, backing B; owner pid 7 (python -c), dead
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cassperf import config
from cassperf.cluster import netns, owners, state_file
from cassperf.cluster.owners import Record
from cassperf.errors import CassperfError

#: the closing line when an owner is dead
DEAD_NOTE = ("what a dead owner left is released by the next run (cassperf report, a study, cassperf cluster "
             "start|stop)")


def known() -> dict[str, tuple[str, Path, dict[str, Any], Record | None]]:
    """owner key -> (cluster name, folder, how it was started, its owner record or None), for
    every folder under <data>/clusters with a cluster.json and every cluster owner record."""
    found: dict[str, tuple[str, Path, dict[str, Any], Record | None]] = {}
    base = config.clusters_dir()
    if base.is_dir():
        for folder in sorted(base.iterdir()):
            state = state_file.read(folder) if folder.is_dir() else None
            if state is not None:
                found[netns.network_id(folder.name, folder)] = (folder.name, folder, state, None)
    for record in owners.records("cluster"):
        folder = Path(record.data["folder"])
        state = state_file.read(folder) or record.data.get("state") or {}
        found[record.key] = (record.data.get("name") or folder.name, folder, state, record)
    return found


def _network_part(netid: str) -> str:
    parts = netns.leftover_namespaces(netid) + [f"delay router pid {pid}" for pid in netns.router_pids(netid)]
    return f"namespaces {', '.join(parts)}" if parts else ""


def _cluster_line(key: str, name: str, folder: Path, state: dict[str, Any], record: Record | None,
                  loops: list[Record]) -> str:
    from cassperf.cluster.reaper import cluster_of

    try:
        cluster = cluster_of(Record("cluster", key, owners.Owner(), {"name": name, "folder": str(folder),
                                                                     "state": state}))
        status = cluster.status()
    except CassperfError as exc:
        return f"cluster {name}: unreadable ({str(exc).splitlines()[0]})"
    up = [s for s in status if s.up]
    word = "running" if len(up) == len(status) else "stopped" if not up else "partly running"
    parts = [f"{word}, {len(up)} of {len(status)} nodes"
             + (f" ({', '.join(f'{s.name} {s.address} pid {s.pid}' for s in up)})" if up else "")]
    where = "" if folder == config.clusters_dir() / name else f"folder {folder}"
    loop = next((r for r in loops if folder.resolve().is_relative_to(Path(r.data["mount_point"]).resolve())), None)
    if loop is not None:
        from cassperf.storage.loopfs import describe

        where = f"{where or 'folder'} on {describe(loop.data)}"
    network = _network_part(key)
    parts += [p for p in (where, network) if p]
    parts.append(record.owner.state() if record is not None else "no owner record")
    return f"cluster {name}: {'; '.join(parts)}"


def _loop_line(record: Record) -> str:
    from cassperf.storage import blockdev
    from cassperf.storage.loopfs import attached_devices, describe

    source, mounted = blockdev.mount_source(record.data["mount_point"])
    attached = attached_devices(Path(record.data["backing"]))
    state = "mounted" if mounted and f"/dev/{source}" in attached else \
        "attached, not mounted" if attached else "not attached"
    return f"{describe(record.data)}: {state}, backing {record.data['backing']}; {record.owner.state()}"


def listing() -> list[str]:
    """The lines of `cassperf cluster status` with no name (module doc), clusters by name, then DC
    networks that belong to no listed cluster, then loop filesystems, then DEAD_NOTE when an
    owner is dead."""
    clusters = known()
    loops = owners.records("loopfs")
    lines = [_cluster_line(key, *entry, loops) for key, entry in sorted(clusters.items(), key=lambda kv: kv[1][0])]
    networks = [r for r in owners.records("network") if r.key not in clusters]
    lines += [f"DC network {r.key}: {_network_part(r.key) or 'nothing left'}; {r.owner.state()}" for r in networks]
    lines += [_loop_line(r) for r in loops]
    if not lines:
        return [f"no local cluster in {config.clusters_dir()}, and no owner records"]
    dead = [e[3] for e in clusters.values() if e[3] is not None] + networks + loops
    if any(not r.owner.alive() for r in dead):
        lines.append(DEAD_NOTE)
    return lines
