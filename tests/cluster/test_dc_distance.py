"""Distance between data centers on one host (LocalCluster(inter_dc_rtt_ms=...), cluster.netns).

Everything here is real: namespaces, veth links and the delay (sch_netem where the kernel has
it, else the TUN delay router) made by the code under test, iputils ping parsed by the project's
ping parser, Cassandra nodes (1 per DC, heap 512 MB) in the DC namespaces, the load engine run
from inside a DC's namespace. Needs root (skipped otherwise, except the test of the message a
non-root user gets). Cluster names start with "netns"; node numbering from 127.0.8.1, so the
nodes live on 10.8.1.1 (dc1) and 10.8.2.1 (dc2) inside their namespaces. The two-DC cluster is
made with tls=True: clients from either namespace talk TLS with the cluster's role, and the
traffic between the DCs is TLS with the nodes' certificates.

Run under the CPU lock:  flock /tmp/cassperf-cpu.lock .venv/bin/pytest tests/cluster/test_dc_distance.py -x -q
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassperf.cluster import LocalCluster, netns
from cassperf.errors import ConfigError
from cassperf.parsers.ping import parse_ping
from tests.conftest import cassperf_processes, started_cluster

#: alone: asserts round trips and quorum latencies against the RTT, and snapshots the host's network; make test runs it
#: with no other test beside it
pytestmark = pytest.mark.alone

RTT_MS = 27.0
FIRST = "127.0.8.1"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
CQLSH = Path(sys.executable).with_name("cqlsh")
REPO = Path(__file__).resolve().parents[2]


def host_network() -> dict[str, str]:
    """The host's own links, addresses, routes and rules (must never change)."""
    return {what: subprocess.run(["ip", *args], capture_output=True, text=True, check=True).stdout
            for what, args in {"links": ["-br", "link"], "addresses": ["-br", "addr"], "routes": ["route", "show", "table", "all"],
                               "rules": ["rule"]}.items()}


def leftovers(cluster: str, root: Path) -> tuple[list[str], list[int]]:
    """Namespaces and router processes of cluster `cluster` whose folder is `root`."""
    netid = netns.network_id(cluster, root)
    return netns.leftover_namespaces(netid), netns.router_pids(netid)


