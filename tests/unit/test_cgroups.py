"""Node cgroups without a node: where this process's cgroups are (real /proc texts of a v1 host and
a v2 host), a node cgroup's files (v1 and v2 layouts in a folder), the governor's rule on exact
memory figures, the command that joins a cgroup, and one real cgroup where this machine allows it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cassperf.cluster import cgroups
from cassperf.cluster.cgroups import (
    MIB,
    Controllers,
    MemoryReading,
    NodeCgroup,
    PageCacheGovernor,
    bound_line,
    detect,
    join_command,
    problem,
)
from cassperf.cluster.node_bounds import NodeBounds, check_options
from cassperf.errors import ConfigError

# /proc/self/cgroup and /proc/self/mountinfo of the v1 host this was written on (a cgroup2 mount
# holding only hugetlb beside the v1 hierarchies)
V1_CGROUP = """9:name=systemd:/
8:pids:/
7:blkio:/
6:freezer:/
5:devices:/
4:memory:/process_api/d308af153f1bcaacb3fd917329c022f2
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
"""
V1_MOUNTINFO = """31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
# a systemd v2 host: one hierarchy at /sys/fs/cgroup
V2_CGROUP = "0::/user.slice/user-1000.slice/session-3.scope\n"
V2_MOUNTINFO = "28 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"

# memory.stat of a v1 node cgroup (the keys the reading uses, as the kernel prints them)
V1_STAT = """cache 75497472
rss 734003200
shmem 0
mapped_file 1048576
inactive_anon 734003200
active_anon 0
inactive_file 50331648
active_file 16777216
total_cache 75497472
"""


def test_detect_on_a_v1_host_uses_each_hierarchys_own_path() -> None:
    assert detect(V1_CGROUP, V1_MOUNTINFO) == Controllers(
        "v1", Path("/sys/fs/cgroup/memory/process_api/d308af153f1bcaacb3fd917329c022f2"), Path("/sys/fs/cgroup/blkio"))


def test_detect_on_a_v2_host_and_after_moving_into_its_own_leaf() -> None:
    own = Path("/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope")
    assert detect(V2_CGROUP, V2_MOUNTINFO) == Controllers("v2", own, own)
    moved = V2_CGROUP.strip() + "/cassperf-self\n"
    assert detect(moved, V2_MOUNTINFO) == Controllers("v2", own, own)


def test_detect_without_cgroups() -> None:
    assert detect("", "22 1 0:21 / /proc rw - proc proc rw\n") is None


def test_problem_lines(tmp_path: Path) -> None:
    assert problem(None, memory=False, io=False) is None
    assert problem(None, memory=True, io=False) == "no cgroup file system is mounted here (/sys/fs/cgroup)"
    assert problem(Controllers("v1", tmp_path, None), memory=True, io=True) == "cgroup v1: no blkio controller is mounted"
    gone = tmp_path / "gone"
    assert problem(Controllers("v1", gone, None), memory=True, io=False) == \
        f"cgroup v1: this process's memory cgroup folder {gone} is not visible here"
    (tmp_path / "cgroup.controllers").write_text("cpu io pids\n")
    assert problem(Controllers("v2", tmp_path, tmp_path), memory=True, io=True) == \
        (f"cgroup v2: the memory controller is not available in this process's cgroup {tmp_path} (its parent does "
         "not delegate it: cgroup.controllers lists cpu io pids)")
    (tmp_path / "cgroup.controllers").write_text("cpu io memory pids\n")
    assert problem(Controllers("v2", tmp_path, tmp_path), memory=True, io=True) is None


def v1_folder(folder: Path, usage: int, limit: str = "9223372036854771712", under_oom: int = 0,
              stat: str = V1_STAT) -> NodeCgroup:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "memory.stat").write_text(stat)
    (folder / "memory.usage_in_bytes").write_text(f"{usage}\n")
    (folder / "memory.limit_in_bytes").write_text(f"{limit}\n")
    (folder / "memory.oom_control").write_text(f"oom_kill_disable 1\nunder_oom {under_oom}\noom_kill 0\n")
    return NodeCgroup("v1", folder)


