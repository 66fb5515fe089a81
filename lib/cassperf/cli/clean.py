"""`cassperf clean`: list, and on a yes drop, the keyspaces the studies of this data folder made
on a named cluster (cassperf.experiments.made). It connects as the reports do (CASSPERF_USERNAME /
CASSPERF_PASSWORD, CASSPERF_SSL_*) and never touches a keyspace no study made there."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from cassperf import config
from cassperf.errors import ConfigError


def _ask(question: str) -> bool:
    """A yes from the terminal; no answer (end of input) is a no."""
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        print()
        return False


def clean(contact_points: str, port: int = 9042, local_dc: str | None = None, keyspaces: list[str] | None = None,
          yes: bool = False, ask: Callable[[str], bool] = _ask, say: Callable[[str], None] = print) -> list[str]:
    """List what the studies made on the cluster at ``contact_points`` (those of ``keyspaces``
    only, when given: a name no study made there is one ConfigError, nothing dropped), ask, drop;
    returns the keyspaces dropped."""
    from cassperf.cluster.remote import RemoteCluster
    from cassperf.experiments.made import cluster_identity, made_on

    runs = config.runs_dir()
    cluster = RemoteCluster(contact_points, port=port, local_dc=local_dc)
    try:
        cluster.session()                       # a cluster that does not let us in: one ClusterError line
        identity = cluster_identity(cluster)
        if "error" in identity:
            raise ConfigError(f"{contact_points}: cannot read what the cluster holds ({identity['error']})")
        name = f"cluster {identity['cluster_name']} at {contact_points}"
        found = made_on(identity, runs)
        made = list(found.made)
        if keyspaces:
            mine = {m.keyspace for m in made}
            other = [k for k in keyspaces if k not in mine]
            if other:
                raise ConfigError(f"{other[0]} on {name}: no study of {runs} made it, so cassperf clean leaves it "
                                  f"alone (the studies made: {', '.join(sorted(mine)) or 'nothing still there'})")
            made = [m for m in made if m.keyspace in keyspaces]
        if found.unmatched_records:
            say(f"{len(found.unmatched_records)} study record(s) in {runs / '.studies'} do not say which cluster "
                f"they ran on (made before cassperf kept it): their keyspaces are not listed")
        if not made:
            say(f"nothing to drop: no study of {runs} made a keyspace that {name} still holds")
            return []
        say(f"the studies of {runs} made on {name}:")
        for m in made:
            where = f" ({m.context})" if m.context else ""
            say(f"  {m.keyspace}: {m.study}, experiment {m.experiment}{where}, record {m.record.name}")
        if not yes and not ask(f"drop these {len(made)} keyspace(s) and all their data? [y/N] "):
            say("nothing dropped")
            return []
        session = cluster.session()
        dropped = []
        for m in made:
            session.execute(f'DROP KEYSPACE IF EXISTS "{m.keyspace}"', timeout=120)
            dropped.append(m.keyspace)
            say(f"dropped {m.keyspace}")
        return dropped
    finally:
        cluster.close()


def _clean(args: argparse.Namespace) -> int:
    clean(args.contact_points, port=args.port, local_dc=args.local_dc, keyspaces=args.keyspace, yes=args.yes,
          say=lambda line: print(line, flush=True))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("clean", help="list and drop the keyspaces the studies made on your cluster",
                       description="List the keyspaces the studies recorded in this data folder (data/runs/.studies) "
                                   "made on the named cluster and that it still holds, ask, and drop them. A keyspace "
                                   "the cluster held before a study first ran there is never listed. Credentials "
                                   "and TLS as for the reports: CASSPERF_USERNAME / CASSPERF_PASSWORD, CASSPERF_SSL_*.")
    p.add_argument("--contact-points", required=True, metavar="HOSTS",
                   help="your cluster's nodes, comma-separated (as the notebooks' contact_points)")
    p.add_argument("--port", type=int, default=9042, help="CQL port (default 9042)")
    p.add_argument("--local-dc", metavar="DC", help="the DC the client treats as local")
    p.add_argument("--keyspace", action="append", metavar="NAME",
                   help="only this keyspace (repeatable); one no study made there is refused")
    p.add_argument("--yes", action="store_true", help="drop without asking (for scripts)")
    p.set_defaults(func=_clean)
