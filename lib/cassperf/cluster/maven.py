"""Run Maven to copy an artifact and its runtime dependencies into a folder, on a Java the machine
trusts, with progress on stderr and one clear message per kind of failure.

Maven never runs on the Java chosen for a node: JAVA_HOME is the user's way to pick the node's
Java (e.g. a JDK 11 for Cassandra 4.1), and that Java's trust store may not verify the
registry's certificate. Maven's Java is, in order:

- ``CASSPERF_MAVEN_JAVA_HOME``, when set (a JDK or JRE folder with bin/java);
- else the Java that ``mvn`` finds without JAVA_HOME (the ``java`` on PATH);
- else, when there is no ``java`` on PATH, JAVA_HOME (the only Java there is).

Environment: CASSPERF_MAVEN_REPO replaces the remote repository (a mirror URL);
CASSPERF_MAVEN_LOCAL_REPO replaces Maven's local repository (~/.m2/repository).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cassperf.errors import ConfigError, ToolError

#: Pinned, so that the same Maven gives the same jar set everywhere.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies"
CENTRAL = "https://repo.maven.apache.org/maven2"
TIMEOUT_S = 900.0
#: a progress line after this many downloaded files, or after PROGRESS_EVERY_S, whichever comes first
PROGRESS_EVERY_FILES = 100
PROGRESS_EVERY_S = 10.0

Progress = Callable[[str], None]

_SETTINGS = """<settings><mirrors><mirror><id>cassperf-mirror</id><mirrorOf>*</mirrorOf><url>{url}</url></mirror></mirrors></settings>
"""

# Java version: 17.0.15, vendor: Debian, runtime: /usr/lib/jvm/java-17-openjdk-amd64
_JAVA_RE = re.compile(r"^Java version: (?P<version>[^,]+), vendor: .*, runtime: (?P<runtime>.+?)\s*$", re.M)
# [INFO] Downloaded from central: https://repo.maven.apache.org/maven2/com/google/guava/guava/33.jar (3.1 MB at 4.2 MB/s)
_DOWNLOADED_RE = re.compile(r"Downloaded from [^:]+: (?P<url>\S+) \((?P<size>[\d.]+) (?P<unit>B|kB|MB|GB)")
# ... from/to central (https://repo.maven.apache.org/maven2): transfer failed for ...
_REPO_URL_RE = re.compile(r"from/to [^ ]+ \((?P<url>[^)]+)\)")
# ... transfer failed for https://...pom: PKIX path building failed: sun.security.provider.certpath.
#     SunCertPathBuilderException: unable to find valid certification path to requested target
_CERT_RE = re.compile(r"PKIX path building failed|unable to find valid certification path|SSLHandshakeException",
                      re.IGNORECASE)
# [ERROR] ... Could not transfer artifact ... from/to central (https://repo.maven.apache.org/maven2): Connection refused
_UNREACHABLE_RE = re.compile(r"Could not transfer|No plugin found for prefix|Unknown host|Connection refused|"
                             r"Network is unreachable|connect timed out|No route to host|"
                             r"Temporary failure in name resolution|transfer failed", re.IGNORECASE)
# [ERROR] ... Could not find artifact org.apache.cassandra:cassandra-all:jar:9.9.9 in central
_NOT_FOUND_RE = re.compile(r"Could not find artifact|was not found in", re.IGNORECASE)
_MISSING_RE = re.compile(r"Could not find artifact (?P<coords>[^\s:]+:[^\s:]+)\S* in")
# -Djavax.net.ssl.trustStore=/etc/pki/java/cacerts  (in MAVEN_OPTS)
_TRUST_STORE_OPT_RE = re.compile(r"-Djavax\.net\.ssl\.trustStore=(\S+)")
_UNIT_BYTES = {"B": 1, "kB": 1000, "MB": 1000**2, "GB": 1000**3}


@dataclass(frozen=True)
class MavenJava:
    """The Java Maven is told to run on: `home` (None: mvn picks the java on PATH) and why."""

    home: Path | None
    reason: str


def java_home_of(executable: Path) -> Path:
    """The Java home of a `java` executable, through symlinks (/usr/bin/java -> /usr/lib/jvm/x/bin/java)."""
    return executable.resolve().parent.parent


def maven_java(environ: dict[str, str] | None = None) -> MavenJava:
    """Which Java Maven runs on (see the module docstring); never the node's JAVA_HOME when another exists."""
    env = os.environ if environ is None else environ
    chosen = env.get("CASSPERF_MAVEN_JAVA_HOME")
    if chosen:
        if not (Path(chosen) / "bin" / "java").exists():
            raise ConfigError(f"CASSPERF_MAVEN_JAVA_HOME={chosen} has no bin/java; point it at a Java whose trust store "
                              "verifies the Maven repository (e.g. /usr/lib/jvm/java-17-openjdk-amd64) or unset it")
        return MavenJava(Path(chosen), "CASSPERF_MAVEN_JAVA_HOME")
    on_path = shutil.which("java", path=env.get("PATH"))
    if on_path:
        return MavenJava(None, f"the java on PATH ({on_path})")
    home = env.get("JAVA_HOME")
    return MavenJava(Path(home) if home else None, "JAVA_HOME (no java on PATH)")


