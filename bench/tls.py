"""TLS against plaintext: the engine's write throughput and client CPU per op, same node, same run.

    .venv/bin/python bench/tls.py                 # ~6 minutes: 3 rounds x (unlimited, 3,000 ops/s) x 2
    .venv/bin/python bench/tls.py --rounds 5 --duration 30 --backends acsylla,driver

One node (127.0.40.61, 1 GB heap) made with tls=True, whose CQL port also takes plaintext for this
measurement (client_encryption_options.optional: the server tells a TLS hello from a CQL frame
per connection), started here and destroyed at the end. Both kinds of client reach it as a
user's cluster is reached (RemoteCluster, the role's credential in CASSPERF_USERNAME /
CASSPERF_PASSWORD, the cluster's CA as TlsOptions for TLS, none for plaintext); before the rounds,
system_views.clients shows each kind's connection with ssl_enabled as expected.

Each round runs every (backend, load, transport) once, TLS first in even rounds and plaintext
first in odd ones: writes of cassandra-stress's standard1 rows (5 x 34 bytes) for `--duration`
seconds after a 3 s warm-up, at an unlimited rate (throughput) and at a fixed 3,000 ops/s (the
CPU one op costs below saturation). Client CPU per op is the engine workers' CPU time (user +
system, the C++ driver's I/O thread included) over the measured phase divided by its ops
(manifest engine.client_cpu_us_per_op). The node and the client share this machine's 2 cores
(and whatever else runs here): the load average is printed beside each figure, and the summary
gives each figure's median over the rounds and the TLS / plaintext ratio of the medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ADDRESS = "127.0.40.61"
KEYSPACE = "bench_tls"
LOADS = (("unlimited", "unlimited"), ("fixed=3000/s", "3,000 ops/s"))


def measure(handle: Any, backend: str, rate: str, args: argparse.Namespace, runs: Path) -> dict[str, float]:
    from cassperf.workload import WorkloadSpec
    from cassperf.workload.engine import run_workload

    spec = WorkloadSpec(op="write", duration=args.duration, rate=rate, concurrency=args.concurrency,
                        keyspace=KEYSPACE, warmup=True)
    load0 = os.getloadavg()[0]
    run = run_workload(spec, handle, root=runs, backend=backend, progress=False, warmup_s=3.0, schema=False)
    engine, s = run.manifest["engine"], run.summary.iloc[0]
    assert engine["backend"] == backend, engine["backend"]
    return {"ops_s": float(s["rate_ops_s"]), "cpu_us_per_op": float(engine["client_cpu_us_per_op"]),
            "p99_ms": float(s["latency_p99_ms"]), "errors": int(s["errors"]), "load": (load0 + os.getloadavg()[0]) / 2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=20, help="seconds measured per run (default 20)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--backends", default="acsylla", help="comma-separated: acsylla, driver (default acsylla)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "lib"))
    from cassperf.cluster import LocalCluster, RemoteCluster
    from cassperf.cluster.access import read_cql_credentials
    from cassperf.workload import WorkloadSpec
    from cassperf.workload.runners.stress_cmdline import schema_cql

    for name in ("CASSPERF_SSL_CA", "CASSPERF_SSL_CERT", "CASSPERF_SSL_KEY"):
        os.environ.pop(name, None)          # plaintext means no TLS options at all
    work = Path(tempfile.mkdtemp(prefix="cassperf-bench-tls-"))
    cluster = LocalCluster("bench-tls", "dc1:1", first_address=ADDRESS, root=work / "clusters", heap_mb=1024, tls=True,
                           yaml_overrides={"client_encryption_options": {"optional": True}})
    handles: dict[str, Any] = {}
    try:
        t0 = time.monotonic()
        cluster.start()
        print(f"node ready in {time.monotonic() - t0:.1f} s; {os.cpu_count()} cores; python {sys.version.split()[0]}")
        assert cluster.credentials_file is not None and cluster.tls is not None
        role = read_cql_credentials(cluster.credentials_file)
        os.environ["CASSPERF_USERNAME"], os.environ["CASSPERF_PASSWORD"] = role.user, role.password
        handles.update(TLS=RemoteCluster([ADDRESS], local_dc="dc1", tls=cluster.tls),
                       plaintext=RemoteCluster([ADDRESS], local_dc="dc1"))
        assert handles["plaintext"].tls is None
        session = handles["TLS"].session()
        for cql in schema_cql(WorkloadSpec(n=1, keyspace=KEYSPACE)):
            session.execute(cql, timeout=60)
        for kind, handle in handles.items():
            seen = {bool(r.ssl_enabled) for r in handle.session().execute(
                "SELECT ssl_enabled, username FROM system_views.clients") if r.username == role.user}
            print(f"{kind} client: the node sees connections with ssl_enabled={sorted(seen)}")
            handle.close()
        runs = work / "runs"
        results: dict[tuple[str, str, str], list[dict[str, float]]] = {}
        for rnd in range(args.rounds):
            order = ["TLS", "plaintext"] if rnd % 2 == 0 else ["plaintext", "TLS"]
            for backend in args.backends.split(","):
                for rate, shown in LOADS:
                    for kind in order:
                        r = measure(handles[kind], backend, rate, args, runs)
                        results.setdefault((backend, shown, kind), []).append(r)
                        print(f"round {rnd + 1} {backend:8} {shown:12} {kind:9}: {r['ops_s']:8,.0f} ops/s, client CPU "
                              f"{r['cpu_us_per_op']:6.1f} us/op, p99 {r['p99_ms']:6.2f} ms, errors {r['errors']}, "
                              f"load {r['load']:.1f}", flush=True)
        print(f"\nmedians over {args.rounds} rounds ({args.duration} s each, concurrency {args.concurrency}; "
              f"ratio = TLS / plaintext):")
        for backend in args.backends.split(","):
            for _, shown in LOADS:
                tls, plain = results[(backend, shown, "TLS")], results[(backend, shown, "plaintext")]
                line = []
                for key, unit in (("ops_s", "ops/s"), ("cpu_us_per_op", "us/op client CPU")):
                    a, b = statistics.median(x[key] for x in tls), statistics.median(x[key] for x in plain)
                    line.append(f"{unit}: TLS {a:,.1f}, plaintext {b:,.1f}, ratio {a / b:.2f}")
                print(f"  {backend} {shown}: " + "; ".join(line))
    finally:
        for handle in handles.values():
            handle.close()
        cluster.destroy()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
