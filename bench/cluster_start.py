"""Cluster start-up times on this machine, printed as a table.

    .venv/bin/python bench/cluster_start.py [--skip-report] [--repeat N]

Measures, with the jar cache warm: one node cold start (fresh folder) to CQL-ready; 3 nodes in
one DC; 2 x 2 nodes in two DCs; a restart of one node with existing data; and `make report`
end to end. Targets on a 2-core machine: one node <= 15 s, three nodes <= 60 s. Clusters run in a
temporary folder on 127.0.8.x and are always destroyed. The load average before each
measurement is printed too: these machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cassperf.cluster import LocalCluster
from cassperf.cluster.jars import resolve_cassandra, resolve_jolokia

ROOT = Path(__file__).resolve().parents[1]


def timed_start(name: str, topology: str, root: Path) -> tuple[float, float]:
    cluster = LocalCluster(name, topology, first_address="127.0.8.1", heap_mb=1024, root=root)
    try:
        t0 = time.monotonic()
        cluster.start()
        cold = time.monotonic() - t0
        restart = float("nan")
        if topology == "dc1:1":
            cluster.stop()
            t0 = time.monotonic()
            cluster.start()
            restart = time.monotonic() - t0
        return cold, restart
    finally:
        cluster.destroy()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-report", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    resolve_cassandra()
    resolve_jolokia()
    rows = []
    root = Path(tempfile.mkdtemp(prefix="cassperf-bench-"))
    try:
        for i in range(args.repeat):
            for label, topo, target in [("1 node, cold", "dc1:1", 15.0), ("3 nodes, 1 DC", "dc1:3", 60.0),
                                        ("2 x 2 nodes, 2 DCs", "dc1:2,dc2:2", None)]:
                load = os.getloadavg()[0]
                cold, restart = timed_start(f"bench{i}-{topo.replace(':', '').replace(',', '-')}", topo, root)
                rows.append((label, cold, target, load))
                if restart == restart:
                    rows.append(("1 node, restart with data", restart, None, load))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if not args.skip_report:
        load = os.getloadavg()[0]
        t0 = time.monotonic()
        proc = subprocess.run(["make", "-s", "report"], cwd=ROOT, capture_output=True, text=True)
        rows.append(("make report (warm cache)" + ("" if proc.returncode == 0 else " FAILED"),
                     time.monotonic() - t0, None, load))
        if proc.returncode != 0:
            print("make report failed:\n" + "\n".join((proc.stdout + proc.stderr).splitlines()[-20:]))
    print(f"{'measurement':32} {'seconds':>8} {'target':>8} {'load1':>6}")
    for label, secs, target, load in rows:
        t = f"<= {target:.0f}" if target else ""
        print(f"{label:32} {secs:8.1f} {t:>8} {load:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
