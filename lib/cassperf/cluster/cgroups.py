"""Memory and block-I/O cgroups of embedded nodes: a bound on each node's page cache, and
optionally a slower disk.

A node started with ``LocalCluster(page_cache_mb=64)`` runs in a memory cgroup of its own,
``<this process's cgroup>/cassperf-<cluster key>/<node>``, whose limit is kept at

    limit = the node's memory that is not reclaimable page cache + the bound

so the clean page cache the node may hold (its file pages: SSTables, index files it read or
wrote) is at most the bound. "Not reclaimable page cache" is the cgroup's usage minus its clean
file pages: the JVM's anonymous memory (heap, metaspace, code cache, direct buffers, thread
stacks), kernel memory charged to it (page tables, sockets, slab), tmpfs pages (not reclaimable
without swap), and file pages that are dirty or under writeback. Those last are the commit log's
memory-mapped segments (32 MiB each) and flushes being written: reclaim cannot free them at once,
so counted against the bound they could fill it and leave nothing to reclaim.

The JVM's anonymous memory changes while it runs, and with no swap a cgroup at its limit with
nothing left to reclaim calls the OOM killer: a killed node is a failed study. So:

- the heap is resident from the start (-Xms = -Xmx, as every embedded node has, plus
  -XX:+AlwaysPreTouch): the bulk of the anonymous memory does not move;
- a governor (``PageCacheGovernor``, a thread of the process that started the nodes) re-reads
  each node's memory every ``GOVERNOR_INTERVAL_S`` and moves the limit to the formula above (up
  when the node's own memory grew, down when it shrank, in steps of at least
  ``HYSTERESIS_BYTES``). Between two checks the page cache may hold less than the bound (the
  node's own memory grew) or up to the bound plus what that memory shrank by;
- the first limit waits until the node is CQL-ready and its own memory has settled (``SETTLE_S``):
  as it becomes CQL-ready a node's own memory grows by about 70 MiB within 0.1 s
  (bench/node_memory_bursts.py). A limit set before that burst left it less room than it took,
  and with the OOM killer off a charge made inside a system call (metaspace or code cache the
  JVM commits, page cache for ``read()``) fails at once at the limit (ENOMEM; only a page fault
  waits: the kernel's memcg1_oom_prepare): the JVM died, unable to commit metaspace or to read
  classes from its own jars (measurements.md, "Page cache bound"). Under load, the bursts
  measured there were at most 9.5 MiB within 0.1 s (17.5 MiB within 0.25 s): inside the room a
  bound leaves between two checks;
- the OOM killer is off for the node's cgroup (cgroup v1 ``memory.oom_control``; cgroup v2 uses
  ``memory.high``, which reclaims and throttles but never kills): a node whose own memory grew
  by more than the bound between two checks waits in its page fault (at most about one interval)
  until the governor raises its limit, instead of being killed (a system call's charge fails:
  above). The governor counts such waits (``stalls``)
  and answers each with at least ``STALL_STEP_BYTES`` more (file pages that are dirty or under
  writeback cannot be reclaimed at once, so own memory + the bound may not be above the limit
  yet); its next regular check brings the limit back to the formula.

The bound is on the page cache charged to the node: a page is charged to the cgroup of the process
that first brought it into the cache, so pages another process read first (a `cat` of the SSTables)
are hits for the node without counting against its bound. What the node wrote itself (flushes,
compaction) and read first is its own; empty the host's cache before a cold read.

Where the governor is gone (its process was killed), the limits stay as they were; the next run
stops the nodes of a dead owner (cassperf.cluster.reaper) and removes their cgroups, or adopts
them and governs them again.

Reads of the node's data device can be throttled too (``read_mb_s``, ``read_iops``): cgroup v1
``blkio.throttle.read_bps_device`` / ``read_iops_device``, cgroup v2 ``io.max`` (``rbps``,
``riops``) on the whole disk that holds the node's data folder. Only reads: buffered writes reach
the disk from the kernel's flusher threads, which v1 does not charge to the writer's cgroup.

Where this machine cannot (not root, no memory controller, a v2 cgroup that cannot give its
children one), :func:`problem` says why in one line and the nodes run unbounded.
"""

from __future__ import annotations

import errno
import os
import shlex
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

