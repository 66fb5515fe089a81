"""Resolve Cassandra's jars (and the Jolokia JVM agent) from Maven Central into a cache.

`org.apache.cassandra:cassandra-all:<version>` with its runtime dependencies is the server and
NodeTool. The first call runs Maven (cassperf.cluster.maven: on a Java the machine trusts, never
the node's JAVA_HOME; about a minute on an empty Maven repository, with progress on stderr); later
calls reuse the cache (`<cache>/cassandra/<version>/lib`, marked complete only after Maven
succeeded).

Environment: CASSPERF_CACHE moves the cache (see cassperf.config); CASSPERF_MAVEN_REPO (a mirror),
CASSPERF_MAVEN_LOCAL_REPO and CASSPERF_MAVEN_JAVA_HOME change how Maven runs (see
cassperf.cluster.maven).
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from cassperf import config
from cassperf.cluster.maven import DEPENDENCY_PLUGIN, Progress, copy_dependencies, stderr_progress
from cassperf.errors import ConfigError

__all__ = ["DEFAULT_VERSION", "DEPENDENCY_PLUGIN", "JOLOKIA_VERSION", "CassandraJars", "resolve_cassandra",
           "resolve_jolokia"]

#: the Cassandra version a cluster is made with when none is named (the Makefile's CASSANDRA_VERSION)
DEFAULT_VERSION = "5.0.6"
JOLOKIA_VERSION = "2.2.9"
_COMPLETE = ".complete"

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>cassperf</groupId><artifactId>{artifact}</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>{group}</groupId><artifactId>{dep}</artifactId><version>{version}</version>{classifier}</dependency>
  </dependencies>
</project>
"""


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


def _resolved(out_dir: Path, *needs: Path) -> bool:
    """`out_dir` marked complete by Maven, and every file of ``needs`` in it."""
    return (out_dir / _COMPLETE).exists() and all(p.exists() for p in needs)


def _mvn_copy(pom_text: str, out_dir: Path, what: str, artifact: str, progress: Progress | None,
              needs: tuple[Path, ...] = ()) -> None:
    """Maven fills `out_dir`; the folder is marked complete only after Maven succeeded. One process
    at a time per folder (a lock beside it): make test resolves the jars beside its quick tests, one of
    which may need them first, and two test files at a time may both need Jolokia; the second waits,
    then finds the folder resolved (complete, with ``needs``)."""
    with open(out_dir.parent / f".{out_dir.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _resolved(out_dir, *needs):
            return
        copy_dependencies(pom_text, out_dir, what, artifact, progress)
        (out_dir / _COMPLETE).write_text("resolved by Maven\n")


def resolve_cassandra(version: str = "5.0.6", progress: Progress | None = stderr_progress) -> CassandraJars:
    """The jars of cassandra-all `version`, from the cache or Maven Central (progress lines go
    to `progress`, stderr by default, only when Maven runs)."""
    lib = config.cache_dir() / "cassandra" / version / "lib"
    if not _resolved(lib):
        lib.parent.mkdir(parents=True, exist_ok=True)
        pom = _POM.format(artifact=f"cassandra-runtime-{version}", group="org.apache.cassandra",
                          dep="cassandra-all", version=version, classifier="")
        _mvn_copy(pom, lib, f"Cassandra {version} (org.apache.cassandra:cassandra-all:{version})",
                  "org.apache.cassandra:cassandra-all", progress)
    return CassandraJars(version, lib)


def resolve_jolokia(version: str = JOLOKIA_VERSION, progress: Progress | None = stderr_progress) -> Path:
    """The Jolokia JVM agent jar (JMX over HTTP), from the cache or Maven Central."""
    lib = config.cache_dir() / "jolokia" / version
    jar = lib / f"jolokia-agent-jvm-{version}-javaagent.jar"
    if not _resolved(lib, jar):
        lib.parent.mkdir(parents=True, exist_ok=True)
        pom = _POM.format(artifact="jolokia-runtime", group="org.jolokia", dep="jolokia-agent-jvm",
                          version=version, classifier="<classifier>javaagent</classifier>")
        _mvn_copy(pom, lib, f"the Jolokia agent (org.jolokia:jolokia-agent-jvm:{version}:javaagent)",
                  "org.jolokia:jolokia-agent-jvm", progress, needs=(jar,))
    if not jar.exists():
        raise ConfigError(f"expected {jar} after resolving Jolokia; remove {lib} and try again")
    return jar
