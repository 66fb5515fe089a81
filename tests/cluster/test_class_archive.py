"""Embedded nodes map a class-data archive (cassperf.cluster.class_archive), on a real node (127.0.46.1):
the first start keeps what the node loaded, the next dumps the archive from it and the node maps it
and serves CQL; with archives off a node starts as before."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.cluster


def command_line(pid: int) -> list[str]:
    return psutil.Process(pid).cmdline()


def test_the_first_start_keeps_the_class_list_the_next_dumps_the_archive_and_the_node_maps_it(
        make_cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASSPERF_CLASS_ARCHIVE", str(tmp_path / "archives"))
    cluster = make_cluster("cds", "dc1:1", "127.0.46.1")
    folder = tmp_path / "archives" / cluster.version

    cluster.start()
    [kept] = folder.glob("*.classlist")
    classes = kept.read_text().splitlines()
    assert len(classes) > 5000 and "org/apache/cassandra/service/CassandraDaemon" in classes
    assert sorted(p.name for p in folder.iterdir()) == [kept.name]       # the node's own file is gone, no archive yet
    args = command_line(cluster.nodes[0].pid())
    assert [a for a in args if "ClassList" in a or "Xshare" in a] == [
        f"-XX:DumpLoadedClassList={folder}/{kept.stem}.classlist.{os.getpid()}.node1"]
    cluster.stop()

    cluster.start()
    [archive] = folder.glob("*.jsa")
    assert archive.stem == kept.stem and archive.stat().st_size > 10_000_000
    pid = cluster.nodes[0].pid()
    args = command_line(pid)
    assert [a for a in args if "ClassList" in a or "Xshare" in a or "SharedArchive" in a] == [
        f"-XX:SharedArchiveFile={archive}", "-Xshare:auto"]
    classpath = args[args.index("-cp") + 1].split(":")
    assert classpath[:len(cluster.jars().jars)] == [str(j) for j in cluster.jars().jars]   # as the archive was dumped
    assert str(archive) in Path(f"/proc/{pid}/maps").read_text()            # the JVM mapped it: not refused
    assert cluster.session().execute("SELECT release_version FROM system.local").one()[0] == cluster.version
    cluster.stop()

    monkeypatch.setenv("CASSPERF_CLASS_ARCHIVE", "0")
    cluster.start()
    args = command_line(cluster.nodes[0].pid())
    assert [a for a in args if "ClassList" in a or "Xshare" in a or "SharedArchive" in a] == []