MIB = 1 << 20
#: the folder that holds a cluster's node cgroups: cassperf-<cluster key>
PREFIX = "cassperf-"
#: how often the governor re-reads each node's memory, s
GOVERNOR_INTERVAL_S = 0.1
#: a node's first limit waits until its own memory moved by at most HYSTERESIS_BYTES between two
#: checks, or this long at most, s (module doc)
SETTLE_S = 10.0
#: the governor moves a limit only when it is off its target by more than this, bytes
HYSTERESIS_BYTES = 2 * MIB
#: v1's "no limit" (what the kernel shows for an unlimited cgroup is PAGE_COUNTER_MAX rounded down)
V1_UNLIMITED = 1 << 62
#: a node found waiting at its limit gets at least this much more at once, bytes: its own memory
#: plus the bound may not be above the limit (pages that cannot be reclaimed yet: dirty, under
#: writeback), and only a higher limit wakes it
STALL_STEP_BYTES = 8 * MIB
#: the JVM option that makes the heap resident at start (with -Xms = -Xmx)
PRETOUCH = "-XX:+AlwaysPreTouch"

Version = Literal["v1", "v2"]


# -- where this process's cgroups are -------------------------------------------------------------
@dataclass(frozen=True)
class Controllers:
    """This process's own cgroup folders, under which node cgroups are made: ``memory`` (v1: the
    memory hierarchy's; v2: the unified one), ``io`` (v1: blkio's; v2: the unified one). None
    where the controller is not mounted."""

    version: Version
    memory: Path | None
    io: Path | None


def _mounts(mountinfo: str) -> list[tuple[str, str, str, set[str]]]:
    """(fs type, mount point, root inside the hierarchy, super options) of every cgroup mount."""
    out = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        sep = fields.index("-")
        if len(fields) < sep + 4 or sep < 5:
            continue
        fstype = fields[sep + 1]
        if fstype in ("cgroup", "cgroup2"):
            out.append((fstype, fields[4].replace("\\040", " "), fields[3], set(fields[sep + 3].split(","))))
    return out


def _under(mount: str, root: str, path: str) -> Path | None:
    """The folder of cgroup `path` in a hierarchy mounted at `mount` whose mount shows `root`."""
    root = root.rstrip("/") or "/"
    if root != "/" and not (path == root or path.startswith(root + "/")):
        return None
    rel = path[len(root):] if root != "/" else path
    return Path(mount) / rel.lstrip("/")


def detect(proc_cgroup: str, mountinfo: str) -> Controllers | None:
    """This process's cgroup folders from /proc/self/cgroup and /proc/self/mountinfo: v1 where a
    v1 hierarchy carries the memory controller, else v2 (the unified hierarchy). None when
    neither is mounted."""
    paths: dict[str, str] = {}
    unified: str | None = None
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            unified = parts[2]
        for name in parts[1].split(","):
            if name:
                paths[name] = parts[2]
    mounts = _mounts(mountinfo)

    def v1(controller: str) -> Path | None:
        for fstype, point, root, options in mounts:
            if fstype == "cgroup" and controller in options and controller in paths:
                return _under(point, root, paths[controller])
        return None

    memory = v1("memory")
    if memory is not None:
        return Controllers("v1", memory, v1("blkio"))
    if unified is not None:
        for fstype, point, root, _ in mounts:
            if fstype == "cgroup2":
                own = _under(point, root, unified)
                if own is not None:
                    if own.name == SELF_LEAF:       # moved there by _enable_own_v2: its parent is ours
                        own = own.parent
                    return Controllers("v2", own, own)
    return None


def current() -> Controllers | None:
    """This process's cgroup folders (see detect); None without cgroups."""
    try:
        return detect(Path("/proc/self/cgroup").read_text(), Path("/proc/self/mountinfo").read_text())
    except OSError:
        return None


def _available_v2(folder: Path) -> set[str]:
    try:
        return set((folder / "cgroup.controllers").read_text().split())
    except OSError:
        return set()


