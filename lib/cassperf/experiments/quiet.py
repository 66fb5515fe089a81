"""Wait, before a measured run, until the study's own Cassandra nodes are idle.

On a machine where the nodes and the client share the cores, a node that ran the previous arm goes
on working after its load ends: HotSpot's C2 compiler threads drain their queue (measured in 04 on
2 cores: an idle node's C2 at 0.3-1.0 of a core for up to 10 s after its last load, during the next
deployment's measured run), and memtable flushes and compactions follow writes. That work lands in
whichever run comes next, so it is run-to-run noise no block design removes.

:func:`wait_quiet` samples the CPU time of every local node's JVM (``cluster.local_nodes()``, the
pids of the nodes this machine runs, containers included) over ``WINDOW_S`` and returns once their
sum stays below ``IDLE_CORES``, or after ``max_s``. Nodes that run elsewhere are not watched."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: the nodes' summed CPU, in cores, below which they count as idle (three idle 5.0 nodes: 0.03-0.06)
IDLE_CORES = 0.15
#: the window the CPU is measured over, seconds
WINDOW_S = 0.5


@dataclass(frozen=True)
class Quiet:
    """What a wait found: seconds waited, the nodes' CPU in the last window (cores), how many
    node processes were watched, and whether they went idle within the wait."""

    waited_s: float
    cores: float
    watched: int
    idle: bool

    def to_json(self) -> dict[str, Any]:
        return {"waited_s": round(self.waited_s, 1), "cores": round(self.cores, 2), "idle": self.idle,
                "watched": self.watched}

    @property
    def note(self) -> str:
        if not self.watched:
            return "no local node to wait for"
        if self.idle:
            return f"nodes idle after {self.waited_s:.1f} s ({self.cores:.2f} cores)"
        return f"nodes still busy after {self.waited_s:.1f} s ({self.cores:.2f} cores): ran anyway"


def _pids(clusters: Iterable[Any]) -> list[int]:
    out = []
    for cluster in clusters:
        for node in cluster.local_nodes() or []:
            pid = node.pid()
            if pid is not None:
                out.append(pid)
    return out


def _cpu_s(procs: list[Any]) -> float:
    import psutil

    total = 0.0
    for proc in procs:
        try:
            t = proc.cpu_times()
        except psutil.Error:               # gone: counts as idle (the run will say what it met)
            continue
        total += t.user + t.system + getattr(t, "children_user", 0.0) + getattr(t, "children_system", 0.0)
    return total


def wait_quiet(clusters: Iterable[Any], max_s: float, idle_cores: float = IDLE_CORES,
               window_s: float = WINDOW_S) -> Quiet:
    """Wait until every local node of ``clusters`` is idle (their summed CPU below ``idle_cores``
    over ``window_s``), at most ``max_s`` seconds (module docstring)."""
    import psutil

    procs = []
    for pid in _pids(clusters):
        try:
            procs.append(psutil.Process(pid))
        except psutil.Error:
            pass
    if not procs or max_s <= 0:
        return Quiet(0.0, 0.0, len(procs), True)
    start = time.monotonic()
    while True:
        t0, c0 = time.monotonic(), _cpu_s(procs)
        time.sleep(window_s)
        t1, c1 = time.monotonic(), _cpu_s(procs)
        cores = max(0.0, (c1 - c0) / (t1 - t0))
        waited = t1 - start
        if cores < idle_cores:
            return Quiet(waited, cores, len(procs), True)
        if waited >= max_s:
            return Quiet(waited, cores, len(procs), False)


def describe(waits: list[dict[str, Any]], max_s: float) -> str:
    """One sentence on the waits of a study's measured runs (their slots' ``quiet`` entries)."""
    if not waits:
        return ""
    import statistics

    if not any(w.get("watched", 1) for w in waits):
        return (f"quiet_max_s={max_s:g} asked for a wait for idle nodes before each measured run, but no node of "
                f"the study runs on this machine: nothing was watched or waited for.")

    seconds = [float(w["waited_s"]) for w in waits]
    busy = sum(1 for w in waits if not w["idle"])
    return (f"Before each measured run, the executor waited for the study's nodes to go idle (their CPU below "
            f"{IDLE_CORES:g} cores over {WINDOW_S:g} s, at most {max_s:g} s), so that one run does not carry the "
            f"JIT compilation, flushes and compactions of the one before: median {statistics.median(seconds):.1f} s, "
            f"longest {max(seconds):.1f} s; " + (f"{busy} of {len(waits)} runs started with the nodes still busy."
                                                 if busy else f"all {len(waits)} runs started on idle nodes."))
