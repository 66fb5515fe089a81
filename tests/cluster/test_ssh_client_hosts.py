"""Clients on SSH client hosts (issue 19 item 4): distributed's SSHCluster over asyncssh starts
the Dask scheduler and one worker per host through real sshds, and each DC's client runs there.

Real parts: two Cassandra nodes (dc1:1, dc2:1, heap 512 MB, the cluster's own CQL role) in their
DC namespaces 27 ms apart; two client hosts, network namespaces each running Debian's sshd (keys
only, a per-test key pair, host keys pinned in known_hosts: tests/cluster/sshkit.py), host 1
joined to dc1, host 2 to dc2; the load engine. Nodes from 127.0.80.1 (10.80.1.1 and 10.80.2.1
in the DC namespaces), client hosts 10.81.0.11 and .12 (namespaces cassperf-ssh80-*).

Run under the CPU lock:  flock /tmp/cassperf-cpu.lock .venv/bin/pytest tests/cluster/test_ssh_client_hosts.py -x -q
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from cassperf.cluster import LocalCluster
from cassperf.workload import WorkloadSpec
from tests.cluster.sshkit import SSHD, SshHosts
from tests.conftest import stop_and_check_gone

RTT_MS = 27.0
FIRST = "127.0.80.1"
# alone: asserts p50 against the RTT, and adds fixed links and names in the host namespace; make test runs it with no
# other test beside it
pytestmark = [pytest.mark.cluster, pytest.mark.alone]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalCluster, SshHosts]]:
    if os.geteuid() != 0:
        pytest.skip("network namespaces and sshd need root")
    if not Path(SSHD).exists():
        pytest.skip("openssh-server is not installed (make sshd)")
    root = tmp_path_factory.mktemp("sshhosts-clusters")
    cluster = LocalCluster("sshhosts", "dc1:1,dc2:1", first_address=FIRST, heap_mb=512, root=root,
                           inter_dc_rtt_ms=RTT_MS)
    hosts = None
    old = os.environ.get("CASSPERF_SSH_CONFIG")
    try:
        t0 = time.monotonic()
        cluster.start()
        print(f"\n2-DC cluster CQL-ready in {time.monotonic() - t0:.1f} s")
        net = cluster.network
        hosts = SshHosts("80", [(net.namespace("dc1"), "10.80.1.0/24"), (net.namespace("dc2"), "10.80.2.0/24")]).up()
        os.environ["CASSPERF_SSH_CONFIG"] = str(hosts.config)
        yield cluster, hosts
    finally:
        if old is None:
            os.environ.pop("CASSPERF_SSH_CONFIG", None)
        else:
            os.environ["CASSPERF_SSH_CONFIG"] = old
        if hosts is not None:
            hosts.down()
        stop_and_check_gone(cluster, root)
        assert hosts is None or hosts.leftovers() == []


def _spec(dc: str, **kw) -> WorkloadSpec:
    base = dict(op="write", n=1500, cl="LOCAL_ONE", concurrency=8, keyspace=f"sshhosts_{dc}",
                replication={dc: 1}, local_dc=dc, interval_s=0.5)
    return WorkloadSpec(**{**base, **kw})


def _placement(cluster: LocalCluster, hosts: SshHosts, root: Path):
    from cassperf.experiments.clients import ClientPlacement, locations

    a, b = hosts.addresses
    return ClientPlacement(cluster, locations(["dc1", "dc2"], client_hosts=f"dc1={a},dc2={b}"), root=root,
                           scheduler_host=a)


def _namespace_of(pid: int) -> int:
    return os.stat(f"/proc/{pid}/ns/net").st_ino


def test_each_dcs_client_runs_on_its_ssh_host_and_its_run_is_labelled_by_host(site, tmp_path: Path) -> None:
    from cassperf.experiments.clients import ClientJob, group_records, overlap_s
    from cassperf.results.store import load_run

    cluster, hosts = site
    password = cluster.access(create=False).cql.password
    with _placement(cluster, hosts, tmp_path) as place:
        # each location's worker process lives in its host's namespace, under that host's sshd
        pids = {loc: place.client.run(os.getpid, workers=[addr])[addr] for loc, addr in place.workers.items()}
        for k, loc in enumerate(("dc1-c1", "dc2-c1"), start=1):
            assert _namespace_of(pids[loc]) == os.stat(f"/run/netns/{hosts.namespace(k)}").st_ino
            assert any(p.name() == "sshd" for p in psutil.Process(pids[loc]).parents())
        tls_folder = Path(place.security.tls_ca_file).parent
        # timed runs: two 1,500-op runs lasted about a second each, too short to show they overlap
        group = place.run_together([ClientJob("dc1-c1", _spec("dc1", n=None, duration=4), {"part": "ssh"}),
                                    ClientJob("dc2-c1", _spec("dc2", n=None, duration=4), {"part": "ssh"})],
                                   {"part": "ssh"},
                                   processes=1)
        # the role is not on any command line of the hosts' processes (sshd sessions, workers, engines)
        lines = [" ".join(psutil.Process(p).cmdline()) for p in hosts.pids() if psutil.pid_exists(p)]
        assert lines and not [line for line in lines if password in line]
    assert not tls_folder.exists(), "the Dask TLS files were left on the hosts"
    assert not group.partial and [r.status for r in group.results] == ["ran", "ran"]
    runs = [load_run(r.run_id, root=tmp_path) for r in group.results]
    assert [(r.labels["dc"], r.labels["client"], r.labels["host"]) for r in runs] == [
        ("dc1", "dc1-c1", "10.81.0.11"), ("dc2", "dc2-c1", "10.81.0.12")]
    for run in runs:
        summary = run.summary.iloc[0]
        assert run.manifest["complete"] and int(summary["count"]) > 0 and int(summary["errors"]) == 0
        assert summary["latency_p50_ms"] < RTT_MS / 2          # served by its own DC, next to its host
        assert run.manifest["cluster"]["contact_points"] == [f"10.80.{run.labels['dc'][-1]}.1"]
    assert overlap_s(runs) > 2.0, "the two 4 s loads did not run at the same time for half of it"
    assert group_records(tmp_path)[-1]["partial"] is False
    stored = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    assert password not in stored


def _kill_when_measuring(root: Path, dc: str, pid: int, timeout_s: float = 120.0) -> None:
    """SIGKILL `pid` once `dc`'s run under `root` has stored 3 measured intervals."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for folder in root.glob("*-cassperf-engine-*"):
            manifest, intervals = folder / "manifest.json", folder / "intervals.jsonl"
            if manifest.exists() and f'"dc": "{dc}"' in manifest.read_text() and intervals.exists() \
                    and intervals.read_text().count("\n") >= 3:
                os.kill(pid, signal.SIGKILL)
                return
        time.sleep(0.05)


