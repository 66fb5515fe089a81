"""Who can use a local node's management ports, against one real node on 127.0.4.1.

The Jolokia agent (HTTP, <address>:8778) and Cassandra's JMX port (RMI on 127.0.0.1, nodetool's)
both reach into the node's JVM. Each asks for the cluster's credential, kept in files only the
cluster's owner can read; Jolokia allows only reads of the sampler's MBeans; JMX gives the
read-only user reads and the admin user operations (nodetool flush, garbagecollect). Another
Unix user on the host, who cannot read the credential files, gets nothing from either port.
"""

from __future__ import annotations

import base64
import json
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from cassperf.cluster import LocalCluster
from cassperf.cluster.jolokia import JolokiaEndpoint
from cassperf.errors import ClusterError, ToolError
from cassperf.sampler import ClusterSampler
from tests.cluster.tables import two_flushed_sstables
from tests.conftest import cassperf_processes

pytestmark = pytest.mark.cluster

KS, TABLE = "ks", "t"
PROBE = Path(__file__).parent / "jmx_probe" / "JmxProbe.java"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """One node with a table of two flushed SSTables; stopped (and removed) in finally."""
    root = tmp_path_factory.mktemp("clusters")
    c = LocalCluster("jmxsec-access", "dc1:1", first_address="127.0.4.1", heap_mb=512, root=root)
    try:
        c.start()
        two_flushed_sstables(c, KS, TABLE, rows_each=500, value_bytes=50)
        yield c
    finally:
        try:
            c.stop(kill=True)
        finally:
            for proc in cassperf_processes(root):   # only this module's node, found by its marker
                proc.kill()
            shutil.rmtree(root, ignore_errors=True)


def http(url: str, user: str | None = None, password: str | None = None, body: object = None) -> tuple[int, dict]:
    """(HTTP status, JSON body or {}) of a GET (body None) or POST."""
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    data = None if body is None else json.dumps(body).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=10) as resp:
            return resp.status, json.loads(resp.read().decode())
    except urllib.error.HTTPError as exc:
        return exc.code, {}


def agent(cluster: LocalCluster) -> JolokiaEndpoint:
    endpoint = cluster.jolokia_endpoint(1)
    assert endpoint is not None and endpoint.credentials is not None
    return endpoint


# ---- the credential files ----------------------------------------------------------------------

def test_credentials_are_made_per_cluster_in_files_only_the_owner_can_read(cluster):
    access = cluster.access()
    assert access is not None and access.folder == cluster.root / "access"
    assert stat.S_IMODE(access.folder.stat().st_mode) == 0o700
    files = sorted(p.name for p in access.folder.iterdir())
    assert files == ["cql.credentials", "cqlshrc", "jmxremote.access", "jmxremote.password", "jolokia-access.xml",
                     "jolokia.properties"]
    for path in access.folder.iterdir():
        st = path.stat()
        assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.geteuid(), path
    passwords = [access.jolokia.password, access.jmx_monitor.password, access.jmx_admin.password, access.cql.password]
    assert len(set(passwords)) == 4 and all(len(p) == 32 for p in passwords)
    # no password on any command line on the host (the node's, nodetool's)
    for proc in psutil.process_iter(["cmdline"]):
        line = " ".join(proc.info["cmdline"] or [])
        assert not any(p in line for p in passwords), proc.pid
    node_line = " ".join(psutil.Process(cluster.nodes[0].pid()).cmdline())
    assert f"=config={access.jolokia_properties}," in node_line
    assert "-Dcom.sun.management.jmxremote.authenticate=true" in node_line


# ---- Jolokia ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["version", "read/java.lang:type=GarbageCollector,name=*/CollectionCount",
                                  "exec/java.lang:type=Memory/gc",
                                  "list/com.sun.management/type=DiagnosticCommand"])
