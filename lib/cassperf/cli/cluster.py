"""`cassperf cluster start|status|stop|destroy`: the embedded local cluster from the shell.

`status`, `stop` and `destroy` act only on a cluster that was started here (a folder under
data/clusters with a cluster.json, or an owner record naming a folder elsewhere, e.g. on a loop
mount); any other name is an error listing the known ones, so a typo never reports a cluster
"stopped" while the real one keeps running. `status` without `--name` lists every known cluster,
DC network and loop filesystem with its state and owner (cassperf.cluster.inventory).
`start` and `stop` first release what dead owners left (cassperf.cluster.reaper), one line each;
a cluster `start` started is kept for the user (no later run reaps it). `--first-address` is
an IPv4 address in 127.0.0.0/8 (local nodes listen on loopback only). One exception:
`destroy` of a name never started still removes a DC network (network namespaces and delay
router of `--inter-dc-rtt-ms`) that a start killed before writing cluster.json left behind.
"""

from __future__ import annotations

import argparse
import ipaddress
import time

from pathlib import Path
from typing import TYPE_CHECKING

from cassperf import config
from cassperf.cluster import owners, state_file
from cassperf.cluster.jars import DEFAULT_VERSION
from cassperf.errors import ConfigError

if TYPE_CHECKING:
    from cassperf.cluster.local import LocalCluster

#: what a cluster is made with when neither the command line nor its cluster.json says otherwise
DEFAULTS = {"topology": "dc1:1", "version": DEFAULT_VERSION, "heap_mb": 1024, "first_address": "127.0.0.1",
            "inter_dc_rtt_ms": None, "tls": False}


#: what `cassperf cluster start` hands its cluster over to (owner record: kept, never reaped)
KEPT_BY = "cassperf cluster start"


def cluster_folder(name: str) -> Path:
    """The folder of cluster ``name``: data/clusters/NAME when it has a cluster.json, else the
    folder its owner record names (a cluster elsewhere, e.g. on a loop mount), else
    data/clusters/NAME."""
    here = config.clusters_dir() / name
    if state_file.path(here).is_file():
        return here
    named = [Path(r.data["folder"]) for r in owners.records("cluster") if r.data.get("name") == name]
    if len(named) > 1:
        raise ConfigError(f"{len(named)} clusters named {name!r} have owner records, in "
                          f"{', '.join(map(str, named))}; stop them from Python (LocalCluster(name, root=...))")
    return named[0] if named else here


def started_state(name: str, folder: Path | None = None) -> dict | None:
    """What the cluster ``name`` (in ``folder``, default: cluster_folder) was started with: its
    cluster.json, else its owner record's; None when it never was."""
    folder = folder or cluster_folder(name)
    if state_file.path(folder).exists():
        return state_file.read(folder) or {}
    record = next((r for r in owners.records("cluster") if Path(r.data["folder"]) == folder), None)
    return None if record is None else dict(record.data.get("state") or {})


def known_clusters() -> list[str]:
    """Names of the local clusters started here (folders under data/clusters with a cluster.json,
    and clusters with an owner record), sorted."""
    root = config.clusters_dir()
    names = {p.name for p in root.iterdir() if state_file.path(p).is_file()} if root.is_dir() else set()
    return sorted(names | {str(r.data.get("name")) for r in owners.records("cluster")})


def require_started(name: str) -> None:
    """ConfigError naming the known clusters when ``name`` was never started here."""
    if started_state(name) is not None:
        return
    known = known_clusters()
    where = config.clusters_dir()
    if known:
        raise ConfigError(f"no local cluster named {name!r} in {where}; known clusters: {', '.join(known)}")
    raise ConfigError(f"no local cluster named {name!r} in {where}, and none has been started there; "
                      f"start one with `cassperf cluster start --name {name}`")


def check_first_address(text: str) -> str:
    """``text`` when it is an IPv4 address in 127.0.0.0/8, else ConfigError (one line)."""
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        address = None
    if address is None or address.version != 4 or not address.is_loopback:
        raise ConfigError(f"--first-address {text!r}: local nodes listen on loopback only; give an IPv4 address "
                          f"in 127.0.0.0/8, e.g. 127.0.1.1 (not a host name, not IPv6)")
    return str(address)


def local_cluster(name: str, root: Path | None = None, **given: object) -> LocalCluster:
    """The cluster ``name``: options given (not None), else what it was started with (its
    cluster.json), else DEFAULTS. `status --name big` must find the nodes of a dc1:3 cluster on
    127.0.5.1 without repeating how it was started (it used to look for one node on 127.0.0.1,
    and `stop` / `destroy` then left nodes 2 and 3 running)."""
    from cassperf.cluster.local import LocalCluster

    stored = started_state(name, (root or config.clusters_dir()) / name) or {}
    chosen = {k: given[k] if given.get(k) is not None else stored.get(k, default) for k, default in DEFAULTS.items()}
    return LocalCluster(name, chosen["topology"], version=chosen["version"], heap_mb=chosen["heap_mb"],
                        first_address=chosen["first_address"], inter_dc_rtt_ms=chosen["inter_dc_rtt_ms"],
                        root=root, tls=bool(chosen["tls"]))