def test_a_v1_reading(tmp_path: Path) -> None:
    node = v1_folder(tmp_path / "node1", usage=820 * MIB, stat=V1_STAT + "dirty 8388608\nwriteback 4194304\n")
    # file pages: 48 + 16 MiB, 8 + 4 MiB of them dirty or under writeback; own = usage - the clean file pages
    assert node.read_memory() == MemoryReading(820 * MIB, 64 * MIB, 700 * MIB, None, False, 12 * MIB)
    assert node.read_memory().own == 768 * MIB
    (tmp_path / "node1" / "memory.limit_in_bytes").write_text("838860800\n")
    assert node.read_memory().limit == 800 * MIB


def test_a_v2_node_cgroup_writes_memory_high_and_io_max(tmp_path: Path) -> None:
    node = NodeCgroup("v2", tmp_path, tmp_path)
    (tmp_path / "memory.stat").write_text("anon 734003200\nfile 67108864\nactive_file 16777216\n"
                                          "inactive_file 50331648\nshmem 0\nfile_dirty 2097152\nfile_writeback 0\n")
    (tmp_path / "memory.current").write_text(f"{820 * MIB}\n")
    (tmp_path / "memory.high").write_text("max\n")
    assert node.read_memory() == MemoryReading(820 * MIB, 64 * MIB, 700 * MIB, None, False, 2 * MIB)
    node.set_limit(800 * MIB)
    assert (tmp_path / "memory.high").read_text() == str(800 * MIB)
    node.set_reads((254, 0), 50_000_000, 400)
    assert (tmp_path / "io.max").read_text() == "254:0 rbps=50000000 riops=400"


def test_a_v1_node_cgroup_throttles_reads_in_its_blkio_folder(tmp_path: Path) -> None:
    node = NodeCgroup("v1", tmp_path / "memory", tmp_path / "blkio")
    (tmp_path / "blkio").mkdir()
    node.set_reads((254, 0), 50_000_000, None)
    assert (tmp_path / "blkio" / "blkio.throttle.read_bps_device").read_text() == "254:0 50000000"
    assert not (tmp_path / "blkio" / "blkio.throttle.read_iops_device").exists()
    assert node.procs_files() == [tmp_path / "memory" / "cgroup.procs", tmp_path / "blkio" / "cgroup.procs"]


def test_the_governor_sets_own_memory_plus_the_bound_and_follows_it(tmp_path: Path) -> None:
    folder = tmp_path / "node1"
    node = v1_folder(folder, usage=820 * MIB)
    governor = PageCacheGovernor(64 * MIB)
    governed = governor.add("node1", node)
    limit = folder / "memory.limit_in_bytes"
    assert int(limit.read_text()) > 1 << 62 and governed.raised == 0     # not yet: one reading is no trend
    (folder / "memory.usage_in_bytes").write_text(f"{830 * MIB}\n")      # own +10 MiB: still growing
    governor.check_all()
    assert int(limit.read_text()) > 1 << 62 and not governed.settled
    (folder / "memory.usage_in_bytes").write_text(f"{820 * MIB}\n")      # back by 10 MiB
    governor.check_all()
    assert int(limit.read_text()) > 1 << 62
    governor.check_all()                                                  # unmoved since the last check: settled
    assert int(limit.read_text()) == 756 * MIB + 64 * MIB          # own 756 MiB + the bound
    assert (governed.raised, governed.lowered, governed.stalls) == (1, 0, 0)
    (folder / "memory.usage_in_bytes").write_text(f"{821 * MIB}\n")   # own +1 MiB: inside the hysteresis
    governor.check_all()
    assert int(limit.read_text()) == 820 * MIB
    (folder / "memory.usage_in_bytes").write_text(f"{900 * MIB}\n")   # own grew by 80 MiB
    governor.check_all()
    assert int(limit.read_text()) == 836 * MIB + 64 * MIB and governed.raised == 2
    (folder / "memory.usage_in_bytes").write_text(f"{800 * MIB}\n")   # and shrank
    governor.check_all()
    assert int(limit.read_text()) == 736 * MIB + 64 * MIB and governed.lowered == 1
    (folder / "memory.oom_control").write_text("oom_kill_disable 1\nunder_oom 1\noom_kill 0\n")
    governor.check_all()                   # waiting at its limit: counted, and 16 MiB more (a quarter of the bound)
    assert governed.stalls == 1 and governed.last is not None and governed.last.stalled
    assert int(limit.read_text()) == 800 * MIB + 16 * MIB and governed.raised == 3
    (folder / "memory.oom_control").write_text("oom_kill_disable 1\nunder_oom 0\noom_kill 0\n")
    governor.check_all()                   # going again: back to the formula
    assert int(limit.read_text()) == 800 * MIB and governed.lowered == 2


