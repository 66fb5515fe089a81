"""`cassperf run COMMAND...`: one workload from the shell, written as a run under data/runs/.

    cassperf run write n=100000 cl=ONE -rate threads=64 -pop seq=1..100000
    cassperf run --tool cassandra-stress --label rf=3 'read duration=60s cl=QUORUM -rate threads=32'
    cassperf run --hosts 10.0.0.5,10.0.0.6 --local-dc dc1 'mixed ratio(write=1,read=3) n=1000000 cl=LOCAL_QUORUM -rate threads=64'

COMMAND is a cassandra-stress command line (`stress_cmdline.parse_stress_command`: the same
spec whichever tool runs it), as separate words or one quoted string; options of `cassperf run`
come before it. The target: `--hosts` (a remote cluster; credentials from CASSPERF_USERNAME /
CASSPERF_PASSWORD), else the command's own `-node`, else the embedded local cluster `--cluster`
(default cassperf), which must be running (`cassperf cluster start`). The cluster sampler runs
beside the load every `--sample-interval` seconds (0: off), for the command's keyspace's
standard1. A command line has no delete (cassandra-stress simple mode has none): the
garbagecollect experiment's 5:4:1 mix is a WorkloadSpec(ratio=...) from Python.
Prints the run id, its folder, the latency type and the per-op summary; the run loads with
`load_run(run_id)`.
"""

from __future__ import annotations

import argparse
from typing import Any

from cassperf.errors import ConfigError

from cassperf.workload.spec import TOOLS


def _labels(pairs: list[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--label {pair!r}: expected KEY=VALUE, e.g. --label rf=3")
        labels[key.strip()] = value.strip()
    return labels


def _spec(words: list[str]) -> Any:
    from cassperf.workload.runners.stress_cmdline import parse_stress_command

    if not words:
        raise ConfigError("no command: give a cassandra-stress command line, e.g. "
                          "cassperf run write n=100000 -rate threads=64")
    return parse_stress_command(words[0] if len(words) == 1 else words)


def _target(args: argparse.Namespace, spec: Any) -> Any:
    """The cluster to load: --hosts, else the command's -node, else the running local cluster."""
    if args.hosts or spec.nodes:
        from cassperf.cluster.remote import RemoteCluster

        return RemoteCluster(args.hosts or list(spec.nodes), port=args.port,
                             local_dc=args.local_dc or spec.local_dc)
    from cassperf.cli.cluster import local_cluster, started_state

    if started_state(args.cluster) is None:
        raise ConfigError(f"no local cluster named {args.cluster!r} has been started; start it with "
                          f"`cassperf cluster start --name {args.cluster}` or name a cluster with --hosts")
    cluster = local_cluster(args.cluster)
    down = [s.name for s in cluster.status() if not s.up]
    if down:
        raise ConfigError(f"local cluster {args.cluster!r} is not running ({', '.join(down)} down); start it "
                          f"with `cassperf cluster start --name {args.cluster}`")
    return cluster


def _run(args: argparse.Namespace) -> int:
    from cassperf.results.store import load_run, run_folder
    from cassperf.workload.run import run_spec

    if args.processes is not None and args.processes < 1:
        raise ConfigError(f"--processes {args.processes}: expected a whole number >= 1 (default: one per core)")
    if args.sample_interval < 0:
        raise ConfigError(f"--sample-interval {args.sample_interval:g}: expected seconds > 0, or 0 for no sampler")
    spec = _spec(args.command)
    labels = _labels(args.label)
    cluster = _target(args, spec)
    sampling = {"tables": [(spec.keyspace, "standard1")], "interval_s": args.sample_interval}
    try:
        run = run_spec(spec, cluster, tool=args.tool, labels=labels, processes=args.processes, backend=args.backend,
                       progress=not args.no_progress, stress_values=args.stress_values,
                       sampler=sampling if args.sample_interval > 0 else None, raise_on_failure=False)
    finally:
        cluster.close()
    run_id = run.manifest["run_id"]
    _print_run(load_run(run_id), run_folder(run_id))
    if run.manifest.get("failed"):
        print(f"FAILED: {run.manifest.get('failure')}")
        return 1
    return 0


def _print_run(run: Any, folder: Any) -> None:
    m = run.manifest
    print(f"run {m['run_id']}  ({m.get('tool')}, latency type: {m.get('latency_type')}"
          f"{'' if m.get('complete', True) else ', INCOMPLETE'})")
    print(f"folder: {folder}")
    if not run.summary.empty:
        cols = ["op", "count", "rate_ops_s", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms",
                "latency_p99_ms", "latency_max_ms", "errors"]
        print(run.summary[cols].to_string(index=False, float_format=lambda x: f"{x:,.2f}"))
    for warning in run.warnings:
        print(f"warning: {warning}")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run one workload (a cassandra-stress command line) and store it as a run",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tool", choices=TOOLS, default="engine",
                   help="who drives the load: the Python engine (default), cassandra-stress or latte")
    p.add_argument("--cluster", default="cassperf", help="embedded local cluster by name (default: cassperf)")
    p.add_argument("--hosts", help="contact points of a remote cluster, comma-separated")
    p.add_argument("--port", type=int, default=9042, help="CQL port of --hosts (default: 9042)")
    p.add_argument("--local-dc", help="the DC the client treats as local (default: the command's, else none)")
    p.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                   help="a label on the run (repeatable), e.g. --label rf=3")
    p.add_argument("--sample-interval", type=float, default=5.0,
                   help="seconds between cluster samples beside the load (default: 5; 0: no sampler)")
    p.add_argument("--processes", type=int, default=None, help="engine worker processes (default: one per core)")
    p.add_argument("--backend", choices=("auto", "acsylla", "driver"), default="auto",
                   help="engine hot-path driver (default: auto: acsylla, else cassandra-driver)")
    p.add_argument("--stress-values", action="store_true",
                   help="engine: write cassandra-stress's column values, so cassandra-stress validates the rows "
                        "(costs client CPU and stalls the loop per batch: for loading, not measuring)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the cassandra-stress command line")
    p.set_defaults(func=_run)
