"""The container deployment's pure parts: the deployment token, its labels and facts where
Debian has no such JRE, cgroup limits, the runtime's error line, the Debian mirror."""

from __future__ import annotations

import pytest

from cassperf.cluster import rootfs
from cassperf.cluster.podman import Limits, error_line
from cassperf.errors import ConfigError
from cassperf.experiments.deployment import Deployment, DeploymentStudy, facts, parse_deployments


def test_a_container_deployment_parses_with_its_title_and_limits_label():
    dep = parse_deployments("5.0.6:java17:container")[0]
    assert (dep.name, dep.slug) == ("5.0.6-java17-container", "5_0_6-java17-container")
    assert dep.title == "Cassandra 5.0.6 on Java 17 in a container (podman), data on disk"

    def limits_label(study: DeploymentStudy) -> dict[str, str | None]:
        return {a.labels["deployment"]: a.labels.get("container_limits") for a in study.arms(None)}

    made = {d.name: facts(d, "x") for d in parse_deployments("5.0.6:java17:container,5.0.6:java17:disk")}
    if not made["5.0.6-java17-container"].available:
        pytest.skip(f"no container deployment here: {made['5.0.6-java17-container'].note}")
    both = "5.0.6:java17:disk,5.0.6:java17:container"
    assert limits_label(DeploymentStudy(deployments=both)) == {"5.0.6-java17-disk": None,
                                                               "5.0.6-java17-container": "none"}
    assert limits_label(DeploymentStudy(deployments=both, container_cpus=1.5, container_memory_mb=4096))[
        "5.0.6-java17-container"] == "cpus=1.5,memory_mb=4096"


def test_a_java_debian_does_not_ship_makes_the_container_deployment_unavailable_in_one_line():
    f = facts(Deployment("4.1.10", 8, "container"), "x")
    assert not f.available
    assert f.note == ("no Debian release carries openjdk-8-jre-headless (known: Java 11 in bullseye, Java 17 in "
                      "bookworm, Java 21 in trixie)")


@pytest.mark.parametrize("kwargs, message", [
    ({"cpus": 0}, "container limits: cpus=0: expected a number of cores > 0, or None"),
    ({"memory_mb": 0}, "container limits: memory_mb=0: expected whole MB >= 1, or None"),
    ({"memory_mb": 1.5}, "container limits: memory_mb=1.5: expected whole MB >= 1, or None"),
])
def test_bad_limits_are_refused_in_one_line(kwargs, message):
    with pytest.raises(ConfigError) as err:
        Limits(**kwargs)
    assert str(err.value) == message


def test_limits_become_podman_options():
    assert Limits().options() == [] and Limits().label == "none"
    assert Limits(cpus=0.5, memory_mb=2048).options() == ["--cpus=0.5", "--memory=2048m"]


def test_the_runtimes_error_is_its_last_error_line():
    stderr = ("time=\"...\" level=warning msg=\"something\"\n"
              "Error: runc: runc create failed: unable to start container process: error during container init: "
              "error setting rlimits for ready process: error setting rlimit type 7: operation not permitted: "
              "OCI permission denied\n")
    assert error_line(stderr) == ("runc: runc create failed: unable to start container process: error during container "
                                  "init: error setting rlimits for ready process: error setting rlimit type 7: "
                                  "operation not permitted: OCI permission denied")
    assert error_line("") == "no output"


def test_the_debian_mirror_comes_from_the_environment_else_apts_sources(monkeypatch):
    monkeypatch.setenv("CASSPERF_DEBIAN_MIRROR", "http://mirror.example/debian/")
    assert rootfs.debian_mirror() == "http://mirror.example/debian"
    monkeypatch.delenv("CASSPERF_DEBIAN_MIRROR")
    assert rootfs.debian_mirror().endswith("/debian")


def test_the_rootfs_cache_sits_beside_the_jar_cache_unless_named(monkeypatch, tmp_path):
    monkeypatch.delenv("CASSPERF_ROOTFS_CACHE", raising=False)
    monkeypatch.setenv("CASSPERF_CACHE", str(tmp_path / "cache"))
    assert rootfs.cache_root() == tmp_path / "cache" / "rootfs"
    monkeypatch.setenv("CASSPERF_ROOTFS_CACHE", str(tmp_path / "fs"))
    assert rootfs.cache_root() == tmp_path / "fs"
    assert rootfs.find(17) is None