def maven_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment Maven runs in: the caller's, with JAVA_HOME set to Maven's own Java or removed."""
    env = dict(os.environ if environ is None else environ)
    java = maven_java(env)
    env.pop("JAVA_HOME", None)
    if java.home is not None:
        env["JAVA_HOME"] = str(java.home)
    return env


def trust_store(runtime: Path, environ: dict[str, str] | None = None) -> Path:
    """The trust store a Java runtime verifies TLS certificates with (MAVEN_OPTS may name another)."""
    env = os.environ if environ is None else environ
    m = _TRUST_STORE_OPT_RE.search(env.get("MAVEN_OPTS", ""))
    if m:
        return Path(m.group(1))
    for candidate in (runtime / "lib" / "security" / "cacerts", runtime / "jre" / "lib" / "security" / "cacerts"):
        if candidate.exists():
            return candidate
    return runtime / "lib" / "security" / "cacerts"


class _Tally:
    """Downloads seen in Maven's output, reported as compact progress lines."""

    def __init__(self, what: str, repo: str, out_dir: Path, progress: Progress | None) -> None:
        self.what = what
        self.repo = repo
        self.out_dir = out_dir
        self.progress = progress
        self.java: str | None = None
        self.files = 0
        self.bytes = 0
        self.t0 = time.monotonic()
        self._last_files = 0
        self._last_t = self.t0

    def line(self, text: str) -> None:
        if self.java is None:
            j = _JAVA_RE.search(text)
            if j:  # Maven's -V banner: the Java it really runs on, whatever chose it
                self.java = f"Java {j.group('version')} ({j.group('runtime')})"
                if self.progress:
                    self.progress(f"resolving {self.what} from {self.repo} into {self.out_dir} "
                                  f"(Maven on {self.java})")
                return
        m = _DOWNLOADED_RE.search(text)
        if not m:
            return
        self.files += 1
        self.bytes += int(float(m.group("size")) * _UNIT_BYTES[m.group("unit")])
        now = time.monotonic()
        due = self.files - self._last_files >= PROGRESS_EVERY_FILES or now - self._last_t >= PROGRESS_EVERY_S
        if self.progress and due:
            self._last_files, self._last_t = self.files, now
            name = m.group("url").rsplit("/", 1)[-1]
            self.progress(f"  {self.summary()} so far, {now - self.t0:.0f} s (last: {name})")

    def summary(self) -> str:
        return f"{self.files} file{'' if self.files == 1 else 's'} downloaded ({self.bytes / 1e6:.1f} MB)"


def stderr_progress(text: str) -> None:
    print(f"cassperf: {text}", file=sys.stderr, flush=True)


