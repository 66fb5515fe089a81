"""How fast a node's own memory (its cgroup's usage minus clean page cache: what a page-cache bound
does not count) grows, sampled every 10 ms: the figure behind the governor's headroom and its
settling before the first limit (cassperf.cluster.cgroups).

    sudo flock /tmp/cassperf-heavy.lock .venv/bin/python bench/node_memory_bursts.py [--rows 20000]

One node on 127.0.42.1, 512 MB heap, in a memory cgroup with a bound so large it never presses
(4 GiB), in a temporary folder destroyed at the end: start, a first client, a table, `rows` writes
and `rows` reads of 4 KiB at 64 in flight. Printed: when each step ended, and the largest growth
of own memory within 0.1, 0.25 and 0.5 s from CQL-ready on and from the table on. Needs root and
memory cgroups.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
from pathlib import Path

from cassandra.concurrent import execute_concurrent_with_args

from cassperf.cluster import LocalCluster

MIB = 2**20


def largest_growth(samples: list[tuple[float, int]], window_s: float, after_s: float) -> tuple[float, float]:
    """(the largest rise of own memory within `window_s`, MiB; when it ended, s) over samples after `after_s`."""
    best, at = 0, float("nan")
    for i, (t, own) in enumerate(samples):
        if t < after_s:
            continue
        low = min(o for s, o in samples[:i + 1] if t - s <= window_s)
        if own - low > best:
            best, at = own - low, t
    return best / MIB, at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="cassperf-bench-bursts-"))
    cluster = LocalCluster("bursts", "dc1:1", first_address="127.0.42.1", heap_mb=512, root=root, page_cache_mb=4096)
    samples: list[tuple[float, int]] = []
    stop = threading.Event()
    t0 = time.monotonic()

    def watch() -> None:
        while "node1" not in cluster.bounds.cgroups and not stop.is_set():
            time.sleep(0.005)
        cgroup = cluster.bounds.cgroups.get("node1")
        while cgroup is not None and not stop.is_set():
            try:
                samples.append((time.monotonic() - t0, cgroup.read_memory().own))
            except OSError:
                pass
            time.sleep(0.01)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    steps: dict[str, float] = {}
    try:
        with cluster:
            cluster.start()
            steps["CQL-ready"] = time.monotonic() - t0
            session = cluster.session()
            steps["first client"] = time.monotonic() - t0
            session.execute("CREATE KEYSPACE bursts WITH replication = {'class': 'SimpleStrategy', "
                            "'replication_factor': 1}")
            session.execute("CREATE TABLE bursts.t (id int PRIMARY KEY, v blob)")
            steps["table"] = time.monotonic() - t0
            insert = session.prepare("INSERT INTO bursts.t (id, v) VALUES (?, ?)")
            execute_concurrent_with_args(session, insert, [(i, bytes(4096)) for i in range(args.rows)], concurrency=64)
            steps["writes"] = time.monotonic() - t0
            select = session.prepare("SELECT v FROM bursts.t WHERE id = ?")
            execute_concurrent_with_args(session, select, [(i,) for i in range(args.rows)], concurrency=64)
            steps["reads"] = time.monotonic() - t0
    finally:
        stop.set()
        thread.join(2)
        shutil.rmtree(root, ignore_errors=True)
    print("steps ended at, s: " + ", ".join(f"{k} {v:.1f}" for k, v in steps.items()))
    ready = next((o for t, o in samples if t >= steps["CQL-ready"]), 0)
    print(f"{len(samples)} samples; own memory at CQL-ready {ready / MIB:.0f} MiB, at most "
          f"{max(o for _, o in samples) / MIB:.0f} MiB")
    for after in ("CQL-ready", "table"):
        figures = [largest_growth(samples, w, steps[after]) for w in (0.1, 0.25, 0.5)]
        print(f"from {after} on: largest growth within 0.1 / 0.25 / 0.5 s: "
              + " / ".join(f"{g:.1f} MiB (at {t:.1f} s)" for g, t in figures))


if __name__ == "__main__":
    main()
