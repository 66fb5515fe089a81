"""A class-data archive (AppCDS) of a Cassandra version's classes for one Java: a node that maps it
starts about a quarter sooner and on a quarter less CPU (5.0.6 on Java 17 here, three starts of
one node each way: 7.6 -> 5.7 s to CQL, 10.0 -> 7.5 s of node CPU).

It is made from what a node loads. The first node started without an archive writes its class
list (``-XX:DumpLoadedClassList``), kept once the node serves CQL. The next start dumps the
archive from that list (``java -Xshare:dump``: about 19 s, once per Cassandra version, Java and
cache) and every start after maps it (``-Xshare:auto``: a JVM that cannot use it starts as
before). The archive names the jars it was made from, which therefore lead the node's classpath
(cassperf.cluster.nodeconf.server_command). Both files are kept in
``<CASSPERF_CLASS_ARCHIVE>/<version>/<java and jars>.{classlist,jsa}`` (default
``<cache>/class-archives``).

Nodes start without it where it would change what a study measures or cannot be read:

- a node with a bounded page cache: the archive's mapped pages (about 75 MB) are page cache,
  charged to the node's cgroup inside the bound the study states;
- a node in a container (its JRE is the root filesystem's);
- with ``CASSPERF_CLASS_ARCHIVE=0``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cassperf import config

ENV = "CASSPERF_CLASS_ARCHIVE"
DUMP_TIMEOUT_S = 600


@dataclass(frozen=True)
class ClassArchive:
    """The class list and archive of one (Cassandra version, Java, jars)."""

    folder: Path
    key: str
    java: Path
    classpath: str

    @property
    def class_list(self) -> Path:
        return self.folder / f"{self.key}.classlist"

    @property
    def archive(self) -> Path:
        return self.folder / f"{self.key}.jsa"

    @property
    def dump_log(self) -> Path:
        return self.folder / f"{self.key}.dump.log"

    @property
    def failed(self) -> Path:
        """There when the dump failed: nodes start without the archive, and no start tries again
        (its log says why; remove both to try again)."""
        return self.folder / f"{self.key}.failed"


def root() -> Path | None:
    """Where archives are kept; None when CASSPERF_CLASS_ARCHIVE turns them off."""
    value = os.environ.get(ENV, "").strip()
    if value.lower() in ("0", "false", "no", "off"):
        return None
    return Path(value) if value else config.cache_dir() / "class-archives"


def for_nodes(version: str, java: Path, java_version: str, classpath: str) -> ClassArchive | None:
    """The archive of these jars (the classpath, each jar's size and time) on this Java; None when
    archives are off."""
    folder = root()
    if folder is None:
        return None
    digest = hashlib.sha256(f"{os.path.realpath(java)}\n{java_version}\n".encode())
    for jar in classpath.split(os.pathsep):
        st = os.stat(jar)
        digest.update(f"{jar} {st.st_size} {st.st_mtime_ns}\n".encode())
    return ClassArchive(folder / version, digest.hexdigest()[:16], java, classpath)


def node_options(archive: ClassArchive, node: str) -> tuple[list[str], Path | None]:
    """The JVM options of a node starting now, and the class list it writes (to keep with
    keep_class_list once it serves CQL), or None. Dumps the archive first when only its list is
    there; a dump that fails leaves its log and the node starts without it."""
    if archive.failed.exists():
        return [], None
    if archive.archive.is_file() or (archive.class_list.is_file() and dump(archive)):
        return [f"-XX:SharedArchiveFile={archive.archive}", "-Xshare:auto"], None
    archive.folder.mkdir(parents=True, exist_ok=True)
    writing = archive.folder / f"{archive.key}.classlist.{os.getpid()}.{node}"
    return [f"-XX:DumpLoadedClassList={writing}"], writing


def keep_class_list(archive: ClassArchive, writing: Path) -> None:
    """Keep what a node that now serves CQL has loaded as the class list (whole lines; the node
    goes on writing into the file, which is unlinked here), unless another node kept one first."""
    try:
        text = writing.read_text(errors="replace")
    except OSError:
        return
    finally:
        writing.unlink(missing_ok=True)
    text = text[:text.rfind("\n") + 1]
    if text and not archive.class_list.exists():
        partial = archive.class_list.with_name(f"{archive.class_list.name}.{os.getpid()}")
        partial.write_text(text)
        partial.replace(archive.class_list)


def dump(archive: ClassArchive) -> bool:
    """Make the archive from the class list, one process at a time (a file lock); True when it is
    there. Its log stays beside it."""
    archive.folder.mkdir(parents=True, exist_ok=True)
    with open(archive.folder / f"{archive.key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if archive.archive.is_file():
            return True
        partial = archive.archive.with_name(f"{archive.archive.name}.{os.getpid()}")
        with open(archive.dump_log, "w") as log:
            try:
                done = subprocess.run([str(archive.java), "-Xshare:dump",
                                       f"-XX:SharedClassListFile={archive.class_list}",
                                       f"-XX:SharedArchiveFile={partial}", "-cp", archive.classpath],
                                      stdout=log, stderr=subprocess.STDOUT, timeout=DUMP_TIMEOUT_S)
                ok = done.returncode == 0 and partial.is_file()
            except (OSError, subprocess.TimeoutExpired) as exc:
                log.write(f"\ncassperf: the dump did not finish: {exc}\n")
                ok = False
        if not ok:
            partial.unlink(missing_ok=True)
            archive.failed.write_text(f"see {archive.dump_log}\n")
            return False
        partial.replace(archive.archive)
        return True