def ping(network_or_cluster: netns.DcNetwork | LocalCluster, dc: str, address: str, count: int = 20) -> dict:
    """ping from inside `dc`'s namespace; the parsed statistics of the run."""
    if shutil.which("ping") is None:
        pytest.fail("iputils ping is not installed (apt-get install iputils-ping)")
    command = network_or_cluster.command if isinstance(network_or_cluster, netns.DcNetwork) else \
        network_or_cluster.dc_command
    out = subprocess.run(command(dc, ["ping", "-n", "-c", str(count), "-i", "0.05", address]),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    summary = parse_ping(out.stdout, "ping").tables["summary"]
    assert len(summary) == 1 and summary["received"][0] == count, out.stdout
    return summary.iloc[0].to_dict()


# -- the network alone (root, no Cassandra) ------------------------------------------------------
@pytest.fixture
def network(tmp_path: Path) -> Iterator[netns.DcNetwork]:
    net = netns.DcNetwork("netns-ping", ["dc1", "dc2"], [("dc1", "10.8.1.1"), ("dc1", "10.8.1.2"), ("dc2", "10.8.2.1")],
                          FIRST, RTT_MS, tmp_path)
    try:
        yield net
    finally:
        net.down()
        assert leftovers("netns-ping", tmp_path) == ([], [])


@ROOT_ONLY
def test_ping_rtt_between_dc_namespaces_is_the_setting_and_intra_dc_is_not_delayed(network: netns.DcNetwork) -> None:
    before = host_network()
    assert network.up() is True
    assert network.mode == ("netem" if netns.netem_in_kernel() else "tun-router")
    cross = ping(network, "dc1", "10.8.2.1")
    back = ping(network, "dc2", "10.8.1.1")
    local = ping(network, "dc1", "10.8.1.2")
    print(f"\nconfigured RTT {RTT_MS} ms; ping dc1->dc2 avg {cross['rtt_avg_ms']} ms (min {cross['rtt_min_ms']}, "
          f"max {cross['rtt_max_ms']}, mdev {cross['rtt_mdev_ms']}), dc2->dc1 avg {back['rtt_avg_ms']} ms, "
          f"intra-dc1 avg {local['rtt_avg_ms']} ms ({network.mode})")
    for s in (cross, back):
        assert RTT_MS * 0.8 <= s["rtt_avg_ms"] <= RTT_MS * 1.2
        assert s["rtt_min_ms"] >= RTT_MS * 0.8
    assert local["rtt_avg_ms"] < 1.0
    assert host_network() == before, "the host's own links, addresses, routes or rules changed"
    assert network.up() is False        # healthy: reused, not made again


@ROOT_ONLY
def test_down_removes_namespaces_links_and_router(network: netns.DcNetwork) -> None:
    network.up()
    names, routers = leftovers("netns-ping", network.state_dir)
    assert names == [f"cassperf-{network.id}-dc1", f"cassperf-{network.id}-dc2", f"cassperf-{network.id}-rt"]
    assert network.id.startswith("netns-ping-") and len(network.id) == len("netns-ping-") + 6
    assert len(routers) == (0 if network.mode == "netem" else 1)
    removed = network.down()
    assert removed[:3] == names
    assert leftovers("netns-ping", network.state_dir) == ([], [])
    assert not [ln for ln in subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout.splitlines()
                if ln.split()[0].split("@")[0] in ("dc1", "dc2", "rt", netns.ROUTER_DEV)]


@ROOT_ONLY
def test_two_clusters_of_one_name_in_two_folders_keep_their_own_networks(tmp_path: Path) -> None:
    def make(folder: str) -> netns.DcNetwork:
        return netns.DcNetwork("netns-twin", ["dc1", "dc2"], [("dc1", "10.8.1.1"), ("dc2", "10.8.2.1")], FIRST,
                               RTT_MS, tmp_path / folder / "netns-twin")
    a, b = make("a"), make("b")
    try:
        assert a.up() and b.up() and a.id != b.id
        a.down()
        assert leftovers("netns-twin", a.state_dir) == ([], [])
        assert b.healthy() and len(leftovers("netns-twin", b.state_dir)[0]) == 3
    finally:
        a.down()
        b.down()


def _child(code: str, env_extra: dict[str, str] | None = None) -> subprocess.Popen:
    env = {**os.environ, **(env_extra or {}), "PYTHONPATH": str(REPO)}
    # SIGINT as a terminal gives it, even when the tests run as a background job (which inherits
    # SIGINT ignored: the child would never see the Ctrl-C the signal test sends)
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@ROOT_ONLY
def test_a_network_without_nodes_goes_at_interpreter_exit(tmp_path: Path) -> None:
    child = _child(f"""
        from pathlib import Path
        from cassperf.cluster import netns
        net = netns.DcNetwork("netns-exit", ["dc1", "dc2"], [("dc1", "10.8.1.1"), ("dc2", "10.8.2.1")],
                              "{FIRST}", 20, Path("{tmp_path}"))
        net.up()
        print(sorted(netns.leftover_namespaces(net.id)), flush=True)
    """)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    netid = netns.network_id("netns-exit", tmp_path)
    assert out.strip() == f"['cassperf-{netid}-dc1', 'cassperf-{netid}-dc2', 'cassperf-{netid}-rt']"
    assert leftovers("netns-exit", tmp_path) == ([], [])


@ROOT_ONLY
def test_cli_destroy_removes_what_a_killed_process_left(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "clusters" / "netns-kill"      # where the CLI looks (CASSPERF_DATA)
    child = _child(f"""
        import time
        from pathlib import Path
        from cassperf.cluster import netns
        net = netns.DcNetwork("netns-kill", ["dc1", "dc2"], [("dc1", "10.8.1.1"), ("dc2", "10.8.2.1")],
                              "{FIRST}", 20, Path("{folder}"))
        net.up()
        print("up", flush=True)
        time.sleep(120)
    """)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "up"
        child.kill()                       # SIGKILL: no atexit, no cleanup
        child.wait(10)
        names, routers = leftovers("netns-kill", folder)
        assert len(names) == 3 and len(routers) == (0 if netns.netem_in_kernel() else 1)
        cli = subprocess.run([sys.executable, "-m", "cassperf.cli", "cluster", "destroy", "--name", "netns-kill"],
                             capture_output=True, text=True, timeout=120, cwd=REPO,
                             env={**os.environ, "CASSPERF_DATA": str(tmp_path / "data")})
        assert cli.returncode == 0, cli.stderr
        assert leftovers("netns-kill", folder) == ([], [])
    finally:
        child.kill()
        netns.remove_leftovers(netns.network_id("netns-kill", folder))


def test_one_dc_or_a_bad_rtt_is_refused_with_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"^inter_dc_rtt_ms=27 delays traffic between data centers, but the "
                                          r"topology has one DC \(dc1\); give two or more"):
        LocalCluster("netns-one", "dc1:2", inter_dc_rtt_ms=27)
    with pytest.raises(ConfigError, match=r"^inter_dc_rtt_ms=-5: expected a round-trip time in ms, 0 < RTT <= 10000"):
        LocalCluster("netns-one", "dc1:1,dc2:1", inter_dc_rtt_ms=-5)
    with pytest.raises(ConfigError, match=r"^inter_dc_rtt_ms='27ms': expected a round-trip time in ms"):
        LocalCluster("netns-one", "dc1:1,dc2:1", inter_dc_rtt_ms="27ms")  # type: ignore[arg-type]


def test_addresses_live_in_the_dc_namespaces() -> None:
    cluster = LocalCluster("netns-addr", "dc1:2,dc2:1", first_address=FIRST, inter_dc_rtt_ms=RTT_MS)
    assert [(n.name, n.address, n.spec.dc) for n in cluster.nodes] == \
        [("node1", "10.8.1.1", "dc1"), ("node2", "10.8.1.2", "dc1"), ("node3", "10.8.2.1", "dc2")]
    ns = f"cassperf-{netns.network_id('netns-addr', cluster.root)}-dc2"
    assert cluster.dc_command("dc2", ["nodetool", "status"]) == ["ip", "netns", "exec", ns, "nodetool", "status"]
    assert cluster.nodetool_command("node3", "status")[:4] == ["ip", "netns", "exec", ns]
    plain = LocalCluster("netns-addr", "dc1:1,dc2:1", first_address=FIRST)
    assert plain.dc_command("dc2", ["nodetool"]) == ["nodetool"]
    with pytest.raises(ConfigError, match="has no data center 'dc3'; DCs: dc1, dc2"):
        with plain.in_dc("dc3"):
            pass


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_without_root_the_option_fails_with_one_clear_message(tmp_path: Path) -> None:
    child = _child(f"""
        import os
        from pathlib import Path
        from cassperf.cluster import LocalCluster
        from cassperf.errors import ConfigError
        cluster = LocalCluster("netns-user", "dc1:1,dc2:1", first_address="{FIRST}", inter_dc_rtt_ms=27,
                               root=Path("{tmp_path}"))
        os.setgid(65534); os.setuid(65534)
        try:
            cluster.start()
        except ConfigError as exc:
            print(exc)
    """)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert out.strip() == ("inter_dc_rtt_ms=27 puts each DC in a network namespace, which needs root (running as "
                           "uid 65534); run as root, or leave inter_dc_rtt_ms unset (no distance between DCs)")
    assert leftovers("netns-user", tmp_path / "netns-user") == ([], [])


# -- with Cassandra nodes ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def two_dcs(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[LocalCluster]:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    with started_cluster(request, tmp_path_factory, "netns-dist", "dc1:1,dc2:1", FIRST, inter_dc_rtt_ms=RTT_MS,
                         tls=True) as cluster:
        print(f"2-DC cluster: delay by {cluster.network.mode if cluster.network else '-'}")
        yield cluster
    assert leftovers("netns-dist", cluster.root) == ([], [])


