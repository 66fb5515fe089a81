"""A killed run leaves nothing that blocks or burdens the next one (issue 18), for real: a child
process makes what the studies make (a one-node cluster on a loop filesystem as the storage
study does, a DC network of namespaces and the delay router as the multi-DC study does, a
cluster the pipeline needs), is killed with SIGKILL (no finally, no atexit), and the next entry
point finds it by its owner record, releases or adopts it, and says so in one line each. What a
live owner holds is left alone. Real loop devices, mounts, namespaces, router and Cassandra
nodes; root only (skipped otherwise). Addresses 127.0.70.0/24 (10.70.x.x inside namespaces).

Run under the CPU lock:  flock /tmp/cassperf-cpu.lock .venv/bin/pytest tests/cluster/test_killed_owner.py -q
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cassperf.cluster import inventory, netns, owners, process, reaper
from cassperf.report.clusters import ClusterNeed, PipelineClusters
from cassperf.storage import blockdev, loopfs
from tests.conftest import cassperf_processes

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("losetup") is None or shutil.which("ip") is None,
                                reason="loop devices, mounts and network namespaces need root, losetup and iproute2")
REPO = Path(__file__).resolve().parents[2]


@dataclass
class World:
    """This test's data folder (CASSPERF_DATA), the children it started and the networks it made."""

    data: Path
    children: list[subprocess.Popen] = field(default_factory=list)
    netids: list[str] = field(default_factory=list)

    def child(self, code: str) -> tuple[subprocess.Popen, list[str]]:
        """Start `code` in a child python (same CASSPERF_DATA) and read its first line (split)."""
        child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, cwd=REPO, env=dict(os.environ))
        self.children.append(child)
        assert child.stdout is not None
        first = child.stdout.readline().split()
        if not first:
            child.wait(30)
            pytest.fail(f"the child exited {child.returncode} before it was up: {child.stderr.read()[-3000:]}")
        return child, first

    def kill(self, child: subprocess.Popen) -> None:
        child.send_signal(signal.SIGKILL)          # no finally, no atexit: everything stays
        child.wait(30)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cassperf.cli", "cluster", *args], capture_output=True,
                              text=True, timeout=300, cwd=REPO, env=dict(os.environ))


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """Teardown, also when the test failed: the children killed, then everything their records
    name released (as the next run would), then by name and marker whatever a record missed."""
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path / "data"))
    w = World(tmp_path / "data")
    try:
        yield w
    finally:
        for child in w.children:
            child.kill()
            child.wait(30)
        try:
            reaper.reap(say=lambda line: print(f"teardown: {line}"))
        finally:
            for proc in cassperf_processes(tmp_path):
                proc.kill()
            for folder in (w.data / "loopfs").glob("*") if (w.data / "loopfs").is_dir() else []:
                loopfs.release(folder / "backing.img", folder / "mnt")
            for netid in w.netids:
                netns.remove_leftovers(netid)


def _mounted(mount_point: Path) -> bool:
    return blockdev.mount_source(str(mount_point))[1]


LOOP_CLUSTER = """
    import time
    from cassperf import config
    from cassperf.cluster.study import study_cluster
    from cassperf.storage.loopfs import loop_filesystem

    with loop_filesystem(config.data_dir() / "loopfs" / "lab", size_mb=512) as fs:   # as the storage study does
        loop = study_cluster(cluster_name="lab-loop", first_address="127.0.70.1", cluster_topology="dc1:1",
                             cluster_heap_mb=512, root=fs.mount_point / "clusters", start=False)
        loop.start()
        print("up", fs.device, loop.node("node1").pid(), flush=True)
        time.sleep(600)
"""


