"""A real node with its page cache bound (LocalCluster(page_cache_mb=...)) under load, then the same
data on the same node unbounded: the node's memory, limit and page cache over each phase, and what
its reads made the kernel fetch from disk.

    sudo flock /tmp/cassperf-heavy.lock .venv/bin/python bench/page_cache_bound.py [--rows 100000]
        [--bound-mb 64] [--read-s 20] [--heap-mb 512]

One node on 127.0.42.1 (a temporary folder, destroyed at the end). Phases, each watched every
0.25 s (the node's cgroup memory.stat and limit, /proc/<pid>/io read_bytes, the governor's counts):

  bounded   load `rows` rows of 4 KiB (engine, 32 in flight) and flush; drop the host's page cache;
            two read runs of `read-s` s, keys uniform over the rows (cold, then warm)
  unbounded the node restarted without a bound; drop the page cache; the same two read runs

Printed per phase: the node's own memory (usage - page cache) and anonymous memory, its limit and
page cache (MiB: min / mean / max), the disk reads it caused (MB), reads per second, the
governor's stalls (checks that found the node waiting at its limit) and limit moves; and the
page cache the data files hold at the end (fincore). Needs root and memory cgroups.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from cassperf.cluster import LocalCluster, cgroups
from cassperf.workload.run import run_spec
from cassperf.workload.spec import Population, WorkloadSpec

MIB = 2**20
KS = "pcb"


class Watch:
    """Samples one node every `interval_s` into rows tagged with the current phase."""

    def __init__(self, cluster: LocalCluster, interval_s: float = 0.25) -> None:
        self.cluster, self.interval_s = cluster, interval_s
        self.phase = "start"
        self.rows: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            pid = self.cluster.nodes[0].pid()
            if pid is None:
                continue
            row: dict[str, Any] = {"t": time.monotonic(), "phase": self.phase, "pid": pid}
            try:
                io = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
                row["read_bytes"] = int(io["read_bytes"])
            except (OSError, KeyError, ValueError):
                continue
            cg = cgroups.of_process(pid, "node1")
            if cg is not None:
                try:
                    r = cg.read_memory()
                except OSError:
                    continue
                row.update(own=r.own / MIB, anon=r.anon / MIB, cache=r.file / MIB,
                           limit=r.limit / MIB if r.limit else None, stalled=r.stalled)
            self.rows.append(row)

    def __enter__(self) -> "Watch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def drop_caches() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("1")


def spread(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{min(values):7.1f} {statistics.fmean(values):7.1f} {max(values):7.1f}"


def resident_mb(folder: Path) -> float:
    files = [str(p) for p in folder.rglob("*") if p.is_file()]
    if not files or shutil.which("fincore") is None:
        return float("nan")
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--raw", "-o", "RES", *files],
                         capture_output=True, text=True).stdout
    return sum(int(x) for x in out.split() if x.isdigit()) / 1e6


def read_run(cluster: LocalCluster, watch: Watch, phase: str, args: argparse.Namespace, root: Path) -> float:
    watch.phase = phase
    spec = WorkloadSpec(op="read", duration=args.read_s, concurrency=32, keyspace=KS, interval_s=1.0,
                        population=Population("uniform", 1, args.rows))
    run = run_spec(spec, cluster, progress=False, warmup_s=0, root=root / "runs")
    return float(run.summary["rate_ops_s"].iloc[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--bound-mb", type=int, default=64)
    parser.add_argument("--read-s", type=int, default=20)
    parser.add_argument("--heap-mb", type=int, default=512)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="cassperf-bench-pcb-"))
    rates: dict[str, float] = {}
    stats: dict[str, Any] = {}
    resident: dict[str, float] = {}
    data = root / "clusters" / "pcb" / "node1" / "data"
    try:
        bounded = LocalCluster("pcb", "dc1:1", first_address="127.0.42.1", heap_mb=args.heap_mb,
                               root=root / "clusters", page_cache_mb=args.bound_mb)
        with Watch(bounded) as watch:
            with bounded:                                  # stopped on the way out, also after a failure
                t = time.monotonic()
                bounded.start()
                print(f"started in {time.monotonic() - t:.1f} s; {bounded.bounds_line()}", flush=True)
                watch.phase = "load"
                run_spec(WorkloadSpec(op="write", n=args.rows, concurrency=32, keyspace=KS, interval_s=1.0), bounded,
                         progress=False, warmup_s=0, root=root / "runs")
                bounded.nodetool(1, "flush", KS)
                time.sleep(5)
                size = sum(p.stat().st_size for p in (data / KS).rglob("*") if p.is_file()) / 1e6
                print(f"data: {size:.0f} MB", flush=True)
                drop_caches()
                rates["bounded cold"] = read_run(bounded, watch, "bounded cold", args, root)
                rates["bounded warm"] = read_run(bounded, watch, "bounded warm", args, root)
                resident["bounded"] = resident_mb(data / KS)
                gov = bounded.bounds.governor
                if gov is not None:
                    g = gov.nodes["node1"]
                    stats = {"stalls": g.stalls, "raised": g.raised, "lowered": g.lowered, "errors": g.errors}
                watch.phase = "stop"
            free = LocalCluster("pcb", "dc1:1", first_address="127.0.42.1", heap_mb=args.heap_mb,
                                root=root / "clusters")
            watch.cluster = free
            with free:
                free.start()
                drop_caches()
                rates["unbounded cold"] = read_run(free, watch, "unbounded cold", args, root)
                rates["unbounded warm"] = read_run(free, watch, "unbounded warm", args, root)
                resident["unbounded"] = resident_mb(data / KS)
        phases = list(dict.fromkeys(r["phase"] for r in watch.rows))
        print(f"\nbound {args.bound_mb} MiB, heap {args.heap_mb} MB, {args.rows:,} rows; MiB as min / mean / max")
        print(f"{'phase':16} {'own':>23} {'anon':>23} {'limit':>23} {'page cache':>23} {'disk read MB':>12} {'reads/s':>8}")
        for phase in phases:
            rows = [r for r in watch.rows if r["phase"] == phase]
            same = [r for r in rows if r["pid"] == rows[0]["pid"]]      # a restart starts the counter again
            read_mb = (same[-1]["read_bytes"] - same[0]["read_bytes"]) / 1e6 if len(same) > 1 else float("nan")
            print(f"{phase:16} {spread([r.get('own') for r in rows]):>23} {spread([r.get('anon') for r in rows]):>23} "
                  f"{spread([r.get('limit') for r in rows]):>23} {spread([r.get('cache') for r in rows]):>23} "
                  f"{read_mb:12.1f} {rates.get(phase, float('nan')):8.0f}")
        print(f"\ngovernor: {stats}")
        print(f"checks that found the node waiting at its limit: {sum(1 for r in watch.rows if r.get('stalled'))} of "
              f"{sum(1 for r in watch.rows if 'stalled' in r)}")
        print(f"data files resident in the page cache at the end (fincore): {resident}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