def problem(controllers: Controllers | None, memory: bool, io: bool) -> str | None:
    """Why node cgroups with a memory bound (`memory`) and read throttling (`io`) cannot be made
    here, one line; None when they can (it changes nothing)."""
    if not memory and not io:
        return None
    if controllers is None:
        return "no cgroup file system is mounted here (/sys/fs/cgroup)"
    wanted = [(memory, "memory", controllers.memory), (io, "blkio" if controllers.version == "v1" else "io",
                                                        controllers.io)]
    for asked, name, folder in wanted:
        if not asked:
            continue
        if folder is None:
            return f"cgroup {controllers.version}: no {name} controller is mounted"
        if not folder.is_dir():
            return f"cgroup {controllers.version}: this process's {name} cgroup folder {folder} is not visible here"
        if controllers.version == "v2" and name not in _available_v2(folder):
            return (f"cgroup v2: the {name} controller is not available in this process's cgroup {folder} (its parent "
                    f"does not delegate it: cgroup.controllers lists {' '.join(sorted(_available_v2(folder))) or 'none'})")
        if not os.access(folder, os.W_OK):
            return (f"cgroup {controllers.version}: this process (uid {os.geteuid()}) may not make cgroups under "
                    f"{folder} (run as root, or in a cgroup delegated to this user)")
    return None


# -- one node's cgroup ----------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryReading:
    """A node cgroup's memory now, bytes. ``file``: page cache (active + inactive file pages,
    tmpfs not included); ``pinned``: the file pages among them that are dirty or under writeback
    (the commit log's mapped segments, a flush being written), which reclaim cannot free at once;
    ``own``: what the bound does not count (usage - file + pinned: anonymous memory, kernel
    memory, tmpfs, and the pinned pages); ``limit``: None when unlimited; ``stalled``: its tasks
    wait at the limit with nothing left to reclaim (v1 under_oom)."""

    usage: int
    file: int
    anon: int
    limit: int | None
    stalled: bool = False
    pinned: int = 0

    @property
    def own(self) -> int:
        return max(0, self.usage - self.file + min(self.pinned, self.file))


def _stat(path: Path) -> dict[str, int]:
    out = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lstrip("-").isdigit():
            out[key] = int(value)
    return out


def _limit(text: str) -> int | None:
    text = text.strip()
    if text == "max":
        return None
    value = int(text)
    return None if value >= V1_UNLIMITED else value


@dataclass(frozen=True)
class NodeCgroup:
    """One node's cgroup folders: ``memory`` (v2: the node's one folder), ``io`` (v1: its blkio
    folder; v2: the same folder; None: no read throttling)."""

    version: Version
    memory: Path
    io: Path | None = None

    @property
    def folders(self) -> list[Path]:
        return list(dict.fromkeys([self.memory, *([self.io] if self.io is not None else [])]))

    def procs_files(self) -> list[Path]:
        """The files a process writes its pid into to join this cgroup (every hierarchy)."""
        return [f / "cgroup.procs" for f in self.folders]

    def read_memory(self) -> MemoryReading:
        """The cgroup's memory now (MemoryReading); OSError when it is gone."""
        stat = _stat(self.memory / "memory.stat")
        if self.version == "v1":
            usage = int((self.memory / "memory.usage_in_bytes").read_text())
            oom = _stat(self.memory / "memory.oom_control")
            return MemoryReading(usage, stat.get("active_file", 0) + stat.get("inactive_file", 0), stat.get("rss", 0),
                                 _limit((self.memory / "memory.limit_in_bytes").read_text()),
                                 oom.get("under_oom", 0) == 1, stat.get("dirty", 0) + stat.get("writeback", 0))
        usage = int((self.memory / "memory.current").read_text())
        return MemoryReading(usage, stat.get("active_file", 0) + stat.get("inactive_file", 0), stat.get("anon", 0),
                             _limit((self.memory / "memory.high").read_text()),
                             pinned=stat.get("file_dirty", 0) + stat.get("file_writeback", 0))

    def read_io(self) -> tuple[int, int | None] | None:
        """(reads the cgroup's processes issued to its throttled disks, summed; the reads per second
        it is throttled to, the lowest over those disks, None when none) from v1
        blkio.throttle.io_serviced and read_iops_device, v2 io.stat and io.max; None without an I/O
        controller or a readable file."""
        if self.io is None:
            return None
        try:
            if self.version == "v1":
                served = (self.io / "blkio.throttle.io_serviced").read_text()
                limits = (self.io / "blkio.throttle.read_iops_device").read_text()
                reads = sum(int(f[2]) for f in (line.split() for line in served.splitlines())
                            if len(f) == 3 and f[1] == "Read")
                caps = [int(f[1]) for f in (line.split() for line in limits.splitlines()) if len(f) == 2]
            else:
                stat = (self.io / "io.stat").read_text()
                limits = (self.io / "io.max").read_text()
                reads = sum(int(kv.split("=")[1]) for line in stat.splitlines() for kv in line.split()[1:]
                            if kv.startswith("rios="))
                caps = [int(kv.split("=")[1]) for line in limits.splitlines() for kv in line.split()[1:]
                        if kv.startswith("riops=") and kv.split("=")[1] != "max"]
        except (OSError, ValueError, IndexError):
            return None
        return reads, (min(caps) if caps else None)

    def set_limit(self, limit: int | None) -> None:
        """The bound on the cgroup's memory, bytes (None: none). v1 memory.limit_in_bytes, v2
        memory.high (reclaim and throttle above it, never the OOM killer)."""
        if self.version == "v1":
            (self.memory / "memory.limit_in_bytes").write_text("-1" if limit is None else str(limit))
        else:
            (self.memory / "memory.high").write_text("max" if limit is None else str(limit))

    def set_reads(self, device: tuple[int, int], read_bps: int | None, read_iops: int | None) -> None:
        """Throttle the cgroup's reads of the whole disk `device` (major, minor)."""
        if self.io is None:
            raise ValueError("this node cgroup has no I/O controller")
        dev = f"{device[0]}:{device[1]}"
        if self.version == "v1":
            if read_bps is not None:
                (self.io / "blkio.throttle.read_bps_device").write_text(f"{dev} {read_bps}")
            if read_iops is not None:
                (self.io / "blkio.throttle.read_iops_device").write_text(f"{dev} {read_iops}")
        else:
            limits = [f"rbps={read_bps}" if read_bps is not None else "", f"riops={read_iops}" if read_iops is not None else ""]
            (self.io / "io.max").write_text(f"{dev} {' '.join(x for x in limits if x)}")

    def processes(self) -> list[int]:
        """The pids in the cgroup (its memory folder)."""
        try:
            return [int(x) for x in (self.memory / "cgroup.procs").read_text().split()]
        except OSError:
            return []


