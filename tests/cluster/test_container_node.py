"""A Cassandra node in a container (rootful podman, --rootfs, a namespace of its own): it starts,
takes writes and reads through the engine with the sampler beside it, nodetool and Jolokia reach
it, the runtime's facts are recorded, and stop() removes every container, namespace, cgroup and
process it made; a refusal by the runtime and a node that dies at start leave nothing either.
Addresses 127.0.50.0/24 inside the clusters' own namespaces (make container installs podman)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cassperf.cluster import netns, podman
from cassperf.cluster.container import ContainerCluster
from cassperf.errors import ClusterError
from cassperf.workload.run import run_spec
from cassperf.workload.spec import WorkloadSpec
from tests.conftest import cassperf_processes

# alone: checks the machine's mounts of the shared root filesystem, which 04's container node also mounts; make test
# runs it with no other test beside it
pytestmark = [pytest.mark.alone, pytest.mark.cluster,
              pytest.mark.skipif(shutil.which("podman") is None or os.geteuid() != 0,
                                 reason="container nodes need root and podman: run `make container` as root")]


def leftovers(cluster: ContainerCluster, made: list[Path]) -> list[str]:
    """Everything of the cluster that outlives stop(): containers, namespaces, cgroup folders
    (its parent in every hierarchy and those podman made above it), node processes, overlay
    mounts of its containers."""
    netid = cluster.network.id
    out = [f"container {c}" for c in podman.containers(netid) + podman.containers(f"{netid}-trial")]
    out += [f"namespace {ns}" for ns in netns.leftover_namespaces(netid)]
    for parent in (podman.cgroup_parent(netid).lstrip("/"), podman.cgroup_parent(f"{netid}-trial").lstrip("/")):
        out += [f"cgroup {top / parent}" for top in Path("/sys/fs/cgroup").iterdir() if (top / parent).is_dir()]
    out += [f"cgroup {d}" for d in made if d.exists()]
    out += [f"process {p.pid}" for p in cassperf_processes(cluster.root)]
    out += [f"mount {line.split()[4]}" for line in Path("/proc/self/mountinfo").read_text().splitlines()
            if str(cluster.rootfs().path) in line]
    return out


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    root = tmp_path_factory.mktemp("container-clusters")
    cluster = ContainerCluster("ctnode", "dc1:1", first_address="127.0.50.1", root=root, heap_mb=512)
    made = podman.cgroups_to_make(cluster.network.id)
    try:
        cluster.start()
        yield cluster, made
    finally:
        cluster.close()
        cluster.stop(kill=True)


def test_the_node_runs_in_its_container_on_the_root_filesystems_jre(node):
    cluster, _ = node
    pid = cluster.nodes[0].pid()
    inspect = podman.podman("inspect", "--format", "{{.State.Pid}} {{.State.Running}}",
                            cluster.container_name("node1")).stdout.split()
    assert inspect == [str(pid), "true"]
    assert os.readlink(f"/proc/{pid}/exe") == "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
    assert os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat(f"/run/netns/{cluster.network.router}").st_ino
    assert os.stat(f"/proc/{pid}/ns/pid").st_ino != os.stat("/proc/self/ns/pid").st_ino
    cgroups = dict(line.split(":", 2)[1:] for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines())
    if "cpu,cpuacct" in cgroups or "cpu" in cgroups:            # cgroup v1: no CPU quota, no memory limit
        cpu = cgroups.get("cpu", cgroups.get("cpu,cpuacct"))
        assert cpu.startswith(f"{podman.cgroup_parent(cluster.network.id)}/libpod-")
        top = "cpu" if Path("/sys/fs/cgroup/cpu").is_dir() else "cpu,cpuacct"
        assert Path(f"/sys/fs/cgroup/{top}{cpu}/cpu.cfs_quota_us").read_text().strip() == "-1"
        memory = Path(f"/sys/fs/cgroup/memory{cgroups['memory']}/memory.limit_in_bytes").read_text().strip()
        assert int(memory) >= 2 ** 62
    else:                                                       # cgroup v2
        assert cgroups[""].startswith(f"{podman.cgroup_parent(cluster.network.id)}/libpod-")
        assert Path(f"/sys/fs/cgroup{cgroups['']}/cpu.max").read_text().split()[0] == "max"
        assert Path(f"/sys/fs/cgroup{cgroups['']}/memory.max").read_text().strip() == "max"
    assert cluster.session().execute("SELECT release_version FROM system.local").one().release_version == "5.0.6"
    status = cluster.nodetool("node1", "status")
    assert any(line.startswith("UN  127.0.50.1 ") for line in status.splitlines()), status
    assert set(cluster.jolokia("node1").gc()) == {"G1 Young Generation", "G1 Old Generation"}


def test_the_runtime_facts_say_what_ran_the_node(node):
    cluster, _ = node
    facts = cluster.runtime_facts()
    info = json.loads(subprocess.run(["podman", "info", "--format", "json"], capture_output=True, text=True,
                                     check=True).stdout)
    rt = facts["oci_runtime"].split()[0]
    version = subprocess.run([rt, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    assert {k: v for k, v in facts.items() if k != "refused"} == {
        "podman": info["version"]["Version"],
        "oci_runtime": f"{rt} {version.removeprefix(f'{rt} version ')}",
        "cgroup": f"{info['host']['cgroupVersion']} ({info['host']['cgroupManager']})",
        "storage": f"{info['store']['graphDriverName']} over the root filesystem (podman --rootfs PATH:O: read-only "
                   "lower layer, upper layer per container)",
        "network": f"network namespace {cluster.network.router} of its own, loopback only (podman --network "
                   f"ns:/run/netns/{cluster.network.router}); clients enter it",
        "rootfs": str(cluster.rootfs().path),
        "suite": "Debian bookworm (debootstrap minbase)",
        "jre": f"openjdk-17-jre-headless {cluster.java().version}",
        "limits": "none"}
    assert cluster.description["container"] == facts


def test_writes_and_reads_go_through_the_engine_with_node_cpu_and_jmx_sampled(node, tmp_path):
    cluster, _ = node
    sampler = {"tables": [("ctnode", "standard1")], "interval_s": 1.0}
    write = run_spec(WorkloadSpec(op="write", n=3000, cl="ONE", concurrency=8, keyspace="ctnode",
                                  population="seq=1..3000", warmup=False), cluster, root=tmp_path / "runs",
                     progress=False, labels={"op": "write"}, sampler=sampler)
    read = run_spec(WorkloadSpec(op="read", n=3000, cl="ONE", concurrency=8, keyspace="ctnode",
                                 population="seq=1..3000", warmup=False), cluster, root=tmp_path / "runs",
                    progress=False, labels={"op": "read"}, sampler=sampler)
    for run in (write, read):
        assert run.complete and not run.manifest.get("failed")
        assert int(run.summary["count"].sum()) == 3000 and int(run.summary["errors"].sum()) == 0
        cpu = run.metrics[(run.metrics["metric"] == "process_cpu_pct") & (run.metrics["node"] == "node1")]
        assert len(cpu) >= 1 and cpu["value"].max() > 0
        assert "gc_count" in set(run.metrics["metric"])
    rows = cluster.session().execute("SELECT count(*) FROM ctnode.standard1").one()[0]
    assert rows == 3000


def test_stop_removes_every_container_namespace_cgroup_and_process(node):
    cluster, made = node
    before = leftovers(cluster, made)
    for thing in (f"container {cluster.container_name('node1')}", f"namespace {cluster.network.router}",
                  f"process {cluster.nodes[0].pid()}"):
        assert thing in before
    cluster.stop(timeout_s=30)
    assert leftovers(cluster, made) == []
    assert cluster.status()[0].up is False


def test_a_runtime_refusal_is_one_line_and_leaves_nothing(tmp_path):
    cluster = ContainerCluster("ctrefused", "dc1:1", first_address="127.0.50.2", root=tmp_path, heap_mb=512,
                               limits=podman.Limits(memory_mb=1))
    made = podman.cgroups_to_make(cluster.network.id)
    with pytest.raises(podman.ContainerRefused) as err:
        cluster.start()
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("no OCI runtime starts a container here: ")
    refusals = message.removeprefix("no OCI runtime starts a container here: ").split("; ")
    # each runtime's own error (on the machine this was written on: crun refuses cgroup v1 with a cgroup2
    # mount that has a controller, runc "unable to set memory limit to 1048576 (current usage: ...)")
    assert [r.split(": ", 1)[0] for r in refusals] == [rt for rt in ("crun", "runc") if shutil.which(rt)], message
    assert any("memory limit" in r for r in refusals), message
    assert leftovers(cluster, made) == []


def test_a_node_that_dies_at_start_is_removed_with_its_container_and_namespace(tmp_path):
    cluster = ContainerCluster("ctdies", "dc1:1", first_address="127.0.50.3", root=tmp_path, heap_mb=512,
                               yaml_overrides={"num_tokens": "many"})
    made = podman.cgroups_to_make(cluster.network.id)
    with pytest.raises(ClusterError, match=r"^node1 of cluster ctdies died during start \(exit code 3\)"):
        cluster.start()
    assert leftovers(cluster, made) == []