def test_a_node_whose_memory_never_settles_gets_its_first_limit_after_settle_s(tmp_path: Path) -> None:
    folder = tmp_path / "node1"
    node = v1_folder(folder, usage=820 * MIB)
    governor = PageCacheGovernor(64 * MIB, settle_s=0.2)
    governed = governor.add("node1", node)
    for usage in (840, 860):                                              # growing at every check
        (folder / "memory.usage_in_bytes").write_text(f"{usage * MIB}\n")
        governor.check_all()
    assert not governed.settled
    time.sleep(0.25)
    (folder / "memory.usage_in_bytes").write_text(f"{880 * MIB}\n")
    governor.check_all()                                                  # settle_s is up: limited anyway
    assert governed.settled and int((folder / "memory.limit_in_bytes").read_text()) == 816 * MIB + 64 * MIB


def test_a_node_with_a_limit_already_is_governed_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "node1"
    node = v1_folder(folder, usage=820 * MIB, limit=str(900 * MIB))      # adopted from a dead owner
    governed = PageCacheGovernor(64 * MIB).add("node1", node)
    assert governed.settled and int((folder / "memory.limit_in_bytes").read_text()) == 820 * MIB


def test_the_governor_notes_a_cgroup_that_is_gone(tmp_path: Path) -> None:
    governor = PageCacheGovernor(64 * MIB)
    governed = governor.add("node1", NodeCgroup("v1", tmp_path / "gone"))
    assert governed.last is None and governed.errors and "FileNotFoundError" in governed.errors[0]


def test_join_command_writes_the_shells_pid_then_execs_the_same_pid(tmp_path: Path) -> None:
    node = NodeCgroup("v1", tmp_path / "m", tmp_path / "b")
    (tmp_path / "m").mkdir()
    (tmp_path / "b").mkdir()
    argv = join_command(node, [sys.executable, "-c", "import os; print(os.getpid())"])
    assert argv[:2] == ["/bin/sh", "-c"] and argv[3] == "cassperf-cgroup"
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()
    assert (tmp_path / "m" / "cgroup.procs").read_text().strip() == out
    assert (tmp_path / "b" / "cgroup.procs").read_text().strip() == out


def test_remove_takes_only_cassperf_folders_deepest_first(tmp_path: Path) -> None:
    group = tmp_path / "cassperf-x-abc123"
    (group / "node1").mkdir(parents=True)
    other = tmp_path / "someone-else"
    other.mkdir()
    removed = cgroups.remove([group, group / "node1", other, tmp_path / "cassperf-never"], wait_s=0)
    assert removed == [group / "node1", group]
    assert other.is_dir()


def test_bound_lines() -> None:
    assert bound_line(None, None) == "page cache not bounded: each node may use the host's whole page cache"
    assert bound_line(64, None) == "page cache bound 64 MiB per node (memory cgroup)"
    assert bound_line(64, None, read_mb_s=50, read_iops=400) == (
        "page cache bound 64 MiB per node (memory cgroup); disk reads throttled to 50 MB/s and 400 IOPS per node "
        "(block I/O cgroup)")
    assert bound_line(64, "not root (uid 1000)") == "page cache not bounded (not root (uid 1000)): the nodes ran unbounded"
    assert bound_line(64, "x", read_mb_s=5) == "page cache and disk reads not bounded (x): the nodes ran unbounded"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"page_cache_mb": 0}, "page_cache_mb=0: expected whole MiB >= 1"),
    ({"page_cache_mb": 64.5}, "page_cache_mb=64.5: expected whole MiB >= 1"),
    ({"read_mb_s": -1}, "read_mb_s=-1: expected MB/s > 0"),
    ({"read_iops": True}, "read_iops=True: expected whole reads per second >= 1"),
])
def test_bad_bounds_are_one_line(kwargs: dict, message: str) -> None:
    args = {"page_cache_mb": None, "read_mb_s": None, "read_iops": None, **kwargs}
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(".", r"\.")):
        check_options(**args)