def group_name(cluster_key: str) -> str:
    """The folder of a cluster's node cgroups: cassperf-<cluster key>."""
    return f"{PREFIX}{cluster_key}"


def node_cgroup(controllers: Controllers, cluster_key: str, node: str, io: bool) -> NodeCgroup:
    """Where `node`'s cgroup of cluster `cluster_key` goes, under this process's own cgroups."""
    assert controllers.memory is not None
    memory = controllers.memory / group_name(cluster_key) / node
    io_folder = None
    if io:
        assert controllers.io is not None
        io_folder = controllers.io / group_name(cluster_key) / node
    return NodeCgroup(controllers.version, memory, io_folder)


def _enable_v2(folder: Path, names: Sequence[str]) -> None:
    """Give `folder`'s children the controllers `names` (v2 cgroup.subtree_control)."""
    have = set((folder / "cgroup.subtree_control").read_text().split())
    missing = [n for n in names if n not in have]
    if missing:
        (folder / "cgroup.subtree_control").write_text(" ".join(f"+{n}" for n in missing))


#: v2: the leaf this process moves itself into so that its own cgroup may hand controllers down
SELF_LEAF = f"{PREFIX}self"


def _enable_own_v2(own: Path, names: Sequence[str]) -> None:
    """v2: give this process's own cgroup's children `names`. A cgroup that holds processes cannot
    (the no-internal-process rule: EBUSY), so this process first moves itself into a leaf of its
    own, <own>/cassperf-self, as container runtimes do; other processes in the same cgroup still
    make it fail (OSError)."""
    try:
        _enable_v2(own, names)
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise
        leaf = own / SELF_LEAF
        leaf.mkdir(exist_ok=True)
        (leaf / "cgroup.procs").write_text(str(os.getpid()))
        _enable_v2(own, names)


def make(cgroup: NodeCgroup) -> list[Path]:
    """Make the node's cgroup folders (and the cluster's folder above them), unlimited, with the OOM
    killer off (v1) and memory.max unlimited (v2); returns the folders this made (for remove).
    A folder that exists is reused and its limit lifted (a node started again). OSError when the
    kernel refuses."""
    made: list[Path] = []
    for folder in cgroup.folders:
        for path in (folder.parent, folder):
            if cgroup.version == "v2" and path == folder:
                _enable_own_v2(folder.parent.parent, _v2_names(cgroup))
                _enable_v2(folder.parent, _v2_names(cgroup))
            try:
                path.mkdir()
                made.append(path)
            except FileExistsError:
                pass
    if cgroup.version == "v1":
        (cgroup.memory / "memory.oom_control").write_text("1")
    cgroup.set_limit(None)
    return made