def test_killing_one_hosts_worker_fails_only_that_clients_run(site, tmp_path: Path) -> None:
    from cassperf.experiments.clients import ClientJob, group_records
    from cassperf.results.catalog import catalog
    from cassperf.results.store import load_run

    cluster, hosts = site
    with _placement(cluster, hosts, tmp_path) as place:
        victim = place.workers["dc2-c1"]
        pid = place.client.run(os.getpid, workers=[victim])[victim]
        assert _namespace_of(pid) == os.stat(f"/run/netns/{hosts.namespace(2)}").st_ino
        killer = threading.Thread(target=_kill_when_measuring, args=(tmp_path, "dc2", pid), daemon=True)
        killer.start()
        group = place.run_together([ClientJob("dc1-c1", _spec("dc1", n=None, duration=8), {"part": "loss"}),
                                    ClientJob("dc2-c1", _spec("dc2", n=None, duration=8), {"part": "loss"})],
                                   {"part": "loss"}, processes=1)
        killer.join(timeout=5)
    alive, dead = group.results
    assert (alive.location, alive.status) == ("dc1-c1", "ran")
    assert (dead.location, dead.status, dead.note) == ("dc2-c1", "died", "KilledWorker: its worker process died")
    run = load_run(alive.run_id, root=tmp_path)
    assert run.manifest["complete"] and not run.manifest.get("failed") and run.labels["host"] == "10.81.0.11"
    assert run.summary["count"].sum() > 0 and run.summary["duration_s"].iloc[0] >= 7
    lost = load_run(dead.run_id, root=tmp_path)
    assert lost.manifest["failed"] and not lost.manifest.get("complete") and lost.labels["host"] == "10.81.0.12"
    assert lost.manifest["failure"] == "client dc2-c1 did not finish: KilledWorker: its worker process died"
    assert list(catalog(tmp_path, part="loss")["run_id"]) == [alive.run_id]
    assert group_records(tmp_path)[-1]["partial"] is True