def test_a_machine_without_cgroups_runs_the_nodes_unbounded_and_says_so_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "current", lambda: None)
    said: list[str] = []
    bounds = NodeBounds("demo-abc123", page_cache_mb=64, say=said.append)
    bounds.prepare({"node1": [Path("/")]})
    bounds.prepare({"node2": [Path("/")]})
    assert bounds.problem == "no cgroup file system is mounted here (/sys/fs/cgroup)"
    assert said == ["page cache not bounded (no cgroup file system is mounted here (/sys/fs/cgroup)): the nodes ran "
                    "unbounded"]
    assert bounds.command("node1", ["java"]) == ["java"] and bounds.jvm_options() == []
    assert bounds.describe()["bounds"] == said[0]


def test_nothing_asked_changes_nothing() -> None:
    bounds = NodeBounds("demo-abc123")
    bounds.prepare({"node1": [Path("/")]})
    assert (bounds.asked, bounds.problem, bounds.cgroups, bounds.describe()) == (False, None, {}, {})


# -- one real cgroup, where this machine allows it ------------------------------------------------
def _real() -> Controllers:
    found = cgroups.current()
    why = problem(found, memory=True, io=False)
    if why is not None:
        pytest.skip(f"no memory cgroups here: {why}")
    assert found is not None
    return found


def test_a_real_node_cgroup_holds_a_process_and_goes_with_it() -> None:
    controllers = _real()
    bounds = NodeBounds(f"unit-{os.getpid()}", page_cache_mb=16)
    bounds.prepare({"node1": [Path("/")]})
    assert bounds.problem is None, bounds.problem
    proc = subprocess.Popen(bounds.command("node1", ["sleep", "30"]))
    try:
        deadline = time.monotonic() + 5
        while cgroups.of_process(proc.pid, "node1") is None and time.monotonic() < deadline:
            time.sleep(0.02)
        found = cgroups.of_process(proc.pid, "node1")
        assert cgroups.of_process(proc.pid, "node2") is None
        assert found is not None and found.memory == controllers.memory / f"cassperf-unit-{os.getpid()}" / "node1"
        bounds.govern("node1")                           # returns once the first limit is set (memory settled)
        reading = found.read_memory()
        assert reading.limit is not None and reading.limit == pytest.approx(reading.own + 16 * MIB, abs=2 * MIB)
        if controllers.version == "v1":
            assert "oom_kill_disable 1" in (found.memory / "memory.oom_control").read_text()
        [bound] = bounds.node_bounds({"node1": proc.pid})
        assert bound.bound_bytes == 16 * MIB and bound.room_bytes == pytest.approx(16 * MIB, abs=2 * MIB)
    finally:
        proc.kill()
        proc.wait()
        removed = bounds.release()               # also when an assertion above failed
    assert not (controllers.memory / f"cassperf-unit-{os.getpid()}").exists()
    assert len(removed) == 2


def test_the_reads_a_node_issued_and_its_throttle_from_its_io_cgroup(tmp_path: Path) -> None:
    v1 = NodeCgroup("v1", tmp_path / "m", tmp_path / "io")
    (tmp_path / "io").mkdir()
    (tmp_path / "io" / "blkio.throttle.io_serviced").write_text(
        "254:0 Read 5120\n254:0 Write 77\n254:0 Sync 5197\n254:0 Async 0\n254:0 Discard 0\n254:0 Total 5197\n"
        "7:0 Read 30\nTotal 5227\n")
    (tmp_path / "io" / "blkio.throttle.read_iops_device").write_text("254:0 200\n7:0 400\n")
    assert v1.read_io() == (5150, 200)
    v2 = NodeCgroup("v2", tmp_path / "v2", tmp_path / "v2")
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "io.stat").write_text("254:0 rbytes=335544320 wbytes=0 rios=5120 wios=0 dbytes=0 dios=0\n")
    (tmp_path / "v2" / "io.max").write_text("254:0 rbps=max wbps=max riops=200 wiops=max\n")
    assert v2.read_io() == (5120, 200)
    assert NodeCgroup("v1", tmp_path / "m").read_io() is None          # no I/O controller: nothing throttled