def test_jolokia_refuses_a_request_without_the_credential_or_with_a_wrong_one(cluster, path):
    url = f"{agent(cluster).url}/{path}"
    assert http(url)[0] == 401
    assert http(url, "cassperf", "not-the-password")[0] == 401
    assert http(url, "root", agent(cluster).credentials.password)[0] == 401


def test_jolokia_with_the_credential_reads_the_samplers_mbeans_and_nothing_else(cluster):
    ep = agent(cluster)
    user, password = ep.credentials.user, ep.credentials.password

    def status(path: str = "", body: object = None) -> tuple[int, str]:
        code, answer = http(f"{ep.url}/{path}", user, password, body)
        assert code == 200, (path, code)
        return answer["status"], answer.get("error", "")

    assert status("version")[0] == 200
    assert status("read/java.lang:type=GarbageCollector,name=*/CollectionCount,CollectionTime")[0] == 200
    assert status(f"read/org.apache.cassandra.metrics:type=Table,keyspace={KS},scope={TABLE},"
                  "name=LiveSSTableCount")[0] == 200
    refused = {
        "exec gc": status("exec/java.lang:type=Memory/gc"),
        "exec jvmtiAgentLoad": status(body={"type": "exec", "mbean": "com.sun.management:type=DiagnosticCommand",
                                            "operation": "jvmtiAgentLoad", "arguments": ["/tmp/x.so"]}),
        "exec flush": status("exec/org.apache.cassandra.db:type=StorageService/forceKeyspaceFlush/ks"),
        "write": status("write/java.lang:type=Memory/Verbose/true"),
        "write a metric": status(body={"type": "write", "mbean": "org.apache.cassandra.db:type=Tables,keyspace=ks,table=t",
                                       "attribute": "SSTableCountPerLevel", "value": None}),
        "list": status("list/com.sun.management/type=DiagnosticCommand"),
        "search": status("search/*:*"),
        "read outside the policy": status("read/java.lang:type=Runtime/InputArguments"),
        "read another GC attribute": status("read/java.lang:type=GarbageCollector,name=*/LastGcInfo"),
        "read StorageService": status("read/org.apache.cassandra.db:type=StorageService/LiveNodes"),
    }
    assert {what: code for what, (code, _) in refused.items()} == {what: 403 for what in refused}
    assert "Operation gc forbidden" in refused["exec gc"][1]


def test_the_jolokia_client_refuses_to_guess_without_the_credential(cluster):
    from cassperf.cluster.jolokia import JolokiaClient
    with pytest.raises(ClusterError, match=r"refused no credential \(HTTP 401\)"):
        JolokiaClient(JolokiaEndpoint(agent(cluster).url)).version()
    with pytest.raises(ClusterError, match="answered status 403"):
        cluster.jolokia(1).read("java.lang:type=Runtime", "InputArguments")


# ---- JMX (nodetool's port) -------------------------------------------------------------------

def jmx_probe(cluster: LocalCluster, user: str | None = None, run_as: list[str] | None = None,
              cwd: Path | None = None) -> list[str]:
    access = cluster.access()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if user is not None:
        env["JMX_PROBE_PASSWORD"] = {access.jmx_monitor.user: access.jmx_monitor.password,
                                     access.jmx_admin.user: access.jmx_admin.password}[user]
    java = str(cluster.java().executable)
    probe = str((cwd or PROBE.parent) / PROBE.name)
    cmd = [*(run_as or []), java, probe, "127.0.0.1", str(cluster.nodes[0].ports.jmx), *([user] if user else [])]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=cwd or PROBE.parent)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_jmx_asks_for_a_user_and_gives_the_monitor_reads_only_and_the_admin_operations(cluster):
    access = cluster.access()
    anonymous = jmx_probe(cluster)
    assert len(anonymous) == 1 and anonymous[0].startswith("connect refused: SecurityException: ")
    assert "Credentials required" in anonymous[0]
    assert jmx_probe(cluster, access.jmx_monitor.user)[:2] == ["connect ok", "read ok"]
    assert jmx_probe(cluster, access.jmx_monitor.user)[2].startswith("invoke refused: SecurityException: Access denied")
    assert jmx_probe(cluster, access.jmx_admin.user) == ["connect ok", "read ok", "invoke ok"]


