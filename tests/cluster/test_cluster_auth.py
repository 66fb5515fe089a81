"""The embedded cluster asks CQL clients for its own role, against one real node (127.0.40.1).

The node runs PasswordAuthenticator and CassandraAuthorizer with cassperf's role manager: the
role `cassperf` is written before the node serves CQL, and the default superuser
`cassandra`/`cassandra` is never created (the node is started with superuser_setup_delay_ms=0,
so Cassandra's own role manager would have made it before the node was CQL-ready). Every client
of the workbook logs in with the role by itself; another local user (uid 65534, a real
cassandra-driver client) gets "authentication failed" and cannot read the credential.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassperf.cluster import LocalCluster, RemoteCluster
from cassperf.report.header import describe_cluster
from cassperf.results.store import run_folder
from cassperf.workload import WorkloadSpec
from cassperf.workload.run import run_spec
from tests.conftest import latte_or_skip, started_cluster

pytestmark = pytest.mark.cluster

ADDRESS = "127.0.40.1"
ROLE_ONLY = "role\n------\ncassperf"


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[LocalCluster]:
    with started_cluster(request, tmp_path_factory, "auth", "dc1:1", ADDRESS,
                         jvm_options=["-Dcassandra.superuser_setup_delay_ms=0"]) as cluster:
        yield cluster


def cqlsh(cluster: LocalCluster, cql: str) -> subprocess.CompletedProcess:
    return subprocess.run(cluster.cqlsh_command(1, "--request-timeout", "60", "-e", cql),
                          capture_output=True, text=True, timeout=120)


def test_the_default_superuser_never_exists_and_only_the_clusters_role_can_log_in(node):
    """Right after the node is CQL-ready (Cassandra's own setup task, had it been scheduled,
    would have run already: delay 0), system_auth.roles holds the cluster's role alone."""
    roles = [r.role for r in node.session().execute("SELECT role FROM system_auth.roles")]
    assert roles == ["cassperf"]
    out = cqlsh(node, "SELECT role, is_superuser, can_login FROM system_auth.roles;")
    assert out.returncode == 0, out.stderr
    assert re.search(r"^\s*cassperf \|\s+True \|\s+True\s*$", out.stdout, re.M), out.stdout
    log = (node.nodes[0].layout.system_log).read_text()
    assert "Created default superuser role" not in log
    assert "PasswordAuthenticator" in (node.nodes[0].layout.conf / "cassandra.yaml").read_text()


def test_the_role_credential_is_private_and_in_cqlshs_format(node):
    access = node.access()
    assert stat.S_IMODE(node.root.stat().st_mode) == 0o700           # the data and logs too: the owner's alone
    assert stat.S_IMODE(access.folder.stat().st_mode) == 0o700
    for path in (access.cql_credentials_file, access.cqlshrc):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lines = access.cql_credentials_file.read_text().splitlines()
    assert lines[1:3] == ["[plain_text_auth]", "username = cassperf"]
    assert re.fullmatch(r"password = [A-Za-z0-9_-]{32}", lines[3])
    assert access.cqlshrc.read_text().splitlines()[1:] == ["[authentication]",
                                                          f"credentials = {access.cql_credentials_file}"]
    # never on a command line: not the node's, not cqlsh's
    assert access.cql.password not in " ".join(node.cqlsh_command(1, "-e", "SELECT 1"))
    pid = node.nodes[0].pid()
    assert access.cql.password not in Path(f"/proc/{pid}/cmdline").read_text()


