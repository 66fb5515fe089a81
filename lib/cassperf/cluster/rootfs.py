"""The root filesystem of container nodes: Debian minbase plus a headless JRE of one Java major,
built once with debootstrap from Debian's archive (no image registry) and cached.

    fs = ensure_rootfs(17)        # <cache>/rootfs/debian-bookworm-java17, built on first use
    fs.java                       # /usr/lib/jvm/java-17-openjdk-amd64/bin/java (a path inside it)

Where: ``CASSPERF_ROOTFS_CACHE``, else ``<CASSPERF_CACHE>/rootfs`` (beside the jar cache,
``~/.cache/cassperf/rootfs`` by default). The archive: ``CASSPERF_DEBIAN_MIRROR``, else the first
Debian URI of apt's sources on this machine, else http://deb.debian.org/debian.

A build is atomic: debootstrap fills ``.building-<name>-<pid>`` beside the final folder, which
is renamed to ``<name>`` (one rename on one filesystem) only after debootstrap succeeded and the
JRE was found in it; a killed build leaves only a ``.building-*`` folder, which never counts as
finished and which the next build removes. Builds of one cache are serialised by a lock file.
Needs root and debootstrap (``make container``). Measured here: 2 min 16 s for bookworm +
openjdk-17-jre-headless (483 MB) on an empty cache.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from cassperf import config
from cassperf.cluster.podman import ContainerRefused
from cassperf.errors import ClusterError

#: the Debian release whose archive carries openjdk-<major>-jre-headless
SUITES: dict[int, str] = {11: "bullseye", 17: "bookworm", 21: "trixie"}
DEFAULT_MIRROR = "http://deb.debian.org/debian"
FACTS_FILE = "cassperf-rootfs.json"     # written inside the rootfs, last, before the rename
BUILD_TIMEOUT_S = 1800.0
_BUILDING = re.compile(r"^\.building-(?P<name>.+)-(?P<pid>\d+)$")


class RootfsRefused(ContainerRefused):
    """This machine cannot build (or hold) the root filesystem; the message is one line."""


@dataclass(frozen=True)
class Rootfs:
    """A finished root filesystem: its folder, the Debian suite and the JRE in it."""

    path: Path
    suite: str
    java_major: int
    java_version: str       # e.g. 17.0.19 (the JRE's release file)
    java_home: str          # inside the rootfs, e.g. /usr/lib/jvm/java-17-openjdk-amd64
    build_s: float          # how long debootstrap took when it was built, s

    @property
    def java(self) -> Path:
        """The JRE's java, as a path inside the container."""
        return Path(self.java_home) / "bin" / "java"

    def describe(self) -> dict[str, str]:
        return {"rootfs": str(self.path), "suite": f"Debian {self.suite} (debootstrap minbase)",
                "jre": f"openjdk-{self.java_major}-jre-headless {self.java_version}"}


def cache_root() -> Path:
    env = os.environ.get("CASSPERF_ROOTFS_CACHE")
    return Path(env).resolve() if env else config.cache_dir() / "rootfs"


def suite_for(java_major: int) -> str:
    """The Debian suite with that headless JRE; RootfsRefused (one line) when there is none."""
    if java_major not in SUITES:
        raise RootfsRefused(f"no Debian release carries openjdk-{java_major}-jre-headless (known: "
                            f"{', '.join(f'Java {k} in {v}' for k, v in SUITES.items())})")
    return SUITES[java_major]


def rootfs_name(java_major: int) -> str:
    return f"debian-{suite_for(java_major)}-java{java_major}"


def debian_mirror() -> str:
    """CASSPERF_DEBIAN_MIRROR, else the first Debian archive URI in apt's sources, else deb.debian.org."""
    if os.environ.get("CASSPERF_DEBIAN_MIRROR"):
        return os.environ["CASSPERF_DEBIAN_MIRROR"].rstrip("/")
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in sources:
        try:
            text = path.read_text()
        except OSError:
            continue
        for uri in re.findall(r"^(?:URIs:|deb(?:\s+\[[^]]*\])?)\s+(\S+)", text, re.M):
            if uri.rstrip("/").endswith("/debian"):
                return uri.rstrip("/")
    return DEFAULT_MIRROR