def _run(cmd: list[str], env: dict[str, str], tally: _Tally) -> tuple[int | None, str]:
    """Run Maven, feeding each output line to the tally; (exit code or None on timeout, output)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            stdin=subprocess.DEVNULL)
    timer = threading.Timer(TIMEOUT_S, proc.kill)
    timer.start()
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for text in proc.stdout:
            lines.append(text)
            tally.line(text)
        rc = proc.wait()
    finally:
        timed_out = not timer.is_alive()
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return (None if timed_out else rc), "".join(lines)


def copy_dependencies(pom_text: str, out_dir: Path, what: str, artifact: str,
                      progress: Progress | None = stderr_progress) -> None:
    """Resolve the dependency of `pom_text` with its runtime dependencies into `out_dir` (replaced
    only when Maven succeeded). `what` names it in messages; `artifact` is its group:artifact (a
    missing artifact of another name is the repository's fault, not the version's). `progress`
    gets one line when Maven starts, one per PROGRESS_EVERY_FILES downloads (or PROGRESS_EVERY_S
    seconds) and one at the end (None: silent)."""
    mvn = shutil.which("mvn")
    if not mvn:
        raise ConfigError(f"{what} is not in the cache ({out_dir}) and Maven (mvn) is not installed; "
                          "install it (Debian: apt-get install maven) or copy a filled cache there")
    work = out_dir.parent / (out_dir.name + ".resolve")
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    (work / "pom.xml").write_text(pom_text)
    cmd = [mvn, "-V", "-B", "-Dstyle.color=never", "-f", str(work / "pom.xml"), DEPENDENCY_PLUGIN,
           "-DincludeScope=runtime", f"-DoutputDirectory={work / 'lib'}"]
    repo = os.environ.get("CASSPERF_MAVEN_REPO") or CENTRAL
    if os.environ.get("CASSPERF_MAVEN_REPO"):
        (work / "settings.xml").write_text(_SETTINGS.format(url=repo))
        cmd[1:1] = ["-s", str(work / "settings.xml")]
    local_repo = os.environ.get("CASSPERF_MAVEN_LOCAL_REPO")
    if local_repo:
        cmd.append(f"-Dmaven.repo.local={local_repo}")
    env = maven_environment()
    tally = _Tally(what, repo, out_dir, progress)
    rc, output = _run(cmd, env, tally)
    if rc != 0:
        raise _failure(cmd, rc, output, what, artifact, repo, env)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    (work / "lib").rename(out_dir)
    shutil.rmtree(work, ignore_errors=True)
    if progress:
        jars = len(list(out_dir.glob("*.jar")))
        progress(f"resolved {what}: {jars} jars, {tally.summary()} in {time.monotonic() - tally.t0:.1f} s")


def _failure(cmd: list[str], rc: int | None, output: str, what: str, artifact: str, repo: str,
             env: dict[str, str]) -> ToolError:
    """The ToolError for a failed Maven run, with the fix for its kind of failure."""
    if rc is None:
        return ToolError(cmd, None, output, f"timed out after {TIMEOUT_S:.0f} s",
                         hint=f"the Maven repository {repo} did not answer in time, so {what} could not be downloaded; "
                              "check the network or proxy")
    m = _REPO_URL_RE.search(output)
    registry = m.group("url") if m else repo
    if _NOT_FOUND_RE.search(output) and not _UNREACHABLE_RE.search(output.replace("Could not find", "")):
        missing = _MISSING_RE.search(output)
        if missing and missing.group("coords") != artifact:
            return ToolError(cmd, rc, output, "",
                             hint=f"the Maven repository {registry} lacks {missing.group('coords')}, which resolving "
                                  f"{what} needs; point CASSPERF_MAVEN_REPO at a full mirror of Maven Central, or unset it")
        return ToolError(cmd, rc, output, "", hint=f"{what} does not exist in the Maven repository {registry}; "
                                                   "check the version")
    if _CERT_RE.search(output):
        return ToolError(cmd, rc, output, "", hint=_certificate_hint(output, what, registry, env))
    if _UNREACHABLE_RE.search(output):
        return ToolError(cmd, rc, output, "",
                         hint=f"the Maven repository {registry} is unreachable, so {what} could not be downloaded; "
                              "check the network or proxy (Maven's settings.xml), or set CASSPERF_MAVEN_REPO "
                              "to a reachable mirror")
    return ToolError(cmd, rc, output, "", hint=f"Maven could not resolve {what}")


def _certificate_hint(output: str, what: str, registry: str, env: dict[str, str]) -> str:
    """One line: which Java Maven ran on, that its trust store did not verify the registry, the fix."""
    m = _JAVA_RE.search(output)
    if m:
        runtime, version = Path(m.group("runtime")), m.group("version")
    else:
        home = env.get("JAVA_HOME")
        on_path = shutil.which("java", path=env.get("PATH"))
        runtime = Path(home) if home else java_home_of(Path(on_path)) if on_path else Path("?")
        version = "?"
    store = trust_store(runtime, env)
    on_path = shutil.which("java", path=env.get("PATH"))
    other = java_home_of(Path(on_path)) if on_path else None
    suggestion = f" (e.g. {other}, the java on PATH)" if other and other != runtime.resolve() else ""
    return (f"Maven ran on Java {version} ({runtime}), whose trust store {store} could not verify the certificate "
            f"of {registry}, so {what} could not be downloaded; set CASSPERF_MAVEN_JAVA_HOME to a Java that "
            f"trusts it{suggestion}, or import the registry's CA certificate into that trust store "
            f"(keytool -importcert -keystore {store} -storepass changeit -file CA.pem)")
