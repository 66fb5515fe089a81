"""What an embedded cluster bounds on each node: its page cache (a memory cgroup) and its disk
reads (a block-I/O cgroup), and the one line a report states about it.

    bounds = NodeBounds("cassperf-dc1_1-3f2a9c", page_cache_mb=64, read_mb_s=50)
    bounds.prepare({"node1": [data_dir, commitlog_dir]})   # cgroups made, reads throttled
    argv = bounds.command("node1", argv)                    # the node joins its cgroup at exec
    bounds.govern("node1")                                  # once CQL-ready: the limit follows the node
    bounds.release()                                        # after the nodes stopped

LocalCluster holds one (cassperf.cluster.cgroups says how the bound is kept and why no node is
OOM-killed). Where the machine cannot make the cgroups, ``problem`` holds one line saying what
could not be bounded and why, and the nodes run unbounded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from cassperf.cluster import cgroups
from cassperf.cluster.cgroups import MIB, NodeBound, NodeCgroup, PageCacheGovernor
from cassperf.errors import ConfigError


def check_options(page_cache_mb: int | None, read_mb_s: float | None, read_iops: int | None) -> None:
    """ConfigError (one line) for a bound that is not a positive number."""
    if page_cache_mb is not None and (isinstance(page_cache_mb, bool) or not isinstance(page_cache_mb, int)
                                      or page_cache_mb < 1):
        raise ConfigError(f"page_cache_mb={page_cache_mb!r}: expected whole MiB >= 1 of page cache per node, or None "
                          "(no bound)")
    if read_mb_s is not None and (isinstance(read_mb_s, bool) or not isinstance(read_mb_s, (int, float))
                                  or not read_mb_s > 0):
        raise ConfigError(f"read_mb_s={read_mb_s!r}: expected MB/s > 0 of disk reads per node, or None (no throttle)")
    if read_iops is not None and (isinstance(read_iops, bool) or not isinstance(read_iops, int) or read_iops < 1):
        raise ConfigError(f"read_iops={read_iops!r}: expected whole reads per second >= 1 per node, or None "
                          "(no throttle)")


class NodeBounds:
    """The bounds of one cluster's nodes (module doc). `key`: the cluster's owner key (its cgroups
    live in cassperf-<key>); `say`: where a problem line goes when found."""

    def __init__(self, key: str, page_cache_mb: int | None = None, read_mb_s: float | None = None,
                 read_iops: int | None = None, say: Callable[[str], None] | None = None) -> None:
        check_options(page_cache_mb, read_mb_s, read_iops)
        self.key = key
        self.page_cache_mb = page_cache_mb
        self.read_mb_s = read_mb_s
        self.read_iops = read_iops
        self.say = say
        #: why the nodes run unbounded (one line), None when bounded or nothing was asked
        self.problem: str | None = None
        self.cgroups: dict[str, NodeCgroup] = {}
        self.devices: dict[str, list[str]] = {}       # node -> the disks whose reads are throttled
        self.made: list[Path] = []
        self.governor: PageCacheGovernor | None = None

    @property
    def asked(self) -> bool:
        return self.page_cache_mb is not None or self.reads_asked

    @property
    def reads_asked(self) -> bool:
        return self.read_mb_s is not None or self.read_iops is not None

    @property
    def bounded(self) -> bool:
        """Nodes started from now on run in their cgroups."""
        return self.asked and self.problem is None

    def _refuse(self, line: str) -> None:
        self.problem = line
        if self.say is not None:
            self.say(self.line())

    def prepare(self, storage: Mapping[str, Sequence[Path | str]]) -> None:
        """Make the cgroups of the nodes about to start (`storage`: node -> its data and commit log
        folders, whose disks get the read throttle). On refusal: `problem`, nothing left made."""
        if not self.asked or self.problem is not None:
            return
        controllers = cgroups.current()
        self.problem = cgroups.problem(controllers, self.page_cache_mb is not None, self.reads_asked)
        if self.problem is not None:
            self._refuse(self.problem)
            return
        assert controllers is not None
        try:
            for node, folders in storage.items():
                cgroup = cgroups.node_cgroup(controllers, self.key, node, io=self.reads_asked)
                self.made += [m for m in cgroups.make(cgroup) if m not in self.made]
                self.cgroups[node] = cgroup
                if self.reads_asked:
                    self._throttle(node, cgroup, folders)
        except (OSError, ConfigError) as exc:
            cgroups.remove(self.made)
            self.made, self.cgroups = [], {}
            self._refuse(str(exc).splitlines()[0] if isinstance(exc, ConfigError) else
                         f"cgroup {controllers.version}: {exc.strerror or exc} ({getattr(exc, 'filename', '')})")

    def _throttle(self, node: str, cgroup: NodeCgroup, folders: Sequence[Path | str]) -> None:
        disks: dict[str, tuple[int, int]] = {}
        for folder in folders:
            found = cgroups.whole_disk_of(folder)
            if found is None:
                raise ConfigError(f"{node}'s folder {folder} is on no block device (tmpfs?), so its reads cannot be "
                                  "throttled")
            disks[found[0]] = found[1]
        bps = round(self.read_mb_s * 1e6) if self.read_mb_s is not None else None
        for devno in disks.values():
            cgroup.set_reads(devno, bps, self.read_iops)
        self.devices[node] = sorted(disks)

    def jvm_options(self) -> list[str]:
        """JVM options of bounded nodes: the heap resident from the start (cgroups module doc)."""
        return [cgroups.PRETOUCH] if self.bounded and self.page_cache_mb is not None else []

    def command(self, node: str, argv: Sequence[str]) -> list[str]:
        """`argv` started inside the node's cgroup (unchanged when it has none)."""
        cgroup = self.cgroups.get(node)
        return cgroups.join_command(cgroup, argv) if cgroup is not None else list(argv)

    def govern(self, node: str, cgroup: NodeCgroup | None = None) -> None:
        """From now on keep `node`'s limit at its own memory + the bound (a node found running:
        its `cgroup`, e.g. from cgroups.of_process). Returns once its first limit is set (its own
        memory settled: cgroups.SETTLE_S), so a node started or adopted is bounded from then on."""
        if self.page_cache_mb is None:
            return
        cgroup = cgroup or self.cgroups.get(node)
        if cgroup is None:
            return
        self.cgroups[node] = cgroup
        if self.governor is None:
            self.governor = PageCacheGovernor(self.page_cache_mb * MIB)
        governed = self.governor.add(node, cgroup)
        self.governor.start()
        deadline = time.monotonic() + self.governor.settle_s + 2 * self.governor.interval_s
        while not governed.settled and not governed.errors and time.monotonic() < deadline:
            time.sleep(self.governor.interval_s / 2)

    def folders(self) -> list[str]:
        """Every cgroup folder of this cluster's nodes that this process knows (for the owner record)."""
        known = [*self.made, *(f for c in self.cgroups.values() for f in c.folders)]
        known += [f.parent for f in list(known) if f.parent.name.startswith(cgroups.PREFIX)]
        return sorted({str(f) for f in known})

    def lift(self) -> list[str]:
        """Stop governing and lift every limit (the nodes are handed to the user, whom no governor
        follows): the names of the nodes whose limit was lifted."""
        if self.governor is not None:
            self.governor.stop()
        lifted = []
        for node, cgroup in self.cgroups.items():
            try:
                cgroup.set_limit(None)
                lifted.append(node)
            except OSError:
                pass
        return lifted

    def release(self, also: Iterable[str | Path] = ()) -> list[Path]:
        """After the nodes stopped: stop the governor, remove the cgroups (and `also`: folders a
        record or the nodes' /proc entries named). Returns the folders removed."""
        if self.governor is not None:
            self.governor.stop()
            self.governor = None
        folders = {Path(f) for f in [*self.folders(), *also]}
        folders |= {f.parent for f in list(folders) if f.parent.name.startswith(cgroups.PREFIX)}
        removed = cgroups.remove(folders)
        self.cgroups, self.made = {}, []
        return removed

    def node_bounds(self, running: Mapping[str, int | None]) -> list[NodeBound]:
        """Each running node's bound now (`running`: node -> pid), read from its cgroup: works in any
        process, not only the one that governs."""
        out = []
        for node, pid in running.items():
            cgroup = cgroups.of_process(pid, node) if pid is not None else None
            if cgroup is None or self.page_cache_mb is None:
                continue
            try:
                r = cgroup.read_memory()
            except (OSError, ValueError):
                continue
            out.append(NodeBound(node, self.page_cache_mb * MIB, r.limit, r.own, r.file, r.anon))
        return out

    def line(self) -> str:
        """What the report states (cgroups.bound_line)."""
        return cgroups.bound_line(self.page_cache_mb, self.problem, self.read_mb_s, self.read_iops)

    def describe(self) -> dict[str, object]:
        """The cluster description's part: the bounds asked, what holds them, the line."""
        if not self.asked:
            return {}
        return {"page_cache_mb": self.page_cache_mb, "read_mb_s": self.read_mb_s, "read_iops": self.read_iops,
                "bounds": self.line(), **({"bounds_problem": self.problem} if self.problem else {}),
                **({"throttled_disks": self.devices} if self.devices else {})}

    def stalls(self) -> dict[str, int]:
        """Per governed node: the checks that found it waiting at its limit (cgroups.Governed)."""
        if self.governor is None:
            return {}
        return {name: g.stalls for name, g in self.governor.nodes.items()}
