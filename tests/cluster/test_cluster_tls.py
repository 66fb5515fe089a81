"""An embedded cluster made with tls=True, against one real node (127.0.40.11): CQL over TLS only,
with the cluster's own CA. Every client path gets there with the CA the way a user's cluster's
CA reaches it (TlsOptions): the engine on acsylla (really acsylla, no fallback) and on
cassandra-driver, the driver session, cqlsh, latte (when built), and cassandra-stress's Java TLS
path (its stores and cipher list, through Cassandra's own SSLFactory: the tarball is not here).
A plaintext client and a client that trusts another CA are refused."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cassandra.cluster import NoHostAvailable

from cassperf.certs import make_ca
from cassperf.cluster import LocalCluster, TlsOptions
from cassperf.cluster.tls import JAVA_CIPHER_SUITES
from cassperf.workload import WorkloadSpec
from cassperf.workload.backends.base import BackendError, Target, create
from cassperf.workload.run import run_spec
from cassperf.workload.runners.stress_runner import stress_transport
from tests.conftest import latte_or_skip, started_cluster

pytestmark = pytest.mark.cluster

ADDRESS = "127.0.40.11"
PROBE = Path(__file__).parent / "stress_tls_probe" / "StressTlsProbe.java"


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[LocalCluster]:
    with started_cluster(request, tmp_path_factory, "tls", "dc1:1", ADDRESS, tls=True) as cluster:
        yield cluster


def test_the_node_serves_cql_over_tls_only_with_the_clusters_certificate(node):
    assert "(encrypted)" in [line for line in node.nodes[0].layout.system_log.read_text().splitlines()
                             if "Starting listening for CQL clients" in line][-1]
    with ssl.create_default_context(cafile=node.tls.ca_file).wrap_socket(
            socket.create_connection((ADDRESS, 9042), timeout=10), server_hostname=ADDRESS) as tls:
        cert = tls.getpeercert()
    assert cert["subjectAltName"] == (("IP Address", ADDRESS),)
    assert dict(x[0] for x in cert["subject"])["commonName"] == "cassperf tls node1"
    # the session and what it asks of the cluster
    assert node.cassandra_version() == "5.0.6"
    assert node.topology_frame()["address"].tolist() == [ADDRESS]


@pytest.mark.parametrize("backend", ["acsylla", "auto", "driver"])
def test_the_engine_writes_over_tls_on_the_backend_asked_for(node, tmp_path, backend):
    spec = WorkloadSpec(op="write", n=500, keyspace=f"tls_{backend}", warmup=False, concurrency=8)
    run = run_spec(spec, node, root=tmp_path, backend=backend, processes=1, progress=False)
    assert run.manifest["engine"]["backend"] == ("acsylla" if backend == "auto" else backend)
    assert run.summary["count"].tolist() == [500] and run.summary["errors"].tolist() == [0]


def test_cqlsh_over_tls_and_a_plaintext_or_wrongly_trusting_client_is_refused(node, tmp_path):
    out = subprocess.run(node.cqlsh_command(1, "-e", "SELECT cluster_name FROM system.local;"),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^\s*tls\s*$", out.stdout, re.M), out.stdout
    # plaintext: the engine's backends without TLS (the role is right, the transport is not)
    plain = Target((ADDRESS,), local_dc="dc1", credentials_file=str(node.credentials_file))
    for backend, name in (("driver", "cassandra-driver"), ("acsylla", "acsylla")):
        with pytest.raises(BackendError, match=f"^{name} could not connect to {ADDRESS}:9042: "):
            asyncio.run(create(backend).connect(plain, "LOCAL_ONE", "system", 1))
    # another CA: verification fails
    other = tmp_path / "other-ca.pem"
    other.write_bytes(make_ca("someone else's CA", dt.timedelta(days=1)).cert_pem())
    driver = node.driver_cluster(ssl_context=TlsOptions(ca_file=str(other)).context())
    try:
        with pytest.raises(NoHostAvailable, match="CERTIFICATE_VERIFY_FAILED"):
            driver.connect()
    finally:
        driver.shutdown()
    mistrusting = Target((ADDRESS,), local_dc="dc1", credentials_file=str(node.credentials_file),
                         tls=TlsOptions(ca_file=str(other)))
    with pytest.raises(BackendError, match=f"^acsylla could not connect to {ADDRESS}:9042: "):
        asyncio.run(create("acsylla").connect(mistrusting, "LOCAL_ONE", "system", 1))


def test_cassandra_stress_transport_options_reach_the_node_through_cassandras_own_ssl_code(node, tmp_path):
    transport = stress_transport(node.tls, tmp_path)
    args = transport.args(with_passwords=False)
    ciphers = args[-1].removeprefix("ssl-ciphers=")
    assert args == ["-transport", f"truststore={tmp_path / 'truststore.p12'}", f"ssl-ciphers={ciphers}"]
    assert ciphers == ",".join(JAVA_CIPHER_SUITES)
    java = str(node.java().executable)
    out = subprocess.run([java, "-cp", node.jars().classpath(), str(PROBE), ADDRESS, "9042", str(transport.truststore),
                          transport.password, ciphers], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"ok TLSv1\.3 TLS_AES_(128_GCM_SHA256|256_GCM_SHA384) opcode 6", last), out.stdout
    # cassandra-stress's own default suites (RSA key exchange) share none with the node's EC key
    out = subprocess.run([java, "-cp", node.jars().classpath(), str(PROBE), ADDRESS, "9042", str(transport.truststore),
                          transport.password, "TLS_RSA_WITH_AES_128_CBC_SHA,TLS_RSA_WITH_AES_256_CBC_SHA"],
                         capture_output=True, text=True, timeout=180)
    assert out.stdout.strip().splitlines()[-1].startswith("refused SSLHandshakeException"), out.stdout


def test_latte_writes_over_tls(node, tmp_path):
    latte_or_skip()
    spec = WorkloadSpec(op="write", n=300, keyspace="tls_latte", warmup=False, concurrency=4)
    run = run_spec(spec, node, tool="latte", root=tmp_path, progress=False)
    assert f"--ssl --ssl-ca {node.tls.ca_file} {ADDRESS}" in run.manifest["command"]
    assert int(run.summary["count"].sum()) >= 300