@pytest.mark.cluster
def test_each_dc_serves_cql_nodetool_and_jolokia_from_its_namespace(two_dcs: LocalCluster) -> None:
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    from cassandra.policies import WhiteListRoundRobinPolicy

    for node in two_dcs.nodes:
        dc = node.spec.dc
        profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([node.address]))
        with two_dcs.in_dc(dc):
            driver = two_dcs.driver_cluster(contact_points=[node.address],
                                            execution_profiles={EXEC_PROFILE_DEFAULT: profile})
        try:
            row = driver.connect().execute("SELECT data_center, listen_address FROM system.local").one()
        finally:
            driver.shutdown()
        assert (row.data_center, str(row.listen_address)) == (dc, node.address)
        out = subprocess.run(two_dcs.cqlsh_command(node, "-e", "SELECT data_center FROM system.local", cqlsh=CQLSH),
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split("-\n", 1)[1].split()[0] == dc
        assert set(two_dcs.jolokia(node).gc()) == {"G1 Young Generation", "G1 Old Generation"}
    # between the DCs the nodes talk TLS (internode_encryption: dc), each with its certificate
    log = two_dcs.nodes[0].layout.system_log.read_text()
    # /10.8.1.1:7000(/10.8.1.1:35396)->/10.8.2.1:7000-URGENT_MESSAGES-f4e5dee3 successfully connected, ...
    links = re.findall(r"/10\.8\.1\.1:7000\(\S+\)->/10\.8\.2\.1:7000-\S+ successfully connected.*", log)
    assert links and all("encryption = encrypted" in ln for ln in links), links or log[-3000:]
    status = two_dcs.nodetool("node2", "status")
    assert [ln.split()[:2] for ln in status.splitlines() if ln.startswith("UN")] == [["UN", "10.8.1.1"],
                                                                                     ["UN", "10.8.2.1"]]
    served = ping(two_dcs, "dc1", "10.8.2.1")
    print(f"\nping dc1 -> dc2 with the nodes up: avg {served['rtt_avg_ms']} ms (configured {RTT_MS})")
    assert RTT_MS * 0.8 <= served["rtt_avg_ms"] <= RTT_MS * 1.2


@pytest.mark.cluster
def test_each_quorum_pays_the_rtt_and_local_quorum_does_not(two_dcs: LocalCluster, tmp_path: Path) -> None:
    from cassperf.workload import WorkloadSpec
    from cassperf.workload.engine import run_workload

    p50 = {}
    stats0 = two_dcs.network.router_stats() if two_dcs.network else None
    for cl in ("LOCAL_QUORUM", "EACH_QUORUM"):
        spec = WorkloadSpec(op="write", n=300, cl=cl, concurrency=1, keyspace="netns_dist",
                            replication={"dc1": 1, "dc2": 1}, local_dc="dc1", warmup=False)
        with two_dcs.in_dc("dc1"):      # the client, its worker processes and the sampler in dc1's namespace
            run = run_workload(spec, two_dcs, root=tmp_path, processes=1, progress=False, labels={"cl": cl},
                               sampler={"interval_s": 1.0, "jmx": "jolokia"})
        gc = run.metrics[run.metrics["metric"] == "gc_count"]
        assert set(gc["node"]) == {"node1", "node2"}    # Jolokia answered from both DCs
        summary = run.summary
        assert run.manifest["latency_type"] == "service"
        p50[cl] = float(summary["latency_p50_ms"].iloc[0])
        assert int(summary["count"].iloc[0]) == 300 and int(summary["errors"].iloc[0]) == 0
    stats1 = two_dcs.network.router_stats() if two_dcs.network else None
    print(f"\nwrite service-time p50: LOCAL_QUORUM {p50['LOCAL_QUORUM']:.2f} ms, EACH_QUORUM "
          f"{p50['EACH_QUORUM']:.2f} ms (RTT {RTT_MS} ms); router: {stats0} -> {stats1}")
    assert p50["EACH_QUORUM"] > RTT_MS
    assert p50["LOCAL_QUORUM"] < RTT_MS


# -- failed and interrupted starts ---------------------------------------------------------------
@pytest.mark.cluster
@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_a_start_that_fails_half_way_leaves_nothing(tmp_path: Path) -> None:
    cluster = LocalCluster("netns-fail", "dc1:1,dc2:1", first_address=FIRST, heap_mb=512, root=tmp_path,
                           inter_dc_rtt_ms=RTT_MS)
    blocker = cluster.node("node2").layout.data      # node2's data folder is a file: its start fails
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not a folder")
    try:
        with pytest.raises(FileExistsError):
            cluster.start()
        assert cassperf_processes(tmp_path) == []    # node1 was up, and was stopped
        assert leftovers("netns-fail", cluster.root) == ([], [])
    finally:
        cluster.stop(timeout_s=30)


@pytest.mark.cluster
@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_start_leaves_nothing(tmp_path: Path, sig: signal.Signals) -> None:
    child = _child(f"""
        from pathlib import Path
        from cassperf.cluster import LocalCluster
        with LocalCluster("netns-int", "dc1:1,dc2:1", first_address="{FIRST}", heap_mb=512,
                          root=Path("{tmp_path}"), inter_dc_rtt_ms=27) as cluster:
            cluster.start()
            print("started", flush=True)
    """)
    pid_file = tmp_path / "netns-int" / "node1" / "cassandra.pid"
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pid_file.exists(), child.communicate()[1] if child.poll() is not None else "no node1 pid file"
        assert len(leftovers("netns-int", tmp_path / "netns-int")[0]) == 3
        time.sleep(2)                                  # node1 is booting inside dc1's namespace
        child.send_signal(sig)
        out, err = child.communicate(timeout=120)
        assert "started" not in out
        assert "KeyboardInterrupt" in err
        assert cassperf_processes(tmp_path) == []
        assert leftovers("netns-int", tmp_path / "netns-int") == ([], [])
    finally:
        child.kill()
        LocalCluster("netns-int", "dc1:1,dc2:1", first_address=FIRST, root=tmp_path, inter_dc_rtt_ms=27).stop(30)