def _v2_names(cgroup: NodeCgroup) -> list[str]:
    return ["memory", *(["io"] if cgroup.io is not None else [])]


def remove(folders: Iterable[Path | str], wait_s: float = 10.0) -> list[Path]:
    """Remove cgroup folders, deepest first; a folder still holding a process is retried for up
    to `wait_s` (a node that just exited leaves its cgroup a moment later), then left. Returns
    the folders removed. Only folders of cassperf's (a part named cassperf-*) are touched."""
    todo = sorted({Path(f) for f in folders if any(p.startswith(PREFIX) for p in Path(f).parts)},
                  key=lambda p: len(p.parts), reverse=True)
    removed: list[Path] = []
    deadline = time.monotonic() + wait_s
    while todo:
        left = []
        for folder in todo:
            try:
                folder.rmdir()
                removed.append(folder)
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno in (errno.EBUSY, errno.ENOTEMPTY):
                    left.append(folder)
        if not left or time.monotonic() > deadline:
            break
        todo = left
        time.sleep(0.1)
    return removed


def of_process(pid: int, node: str, proc: Path = Path("/proc")) -> NodeCgroup | None:
    """The cgroup of cassperf node `node` that process `pid` runs in (its memory cgroup's folder is
    cassperf-<key>/<node>), None when it runs in none; read from /proc/<pid>/cgroup."""
    controllers_text = _read(proc / str(pid) / "cgroup")
    mountinfo = _read(proc / "self" / "mountinfo")
    if controllers_text is None or mountinfo is None:
        return None
    found = detect(controllers_text, mountinfo)
    if found is None or found.memory is None or found.memory.name != node \
            or not found.memory.parent.name.startswith(PREFIX):
        return None
    io = found.io if found.io is not None and found.io.parent.name.startswith(PREFIX) else None
    return NodeCgroup(found.version, found.memory, io)


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def join_command(cgroup: NodeCgroup, argv: Sequence[str]) -> list[str]:
    """`argv` started inside `cgroup`: a shell writes its own pid into each hierarchy's
    cgroup.procs and then execs `argv` (same pid), so every page the process ever touches is
    charged to the node's cgroup."""
    joins = " && ".join(f"echo $$ > {shlex.quote(str(p))}" for p in cgroup.procs_files())
    return ["/bin/sh", "-c", f'{joins} && exec "$@"', "cassperf-cgroup", *argv]


# -- the device under a folder ---------------------------------------------------------------------
SYS_DEV_BLOCK = Path("/sys/dev/block")


def whole_disk_of(folder: Path | str) -> tuple[str, tuple[int, int]] | None:
    """(kernel name, (major, minor)) of the whole disk holding `folder` (a partition's disk), None
    when it is on no block device (tmpfs, overlay)."""
    st = os.stat(folder)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    if major == 0:
        return None
    link = SYS_DEV_BLOCK / f"{major}:{minor}"
    try:
        target = link.resolve(strict=True)
    except OSError:
        return None
    if (target / "partition").is_file():
        target = target.parent
    try:
        major_s, _, minor_s = (target / "dev").read_text().strip().partition(":")
        return target.name, (int(major_s), int(minor_s))
    except (OSError, ValueError):
        return None


# -- the governor -----------------------------------------------------------------------------------
@dataclass
class Governed:
    """A node under the governor: its cgroup, and what the governor last saw and set."""

    name: str
    cgroup: NodeCgroup
    last: MemoryReading | None = None
    stalls: int = 0                  # checks that found the node waiting at its limit
    raised: int = 0                  # limit moves up
    lowered: int = 0                 # limit moves down
    errors: list[str] = field(default_factory=list)
    since: float = field(default_factory=time.monotonic)   # governed from (monotonic s)
    settled: bool = False            # its first limit is set (SETTLE_S)


