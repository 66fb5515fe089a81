"""What a killed run of the workbook left, found by its owner records (cassperf.cluster.owners)
and released, so that it neither blocks nor burdens the next run.

Every entry point calls :func:`reap` before it starts anything (the report pipeline, a study's
``study_cluster`` and executor, ``cassperf cluster start|stop``). For each record whose owner is
dead (not alive, not kept), newest clean-up first:

- a cluster: its nodes are stopped (SIGTERM, then SIGKILL; only pids whose command line carries
  the node's marker), its DC network removed, its scratch folder (data on tmpfs) deleted, its
  nodes' cgroups (a page-cache bound, cassperf.cluster.cgroups) removed;
- a DC network: its delay router ended, its namespaces deleted;
- a loop filesystem: unmounted, its loop device detached, its backing file deleted.

Clusters whose folder is in ``adopt`` are left running, with their networks: the caller is about
to start that very cluster, and ``LocalCluster.start`` takes running nodes over from a dead
owner (adopts them). A thing whose owner still runs, or that the user keeps, is never touched,
nor is a loop filesystem or network a live owner's cluster still uses. One line per thing found
says what it was, whose pid left it and what was done.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from cassperf.cluster import cgroups, netns, owners, process
from cassperf.cluster.owners import Record
from cassperf.errors import CassperfError


def cluster_of(record: Record) -> Any:
    """The LocalCluster a cluster record names (its folder, shape, addresses), not started."""
    from cassperf.cluster.jars import DEFAULT_VERSION
    from cassperf.cluster.local import LocalCluster

    folder = Path(record.data["folder"])
    state = record.data.get("state") or {}
    return LocalCluster(record.data.get("name") or folder.name, state.get("topology", "dc1:1"),
                        version=state.get("version", DEFAULT_VERSION), heap_mb=int(state.get("heap_mb") or 1024),
                        first_address=state.get("first_address", "127.0.0.1"), root=folder.parent,
                        inter_dc_rtt_ms=state.get("inter_dc_rtt_ms"))


def _inside(path: str | Path, folder: str | Path) -> bool:
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents


def _network_text(netid: str | None) -> str:
    """`DC network <netid> (namespaces a, b, c, delay router pid 7)`, or "" when none of it exists."""
    if not netid:
        return ""
    found = netns.leftover_namespaces(netid) + [f"delay router pid {pid}" for pid in netns.router_pids(netid)]
    return f"DC network {netid} ({', '.join(found)})" if found else ""


def _release_cluster(record: Record) -> str | None:
    try:
        cluster = cluster_of(record)
    except CassperfError:
        cluster = None
    running = cluster.running_text() if cluster is not None else "no node running"
    recorded = {int(n["pid"]): Path(n["folder"]) for n in record.data.get("nodes", []) if n.get("pid")}
    strays = {pid: folder for pid, folder in recorded.items() if process.is_ours(pid, folder)}
    network = _network_text(record.data.get("network"))
    scratch = Path(record.data["scratch"]) if record.data.get("scratch") else None
    scratch = scratch if scratch is not None and scratch.name.startswith("cassperf-") and scratch.is_dir() else None
    folders = [f for f in record.data.get("cgroups") or [] if Path(f).is_dir()]
    if cluster is None or running == "no node running":
        running = ", ".join(f"pid {pid}" for pid in strays) or running
    if running == "no node running" and not network and scratch is None and not folders:
        owners.remove("cluster", record.key)
        return None
    if cluster is not None:
        cluster.stop(timeout_s=30)                # removes the cgroups the record names, too
    process.terminate(strays, timeout_s=30)       # pids whose pid file is gone (only ours: by marker)
    left = [f for f in folders if Path(f).is_dir()]
    removed = [f for f in folders if not Path(f).is_dir()] + [str(f) for f in cgroups.remove(left)]
    if record.data.get("network"):
        netns.remove_leftovers(record.data["network"])
    if scratch is not None:
        shutil.rmtree(scratch)
    owners.remove("cluster", record.key)
    what = f"cluster {record.data.get('name')} ({running}) in {record.data['folder']}"
    done = (["stopped"] if running != "no node running" else []) + ([f"removed its {network}"] if network else []) \
        + ([f"deleted {scratch}"] if scratch else []) \
        + ([f"removed its node cgroups ({len(removed)} folders)"] if removed else [])
    return owners.found(what, record.owner, ", ".join(done))


def _release_network(record: Record) -> str | None:
    network = _network_text(record.data["netid"])
    netns.remove_leftovers(record.data["netid"])
    owners.remove("network", record.key)
    return owners.found(network, record.owner, "removed") if network else None


def _release_loopfs(record: Record) -> str | None:
    from cassperf.storage import loopfs

    done = loopfs.release(Path(record.data["backing"]), Path(record.data["mount_point"]))
    owners.remove("loopfs", record.key)
    return owners.found(loopfs.describe(record.data), record.owner, ", ".join(done)) if done else None


def _user(record: Record, live: list[Record]) -> Record | None:
    """A live (or kept) cluster record that still uses the network or loop filesystem `record`."""
    for cluster in live:
        if record.kind == "network" and cluster.data.get("network") == record.data.get("netid"):
            return cluster
        if record.kind == "loopfs" and _inside(cluster.data["folder"], record.data["mount_point"]):
            return cluster
    return None


def reap(adopt: Iterable[str | Path] = (), say: Callable[[str], None] = owners.say) -> list[str]:
    """Release what dead owners left (module doc), except the clusters whose folders are in
    `adopt`. Says (and returns) one line per thing found; a release that fails is said too and
    the record kept (the next run tries again), so an entry point goes on with what it can."""
    keep = {netns.network_id(Path(f).name, Path(f)) for f in adopt}
    lines = []
    for record in owners.records():
        record = owners.read(record.kind, record.key)      # a release before may have taken it
        if record is None or record.owner.alive():
            continue
        if record.kind in ("cluster", "network") and record.key in keep:
            continue
        clusters = [c for c in owners.records("cluster") if c.owner.alive() or c.key in keep]
        user = _user(record, clusters) if record.kind != "cluster" else None
        try:
            if user is not None:
                line = owners.found(_describe(record), record.owner,
                                    f"left alone: cluster {user.data.get('name')} ({user.owner.state()}) uses it")
            else:
                line = {"cluster": _release_cluster, "network": _release_network,
                        "loopfs": _release_loopfs}[record.kind](record)
        except (CassperfError, OSError) as exc:
            line = owners.found(_describe(record), record.owner, f"could not release it: {str(exc).splitlines()[0]}")
        if line:
            say(line)
            lines.append(line)
    return lines


def _describe(record: Record) -> str:
    if record.kind == "cluster":
        return f"cluster {record.data.get('name')} in {record.data.get('folder')}"
    if record.kind == "network":
        return f"DC network {record.data.get('netid')}"
    from cassperf.storage import loopfs

    return loopfs.describe(record.data)