@pytest.mark.cluster
def test_a_killed_loop_cluster_is_listed_and_stop_by_name_releases_node_mount_and_device(world: World) -> None:
    # issue 18: after kill -9 in study 05 the loop node kept port 7000, the loop device stayed attached
    # and mounted, and `cassperf cluster stop` could not name the cluster (its folder is on the mount)
    child, (_, device, pid) = world.child(LOOP_CLUSTER)
    node_pid = int(pid)
    world.kill(child)
    folder = world.data / "loopfs" / "lab"
    mount, backing = folder / "mnt", folder / "backing.img"
    cluster_folder = mount / "clusters" / "lab-loop-dc1_1"
    assert process.is_ours(node_pid, cluster_folder / "node1") and _mounted(mount)
    assert loopfs.attached_devices(backing) == [device]

    status = world.cli("status")
    assert (status.returncode, status.stderr) == (0, "")
    assert status.stdout.splitlines() == [
        f"cluster lab-loop-dc1_1: running, 1 of 1 nodes (node1 127.0.70.1 pid {node_pid}); folder {cluster_folder} "
        f"on loop filesystem {device} at {mount}; owner pid {child.pid} (python -c), dead",
        f"loop filesystem {device} at {mount}: mounted, backing {backing}; owner pid {child.pid} (python -c), dead",
        inventory.DEAD_NOTE]

    stop = world.cli("stop", "--name", "lab-loop-dc1_1")
    assert (stop.returncode, stop.stderr) == (0, "")
    assert stop.stdout.splitlines() == [
        f"stopped cluster lab-loop-dc1_1 (node1 pid {node_pid}), left by dead pid {child.pid} (python -c)",
        f"found loop filesystem {device} at {mount} left by dead pid {child.pid} (python -c): unmounted {mount}, "
        f"detached {device}, deleted {backing}"]
    assert not process.is_ours(node_pid, cluster_folder / "node1")
    assert (_mounted(mount), loopfs.attached_devices(backing), backing.exists()) == (False, [], False)
    assert world.cli("status").stdout == f"no local cluster in {world.data / 'clusters'}, and no owner records\n"


def test_a_dead_owners_loop_filesystem_is_released_by_the_next_one_in_its_folder(world: World) -> None:
    child, (_, device) = world.child("""
        import time
        from cassperf import config
        from cassperf.storage.loopfs import loop_filesystem
        with loop_filesystem(config.data_dir() / "loopfs" / "lab", size_mb=64) as fs:
            print("up", fs.device, flush=True)
            time.sleep(600)
    """)
    world.kill(child)
    folder = world.data / "loopfs" / "lab"
    said: list[str] = []
    with loopfs.loop_filesystem(folder, size_mb=64, say=said.append) as fs:
        assert said == [f"found loop filesystem {device} at {folder / 'mnt'} left by dead pid {child.pid} "
                        f"(python -c): unmounted {folder / 'mnt'}, detached {device}, deleted {folder / 'backing.img'}"]
        assert _mounted(fs.mount_point) and loopfs.attached_devices(fs.backing) == [fs.device]
    assert owners.records() == [] and not (folder / "backing.img").exists()


DC_NETWORK = """
    import time
    from cassperf import config
    from cassperf.cluster import netns
    net = netns.DcNetwork("{name}", ["dc1", "dc2"], [("dc1", "10.70.1.{host}"), ("dc2", "10.70.2.{host}")],
                          "127.0.70.{host}", 20, config.clusters_dir() / "{name}")
    net.up()
    print("up", net.router_pid() or 0, flush=True)
    time.sleep(600)
"""