class PageCacheGovernor:
    """Keeps each node's memory limit at (its memory that is not page cache) + `bound_bytes`
    (module doc), checking every `interval_s` in a daemon thread."""

    def __init__(self, bound_bytes: int, interval_s: float = GOVERNOR_INTERVAL_S,
                 hysteresis_bytes: int = HYSTERESIS_BYTES, settle_s: float = SETTLE_S) -> None:
        if bound_bytes < 0:
            raise ValueError(f"bound_bytes={bound_bytes}: expected >= 0")
        self.bound = bound_bytes
        self.interval_s = interval_s
        self.hysteresis = hysteresis_bytes
        self.settle_s = settle_s
        self.nodes: dict[str, Governed] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def target(self, reading: MemoryReading) -> int:
        return reading.own + self.bound

    def add(self, name: str, cgroup: NodeCgroup) -> Governed:
        """Govern `name` from now on: its first limit is set once its own memory settles (at the
        first check that finds it moved by at most the hysteresis since the one before, or after
        `settle_s`; at once when it has a limit already: a node adopted from a dead owner)."""
        with self._lock:
            node = self.nodes[name] = Governed(name, cgroup)
            self._check(node)
        return node

    def remove(self, name: str) -> Governed | None:
        with self._lock:
            return self.nodes.pop(name, None)

    def _check(self, node: Governed) -> None:
        try:
            reading = node.cgroup.read_memory()
        except (OSError, ValueError) as exc:
            if len(node.errors) < 5:
                node.errors.append(f"{type(exc).__name__}: {exc}")
            return
        if not node.settled:
            steady = node.last is not None and abs(reading.own - node.last.own) <= self.hysteresis
            if not (steady or reading.limit is not None or time.monotonic() - node.since >= self.settle_s):
                node.last = reading
                return
            node.settled = True
        want = self.target(reading)
        if reading.stalled:
            node.stalls += 1
            if reading.limit is not None:
                want = max(want, reading.limit + max(STALL_STEP_BYTES, self.bound // 4))
        if reading.limit is None or abs(reading.limit - want) > self.hysteresis or reading.stalled:
            try:
                node.cgroup.set_limit(want)
            except OSError as exc:       # v1 EBUSY: the cache could not be reclaimed below it in time
                if len(node.errors) < 5:
                    node.errors.append(f"setting {want} bytes: {exc}")
                node.last = reading
                return
            if reading.limit is None or want > reading.limit:
                node.raised += 1
            else:
                node.lowered += 1
            reading = MemoryReading(reading.usage, reading.file, reading.anon, want, reading.stalled, reading.pinned)
        node.last = reading

    def check_all(self) -> None:
        """One pass over every governed node."""
        with self._lock:
            for node in list(self.nodes.values()):
                self._check(node)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.check_all()

    def start(self) -> PageCacheGovernor:
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="cassperf-page-cache", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


# -- what a report states -----------------------------------------------------------------------------
@dataclass(frozen=True)
class NodeBound:
    """One node's page-cache bound as it stands: the bound asked for, the cgroup's limit, its
    memory that is not page cache (``own``), its page cache now and the room left for page cache
    (limit - own), bytes."""

    node: str
    bound_bytes: int
    limit_bytes: int | None
    own_bytes: int
    page_cache_bytes: int
    anon_bytes: int

    @property
    def room_bytes(self) -> int | None:
        return None if self.limit_bytes is None else max(0, self.limit_bytes - self.own_bytes)

    def as_dict(self) -> dict[str, float | str | None]:
        return {"node": self.node, "page_cache_bound_mb": self.bound_bytes / MIB,
                "memory_limit_mb": None if self.limit_bytes is None else self.limit_bytes / MIB,
                "own_memory_mb": self.own_bytes / MIB, "anon_mb": self.anon_bytes / MIB,
                "page_cache_mb": self.page_cache_bytes / MIB,
                "page_cache_room_mb": None if self.room_bytes is None else self.room_bytes / MIB}


def bound_line(bound_mb: int | None, problem_line: str | None, read_mb_s: float | None = None,
               read_iops: int | None = None) -> str:
    """What a report says of the nodes' memory and disk, one line: "page cache bound 64 MiB per
    node (memory cgroup)", or what could not be bounded and why."""
    if bound_mb is None and read_mb_s is None and read_iops is None:
        return "page cache not bounded: each node may use the host's whole page cache"
    if problem_line is not None:
        what = [x for x in ("page cache" if bound_mb is not None else "",
                            "disk reads" if read_mb_s is not None or read_iops is not None else "") if x]
        return f"{' and '.join(what)} not bounded ({problem_line}): the nodes ran unbounded"
    parts = []
    if bound_mb is not None:
        parts.append(f"page cache bound {bound_mb} MiB per node (memory cgroup)")
    reads = [f"{read_mb_s:g} MB/s" if read_mb_s is not None else "", f"{read_iops} IOPS" if read_iops else ""]
    if any(reads):
        parts.append(f"disk reads throttled to {' and '.join(r for r in reads if r)} per node (block I/O cgroup)")
    return "; ".join(parts)

