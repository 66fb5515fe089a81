"""What the sampler's host and client sources cost per sample, without a node: the host rows (CPU
split, memory, network, disks, the data devices' /proc/diskstats rows), one node process's rows
(CPU, RSS, /proc/<pid>/io, its cgroup's memory.stat when it has one) and the client's processes.

    .venv/bin/python bench/sampler_cost.py [--samples 200] [--nodes 3] [--clients 3]

The "nodes" and "clients" are sleeping child processes (what is read is the same files a JVM's or
a worker's /proc entries are); with memory cgroups here (root), each node process runs in a node
cgroup of its own, as a bounded node does. Printed: wall and CPU microseconds per sample of each
source (median and p90 over the samples).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path

from cassperf.cluster import cgroups
from cassperf.cluster.node_bounds import NodeBounds
from cassperf.sampler import NodeRef
from cassperf.sampler.client import ClientProcesses, ClientSource
from cassperf.sampler.host import HostSource


def timed(fn, samples: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(samples):
        w0, c0 = time.perf_counter(), time.thread_time()
        fn()
        wall.append((time.perf_counter() - w0) * 1e6)
        cpu.append((time.thread_time() - c0) * 1e6)
    return wall, cpu


def show(name: str, wall: list[float], cpu: list[float]) -> None:
    def q(xs: list[float]) -> str:
        xs = sorted(xs)
        return f"{statistics.median(xs):8.0f} {xs[int(0.9 * (len(xs) - 1))]:8.0f}"

    print(f"{name:28} wall us (median p90) {q(wall)}   CPU us {q(cpu)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--clients", type=int, default=3)
    args = parser.parse_args()
    bounds = NodeBounds(f"bench-sampler-{os.getpid()}", page_cache_mb=64)
    bounds.prepare({f"node{i + 1}": [Path("/")] for i in range(args.nodes)})
    procs = [subprocess.Popen(bounds.command(f"node{i + 1}", ["sleep", "600"])) for i in range(args.nodes)]
    clients_p = [subprocess.Popen(["sleep", "600"]) for _ in range(args.clients)]
    try:
        time.sleep(0.3)
        nodes = [NodeRef(f"node{i + 1}", "127.0.0.1", f"node{i + 1}", pid=lambda p=p: p.pid, storage=("/",))
                 for i, p in enumerate(procs)]
        host = HostSource(hostname="bench")
        host.prime(nodes)
        print(f"{args.nodes} node processes ({'in node cgroups' if bounds.problem is None else bounds.problem}), "
              f"data devices {host.devices}, {args.clients} client processes, {args.samples} samples")
        show("host rows", *timed(host.read_host, args.samples))
        show("one node's process rows", *timed(lambda: host.read_process(nodes[0]), args.samples))
        show(f"host source, {args.nodes} nodes", *timed(lambda: host.sample(nodes), args.samples))
        clients = ClientProcesses()
        clients.add("engine", os.getpid())
        for i, p in enumerate(clients_p):
            clients.add(f"worker-{i}", p.pid)
        source = ClientSource(clients)
        show(f"client source, {args.clients + 1} procs", *timed(source.read, args.samples))
        if bounds.problem is None:
            cg = cgroups.of_process(procs[0].pid, "node1")
            assert cg is not None
            show("governor check, one node", *timed(cg.read_memory, args.samples))
    finally:
        for p in procs + clients_p:
            p.kill()
            p.wait()
        bounds.release()


if __name__ == "__main__":
    main()
