"""The machine the sampler runs on, and local nodes' JVM processes, through psutil.

Host rows (node "host:<hostname>"): host_cpu_pct and its parts host_cpu_user_pct,
host_cpu_system_pct, host_cpu_iowait_pct, host_cpu_steal_pct (since the previous sample; the
first sample measures from the source's creation), host_load_1m,
host_mem_used_bytes, host_net_recv_bytes / host_net_sent_bytes (all interfaces, loopback
included: a LocalCluster's traffic is on loopback), host_disk_read_bytes /
host_disk_write_bytes (all disks; absent where the kernel exposes no disk counters, e.g. some
containers).

Process rows (node = the node's name; nodes with a local pid only): process_cpu_pct (since the
previous sample, 100 = one core busy), process_rss_bytes, process_read_bytes /
process_write_bytes (/proc/<pid>/io), and for a node in a memory cgroup of its own
(cassperf.cluster.cgroups: a page-cache bound) node_page_cache_bytes, node_anon_bytes,
node_own_memory_bytes and node_memory_limit_bytes from the cgroup's memory.stat.

Disk rows (node "disk:<kernel name>"): every block device under a local node's data or commit
log folder (NodeRef.storage; a folder on tmpfs has none), from /proc/diskstats: disk_read_bytes,
disk_write_bytes, disk_reads, disk_writes, disk_busy_ms (counters).

For a remote cluster the host is the client machine, which is worth watching too: a saturated
client caps throughput.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence

import psutil

from pathlib import Path
from typing import Any, NamedTuple

from cassperf.cluster.cgroups import NodeCgroup, of_process
from cassperf.sampler.base import NodeRef, Outcome, Reading, Source, read_node, utc_now
from cassperf.sampler.names import disk_node, host_node

SECTOR_BYTES = 512            # /proc/diskstats counts 512-byte sectors whatever the device's own size


def _total(times: object) -> float:
    """All CPU time; on Linux guest time is already inside user/nice (as psutil counts it)."""
    return sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)  # type: ignore[arg-type]


def cpu_split(before: Any, now: Any) -> dict[str, float]:
    """Host CPU between two psutil.cpu_times() readings, % of all cores: host_cpu_pct (busy: all
    but idle and iowait) and its parts host_cpu_user_pct (user + nice), host_cpu_system_pct
    (system + irq + softirq), host_cpu_iowait_pct, host_cpu_steal_pct (the parts a platform
    lacks are left out). {} when no time passed."""
    total = _total(now) - _total(before)
    if total <= 0:
        return {}

    def delta(*names: str) -> float | None:
        if not all(hasattr(now, n) for n in names):
            return None
        return sum(getattr(now, n) - getattr(before, n) for n in names)

    def pct(value: float) -> float:
        return min(100.0, max(0.0, 100.0 * value / total))

    idle = (delta("idle") or 0.0) + (delta("iowait") or 0.0)
    out = {"host_cpu_pct": pct(total - idle)}
    for metric, names in (("host_cpu_user_pct", ("user", "nice")), ("host_cpu_system_pct", ("system",)),
                          ("host_cpu_iowait_pct", ("iowait",)), ("host_cpu_steal_pct", ("steal",))):
        value = delta(*names)
        if value is not None:
            if metric == "host_cpu_system_pct":
                value += (delta("irq") or 0.0) + (delta("softirq") or 0.0)
            out[metric] = pct(value)
    return out


class DiskCounters(NamedTuple):
    """One device's /proc/diskstats counters."""

    reads: int
    read_bytes: int
    writes: int
    write_bytes: int
    busy_ms: int


def diskstats(text: str, names: Sequence[str]) -> dict[str, DiskCounters]:
    """The counters of the devices `names` in /proc/diskstats text (fields after the name: reads
    completed, merged, sectors read, ms reading, writes completed, merged, sectors written, ms
    writing, in flight, io_ticks ms, ...)."""
    wanted = set(names)
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 13 and f[2] in wanted:
            out[f[2]] = DiskCounters(int(f[3]), int(f[5]) * SECTOR_BYTES, int(f[7]), int(f[9]) * SECTOR_BYTES,
                                     int(f[12]))
    return out


