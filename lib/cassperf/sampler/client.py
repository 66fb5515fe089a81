"""The load generator's own CPU: the processes that make the load, each as a `client:<label>` row.

    clients = ClientProcesses()
    clients.add("engine", os.getpid())              # the engine's parent
    clients.add("worker-0", worker.pid)             # each worker
    clients.add("cassandra-stress", proc.pid, tree=True)   # a tool and every process it starts

`ClientSource` (the sampler adds one when it samples the host) writes `client_cpu_s` per
process: its CPU seconds (user + system, every thread) since it started, a counter. A process
first seen after it started gets one more row, 0 s at its start time, so its counter covers its
whole life and no CPU falls between its start and the sampler's first look. A process of a tree
is found among the descendants of the tree's root at each sample; one that ended between two
samples has its last reading as its last row.

Client CPU is % of one core (CPU seconds per second): a single-threaded event loop, the engine's
worker, is saturated near 100% whatever the host's cores.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import psutil

from cassperf.sampler.base import NodeRef, Outcome, Reading, Source, read_node, utc_now
from cassperf.sampler.names import CLIENT_PREFIX, client_node


@dataclass(frozen=True)
class ClientProcess:
    """A process of the load generator: its label, pid, and whether its descendants count too."""

    label: str
    pid: int
    tree: bool = False


class ClientProcesses:
    """The load generator's processes, registered as they start (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[ClientProcess] = []

    def add(self, label: str, pid: int, tree: bool = False) -> None:
        with self._lock:
            self._items.append(ClientProcess(label, pid, tree))

    def items(self) -> list[ClientProcess]:
        with self._lock:
            return list(self._items)

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._items)


def cpu_seconds(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return float(t.user + t.system)


class ClientSource(Source):
    """client_cpu_s of every registered process (module doc), as one outcome "client"."""

    name = "client"

    def __init__(self, clients: ClientProcesses) -> None:
        self.clients = clients
        self._procs: dict[int, psutil.Process] = {}
        self._seen: set[tuple[int, float]] = set()      # (pid, start time): a pid reused is another process

    def _handle(self, pid: int) -> psutil.Process | None:
        proc = self._procs.get(pid)
        try:
            if proc is None or not proc.is_running():
                proc = self._procs[pid] = psutil.Process(pid)
        except psutil.Error:
            self._procs.pop(pid, None)
            return None
        return proc

    def _processes(self) -> list[tuple[str, psutil.Process]]:
        found: list[tuple[str, psutil.Process]] = []
        for item in self.clients.items():
            root = self._handle(item.pid)
            if root is None:
                continue
            found.append((item.label, root))
            if item.tree:
                try:
                    children = root.children(recursive=True)
                except psutil.Error:
                    children = []
                for child in children:
                    try:
                        found.append((f"{item.label}/{child.name()}-{child.pid}", child))
                    except psutil.Error:
                        continue
        return found

    def read(self) -> list[Reading]:
        out: list[Reading] = []
        for label, proc in self._processes():
            node = client_node(label)
            try:
                with proc.oneshot():
                    cpu = cpu_seconds(proc)
                    started = proc.create_time()
            except psutil.Error:
                continue
            when = utc_now()
            if (proc.pid, started) not in self._seen:
                self._seen.add((proc.pid, started))
                out.append(Reading(pd.Timestamp(started, unit="s", tz="UTC"), node, "client_cpu_s", 0.0))
            out.append(Reading(when, node, "client_cpu_s", cpu))
        return out

    def sample(self, nodes: Sequence[NodeRef]) -> list[Outcome]:
        if not self.clients:
            return []
        return [read_node(f"{CLIENT_PREFIX}*", self.read)]
