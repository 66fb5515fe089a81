"""Bad conditions before a cluster starts: each gets one clear message that names the fix.
These use the real java and mvn of the machine, with the environment changed around them."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

from cassperf.cluster import LocalCluster
from cassperf.cluster.java import Java, check_java_for, find_java, java_info
from cassperf.errors import ConfigError, ToolError

TEMURIN_25 = Path("/usr/lib/jvm/temurin-25-jdk-amd64")


@pytest.fixture
def java_only_path(tmp_path: Path) -> str:
    """A PATH with java and nothing else (no mvn)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").symlink_to(find_java())
    return str(bin_dir)


def test_no_java_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match=r"no java found \(JAVA_HOME unset, no java on PATH\); install a JDK 17"):
        LocalCluster("nojava", "dc1:1", first_address="127.0.9.1", root=tmp_path).start()


def test_java_major_that_cassandra_does_not_support_is_refused():
    java = Java(Path("/opt/jdk/bin/java"), 25, "25.0.1")
    with pytest.raises(ConfigError) as err:
        check_java_for("5.0.6", java)
    assert str(err.value) == ("Cassandra 5.0.6 runs on Java 11 or 17; found Java 25 (25.0.1) at /opt/jdk/bin/java. "
                              "Fix: set JAVA_HOME to a JDK 17 (Debian: /usr/lib/jvm/java-17-openjdk-amd64)")
    with pytest.raises(ConfigError, match=r"Cassandra 4\.1\.10 runs on Java 8 or 11; found Java 25"):
        check_java_for("4.1.10", java)


@pytest.mark.skipif(not TEMURIN_25.exists(), reason="no Temurin 25 JDK on this machine")
def test_a_real_java_25_home_is_detected_and_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(TEMURIN_25))
    assert java_info().major == 25
    with pytest.raises(ConfigError, match=r"Cassandra 5\.0\.6 runs on Java 11 or 17; found Java 25"):
        LocalCluster("java25", "dc1:1", first_address="127.0.9.1", root=tmp_path).start()


def test_unknown_cassandra_line_is_refused():
    with pytest.raises(ConfigError, match=r"Cassandra 3\.11\.4 is not a version cassperf can run locally"):
        check_java_for("3.11.4", java_info())


def test_memory_above_what_is_free_is_refused_before_anything_starts(tmp_path):
    cluster = LocalCluster("huge", "dc1:40", heap_mb=4096, first_address="127.0.9.1", root=tmp_path)
    with pytest.raises(ConfigError, match=r"topology dc1:40 needs about 183\.4 GiB \(40 nodes to start x "
                                          r"\(4096 MB heap \+ 600 MB off-heap\)\) but .* GiB is free"):
        cluster.start()
    assert not (tmp_path / "huge").exists(), "nothing may be created when the memory check fails"


def test_port_taken_by_another_process_is_named(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.9.1", 9042))
        s.listen()
        with pytest.raises(ConfigError) as err:
            LocalCluster("ports", "dc1:1", first_address="127.0.9.1", root=tmp_path).start()
    msg = str(err.value)
    assert msg.startswith("port 9042 on 127.0.9.1 (native_transport_port of node1) is already taken by pid "
                          f"{os.getpid()} (")
    assert msg.endswith("; stop that process, or give this cluster other addresses (first_address='127.0.1.1') or ports")


def test_no_mvn_and_an_empty_cache(monkeypatch, tmp_path, java_only_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", java_only_path)
    monkeypatch.setenv("CASSPERF_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ConfigError) as err:
        LocalCluster("nomvn", "dc1:1", first_address="127.0.9.1", root=tmp_path).start()
    assert str(err.value) == (f"Cassandra 5.0.6 (org.apache.cassandra:cassandra-all:5.0.6) is not in the cache "
                              f"({tmp_path / 'cache' / 'cassandra' / '5.0.6' / 'lib'}) and Maven (mvn) is not installed; "
                              "install it (Debian: apt-get install maven) or copy a filled cache there")


@pytest.mark.skipif(shutil.which("mvn") is None, reason="needs mvn")
def test_maven_central_unreachable(monkeypatch, tmp_path):
    """A real Maven run against a repository nothing answers on (127.0.0.1:9), empty local repo."""
    monkeypatch.setenv("CASSPERF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CASSPERF_MAVEN_REPO", "http://127.0.0.1:9/maven2")
    monkeypatch.setenv("CASSPERF_MAVEN_LOCAL_REPO", str(tmp_path / "m2"))
    with pytest.raises(ToolError) as err:
        LocalCluster("offline", "dc1:1", first_address="127.0.9.1", root=tmp_path).start()
    assert err.value.returncode not in (0, None)
    assert "fix: the Maven repository http://127.0.0.1:9/maven2 is unreachable, so Cassandra 5.0.6 " \
           "(org.apache.cassandra:cassandra-all:5.0.6) could not be downloaded" in str(err.value)


def test_bad_heap_and_name_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="heap_mb=100: a Cassandra node needs at least 256 MB of heap"):
        LocalCluster("x", "dc1:1", heap_mb=100, root=tmp_path)
    with pytest.raises(ConfigError, match=r"cluster name 'a b': use letters, digits, '-' and '_'"):
        LocalCluster("a b", "dc1:1", root=tmp_path)