def _cluster(args: argparse.Namespace) -> LocalCluster:
    """The cluster the command names; status/stop/destroy need one that was started here."""
    if args.action != "start":
        require_started(args.name)
    if args.first_address is not None:
        args.first_address = check_first_address(args.first_address)
    root = cluster_folder(args.name).parent if args.action != "start" else None   # start: data/clusters
    return local_cluster(args.name, root, **{k: getattr(args, k) for k in DEFAULTS})


def _reap(adopt: list[Path]) -> None:
    from cassperf.cluster.reaper import reap

    reap(adopt, say=lambda line: print(line, flush=True))


def _start(args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    cluster = _cluster(args)
    _reap([cluster.root])
    cluster.say = lambda line: print(line, flush=True)
    cluster.start()
    cluster.keep(KEPT_BY)
    print(cluster.status_frame().to_string(index=False))
    print(f"cluster {cluster.name} ({cluster.topology}) CQL-ready in {time.monotonic() - t0:.1f} s")
    node = cluster.nodes[0]
    print(f"cqlsh (as the cluster's role{', over TLS' if cluster.tls_enabled else ''}): "
          f"cqlsh --cqlshrc {cluster.root / 'access' / 'cqlshrc'} {node.address} {node.ports.native}")
    return 0


def _status(args: argparse.Namespace) -> int:
    if args.name is None:
        from cassperf.cluster.inventory import listing

        print("\n".join(listing()))
        return 0
    cluster = _cluster(args)
    frame = cluster.status_frame()
    print(frame.to_string(index=False))
    return 0 if frame["up"].all() else 3


def _stop(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    record = owners.read("cluster", cluster.owner_key)
    running = cluster.running_text()
    killed = cluster.stop(timeout_s=args.timeout)
    left = f", left by dead {record.owner.describe()}" if record is not None and not record.owner.alive() else ""
    print(f"stopped cluster {args.name} ({running}){left}" + (f" (SIGKILL needed for {', '.join(killed)})"
                                                               if killed else ""), flush=True)
    _reap([])
    return 0


def _destroy(args: argparse.Namespace) -> int:
    if started_state(args.name) is None:
        # a start killed before it wrote cluster.json can still have left a DC network
        from cassperf.cluster import netns

        removed = netns.remove_leftovers(netns.network_id(args.name, config.clusters_dir() / args.name))
        if removed:
            print(f"removed what cluster {args.name} left: {', '.join(removed)}")
            return 0
    cluster = _cluster(args)
    cluster.destroy(timeout_s=args.timeout)
    print(f"destroyed cluster {args.name} ({cluster.root})")
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from cassperf.cluster.jars import resolve_cassandra, resolve_jolokia
    from cassperf.cluster.java import check_java_for, java_info

    version = args.version or DEFAULT_VERSION
    check_java_for(version, java_info())
    t0 = time.monotonic()
    jars = resolve_cassandra(version)
    agent = resolve_jolokia()
    print(f"Cassandra {version}: {len(jars.jars)} jars in {jars.lib_dir}; Jolokia agent {agent} "
          f"({time.monotonic() - t0:.1f} s)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("cluster", help="start, inspect, stop the embedded local Cassandra cluster")
    actions = parser.add_subparsers(dest="action", required=True)
    for name, func, helptext in [("start", _start, "start (or reuse) the cluster, wait until CQL-ready"),
                                 ("status", _status, "which nodes are up (exit 3 when any is down); without --name: "
                                  "every known cluster, DC network and loop filesystem, its state and owner"),
                                 ("stop", _stop, "SIGTERM the nodes, SIGKILL after --timeout"),
                                 ("destroy", _destroy, "kill the nodes (no graceful stop) and remove data, logs, conf and "
                                  "the DC network "
                                  "(namespaces cassperf-NAME-*, delay router), also what a killed run left"),
                                 ("fetch", _fetch, "check Java, resolve the jars into the cache")]:
        p = actions.add_parser(name, help=helptext)
        if name == "status":
            p.add_argument("--name", help="cluster name (default: list every known cluster, network and loop "
                                          "filesystem with its state and owner)")
        else:
            p.add_argument("--name", default="cassperf", help="cluster name (default: cassperf)")
        kept = "as started, else " if name != "fetch" else ""
        p.add_argument("--topology", help=f"e.g. dc1:3 or dc1:3,dc2:3 (default: {kept}dc1:1)")
        p.add_argument("--version", help=f"Cassandra version (default: {kept}{DEFAULT_VERSION})")
        p.add_argument("--heap-mb", type=int, help=f"heap per node in MB (default: {kept}1024)")
        p.add_argument("--first-address", help=f"address of node1 (default: {kept}127.0.0.1)")
        p.add_argument("--inter-dc-rtt-ms", type=float,
                       help=f"round-trip time between DCs, ms: each DC in a network namespace (root; default: {kept}none)")
        p.add_argument("--tls", action="store_true", default=None,
                       help=f"CQL over TLS only, with a CA and node certificates made for the cluster (default: {kept}off)")
        p.add_argument("--timeout", type=float, default=60.0, help="stop: seconds before SIGKILL (default: 60); destroy kills "
                                                                        "at once")
        p.set_defaults(func=func)
