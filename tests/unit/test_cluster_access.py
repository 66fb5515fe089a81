"""The per-cluster credentials of a local cluster's management ports (cluster.access), and how a
node's command line refers to them: made once, private to their owner, refused when others could
read them, never on a command line. (What the ports then allow is tests/cluster/test_management_access.py.)"""

from __future__ import annotations

import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cassperf.cluster.access import JMX_ADMIN_USER, JMX_MONITOR_USER, JOLOKIA_POLICY, Credentials, ensure_access
from cassperf.cluster.jolokia import JolokiaEndpoint
from cassperf.cluster.nodeconf import JvmSettings, NodeLayout, NodePorts, server_command
from cassperf.cluster.topology import parse_topology
from cassperf.errors import ConfigError


def test_first_use_makes_private_files_with_random_passwords_and_later_uses_read_them(tmp_path):
    old = os.umask(0o022)
    try:
        access = ensure_access(tmp_path / "c1")
    finally:
        os.umask(old)
    assert stat.S_IMODE(access.folder.stat().st_mode) == 0o700
    for path in (access.jolokia_properties, access.jolokia_policy, access.jmx_password_file, access.jmx_access_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert access.jmx_access_file.read_text() == f"{JMX_MONITOR_USER} readonly\n{JMX_ADMIN_USER} readwrite\n"
    assert f"{JMX_ADMIN_USER} {access.jmx_admin.password}\n" in access.jmx_password_file.read_text()
    props = access.jolokia_properties.read_text()
    assert f"password={access.jolokia.password}\n" in props and "authMode=basic\n" in props
    assert f"policyLocation=file://{access.jolokia_policy}\n" in props
    assert access.jmx_credentials(read_only=True).user == JMX_MONITOR_USER
    assert access.jmx_credentials(read_only=False).user == JMX_ADMIN_USER

    again = ensure_access(tmp_path / "c1")
    assert again == access
    other = ensure_access(tmp_path / "c2")
    assert {other.jolokia.password, other.jmx_admin.password}.isdisjoint(
        {access.jolokia.password, access.jmx_admin.password})


def test_no_password_appears_in_a_repr(tmp_path):
    access = ensure_access(tmp_path / "c")
    shown = repr(access) + repr(JolokiaEndpoint("http://x/jolokia", access.jolokia))
    for secret in (access.jolokia.password, access.jmx_monitor.password, access.jmx_admin.password):
        assert secret not in shown


@pytest.mark.parametrize("name", ["jolokia.properties", "jmxremote.password", "jmxremote.access"])
def test_a_credential_file_others_can_read_is_refused_with_the_fix(tmp_path, name):
    access = ensure_access(tmp_path / "c")
    (access.folder / name).chmod(0o644)
    with pytest.raises(ConfigError) as err:
        ensure_access(tmp_path / "c")
    assert str(err.value).startswith(f"{access.folder / name} has mode 0644: other users could read the cluster's "
                                     f"credentials. Fix: chmod 600 {access.folder / name}")


def test_an_access_folder_others_can_enter_is_refused(tmp_path):
    access = ensure_access(tmp_path / "c")
    access.folder.chmod(0o755)
    with pytest.raises(ConfigError, match=r"access has mode 0755: .* Fix: chmod 700 "):
        ensure_access(tmp_path / "c")


def test_a_password_file_without_the_admin_user_is_refused(tmp_path):
    access = ensure_access(tmp_path / "c")
    access.jmx_password_file.write_text(f"{JMX_MONITOR_USER} abc\n")
    with pytest.raises(ConfigError, match=rf"no jmxremote.password: {JMX_ADMIN_USER}\. Fix: remove .*access and start"):
        ensure_access(tmp_path / "c")


def test_the_jolokia_policy_allows_reads_only_and_lists_no_overlapping_patterns():
    root = ET.fromstring(JOLOKIA_POLICY)
    assert [c.text for c in root.iter("command")] == ["version"]
    assert list(root.iter("operation")) == [] and list(root.iter("deny")) == []
    attributes = list(root.iter("attribute"))
    assert attributes and all(a.get("mode") == "read" for a in attributes)   # else Jolokia allows writing them
    names = [m.findtext("name") for m in root.iter("mbean")]
    prefixes = [n.rstrip("*,") for n in names]
    assert len(set(prefixes)) == len(prefixes)
    assert not any(a != b and a.startswith(b) for a in prefixes for b in prefixes)


def test_the_node_command_line_names_the_credential_files_but_holds_no_password(tmp_path):
    access = ensure_access(tmp_path / "c")
    spec = parse_topology("dc1:1").nodes("127.0.4.1")[0]
    ports = NodePorts(jmx=7967)
    cmd = server_command(Path("/usr/bin/java"), "a.jar", Path("jamm.jar"), Path("jolokia.jar"), spec,
                         NodeLayout(tmp_path / "c" / "node1"), ports, JvmSettings(512), access)
    line = " ".join(cmd)
    for secret in (access.jolokia.password, access.jmx_monitor.password, access.jmx_admin.password):
        assert secret not in line
    assert (f"-javaagent:jolokia.jar=config={access.jolokia_properties},port=8778,host=127.0.4.1,"
            "discoveryEnabled=false") in cmd
    assert cmd[cmd.index("-Dcassandra.jmx.local.port=7967") + 1:][:5] == [
        "--add-exports", "java.management/com.sun.jmx.remote.security=ALL-UNNAMED",
        "-Dcom.sun.management.jmxremote.authenticate=true",
        f"-Dcom.sun.management.jmxremote.password.file={access.jmx_password_file}",
        f"-Dcom.sun.management.jmxremote.access.file={access.jmx_access_file}"]


def test_embedded_nodes_compile_hot_code_early_and_the_users_jvm_options_come_later(tmp_path):
    """The JIT's work lands in the warm-up (nodeconf.EMBEDDED_JIT: why); a user's own option,
    later on the line, wins."""
    access = ensure_access(tmp_path / "c")
    spec = parse_topology("dc1:1").nodes("127.0.4.1")[0]
    cmd = server_command(Path("/usr/bin/java"), "a.jar", Path("jamm.jar"), None, spec, NodeLayout(tmp_path / "c" / "n1"),
                         NodePorts(), JvmSettings(512, ["-XX:CompileThresholdScaling=1.0"]), access)
    assert [a for a in cmd if a.startswith("-XX:CompileThresholdScaling=")] == [
        "-XX:CompileThresholdScaling=0.1", "-XX:CompileThresholdScaling=1.0"]
    assert cmd.index("-XX:CompileThresholdScaling=0.1") > cmd.index("-XX:+UseG1GC")


def test_jvm_options_from_the_environment_come_after_cassperfs_and_before_the_users(tmp_path, monkeypatch):
    """CASSPERF_NODE_JVM_OPTIONS (make test: C1 only) lands between cassperf's options and a
    cluster's jvm_options, split as a shell would, and the study record's line names it."""
    from cassperf.cluster.local import LocalCluster
    from cassperf.cluster.nodeconf import env_jvm_note, env_jvm_options

    access = ensure_access(tmp_path / "c")
    spec = parse_topology("dc1:1").nodes("127.0.4.1")[0]
    monkeypatch.setenv("CASSPERF_NODE_JVM_OPTIONS", "-XX:TieredStopAtLevel=1  -Dx='a b'")
    cmd = server_command(Path("/usr/bin/java"), "a.jar", Path("jamm.jar"), None, spec,
                         NodeLayout(tmp_path / "c" / "n1"), NodePorts(), JvmSettings(512, ["-XX:TieredStopAtLevel=4"]),
                         access)
    assert [a for a in cmd if a.startswith("-XX:TieredStopAtLevel=") or a.startswith("-Dx=")] == [
        "-XX:TieredStopAtLevel=1", "-Dx=a b", "-XX:TieredStopAtLevel=4"]
    assert cmd.index("-XX:TieredStopAtLevel=1") > cmd.index("-XX:CompileThresholdScaling=0.1")
    assert env_jvm_note() == ("the embedded nodes ran with CASSPERF_NODE_JVM_OPTIONS=-XX:TieredStopAtLevel=1 "
                              "-Dx=a b from the environment")
    started = LocalCluster("started", "dc1:1", root=tmp_path)   # started without it: its cluster.json says so
    started.root.mkdir()
    (started.root / "cluster.json").write_text('{"env_jvm_options": []}')
    assert env_jvm_note(started.recorded_state().get("env_jvm_options")) is None
    monkeypatch.delenv("CASSPERF_NODE_JVM_OPTIONS")
    assert env_jvm_note() is None
    monkeypatch.setenv("CASSPERF_NODE_JVM_OPTIONS", "-Dx='a b")
    with pytest.raises(ConfigError, match=r"^CASSPERF_NODE_JVM_OPTIONS=\"-Dx='a b\": No closing quotation; quote"):
        env_jvm_options()


def test_a_cluster_folder_with_a_comma_cannot_carry_the_agent_option(tmp_path):
    access = ensure_access(tmp_path / "a,b")
    spec = parse_topology("dc1:1").nodes("127.0.4.1")[0]
    with pytest.raises(ConfigError, match="has a ',' in its path"):
        server_command(Path("java"), "a.jar", Path("jamm.jar"), Path("jolokia.jar"), spec,
                       NodeLayout(tmp_path / "a,b" / "node1"), NodePorts(), JvmSettings(512), access)


def test_the_basic_authorization_header_of_an_endpoint():
    endpoint = JolokiaEndpoint("http://127.0.4.1:8778/jolokia", Credentials("cassperf", "s3cret"))
    assert endpoint.headers() == {"Authorization": "Basic Y2Fzc3BlcmY6czNjcmV0"}
    assert JolokiaEndpoint("http://127.0.4.1:8778/jolokia").headers() == {}
