"""The machine the sampler runs on, and local nodes' JVM processes, through psutil.

Host rows (node "host:<hostname>"): host_cpu_pct and host_cpu_iowait_pct (since the previous
sample; the first sample measures from the source's creation), host_load_1m,
host_mem_used_bytes, host_net_recv_bytes / host_net_sent_bytes (all interfaces, loopback
included: a LocalCluster's traffic is on loopback), host_disk_read_bytes /
host_disk_write_bytes (all disks; absent where the kernel exposes no disk counters, e.g. some
containers).

Process rows (node = the node's name; nodes with a local pid only): process_cpu_pct (since the
previous sample, 100 = one core busy), process_rss_bytes.

For a remote cluster the host is the client machine, which is worth watching too: a saturated
client caps throughput.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence

import psutil

from cassperf.sampler.base import NodeRef, Outcome, Reading, Source, read_node, utc_now
from cassperf.sampler.names import host_node


def _total(times: object) -> float:
    """All CPU time; on Linux guest time is already inside user/nice (as psutil counts it)."""
    return sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)  # type: ignore[arg-type]


class HostSource(Source):
    name = "host"

    def __init__(self, hostname: str | None = None, processes: bool = True) -> None:
        self.node = host_node(hostname or socket.gethostname())
        self.processes = processes
        self._procs: dict[int, psutil.Process] = {}
        self._cpu = psutil.cpu_times()              # the CPU window starts now (own state: other
                                                    # callers of psutil.cpu_percent() do not move it)

    def cpu_since_last(self) -> tuple[float, float | None]:
        """(busy %, iowait %) of all cores since the previous call; idle and iowait count as not
        busy, as psutil.cpu_percent counts them."""
        now = psutil.cpu_times()
        before, self._cpu = self._cpu, now
        total = _total(now) - _total(before)
        if total <= 0:
            return 0.0, (0.0 if hasattr(now, "iowait") else None)
        idle = (now.idle - before.idle) + (getattr(now, "iowait", 0.0) - getattr(before, "iowait", 0.0))
        busy = min(100.0, max(0.0, 100.0 * (total - idle) / total))
        iowait = None
        if hasattr(now, "iowait"):
            iowait = min(100.0, max(0.0, 100.0 * (now.iowait - before.iowait) / total))
        return busy, iowait

    def read_host(self) -> list[Reading]:
        when = utc_now()
        node = self.node
        busy, iowait = self.cpu_since_last()
        out = [Reading(when, node, "host_cpu_pct", busy)]
        if iowait is not None:
            out.append(Reading(when, node, "host_cpu_iowait_pct", iowait))
        out.append(Reading(when, node, "host_load_1m", float(os.getloadavg()[0])))
        mem = psutil.virtual_memory()
        out.append(Reading(when, node, "host_mem_used_bytes", float(mem.total - mem.available)))
        net = psutil.net_io_counters()
        if net is not None:
            out.append(Reading(when, node, "host_net_recv_bytes", float(net.bytes_recv)))
            out.append(Reading(when, node, "host_net_sent_bytes", float(net.bytes_sent)))
        disk = psutil.disk_io_counters()
        if disk is not None:
            out.append(Reading(when, node, "host_disk_read_bytes", float(disk.read_bytes)))
            out.append(Reading(when, node, "host_disk_write_bytes", float(disk.write_bytes)))
        return out

    def _process(self, pid: int) -> psutil.Process:
        proc = self._procs.get(pid)
        if proc is None:
            proc = self._procs[pid] = psutil.Process(pid)
            proc.cpu_percent(interval=None)          # first call starts the window
        return proc

    def read_process(self, node: NodeRef) -> list[Reading]:
        pid = node.pid() if node.pid is not None else None
        if pid is None:
            return []
        when = utc_now()
        try:
            proc = self._process(pid)
            with proc.oneshot():
                cpu = proc.cpu_percent(interval=None)
                rss = proc.memory_info().rss
        except psutil.Error as exc:
            self._procs.pop(pid, None)
            raise OSError(f"process {pid} of {node.name}: {exc}") from None
        return [Reading(when, node.name, "process_cpu_pct", float(cpu)),
                Reading(when, node.name, "process_rss_bytes", float(rss))]

    def prime(self, nodes: Sequence[NodeRef]) -> None:
        """Start the CPU windows of the host and of every local node's process."""
        self._cpu = psutil.cpu_times()
        for node in nodes:
            pid = node.pid() if node.pid is not None else None
            if pid is not None:
                try:
                    self._process(pid)
                except psutil.Error:
                    pass                             # gone already: read_process will say so

    def sample(self, nodes: Sequence[NodeRef]) -> list[Outcome]:
        outcomes = [read_node(self.node, self.read_host)]
        if self.processes:
            outcomes += [read_node(n.name, lambda n=n: self.read_process(n))  # type: ignore[misc]
                         for n in nodes if n.pid is not None]
        return outcomes
