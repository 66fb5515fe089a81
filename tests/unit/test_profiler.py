"""Where a CPU profile cannot be taken (cassperf.cluster.profiler), one line says why and nothing
raises: a named cluster, a container node, an embedded cluster never started; a Java without
Flight Recorder is named as such. The study parameter ``profile`` (on by default) is checked and
leaves the plan key alone. Recording on real nodes: tests/cluster/test_profiles.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassperf.cluster.container import ContainerCluster
from cassperf.cluster.local import LocalCluster
from cassperf.cluster.profiler import Profiler, _why, not_profiled
from cassperf.cluster.remote import RemoteCluster
from cassperf.errors import ConfigError
from cassperf.experiments.garbagecollect import GCStudy


def test_a_named_cluster_is_not_profiled_and_its_run_says_why_in_one_line(tmp_path: Path) -> None:
    cluster = RemoteCluster("10.0.0.4,10.0.0.5")
    why = ("a named cluster is not profiled: the workbook has no JMX session with its nodes' JVMs (profiles are "
           "taken on the embedded cluster)")
    assert not_profiled(cluster) == why
    with Profiler() as profiler:
        rec = profiler.recording(cluster, tmp_path / "profiles", "cassperf-r1")
        rec.start_at(0)
        section = rec.stop()
    assert rec.notes == [f"profile not recorded: {why}"]
    assert section == {"recorder": "jfr", "settings": "cassperf.jfc: jdk.ExecutionSample every 20 ms, "
                                                      "jdk.GCPhasePause and jdk.GarbageCollection (every pause)",
                       "sample_period_ms": 20, "files": {}, "timing_s": section["timing_s"],
                       "notes": [f"profile not recorded: {why}"]}


def test_a_container_node_is_not_profiled(tmp_path: Path) -> None:
    cluster = ContainerCluster("ct", "dc1:1", root=tmp_path)
    assert not_profiled(cluster) == ("container nodes are not profiled: their JVMs write files inside their "
                                     "containers (profiles are taken on nodes this machine runs directly)")


def test_an_embedded_cluster_never_started_has_no_credentials_to_profile_with(tmp_path: Path) -> None:
    cluster = LocalCluster("never", "dc1:1", root=tmp_path)
    assert not_profiled(cluster) == "cluster never has no JMX credentials (made at its first start): it cannot be profiled"
    with Profiler() as profiler:
        assert profiler.prepare(cluster) == [f"profile not recorded: {not_profiled(cluster)}"]


def test_a_run_folder_with_a_comma_is_said_not_recorded(tmp_path: Path) -> None:
    with Profiler() as profiler:
        rec = profiler.recording(RemoteCluster("10.0.0.4"), tmp_path / "a,b", "cassperf-r1")
    assert rec.notes == [f"profile not recorded: the run folder's path has a ',' in it ({tmp_path / 'a,b'}), which "
                         f"JFR.stop's arguments cannot carry"]


def test_a_java_without_flight_recorder_is_named_as_such() -> None:
    said = "IllegalArgumentException: no operation jfrStart taking 1 arguments on com.sun.management:type=DiagnosticCommand"
    assert _why(said) == "its Java has no Flight Recorder (the DiagnosticCommand MBean has no jfrStart)"
    assert _why("  IOException: Connection refused ") == "IOException: Connection refused"


def test_a_study_profiles_by_default_and_the_switch_leaves_the_plan_alone() -> None:
    on, off = GCStudy(), GCStudy(profile=False)
    assert on.profile is True and off.profile is False
    assert on.plan_key() == off.plan_key()
    with pytest.raises(ConfigError, match=r"^profile='yes': expected True or False \(True: a CPU profile of the "
                                          r"nodes per measured run\)$"):
        GCStudy(profile="yes")  # type: ignore[arg-type]
