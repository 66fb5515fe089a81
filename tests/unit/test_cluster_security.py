"""An embedded cluster's role and TLS material, and how each client is told about them, without
nodes: the files (modes, formats, certificates that verify), the node configuration, the
command lines and environment of the stress tools (cassandra-stress is not on this machine:
a stand-in records what it was given; its Java stores are opened with the JDK's keytool), the
acsylla backend's SSL arguments, and the refusal of a cluster made before authentication."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.hashes import SHA256

from cassperf.cli.cluster import local_cluster
from cassperf.cluster import LocalCluster, RemoteCluster
from cassperf.cluster.access import ensure_access, read_cql_credentials
from cassperf.cluster.nodeconf import NodeLayout, NodePorts, cassandra_yaml
from cassperf.cluster.role_manager import auth_yaml, jvm_options
from cassperf.cluster.tls import JAVA_CIPHER_SUITES, TlsOptions, encryption_yaml, ensure_cluster_tls
from cassperf.cluster.topology import parse_topology
from cassperf.errors import ConfigError
from cassperf.results.store import RunWriter, load_run
from cassperf.workload import WorkloadSpec
from cassperf.workload.backends.acsylla_backend import ssl_options
from cassperf.workload.backends.base import Target
from cassperf.workload.runners import latte_commands, run_cassandra_stress
from cassperf.workload.runners.latte_runner import WORKLOAD
from cassperf.workload.runners.streaming import ToolCredentials, tool_credentials, tool_tls

PEM_FACTORY = "org.apache.cassandra.security.PEMBasedSslContextFactory"
CIPHERS = ",".join(JAVA_CIPHER_SUITES)


def cluster_with_files(tmp_path: Path, name: str = "sec", tls: bool = True) -> LocalCluster:
    """A LocalCluster (never started) whose access and TLS files exist, as after a first start."""
    cluster = LocalCluster(name, "dc1:2", first_address="127.0.40.21", root=tmp_path, tls=tls)
    cluster.access(create=True)
    if tls:
        ensure_cluster_tls(cluster.root, [(n.name, n.address) for n in cluster.nodes])
    return cluster


# ---- the role -----------------------------------------------------------------------------------

def test_the_role_credential_is_made_once_private_and_read_back(tmp_path):
    access = ensure_access(tmp_path / "c")
    path = access.cql_credentials_file
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert access.cql.user == "cassperf" and len(access.cql.password) == 32
    assert path.read_text() == ("# CQL role of this cluster (cassperf): the nodes create it at start; cqlsh "
                                f"--credentials <this file>\n[plain_text_auth]\nusername = cassperf\n"
                                f"password = {access.cql.password}\n")
    assert ensure_access(tmp_path / "c").cql == access.cql            # kept, not made again
    assert read_cql_credentials(path) == access.cql
    path.chmod(0o640)
    with pytest.raises(ConfigError, match=r"has mode 0640: other users could read the cluster's credentials\. "
                                          r"Fix: chmod 600 "):
        read_cql_credentials(path)
    with pytest.raises(ConfigError, match=r"does not exist: the cluster's CQL role has no credential here\. Fix: "
                                          r"start the cluster once"):
        read_cql_credentials(tmp_path / "nowhere" / "cql.credentials")


def test_every_client_finds_the_role_file_of_an_embedded_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("CASSPERF_USERNAME", "someone")          # exported for a user's cluster: not used here
    monkeypatch.setenv("CASSPERF_PASSWORD", "else")
    cluster = cluster_with_files(tmp_path, tls=False)
    role = cluster.access().cql
    target = Target.of(cluster)
    assert target.credentials_file == str(cluster.root / "access" / "cql.credentials")
    assert target.credentials() == (role.user, role.password) and target.tls is None
    assert tool_credentials(cluster) == ToolCredentials("cassperf", role.password,
                                                        from_file=str(cluster.credentials_file))
    assert tool_credentials(cluster).origin() == {"tool_auth_from_file": str(cluster.credentials_file)}
    kwargs = cluster._driver_kwargs()
    assert (kwargs["auth_provider"].username, kwargs["auth_provider"].password) == (role.user, role.password)
    assert "ssl_context" not in kwargs
    # a cluster run without authentication (yaml_overrides) sends nothing
    open_cluster = LocalCluster("open", "dc1:1", root=tmp_path,
                                yaml_overrides={"authenticator": "AllowAllAuthenticator"})
    assert open_cluster.credentials_file is None and Target.of(open_cluster).credentials() is None
    assert "auth_provider" not in open_cluster._driver_kwargs()


def test_the_nodes_configuration_asks_for_the_role_and_never_makes_the_default_superuser(tmp_path):
    spec = parse_topology("dc1:1").nodes("127.0.40.21")[0]
    layout = NodeLayout(tmp_path / "node1")
    conf = cassandra_yaml("c", spec, ["127.0.40.21"], layout, NodePorts(), security=auth_yaml())
    assert {k: conf[k] for k in auth_yaml()} == {
        "authenticator": "PasswordAuthenticator", "authorizer": "CassandraAuthorizer",
        "role_manager": "cassperf.CassperfRoleManager", "auth_read_consistency_level": "LOCAL_ONE"}
    overridden = cassandra_yaml("c", spec, ["127.0.40.21"], layout, NodePorts(), security=auth_yaml(),
                                overrides={"authenticator": "AllowAllAuthenticator"})
    assert overridden["authenticator"] == "AllowAllAuthenticator"       # the user's overrides come last
    assert jvm_options(Path("/c/access/cql.credentials"), 3) == [
        "-Dcassperf.cql_credentials=/c/access/cql.credentials", "-Dcassandra.system_auth.default_rf=3"]


def test_a_cluster_made_before_authentication_is_refused_with_the_fix(tmp_path):
    old = tmp_path / "old"
    (old / "access").mkdir(parents=True, mode=0o700)
    (old / "cluster.json").write_text(json.dumps({"name": "old", "topology": "dc1:1", "version": "5.0.6",
                                                  "first_address": "127.0.0.1"}))
    with pytest.raises(ConfigError) as err:
        LocalCluster("old", "dc1:1", root=tmp_path).start()
    assert str(err.value) == (
        f"cluster 'old' at {old} was made before embedded clusters asked for a password (any local user could use "
        "it, and its data may hold the superuser cassandra/cassandra); destroy it and start it again: "
        "`cassperf cluster destroy --name old`")


@pytest.mark.parametrize("text", ['{"name": "cut', '["not", "a", "state"]', ""])
def test_a_cluster_json_that_is_not_a_state_is_one_line_with_the_fix(tmp_path, text):
    cut = tmp_path / "cut"
    (cut / "access").mkdir(parents=True, mode=0o700)
    (cut / "access" / "cql.credentials").write_text("")
    (cut / "cluster.json").write_text(text)
    with pytest.raises(ConfigError) as err:
        LocalCluster("cut", "dc1:1", root=tmp_path).start()
    assert str(err.value) == (
        f"{cut / 'cluster.json'}: not a cluster's state (it does not parse as a JSON object); destroy the cluster "
        "and start it again: `cassperf cluster destroy --name cut`")


def test_tls_is_part_of_what_a_cluster_was_made_with(tmp_path):
    cluster = cluster_with_files(tmp_path, "made", tls=False)
    (cluster.root / "cluster.json").write_text(json.dumps(cluster._state()))
    with pytest.raises(ConfigError) as err:
        LocalCluster("made", "dc1:2", first_address="127.0.40.21", root=tmp_path, tls=True).start()
    assert str(err.value) == (
        f"cluster 'made' already exists at {cluster.root} as dc1:2 Cassandra 5.0.6 on 127.0.40.21; asked for dc1:2 "
        "Cassandra 5.0.6 on 127.0.40.21 with TLS. Destroy it first (`cassperf cluster destroy --name made`) or "
        "choose another name")


def test_the_command_line_keeps_tls_as_the_cluster_was_started(tmp_path, monkeypatch):
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path))
    folder = tmp_path / "clusters" / "t"
    folder.mkdir(parents=True)
    (folder / "cluster.json").write_text(json.dumps({"name": "t", "topology": "dc1:1", "version": "5.0.6",
                                                     "first_address": "127.0.40.31", "tls": True}))
    assert local_cluster("t").tls_enabled is True
    assert local_cluster("u").tls_enabled is False
    assert local_cluster("u", tls=True).tls_enabled is True


# ---- TLS files and node configuration -----------------------------------------------------------

def test_the_cluster_ca_signs_one_certificate_per_node_and_is_then_forgotten(tmp_path):
    cluster = cluster_with_files(tmp_path)
    folder = cluster.root / "tls"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert sorted(p.name for p in folder.iterdir()) == ["ca.pem", "node1.pem", "node2.pem"]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folder.iterdir())
    (ca,) = x509.load_pem_x509_certificates((folder / "ca.pem").read_bytes())
    for node, address in (("node1", "127.0.40.21"), ("node2", "127.0.40.22")):
        text = (folder / f"{node}.pem").read_text()
        assert text.startswith("-----BEGIN PRIVATE KEY-----")            # PKCS#8, what Cassandra's reader takes
        cert, issuer = x509.load_pem_x509_certificates(text.encode())
        assert issuer == ca
        ca.public_key().verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(SHA256()))
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == [address]
    assert "PRIVATE KEY" not in (folder / "ca.pem").read_text()         # the CA key is nowhere
    before = (folder / "node1.pem").read_bytes()
    ensure_cluster_tls(cluster.root, [(n.name, n.address) for n in cluster.nodes])
    assert (folder / "node1.pem").read_bytes() == before                 # reused
    (folder / "node2.pem").unlink()
    with pytest.raises(ConfigError) as err:
        ensure_cluster_tls(cluster.root, [(n.name, n.address) for n in cluster.nodes])
    assert str(err.value) == (f"{folder} lacks node2.pem (its CA signs no new certificate). Fix: stop the cluster, "
                              f"remove {folder} and start it again (new certificates are made)")


def test_client_encryption_always_internode_only_between_dc_namespaces(tmp_path):
    cluster = cluster_with_files(tmp_path)
    files = ensure_cluster_tls(cluster.root, [(n.name, n.address) for n in cluster.nodes])
    keystore = str(cluster.root / "tls" / "node1.pem")
    client = {"enabled": True, "optional": False, "ssl_context_factory": {"class_name": PEM_FACTORY},
              "keystore": keystore, "require_client_auth": False}
    assert encryption_yaml(files, "node1", internode=False) == {"client_encryption_options": client}
    assert encryption_yaml(files, "node1", internode=True) == {
        "client_encryption_options": client,
        "server_encryption_options": {"internode_encryption": "dc", "ssl_context_factory": {"class_name": PEM_FACTORY},
                                      "keystore": keystore, "truststore": str(cluster.root / "tls" / "ca.pem"),
                                      "require_client_auth": True}}


def test_the_clients_trust_the_clusters_ca_as_they_trust_a_users(tmp_path, monkeypatch):
    cluster = cluster_with_files(tmp_path)
    ca = str(cluster.root / "tls" / "ca.pem")
    assert cluster.tls == TlsOptions(ca_file=ca) and Target.of(cluster).tls == cluster.tls
    assert tool_tls(cluster) == cluster.tls
    kwargs = cluster._driver_kwargs()
    assert kwargs["ssl_context"].check_hostname is True
    assert cluster.access().cqlshrc.exists() is False                     # written by start()
    cluster._write_cqlshrc(cluster.access())
    assert cluster.access().cqlshrc.read_text().splitlines()[1:] == [
        "[authentication]", f"credentials = {cluster.credentials_file}",
        "[connection]", "ssl = true", "[ssl]", f"certfile = {ca}", "validate = true"]
    assert cluster.cqlsh_command(2, "-e", "SELECT 1", cqlsh="/bin/cqlsh") == [
        "/bin/cqlsh", "--cqlshrc", str(cluster.access().cqlshrc), "127.0.40.22", "9042", "-e", "SELECT 1"]
    # a user's cluster: the same TlsOptions from the environment
    monkeypatch.setenv("CASSPERF_SSL_CA", ca)
    assert RemoteCluster("10.0.0.5").tls == TlsOptions(ca_file=ca) == tool_tls(None)


def test_acsylla_gets_the_pem_texts_and_checks_the_nodes_identity(tmp_path):
    cluster = cluster_with_files(tmp_path)
    import acsylla

    ca = (cluster.root / "tls" / "ca.pem").read_text()
    assert ssl_options(cluster.tls) == {"ssl_enabled": True, "ssl_verify_flags": acsylla.SSLVerifyFlags.PEER_IDENTITY,
                                        "ssl_trusted_cert": ca}
    key = (cluster.root / "tls" / "node1.pem")
    mutual = TlsOptions(ca_file=str(cluster.root / "tls" / "ca.pem"), cert_file=str(key), key_file=str(key),
                        verify=False)
    assert ssl_options(mutual) == {"ssl_enabled": True, "ssl_verify_flags": acsylla.SSLVerifyFlags.NONE,
                                   "ssl_trusted_cert": ca, "ssl_cert": key.read_text(),
                                   "ssl_private_key": key.read_text()}
    with pytest.raises(ConfigError, match=r"^TLS ca file /nowhere/ca\.pem: No such file or directory; point "
                                          r"CASSPERF_SSL_CA at a readable PEM file$"):
        ssl_options(TlsOptions(ca_file="/nowhere/ca.pem"))


# ---- latte ----------------------------------------------------------------------------------------

def test_latte_gets_its_tls_flags_on_both_commands(tmp_path, monkeypatch):
    monkeypatch.setenv("CASSPERF_SSL_CA", "/etc/cassandra/ca.pem")
    monkeypatch.setenv("CASSPERF_SSL_CERT", "/etc/cassandra/client.pem")
    monkeypatch.setenv("CASSPERF_SSL_KEY", "/etc/cassandra/client.key")
    spec = WorkloadSpec(op="write", n=100, warmup=False, concurrency=4)
    cmd = latte_commands(spec, "/bin/latte", cluster=RemoteCluster("10.0.0.5"))
    tls = ["--ssl", "--ssl-ca", "/etc/cassandra/ca.pem", "--ssl-cert", "/etc/cassandra/client.pem",
           "--ssl-key", "/etc/cassandra/client.key"]
    assert cmd.run[-8:] == [*tls, "10.0.0.5"] and cmd.run[-9] == "-q"
    assert cmd.schema[-8:] == [*tls, "10.0.0.5"]
    local = cluster_with_files(tmp_path)
    cmd = latte_commands(spec, "/bin/latte", cluster=local)
    assert cmd.run[cmd.run.index("-q") + 1:] == ["--ssl", "--ssl-ca", local.tls.ca_file, "127.0.40.21"]
    plain = latte_commands(spec, "/bin/latte", cluster=cluster_with_files(tmp_path, "plain", tls=False))
    assert "--ssl" not in plain.run and plain.run[:4] == ["/bin/latte", "run", str(WORKLOAD), "-f"]


# ---- cassandra-stress -----------------------------------------------------------------------------

FAKE_STRESS = r'''
import base64, json, os, pathlib, sys
args = sys.argv[1:]
record = {"argv": args, "files": {}}
for arg in args:
    for key in ("truststore=", "keystore="):
        if arg.startswith(key):
            path = pathlib.Path(arg[len(key):])
            record["files"][key] = [base64.b64encode(path.read_bytes()).decode(), oct(path.stat().st_mode & 0o777)]
if "-credentials-file" in args:
    record["credentials"] = pathlib.Path(args[args.index("-credentials-file") + 1]).read_text()
pathlib.Path(os.environ["FAKE_RECORD"]).write_text(json.dumps(record))
sys.stdout.write(pathlib.Path(os.environ["FAKE_OUTPUT"]).read_text())
'''


def stressed(tmp_path: Path, fixtures: Path, cluster: object, **kw: object) -> tuple[dict, dict]:
    """(what the stand-in got, the run's manifest) for a short write."""
    exe = tmp_path / "tools" / "cassandra-stress"
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(f"#!{sys.executable}\n{FAKE_STRESS}")
    exe.chmod(0o755)
    record = tmp_path / "record.json"
    env = {**os.environ, "FAKE_RECORD": str(record),
           "FAKE_OUTPUT": str(fixtures / "cassandra-stress/cs_4.1.11_write_n25000_threads3_full_crystalloide.txt")}
    spec = WorkloadSpec(op="write", n=25_000, concurrency=3, warmup=False)
    with RunWriter(tool="cassandra-stress", root=tmp_path / "runs") as run:
        run_cassandra_stress(spec, run, cluster=cluster, executable=exe, progress=False, env=env, **kw)
    return json.loads(record.read_text()), load_run(run.path).manifest


def keytool_list(store: bytes, password: str, tmp_path: Path) -> str:
    path = tmp_path / "store.p12"
    path.write_bytes(store)
    out = subprocess.run(["keytool", "-list", "-keystore", str(path), "-storetype", "JKS", "-storepass", password],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_cassandra_stress_50_gets_a_java_truststore_and_its_password_in_the_credentials_file(tmp_path, fixtures):
    cluster = cluster_with_files(tmp_path)
    seen, manifest = stressed(tmp_path, fixtures, cluster, credentials_file=True)
    argv = seen["argv"]
    private = Path(argv[argv.index("-credentials-file") + 1]).parent
    assert argv[argv.index("-transport"):] == ["-transport", f"truststore={private / 'truststore.p12'}",
                                               f"ssl-ciphers={CIPHERS}"]
    role = cluster.access().cql
    lines = seen["credentials"].splitlines()
    assert lines[:2] == ["cql.username=cassperf", f"cql.password={role.password}"]
    assert lines[2].startswith("transport.truststore.password=") and len(lines) == 3
    store, mode = seen["files"]["truststore="]
    assert mode == "0o600"
    listing = keytool_list(base64.b64decode(store), lines[2].split("=", 1)[1], tmp_path)
    assert "Your keystore contains 1 entry" in listing and "trustedCertEntry" in listing
    assert not private.exists()                                           # removed after the run
    assert manifest["tool_tls"] == "transport" and manifest["tool_auth"] == "credentials-file"
    assert manifest["tool_auth_from_file"] == str(cluster.credentials_file)
    assert "-transport truststore=<private>/truststore.p12 ssl-ciphers=" in manifest["command"]
    assert role.password not in json.dumps(manifest)


def test_cassandra_stress_before_50_gets_the_store_password_in_transport_redacted_when_shown(tmp_path, fixtures,
                                                                                             monkeypatch):
    for name in ("CASSPERF_USERNAME", "CASSPERF_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    ca = cluster_with_files(tmp_path).tls.ca_file
    key = str(Path(ca).with_name("node1.pem"))
    monkeypatch.setenv("CASSPERF_SSL_CA", ca)
    monkeypatch.setenv("CASSPERF_SSL_CERT", key)                       # a client certificate: node1's, for the test
    monkeypatch.setenv("CASSPERF_SSL_KEY", key)
    seen, manifest = stressed(tmp_path, fixtures, RemoteCluster("127.0.40.21"), credentials_file=False)
    transport = seen["argv"][seen["argv"].index("-transport"):]
    private = Path(transport[1].removeprefix("truststore=")).parent
    password = transport[2].removeprefix("truststore-password=")
    assert transport == ["-transport", f"truststore={private / 'truststore.p12'}", f"truststore-password={password}",
                         f"keystore={private / 'keystore.p12'}", f"keystore-password={password}",
                         f"ssl-ciphers={CIPHERS}"]
    assert "-credentials-file" not in seen["argv"] and "user=" not in " ".join(seen["argv"])
    listing = keytool_list(base64.b64decode(seen["files"]["keystore="][0]), password, tmp_path)
    assert "Your keystore contains 1 entry" in listing and "PrivateKeyEntry" in listing
    assert password not in json.dumps(manifest)
    assert "truststore-password=<redacted>" in manifest["command"] and "tool_auth" not in manifest


def test_without_a_javac_the_role_manager_cannot_be_compiled_and_says_how_to_get_one(tmp_path, monkeypatch):
    from cassperf.cluster.java import Java
    from cassperf.cluster.role_manager import _javac

    monkeypatch.setenv("PATH", str(tmp_path))
    runtime = Java(tmp_path / "jre" / "bin" / "java", 11, "11.0.13")       # a runtime without javac beside it
    with pytest.raises(ConfigError) as err:
        _javac(runtime)
    assert str(err.value) == (
        "the embedded cluster's role manager must be compiled once, and no javac was found (not beside "
        f"{runtime.executable}, not on PATH). Fix: install a JDK (Debian: apt-get install openjdk-17-jdk-headless) "
        "or set JAVA_HOME to one")
