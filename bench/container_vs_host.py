"""The same Cassandra node on the host and in a container (podman --rootfs), alternating, printed
as a table: write and read row/s and node CPU ms per 1,000 rows per round, and the
container/host factor of the medians.

    flock /tmp/cassperf-cpu.lock .venv/bin/python bench/container_vs_host.py [--rounds 3] [--rows 50000]

Both nodes run the same JRE: the container root filesystem's (Debian's openjdk-17-jre-headless),
on the host from its folder in the cache, so the only difference is the container (namespaces,
cgroup, seccomp, overlay root, bind-mounted data). Each round starts a fresh one-node cluster of
each kind (host on 127.0.50.101, the container on 127.0.50.102 in its own namespace), writes
``rows`` keys in order and reads ``rows`` keys drawn Gaussian over them (the deployment study's
write and read at 16 in flight, engine client), then destroys it; the order alternates per round.
Needs root and `make container`. Figures are the deployment study's: row rate over the whole
measured run, node CPU from the sampler's per-second process CPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from cassperf.analysis.deployments import run_row
from cassperf.cluster import LocalCluster
from cassperf.cluster.container import ContainerCluster
from cassperf.cluster.rootfs import ensure_rootfs
from cassperf.experiments.deployment import DeploymentStudy
from cassperf.workload.run import run_spec


def one(kind: str, args: argparse.Namespace, root: Path, runs: Path, rnd: int) -> dict[str, float]:
    fs = ensure_rootfs(17)
    common: dict[str, Any] = {"heap_mb": args.heap_mb, "root": root}
    if kind == "host":
        cluster = LocalCluster(f"bench-host-{rnd}", "dc1:1", args.version, first_address="127.0.50.101",
                               java_home=fs.path / fs.java_home.lstrip("/"), **common)
    else:
        cluster = ContainerCluster(f"bench-ct-{rnd}", "dc1:1", args.version, java=17, first_address="127.0.50.102",
                                   **common)
    study = DeploymentStudy(deployments=f"{args.version}:java17:disk", rows=args.rows, threads=args.threads)
    out: dict[str, float] = {}
    try:
        t0 = time.monotonic()
        cluster.start()
        out["start_s"] = time.monotonic() - t0
        for op in ("write", "read"):
            run = run_spec(study.spec(op, args.threads, n=args.rows), cluster, root=runs, progress=False,
                           labels={"op": op, "deployment": kind, "round": str(rnd)},
                           sampler={"interval_s": 1.0, "jmx": "none"})
            row = run_row(run, "here")
            out[f"{op}_row_s"] = row["row_rate_s"]
            out[f"{op}_cpu_ms_1k"] = row["cpu_ms_per_1k_rows"]
    finally:
        cluster.destroy(timeout_s=60)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--heap-mb", type=int, default=1024)
    parser.add_argument("--version", default="5.0.6")
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {"host": [], "container": []}
    with tempfile.TemporaryDirectory(prefix="cassperf-ctbench-") as tmp:
        for rnd in range(args.rounds):
            order = ("host", "container") if rnd % 2 == 0 else ("container", "host")
            for kind in order:
                load = os.getloadavg()[0]
                r = one(kind, args, Path(tmp) / "clusters", Path(tmp) / "runs", rnd)
                results[kind].append(r)
                print(f"round {rnd + 1} {kind:9s} load {load:4.1f}  start {r['start_s']:5.1f} s  "
                      f"write {r['write_row_s']:7.0f} row/s {r['write_cpu_ms_1k']:6.1f} ms/1k  "
                      f"read {r['read_row_s']:7.0f} row/s {r['read_cpu_ms_1k']:6.1f} ms/1k", flush=True)
    print(f"\nmedians over {args.rounds} rounds ({args.rows} rows, {args.threads} in flight, Cassandra {args.version}, "
          f"the same JRE 17):")
    print(f"{'':10s} {'write row/s':>12s} {'write ms/1k':>12s} {'read row/s':>12s} {'read ms/1k':>12s}")
    med = {k: {m: statistics.median(r[m] for r in v) for m in v[0] if m != "start_s"} for k, v in results.items()}
    for kind in ("host", "container"):
        m = med[kind]
        print(f"{kind:10s} {m['write_row_s']:12.0f} {m['write_cpu_ms_1k']:12.1f} {m['read_row_s']:12.0f} "
              f"{m['read_cpu_ms_1k']:12.1f}")
    f = {m: med["container"][m] / med["host"][m] for m in med["host"]}
    print(f"{'ct / host':10s} {f['write_row_s']:12.2f} {f['write_cpu_ms_1k']:12.2f} {f['read_row_s']:12.2f} "
          f"{f['read_cpu_ms_1k']:12.2f}")


if __name__ == "__main__":
    main()
