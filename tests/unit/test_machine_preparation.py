"""What a report builds on this machine before its first notebook (Study.prepare_machine, said by
cassperf.workbook.preflight.machine_lines): 04's container root filesystem, so that 04's own time
is its study's. The studies are the real notebooks' with their local parameter set; the builds are
real debootstrap runs (one pointed at a mirror that refuses, so that it fails at once)."""

from __future__ import annotations

import os
import shutil

import pytest

from cassperf.cluster import rootfs
from cassperf.cluster.podman import ContainerRefused, info
from cassperf.report.params import resolve, select_notebooks
from cassperf.workbook.preflight import check_studies, machine_lines


def _studies(*names: str, **explicit: object) -> list:
    out = []
    for path in select_notebooks(list(names)):
        declared = resolve(path, "local", {}).declared
        out.append(resolve(path, "local", {k: v for k, v in explicit.items() if k in declared}))
    return check_studies(out)


def _podman_answers() -> bool:
    try:
        info()
    except ContainerRefused:
        return False
    return os.geteuid() == 0 and shutil.which("debootstrap") is not None


def test_studies_without_a_container_deployment_build_nothing() -> None:
    assert machine_lines(_studies("01-replication-factor", "05-storage-and-cache")) == []
    assert machine_lines(_studies("04-deployment-comparison", deployments="5.0.6:java17:disk")) == []


@pytest.mark.skipif(not _podman_answers(), reason="container nodes need root, podman and debootstrap (make container)")
def test_a_missing_root_filesystem_is_built_before_the_first_notebook_and_a_failed_build_is_one_line(
        tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CASSPERF_ROOTFS_CACHE", str(tmp_path / "rootfs"))
    monkeypatch.setenv("CASSPERF_DEBIAN_MIRROR", "http://127.0.0.1:9")      # refuses: debootstrap fails at once
    lines = machine_lines(_studies("04-deployment-comparison"))
    assert len(lines) == 1 and lines[0].startswith(
        "04-deployment-comparison.ipynb: the container root filesystem for Java 17 was not built: "), lines
    assert rootfs.find(17) is None
    # analyse_only runs no study: nothing is built for it
    assert machine_lines(_studies("04-deployment-comparison", analyse_only=True)) == []


@pytest.mark.skipif(rootfs.find(17) is None, reason="no cached Java 17 root filesystem (make test builds one in CI)")
def test_a_cached_root_filesystem_is_not_built_again() -> None:
    assert machine_lines(_studies("04-deployment-comparison")) == []