def test_nodetool_works_as_admin_and_the_read_only_user_cannot_run_operations(cluster):
    assert "UN  127.0.4.1" in cluster.nodetool(1, "status")
    cluster.nodetool(1, "flush", KS, TABLE)
    cluster.nodetool(1, "garbagecollect", KS, TABLE)
    assert "Keyspace: ks" in cluster.nodetool_read(1, "tablestats", f"{KS}.{TABLE}")
    with pytest.raises(ToolError) as err:
        cluster.nodetool_read(1, "flush", KS, TABLE)
    assert "SecurityException: Access denied! Invalid access level for requested MBeanServer operation" \
        in err.value.stderr
    assert "fix: the node refused an operation to the read-only JMX user" in str(err.value)


# ---- another Unix user -------------------------------------------------------------------------

@pytest.fixture
def other_user() -> Iterator[str]:
    """A throwaway system user (no home, no shell), removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("creating a throwaway Unix user needs root (useradd); run as root to check another user's access")
    if not (shutil.which("useradd") and shutil.which("userdel") and shutil.which("runuser")):
        pytest.skip("useradd, userdel or runuser is missing")
    name = f"cpjmx{secrets.token_hex(4)}"
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                   check=True, capture_output=True)
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True)
        assert name not in {u.pw_name for u in pwd.getpwall()}


def test_another_unix_user_gets_nothing_from_either_port_nor_the_credential_files(cluster, other_user):
    as_other = ["runuser", "-u", other_user, "--"]
    access = cluster.access()
    for path in (access.jolokia_properties, access.jmx_password_file):
        read = subprocess.run([*as_other, "cat", str(path)], capture_output=True, text=True)
        assert read.returncode != 0 and "Permission denied" in read.stderr
    url = agent(cluster).url
    for path in ("version", "exec/java.lang:type=Memory/gc", "list/com.sun.management/type=DiagnosticCommand",
                 "read/java.lang:type=GarbageCollector,name=*/CollectionCount"):
        curl = subprocess.run([*as_other, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", f"{url}/{path}"],
                              capture_output=True, text=True, timeout=30)
        assert curl.stdout == "401", (path, curl.stdout, curl.stderr)
    # JMX: the JDK's own JMX client, run as that user from a folder it can read
    probe_dir = Path(tempfile.mkdtemp(prefix="cassperf-jmxprobe-"))
    try:
        os.chmod(probe_dir, 0o755)
        shutil.copy(PROBE, probe_dir / PROBE.name)
        os.chmod(probe_dir / PROBE.name, 0o644)
        lines = jmx_probe(cluster, run_as=as_other, cwd=probe_dir)
    finally:
        shutil.rmtree(probe_dir)
    assert len(lines) == 1 and lines[0].startswith("connect refused: SecurityException: ")
    assert "Credentials required" in lines[0]


# ---- the sampler still reads ------------------------------------------------------------------

@pytest.mark.parametrize("jmx, source", [("auto", "jolokia"), ("nodetool", "nodetool")])
def test_the_sampler_reads_gc_and_table_metrics_with_the_credential(cluster, jmx, source):
    sampler = ClusterSampler(cluster, tables=[(KS, TABLE)], jmx=jmx, virtual_tables=False, host=False)
    assert [s.name for s in sampler.sources] == [source]
    readings = {r.metric: r.value for r in sampler.sample_once()}
    sampler.stop()
    assert sampler.warnings == []
    assert readings["gc_count"] >= 0 and readings["gc_time_ms"] >= 0
    live = readings[f"live_sstables:{KS}.{TABLE}"]
    assert live >= 1 and live == cluster.jolokia(1).table_metric(KS, TABLE, "LiveSSTableCount")["Value"]
    assert readings[f"sampler_{source}_ms"] > 0
