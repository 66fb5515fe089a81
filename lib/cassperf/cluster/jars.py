"""Resolve Cassandra's jars (and the Jolokia JVM agent) from Maven Central into a cache.

`org.apache.cassandra:cassandra-all:<version>` with its runtime dependencies is the server and
NodeTool. The first call runs Maven (about 10 s); later calls reuse the cache
(`<cache>/cassandra/<version>/lib`, marked complete only after Maven succeeded).

Environment: CASSPERF_MAVEN_REPO overrides the remote repository URL (a mirror);
CASSPERF_CACHE moves the cache (see cassperf.config).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cassperf import config
from cassperf.errors import ConfigError, ToolError

JOLOKIA_VERSION = "2.2.9"
#: Pinned, so that the same Maven gives the same jar set everywhere.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies"
_COMPLETE = ".complete"

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>cassperf</groupId><artifactId>{artifact}</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>{group}</groupId><artifactId>{dep}</artifactId><version>{version}</version>{classifier}</dependency>
  </dependencies>
</project>
"""

_SETTINGS = """<settings><mirrors><mirror><id>cassperf-mirror</id><mirrorOf>*</mirrorOf><url>{url}</url></mirror></mirrors></settings>
"""

# [ERROR] ... Could not transfer artifact ... from/to central (https://repo.maven.apache.org/maven2): Connection refused
_UNREACHABLE_RE = re.compile(r"Could not transfer|No plugin found for prefix|Unknown host|Connection refused|Network is unreachable|"
                             r"connect timed out|No route to host|Temporary failure in name resolution|"
                             r"transfer failed", re.IGNORECASE)
# [ERROR] ... Could not find artifact org.apache.cassandra:cassandra-all:jar:9.9.9 in central
_NOT_FOUND_RE = re.compile(r"Could not find artifact|was not found in", re.IGNORECASE)


@dataclass(frozen=True)
class CassandraJars:
    version: str
    lib_dir: Path

    @property
    def jars(self) -> list[Path]:
        return sorted(self.lib_dir.glob("*.jar"))

    @property
    def jamm(self) -> Path:
        found = [p for p in self.jars if p.name.startswith("jamm-")]
        if not found:
            raise ConfigError(f"no jamm jar in {self.lib_dir}; remove the folder and resolve again")
        return found[0]

    def classpath(self, conf_dir: Path | None = None) -> str:
        parts = ([str(conf_dir)] if conf_dir else []) + [str(p) for p in self.jars]
        return os.pathsep.join(parts)


def _mvn_copy(pom_text: str, out_dir: Path, what: str) -> None:
    mvn = shutil.which("mvn")
    if not mvn:
        raise ConfigError(f"{what} is not in the cache ({out_dir}) and Maven (mvn) is not installed; "
                          "install it (Debian: apt-get install maven) or copy a filled cache there")
    work = out_dir.parent / (out_dir.name + ".resolve")
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    (work / "pom.xml").write_text(pom_text)
    cmd = [mvn, "-q", "-B", "-Dstyle.color=never", "-f", str(work / "pom.xml"), DEPENDENCY_PLUGIN,
           "-DincludeScope=runtime", f"-DoutputDirectory={work / 'lib'}"]
    mirror = os.environ.get("CASSPERF_MAVEN_REPO")
    if mirror:
        (work / "settings.xml").write_text(_SETTINGS.format(url=mirror))
        cmd[1:1] = ["-s", str(work / "settings.xml")]
    local_repo = os.environ.get("CASSPERF_MAVEN_LOCAL_REPO")
    if local_repo:
        cmd.append(f"-Dmaven.repo.local={local_repo}")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired as exc:
        raise ToolError(cmd, None, "", "timed out after 900 s",
                        hint="Maven Central did not answer in time; check the network or proxy") from exc
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        if _NOT_FOUND_RE.search(output) and not _UNREACHABLE_RE.search(output.replace("Could not find", "")):
            raise ToolError(cmd, proc.returncode, proc.stdout, proc.stderr,
                            hint=f"{what} does not exist on Maven Central; check the version")
        if _UNREACHABLE_RE.search(output):
            raise ToolError(cmd, proc.returncode, proc.stdout, proc.stderr,
                            hint=f"Maven Central is unreachable, so {what} could not be downloaded; "
                                 "check the network or proxy (Maven's settings.xml), or set CASSPERF_MAVEN_REPO "
                                 "to a reachable mirror")
        raise ToolError(cmd, proc.returncode, proc.stdout, proc.stderr,
                        hint=f"Maven could not resolve {what}")
    if out_dir.exists():
        shutil.rmtree(out_dir)
    (work / "lib").rename(out_dir)
    shutil.rmtree(work, ignore_errors=True)
    (out_dir / _COMPLETE).write_text("resolved by Maven\n")


def resolve_cassandra(version: str = "5.0.6") -> CassandraJars:
    """The jars of cassandra-all `version`, from the cache or Maven Central."""
    lib = config.cache_dir() / "cassandra" / version / "lib"
    if not (lib / _COMPLETE).exists():
        lib.parent.mkdir(parents=True, exist_ok=True)
        pom = _POM.format(artifact=f"cassandra-runtime-{version}", group="org.apache.cassandra",
                          dep="cassandra-all", version=version, classifier="")
        _mvn_copy(pom, lib, f"Cassandra {version} (org.apache.cassandra:cassandra-all:{version})")
    return CassandraJars(version, lib)


def resolve_jolokia(version: str = JOLOKIA_VERSION) -> Path:
    """The Jolokia JVM agent jar (JMX over HTTP), from the cache or Maven Central."""
    lib = config.cache_dir() / "jolokia" / version
    jar = lib / f"jolokia-agent-jvm-{version}-javaagent.jar"
    if not (lib / _COMPLETE).exists() or not jar.exists():
        lib.parent.mkdir(parents=True, exist_ok=True)
        pom = _POM.format(artifact="jolokia-runtime", group="org.jolokia", dep="jolokia-agent-jvm",
                          version=version, classifier="<classifier>javaagent</classifier>")
        _mvn_copy(pom, lib, f"the Jolokia agent (org.jolokia:jolokia-agent-jvm:{version}:javaagent)")
    if not jar.exists():
        raise ConfigError(f"expected {jar} after resolving Jolokia; remove {lib} and try again")
    return jar