def test_every_client_path_logs_in_with_the_role(node, tmp_path, monkeypatch):
    monkeypatch.delenv("CASSPERF_USERNAME", raising=False)
    # the control session and what a report header says of the cluster
    assert node.cassandra_version() == "5.0.6"
    described = describe_cluster(node)
    assert (described["cassandra_version"], described["datacenters"]) == ("5.0.6", {"dc1": 1})
    # the engine on both backends, with the sampler (CQL virtual tables, Jolokia) beside the first
    for backend in ("acsylla", "driver"):
        spec = WorkloadSpec(op="write", n=400, keyspace=f"auth_{backend}", warmup=False, concurrency=8)
        sampled = {"tables": [(spec.keyspace, "standard1")], "interval_s": 0.5} if backend == "acsylla" else None
        run = run_spec(spec, node, root=tmp_path, backend=backend, processes=1, progress=False, sampler=sampled)
        assert run.manifest["engine"]["backend"] == backend
        assert run.summary["count"].tolist() == [400] and run.summary["errors"].tolist() == [0]
        if sampled:
            # every source logged in (a source refused says so); a sample slower than its interval on a
            # busy machine is timing, not access
            assert not [w for w in run.warnings if "sampler" in w and "took longer than" not in w], run.warnings
            metrics = set(run.metrics["metric"])
            assert {"compactions_active", "pool_MutationStage_completed", "gc_count"} <= metrics
    # cqlsh through the cluster's cqlshrc
    out = cqlsh(node, "SELECT COUNT(*) FROM auth_acsylla.standard1;")
    assert out.returncode == 0, out.stderr
    assert re.search(r"^\s+400\s*$", out.stdout, re.M), out.stdout
    # a user's cluster handle, credentials from the environment: the same role works there too
    monkeypatch.setenv("CASSPERF_USERNAME", "cassperf")
    monkeypatch.setenv("CASSPERF_PASSWORD", node.access().cql.password)
    remote = RemoteCluster(ADDRESS, local_dc="dc1")
    try:
        assert remote.cassandra_version() == "5.0.6"
    finally:
        remote.close()


def test_latte_logs_in_with_the_role(node, tmp_path):
    latte_or_skip()
    spec = WorkloadSpec(op="write", n=300, keyspace="auth_latte", warmup=False, concurrency=4)
    run = run_spec(spec, node, tool="latte", root=tmp_path, progress=False)
    assert run.manifest["tool_auth"] == "environment"
    assert run.manifest["tool_auth_from_file"] == str(node.credentials_file)
    assert int(run.summary["count"].sum()) >= 300
    report = run_folder(run.manifest["run_id"], root=tmp_path) / "raw" / "latte-report.json"
    assert '"password": "<redacted>"' in report.read_text() and node.access().cql.password not in report.read_text()


# the other user: a child started as root, modules imported first (the interpreter under /root is
# not readable by uid 65534), then setuid, then a real cassandra-driver client connects
OTHER_USER = textwrap.dedent("""
    import os, sys
    from cassandra import AuthenticationFailed
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster, NoHostAvailable
    address, credentials = sys.argv[1], sys.argv[2]
    clusters = [Cluster([address], connect_timeout=10, protocol_version=5),
                Cluster([address], connect_timeout=10, protocol_version=5,
                        auth_provider=PlainTextAuthProvider("cassandra", "cassandra"))]
    os.setgid(65534); os.setuid(65534)
    print("uid", os.getuid())
    try:
        open(credentials).read()
    except PermissionError as exc:
        print("credentials:", type(exc).__name__)
    for cluster in clusters:
        try:
            cluster.connect()
            print("connected")
        except NoHostAvailable as exc:
            (error,) = exc.errors.values()
            print(type(error).__name__ + ":", "Remote end requires authentication" in str(error),
                  "Provided username cassandra and/or password are incorrect" in str(error))
        finally:
            cluster.shutdown()
""")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as another user (uid 65534)")
def test_another_local_user_gets_authentication_failed(node):
    proc = subprocess.run([sys.executable, "-c", OTHER_USER, ADDRESS, str(node.credentials_file)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": "/tmp"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "uid 65534",
        "credentials: PermissionError",
        "AuthenticationFailed: True False",       # no credentials: the node asks for them
        "AuthenticationFailed: False True",       # the default superuser: no such role
    ]