@pytest.mark.notebook
def test_a_killed_dc_network_is_removed_by_the_next_report_run(world: World, tmp_path: Path) -> None:
    # issue 18: after a killed 02 the namespaces and the delay router stayed up, also after a re-run
    from cassperf.workbook.preflight import run_reports
    from tests.notebooks.reportkit import write_notebook

    child, (_, router) = world.child(DC_NETWORK.format(name="lab-far", host=1))
    netid = netns.network_id("lab-far", world.data / "clusters" / "lab-far")
    world.netids.append(netid)
    world.kill(child)
    spaces = [f"cassperf-{netid}-dc1", f"cassperf-{netid}-dc2", f"cassperf-{netid}-rt"]
    assert netns.leftover_namespaces(netid) == spaces
    routers = netns.router_pids(netid)
    assert routers == ([int(router)] if int(router) else [])

    write_notebook(tmp_path / "notebooks", "01-nothing.ipynb", 'note: str = "x"  # a parameter', ["print(note)"])
    log: list[str] = []
    [result] = run_reports(None, "local", reports_dir=tmp_path / "reports", notebooks_dir=tmp_path / "notebooks",
                           log=log.append)
    assert result.ok, result.error
    router_part = "".join(f", delay router pid {pid}" for pid in routers)
    assert log[0] == (f"found DC network {netid} ({', '.join(spaces)}{router_part}) left by dead pid {child.pid} "
                      f"(python -c): removed")
    assert not any(line.startswith("found") for line in log[1:]), log
    assert netns.leftover_namespaces(netid) == [] and netns.router_pids(netid) == []
    assert owners.records() == []


def test_a_live_owners_loop_filesystem_and_network_are_left_alone(world: World) -> None:
    child, (_, device, router) = world.child("""
        import time
        from cassperf import config
        from cassperf.cluster import netns
        from cassperf.storage.loopfs import loop_filesystem
        net = netns.DcNetwork("lab-near", ["dc1", "dc2"], [("dc1", "10.70.1.129"), ("dc2", "10.70.2.129")],
                              "127.0.70.129", 20, config.clusters_dir() / "lab-near")
        net.up()
        with loop_filesystem(config.data_dir() / "loopfs" / "live", size_mb=64) as fs:
            print("up", fs.device, net.router_pid() or 0, flush=True)
            time.sleep(600)
    """)
    netid = netns.network_id("lab-near", world.data / "clusters" / "lab-near")
    world.netids.append(netid)
    folder = world.data / "loopfs" / "live"
    said: list[str] = []
    assert reaper.reap(say=said.append) == [] and said == []
    with pytest.raises(loopfs.LoopUnavailable) as refused:
        with loopfs.loop_filesystem(folder, size_mb=64):
            pass
    assert str(refused.value) == (f"{folder} holds the loop filesystem of pid {child.pid} (python -c), which still "
                                  f"runs; let it finish, or give another folder")
    spaces = [f"cassperf-{netid}-dc1", f"cassperf-{netid}-dc2", f"cassperf-{netid}-rt"]
    assert netns.leftover_namespaces(netid) == spaces and netns.router_pids(netid) == ([int(router)] if int(router)
                                                                                        else [])
    assert _mounted(folder / "mnt") and loopfs.attached_devices(folder / "backing.img") == [device]
    router_part = "".join(f", delay router pid {pid}" for pid in netns.router_pids(netid))
    assert inventory.listing() == [
        f"DC network {netid}: namespaces {', '.join(spaces)}{router_part}; owner pid {child.pid} (python -c), alive",
        f"loop filesystem {device} at {folder / 'mnt'}: mounted, backing {folder / 'backing.img'}; owner pid "
        f"{child.pid} (python -c), alive"]
    assert child.poll() is None


