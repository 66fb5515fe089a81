"""Owner records (cassperf.cluster.owners) and what reads them: a record is private and written
atomically; an owner is alive only while its pid runs with the recorded start time (a recycled
pid, a zombie or an exited process is dead); claim takes over a dead owner's thing and leaves a
live owner's and a kept one's; `cassperf cluster status` without a name lists every known
cluster, network and loop filesystem in exact lines. No root, no nodes: the things named in the
records do not exist, so nothing here can touch a real process, mount or namespace."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from cassperf.cluster import inventory, owners, reaper
from cassperf.cluster.netns import network_id
from cassperf.cluster.owners import Owner, Record


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def sleeper() -> Iterator[psutil.Process]:
    """A live process that is not this one (another run's owner)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        yield psutil.Process(proc.pid)
    finally:
        proc.kill()
        proc.wait()


def exited() -> Owner:
    """The owner identity of a process that has run and exited (and was reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    started = psutil.Process(proc.pid).create_time()
    proc.wait()
    return Owner(proc.pid, started, "python -c")


def of(proc: psutil.Process) -> Owner:
    return Owner(proc.pid, proc.create_time(), "python -c")


def test_a_record_is_0600_in_a_0700_folder_written_whole(data: Path) -> None:
    os.umask(0o022)
    record = owners.write(Record("loopfs", "lab-1a2b3c", owners.me(), {"mount_point": "/x/mnt"}))
    folder = data / "clusters" / ".owners"
    assert record.path == folder / "loopfs-lab-1a2b3c.json"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(record.path.stat().st_mode) == 0o600
    assert sorted(p.name for p in folder.iterdir()) == ["loopfs-lab-1a2b3c.json"]      # no temporary left
    body = json.loads(record.path.read_text())
    assert body["owner"] == {"pid": os.getpid(), "started": psutil.Process().create_time(),
                             "command": owners.me().command}
    assert (body["kind"], body["key"], body["mount_point"]) == ("loopfs", "lab-1a2b3c", "/x/mnt")
    assert owners.read("loopfs", "lab-1a2b3c") == record
    owners.remove("loopfs", "lab-1a2b3c")
    owners.remove("loopfs", "lab-1a2b3c")                      # twice: nothing to do
    assert owners.records() == []


def test_a_folder_made_wider_is_narrowed_again(data: Path) -> None:
    folder = data / "clusters" / ".owners"
    folder.mkdir(parents=True, mode=0o755)
    folder.chmod(0o755)
    owners.write(Record("cluster", "a-1a2b3c", owners.me(), {}))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_an_owner_is_alive_only_as_the_very_process_that_made_the_record(sleeper: psutil.Process) -> None:
    assert owners.me().alive() and owners.me().is_me()
    assert of(sleeper).alive() and not of(sleeper).is_me()
    assert not exited().alive()
    recycled = Owner(sleeper.pid, sleeper.create_time() - 3600, "python -c")   # same pid, another start
    assert not recycled.alive()
    assert Owner(kept="cassperf cluster start").alive()
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    started = psutil.Process(zombie.pid).create_time()
    while psutil.Process(zombie.pid).status() != psutil.STATUS_ZOMBIE:
        time.sleep(0.01)
    assert not Owner(zombie.pid, started, "python -c").alive()      # exited, not yet reaped by us
    zombie.wait()


def test_owner_lines_name_the_pid_and_command() -> None:
    assert owners._label(["/v/bin/python", "/v/bin/cassperf", "report", "--params", "local"]) == "cassperf report"
    assert owners._label(["python3", "-m", "ipykernel_launcher", "-f", "k.json"]) == "python -m ipykernel_launcher"
    assert owners._label(["/usr/bin/python3.11", "-c", "import x"]) == "python -c"
    assert Owner(41, 1.0, "cassperf report").state() == "owner pid 41 (cassperf report), dead"
    assert Owner(kept="cassperf cluster start").state() == "kept (cassperf cluster start)"
    assert owners.found("cluster x (node1 pid 7)", Owner(41, 1.0, "python -c"), "stopped") == \
        "found cluster x (node1 pid 7) left by dead pid 41 (python -c): stopped"


def test_claim_takes_a_dead_owners_thing_and_leaves_a_live_or_kept_one(data: Path, sleeper: psutil.Process) -> None:
    dead = exited()
    owners.write(Record("cluster", "dead-1a2b3c", dead, {"v": 1}))
    record, taken = owners.claim("cluster", "dead-1a2b3c", {"v": 2})
    assert (record.owner.pid, taken, record.data) == (os.getpid(), dead, {"v": 2})
    assert owners.claim("cluster", "dead-1a2b3c", {"v": 3})[1] is None        # mine already
    owners.write(Record("cluster", "live-1a2b3c", of(sleeper), {"v": 1}))
    record, taken = owners.claim("cluster", "live-1a2b3c", {"v": 2})
    assert (record.owner, taken, owners.read("cluster", "live-1a2b3c").data) == (of(sleeper), None, {"v": 2})
    owners.keep("cluster", "dead-1a2b3c", "cassperf cluster start")
    record, taken = owners.claim("cluster", "dead-1a2b3c", {"v": 4})
    assert (record.owner, taken) == (Owner(kept="cassperf cluster start"), None)


def test_a_bad_kind_or_key_is_refused() -> None:
    with pytest.raises(ValueError, match=r"owner record 'disk'/'x': kind one of \('cluster', 'network', 'loopfs'\)"):
        owners.record_path("disk", "x")
    with pytest.raises(ValueError, match="key a plain file name part"):
        owners.record_path("cluster", "../x")


def _cluster_folder(base: Path, name: str, **state: object) -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    (folder / "cluster.json").write_text(json.dumps({"name": name, "version": "5.0.6", **state}))
    return folder


def _cluster_record(folder: Path, owner: Owner, topology: str = "dc1:1", first: str = "127.0.70.1",
                    pids: tuple[int, ...] = ()) -> Record:
    state = {"name": folder.name, "topology": topology, "version": "5.0.6", "first_address": first}
    nodes = [{"name": f"node{i + 1}", "address": first, "folder": str(folder / f"node{i + 1}"),
              "pid_file": str(folder / f"node{i + 1}" / "cassandra.pid"), "pid": pid, "started": 1.0}
             for i, pid in enumerate(pids)]
    return owners.write(Record("cluster", network_id(folder.name, folder), owner,
                               {"name": folder.name, "folder": str(folder), "state": state, "network": None,
                                "nodes": nodes}))


def test_status_lists_every_known_cluster_network_and_loop_filesystem(data: Path, tmp_path: Path,
                                                                      sleeper: psutil.Process) -> None:
    base = data / "clusters"
    _cluster_folder(base, "lab-plain", topology="dc1:2", first_address="127.0.70.1")
    kept = _cluster_folder(base, "lab-kept", topology="dc1:1", first_address="127.0.70.5")
    _cluster_record(kept, Owner(kept="cassperf cluster start"), first="127.0.70.5")
    dead, live = exited(), of(sleeper)
    mount = tmp_path / "loopfs" / "lab" / "mnt"
    elsewhere = _cluster_record(mount / "clusters" / "lab-loop-dc1_1", dead, first="127.0.70.9")
    owners.write(Record("network", "lab-far-1a2b3c", live, {"netid": "lab-far-1a2b3c", "cluster": "lab-far"}))
    owners.write(Record("loopfs", "lab-1a2b3c", dead, {"folder": str(mount.parent), "mount_point": str(mount),
                                                       "backing": str(mount.parent / "backing.img"),
                                                       "device": "/dev/loop99"}))
    assert inventory.listing() == [
        "cluster lab-kept: stopped, 0 of 1 nodes; kept (cassperf cluster start)",
        f"cluster lab-loop-dc1_1: stopped, 0 of 1 nodes; folder {elsewhere.data['folder']} on loop filesystem "
        f"/dev/loop99 at {mount}; owner pid {dead.pid} (python -c), dead",
        "cluster lab-plain: stopped, 0 of 2 nodes; no owner record",
        f"DC network lab-far-1a2b3c: nothing left; owner pid {live.pid} (python -c), alive",
        f"loop filesystem /dev/loop99 at {mount}: not attached, backing {mount.parent / 'backing.img'}; "
        f"owner pid {dead.pid} (python -c), dead",
        inventory.DEAD_NOTE]


def test_cli_status_without_a_name_lists_and_with_nothing_known_says_so(data: Path) -> None:
    # issue 18: `cassperf cluster status` with no name errored "no local cluster named 'cassperf'"
    env = {**os.environ, "CASSPERF_DATA": str(data)}
    out = subprocess.run([sys.executable, "-m", "cassperf.cli", "cluster", "status"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout, out.stderr) == (
        0, f"no local cluster in {data / 'clusters'}, and no owner records\n", "")
    _cluster_folder(data / "clusters", "lab-plain", topology="dc1:1", first_address="127.0.70.1")
    out = subprocess.run([sys.executable, "-m", "cassperf.cli", "cluster", "status"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout, out.stderr) == (0, "cluster lab-plain: stopped, 0 of 1 nodes; no owner record\n",
                                                        "")


def test_reap_drops_the_records_of_dead_owners_whose_things_are_gone_and_keeps_live_ones(
        data: Path, tmp_path: Path, sleeper: psutil.Process) -> None:
    dead, live = exited(), of(sleeper)
    _cluster_record(tmp_path / "c" / "lab-gone", dead, pids=(dead.pid,))
    _cluster_record(tmp_path / "c" / "lab-live", live)
    owners.write(Record("network", "lab-gone-1a2b3c", dead, {"netid": "lab-gone-1a2b3c", "cluster": "lab-gone"}))
    owners.write(Record("loopfs", "lab-1a2b3c", dead, {"folder": str(tmp_path / "l"), "device": None,
                                                       "mount_point": str(tmp_path / "l" / "mnt"),
                                                       "backing": str(tmp_path / "l" / "backing.img")}))
    said: list[str] = []
    assert reaper.reap(say=said.append) == [] and said == []      # nothing was left: nothing to say
    assert [(r.kind, r.data.get("name")) for r in owners.records()] == [("cluster", "lab-live")]


def test_a_dead_owners_scratch_folder_goes_with_its_cluster(data: Path, tmp_path: Path) -> None:
    # a deployment's data on tmpfs (/dev/shm/cassperf-<cluster>) holds memory until it is deleted
    scratch = tmp_path / "shm" / "cassperf-lab-tmpfs"
    (scratch / "data").mkdir(parents=True)
    record = _cluster_record(tmp_path / "c" / "lab-tmpfs", exited())
    owners.write(Record("cluster", record.key, record.owner, {**record.data, "scratch": str(scratch)}))
    said: list[str] = []
    assert reaper.reap(say=said.append) == said == [
        f"found cluster lab-tmpfs (no node running) in {tmp_path / 'c' / 'lab-tmpfs'} left by dead pid "
        f"{record.owner.pid} (python -c): deleted {scratch}"]
    assert not scratch.exists() and owners.records() == []


def test_a_scratch_folder_must_be_named_as_one() -> None:
    from cassperf.cluster import LocalCluster
    from cassperf.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^scratch='/dev/shm': a scratch folder's name starts with 'cassperf-' "
                                          r"\(it is deleted with the cluster of a dead owner\), e\.g\. "
                                          r"/dev/shm/cassperf-lab$"):
        LocalCluster("lab", scratch="/dev/shm")