def find(java_major: int, root: Path | None = None) -> Rootfs | None:
    """The finished root filesystem of that Java major in the cache, or None (never a half-built one)."""
    path = (root or cache_root()) / rootfs_name(java_major)
    try:
        facts = json.loads((path / FACTS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return Rootfs(path, facts["suite"], facts["java_major"], facts["java_version"], facts["java_home"],
                  facts["build_s"])


def remove_stale_builds(root: Path | None = None) -> list[Path]:
    """Remove ``.building-*`` folders whose building process is gone (a killed build), with
    what that build left running or mounted there. Returns the folders removed."""
    root = root or cache_root()
    removed = []
    for path in sorted(root.glob(".building-*")) if root.is_dir() else []:
        m = _BUILDING.match(path.name)
        if m and not psutil.pid_exists(int(m.group("pid"))):
            _clear(path)
            removed.append(path)
    return removed


def _inside(path: str, folder: Path) -> bool:
    return path == str(folder) or path.startswith(f"{folder}/")


def _clear(work: Path) -> None:
    """Remove a build folder: first end debootstrap and what runs chrooted in it (a killed
    build's debootstrap runs on), then unmount what it mounted there (proc, sys: removing
    files through those would reach the host's), then delete it."""
    procs = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if proc.pid != os.getpid() and (any(_inside(a, work) for a in proc.info["cmdline"] or [])
                                            or _inside(os.readlink(f"/proc/{proc.pid}/root"), work)):
                proc.kill()
                procs.append(proc)
        except (psutil.Error, OSError):
            continue
    psutil.wait_procs(procs, timeout=10)
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    for mount in sorted((m for m in mounts if _inside(m, work)), key=len, reverse=True):
        subprocess.run(["umount", "-l", mount], capture_output=True, timeout=30)
    if any(_inside(line.split()[4], work) for line in Path("/proc/self/mountinfo").read_text().splitlines()):
        raise ClusterError(f"could not unmount what the build mounted under {work}; unmount it by hand and remove it")
    shutil.rmtree(work, ignore_errors=True)


def _jre(target: Path, java_major: int) -> tuple[str, str]:
    """(java home inside the rootfs, version) of the JRE debootstrap installed."""
    for release in sorted((target / "usr/lib/jvm").glob(f"java-{java_major}-openjdk-*/release")):
        m = re.search(r'^JAVA_VERSION="([^"]+)"', release.read_text(), re.M)
        if m and (release.parent / "bin" / "java").exists():
            return "/" + str(release.parent.relative_to(target)), m.group(1)
    raise ClusterError(f"debootstrap finished, but {target}/usr/lib/jvm holds no Java {java_major} runtime")


def _stderr_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def ensure_rootfs(java_major: int, root: Path | None = None,
                  progress: Callable[[str], None] | None = _stderr_progress) -> Rootfs:
    """The cached root filesystem for ``java_major``, built now if there is none (see module doc).
    RootfsRefused when this machine cannot build it (not root, no debootstrap, no such JRE);
    ClusterError with debootstrap's last error line and its log when the build failed."""
    root = root or cache_root()
    found = find(java_major, root)
    if found is not None:
        return found
    suite, name = suite_for(java_major), rootfs_name(java_major)
    if os.geteuid() != 0:
        raise RootfsRefused(f"building the container root filesystem needs root (debootstrap; running as uid "
                            f"{os.geteuid()}): run once as root, or set CASSPERF_ROOTFS_CACHE to a cache holding {name}")
    if shutil.which("debootstrap") is None:
        raise RootfsRefused("debootstrap is not installed: run `make container` as root (apt-get install debootstrap)")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # another process may be building it: wait, then look again
        found = find(java_major, root)
        if found is not None:
            return found
        remove_stale_builds(root)
        return _build(java_major, suite, root / name, progress)


def _build(java_major: int, suite: str, final: Path, progress: Callable[[str], None] | None) -> Rootfs:
    mirror = debian_mirror()
    work = final.with_name(f".building-{final.name}-{os.getpid()}")
    log = final.with_name(f"{final.name}.build.log")
    package = f"openjdk-{java_major}-jre-headless"
    if progress:
        progress(f"building the container root filesystem {final.name}: debootstrap --variant=minbase "
                 f"{suite} + {package} from {mirror} (about 2-3 min, once per machine)")
    started = time.monotonic()
    cmd = ["debootstrap", "--variant=minbase", f"--include={package}", suite, str(work), mirror]
    try:
        with open(log, "wb") as out:
            proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  timeout=BUILD_TIMEOUT_S)
        if proc.returncode != 0:
            lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.startswith(("E:", "W:"))]
            why = (lines or [f"exit {proc.returncode}"])[-1]
            raise ClusterError(f"debootstrap of {final.name} failed: {why} (log: {log})")
        java_home, version = _jre(work, java_major)
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for f in (work / junk).glob("*"):
                if f.is_file():
                    f.unlink()
        build_s = round(time.monotonic() - started, 1)
        (work / FACTS_FILE).write_text(json.dumps({"suite": suite, "java_major": java_major, "java_version": version,
                                                   "java_home": java_home, "build_s": build_s, "mirror": mirror},
                                                  indent=2))
        os.rename(work, final)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"debootstrap of {final.name} did not finish within {BUILD_TIMEOUT_S:.0f} s "
                           f"(log: {log})") from None
    finally:
        if work.exists():
            _clear(work)
    if progress:
        progress(f"built {final} in {build_s:.0f} s")
    found = find(java_major, final.parent)
    assert found is not None
    return found