@pytest.mark.cluster
def test_the_pipeline_adopts_a_dead_owners_cluster_it_needs_and_stops_it_at_the_end(world: World) -> None:
    # issue 18: after a killed 02 its nodes stayed up even after a successful re-run (reused, never stopped)
    child, (_, pid) = world.child("""
        import time
        from cassperf.cluster.study import study_cluster
        cluster = study_cluster(cluster_name="lab", first_address="127.0.70.2", cluster_topology="dc1:1",
                                cluster_heap_mb=512)
        print("up", cluster.node("node1").pid(), flush=True)
        time.sleep(600)
    """)
    world.kill(child)
    log: list[str] = []
    clusters = PipelineClusters(log=log.append)
    need = ClusterNeed("lab-dc1_1", "dc1:1", "127.0.70.2", 512, None)
    assert clusters.release_left([need]) == [] and log == []          # needed: left for adoption
    provision = clusters.provide(need)
    assert not provision.started
    assert log == [f"found cluster lab-dc1_1 (node1 pid {pid}) left by dead pid {child.pid} (python -c): adopted by "
                   f"{owners.me().describe()}"]
    [record] = owners.records()
    assert (record.kind, record.owner) == ("cluster", owners.me())
    # a later notebook asking other heaps gets the cluster restarted with them (it is now this run's)
    bigger = clusters.provide(ClusterNeed("lab-dc1_1", "dc1:1", "127.0.70.2", 768, None))
    assert bigger.started and bigger.stopped == ("lab-dc1_1",)
    assert json.loads((world.data / "clusters" / "lab-dc1_1" / "cluster.json").read_text())["heap_mb"] == 768
    assert clusters.stop_all() == ["lab-dc1_1"]
    assert not process.is_ours(int(pid), world.data / "clusters" / "lab-dc1_1" / "node1")
    assert owners.records() == []


BOUNDED_CLUSTER = """
    import time
    from cassperf.cluster import cgroups
    from cassperf.cluster.study import study_cluster
    cluster = study_cluster(cluster_name="lab-pc", first_address="127.0.70.3", cluster_topology="dc1:1",
                            cluster_heap_mb=512, cluster_page_cache_mb=64)
    pid = cluster.node("node1").pid()
    print("up", pid, cgroups.of_process(pid, "node1").memory, flush=True)
    time.sleep(600)
"""


def _bounded_child(world: World) -> tuple[subprocess.Popen, int, Path]:
    from cassperf.cluster import cgroups

    why = cgroups.problem(cgroups.current(), memory=True, io=False)
    if why is not None:
        pytest.skip(f"no memory cgroups here: {why}")
    child, (_, pid, memory) = world.child(BOUNDED_CLUSTER)
    world.kill(child)
    assert Path(memory).is_dir() and Path(memory).name == "node1"
    return child, int(pid), Path(memory)


@pytest.mark.cluster
def test_a_killed_bounded_clusters_node_and_cgroups_are_released_by_the_next_run(world: World) -> None:
    child, pid, memory = _bounded_child(world)
    folder = world.data / "clusters" / "lab-pc-dc1_1"
    lines = reaper.reap(say=lambda line: None)
    assert lines == [f"found cluster lab-pc-dc1_1 (node1 pid {pid}) in {folder} left by dead pid {child.pid} "
                     f"(python -c): stopped, removed its node cgroups (2 folders)"]
    assert not process.is_ours(pid, folder / "node1")
    assert not memory.exists() and not memory.parent.exists()
    assert owners.records() == []


@pytest.mark.cluster
def test_the_pipeline_adopts_a_killed_bounded_cluster_governs_it_and_removes_its_cgroups(world: World) -> None:
    child, pid, memory = _bounded_child(world)
    log: list[str] = []
    clusters = PipelineClusters(log=log.append)
    need = ClusterNeed("lab-pc-dc1_1", "dc1:1", "127.0.70.3", 512, None, None, 64)
    provision = clusters.provide(need)
    assert not provision.started and len(log) == 1 and log[0].startswith("found cluster lab-pc-dc1_1")
    cluster = clusters.started["lab-pc-dc1_1"]
    assert cluster.bounds.governor is not None and set(cluster.bounds.governor.nodes) == {"node1"}
    [bound] = cluster.node_bounds()
    assert bound.room_bytes is not None and abs(bound.room_bytes / 2**20 - 64) <= 8
    assert cluster.bounds_line() == "page cache bound 64 MiB per node (memory cgroup)"
    assert clusters.stop_all() == ["lab-pc-dc1_1"]
    assert not process.is_ours(pid, world.data / "clusters" / "lab-pc-dc1_1" / "node1")
    assert not memory.exists() and not memory.parent.exists()