def device_of(folder: str) -> str | None:
    """The kernel name of the block device holding `folder` (vda, vda1, dm-0, loop3); None on no
    block device (tmpfs) or when the folder is missing."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    if major == 0:
        return None
    try:
        return Path(os.readlink(f"/sys/dev/block/{major}:{minor}")).name
    except OSError:
        return None


class HostSource(Source):
    name = "host"

    def __init__(self, hostname: str | None = None, processes: bool = True) -> None:
        self.node = host_node(hostname or socket.gethostname())
        self.processes = processes
        self._procs: dict[int, psutil.Process] = {}
        self._cpu = psutil.cpu_times()              # the CPU window starts now (own state: other
                                                    # callers of psutil.cpu_percent() do not move it)
        self.devices: list[str] = []                # the nodes' data devices (prime)
        self._cgroups: dict[int, NodeCgroup | None] = {}

    def read_host(self) -> list[Reading]:
        when = utc_now()
        node = self.node
        now = psutil.cpu_times()
        split = cpu_split(self._cpu, now)
        self._cpu = now
        out = [Reading(when, node, metric, value) for metric, value in split.items()]
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
        return out + self.read_disks()

    def read_disks(self) -> list[Reading]:
        """The data devices' counters (disk:<name> rows)."""
        if not self.devices:
            return []
        when = utc_now()
        found = diskstats(Path("/proc/diskstats").read_text(), self.devices)
        out = []
        for name, c in sorted(found.items()):
            node = disk_node(name)
            out += [Reading(when, node, "disk_read_bytes", float(c.read_bytes)),
                    Reading(when, node, "disk_write_bytes", float(c.write_bytes)),
                    Reading(when, node, "disk_reads", float(c.reads)),
                    Reading(when, node, "disk_writes", float(c.writes)),
                    Reading(when, node, "disk_busy_ms", float(c.busy_ms))]
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
                io = proc.io_counters()
        except psutil.Error as exc:
            self._procs.pop(pid, None)
            raise OSError(f"process {pid} of {node.name}: {exc}") from None
        return [Reading(when, node.name, "process_cpu_pct", float(cpu)),
                Reading(when, node.name, "process_rss_bytes", float(rss)),
                Reading(when, node.name, "process_read_bytes", float(io.read_bytes)),
                Reading(when, node.name, "process_write_bytes", float(io.write_bytes)),
                *self.read_cgroup(node.name, pid)]

    def read_cgroup(self, name: str, pid: int) -> list[Reading]:
        """A node's memory from its own cgroup (none when it runs in none: its usage would be
        everyone's)."""
        if pid not in self._cgroups:
            self._cgroups[pid] = of_process(pid, name)
        cgroup = self._cgroups[pid]
        if cgroup is None:
            return []
        when = utc_now()
        r = cgroup.read_memory()
        out = [Reading(when, name, "node_page_cache_bytes", float(r.file)),
               Reading(when, name, "node_anon_bytes", float(r.anon)),
               Reading(when, name, "node_own_memory_bytes", float(r.own))]
        if r.limit is not None:
            out.append(Reading(when, name, "node_memory_limit_bytes", float(r.limit)))
        io = cgroup.read_io()
        if io is not None:
            out.append(Reading(when, name, "node_disk_reads", float(io[0])))
            if io[1] is not None:
                out.append(Reading(when, name, "node_read_iops_limit", float(io[1])))
        return out

    def prime(self, nodes: Sequence[NodeRef]) -> None:
        """Start the CPU windows of the host and of every local node's process; find the
        devices under the nodes' data and commit log folders."""
        self._cpu = psutil.cpu_times()
        self.devices = sorted({d for node in nodes for f in node.storage if (d := device_of(f)) is not None})
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