def test_a_host_whose_key_is_not_pinned_is_refused_before_anything_starts(site, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from cassperf.errors import ClusterError

    cluster, hosts = site
    config = tmp_path / "ssh_config"
    config.write_text(hosts.config.read_text().replace(str(hosts.known_hosts), str(tmp_path / "known_hosts")))
    shutil.copy(hosts.known_hosts, tmp_path / "known_hosts")
    (tmp_path / "known_hosts").write_text((tmp_path / "known_hosts").read_text().splitlines()[0] + "\n")
    monkeypatch.setenv("CASSPERF_SSH_CONFIG", str(config))
    with pytest.raises(ClusterError) as err:
        _placement(cluster, hosts, tmp_path).__enter__()
    assert str(err.value) == ("client host 10.81.0.12: ssh failed: Host key is not trusted for host 10.81.0.12; check "
                              "CASSPERF_SSH_CONFIG or ~/.ssh/config (User, IdentityFile, the host's key in a "
                              "known_hosts file)")


def test_the_multidc_study_with_client_hosts_runs_its_clients_on_them(site, tmp_path: Path) -> None:
    """The 02 study's runner and baseline on the one executor with ``client_hosts`` naming the two
    SSH hosts (the notebook's path, its arms with a client in each DC, two blocks): every run is
    labelled by its host, the baseline pings between the hosts."""
    from dataclasses import dataclass

    from cassperf.experiments.executor import execute
    from cassperf.experiments.multidc import MultiDCStudy
    from cassperf.experiments.outcome import load_outcome

    @dataclass(frozen=True)
    class TwoArms(MultiDCStudy):
        def arms(self, calibrated):
            return [a for a in super().arms(calibrated) if a.name in ("independent write", "replicated write")]

    cluster, hosts = site
    a, b = hosts.addresses
    study = TwoArms(experiment="sshhosts", repeats=2, run_s=3, interval_s=0.125, warm_max_steps=0, warm_arm_s=0,
                    rows=300, rf=1, write_threads=2, read_threads=2, cl_threads=2, quorum_threads=(2,), iperf3_s=1,
                    client_hosts=f"dc1={a},dc2={b}", scheduler_host=a)
    done = execute(study, cluster, root=tmp_path)
    assert (done.ran, done.partial, done.failed) == (6, 0, 0), done.record.data["log"]
    outcome = load_outcome(study, root=tmp_path)
    measured = sorted((r.labels["arm"], r.labels["block"], r.labels["dc"], r.labels["host"]) for r in outcome.runs)
    assert measured == sorted((arm, block, dc, host) for arm in ("independent write", "replicated write",
                                                                 "replicated write (A/A)")
                              for block in ("1", "2") for dc, host in (("dc1", a), ("dc2", b)))
    assert all(r.manifest["complete"] and not r.manifest.get("failed") for r in outcome.runs)
    ping = {(p["from"], p["to"]): p for p in done.record.data["baseline"][-1]["ping"]}
    assert (ping[("dc1", "dc2")]["address"], ping[("dc2", "dc1")]["address"]) == (b, a)
    assert "text" in ping[("dc1", "dc2")], ping
