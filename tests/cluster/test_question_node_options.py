"""Node options in your question (cassperf.experiments.question): an arm with a JVM option of its
own runs on an embedded cluster of its own beside the given one, both up for the whole study, its
runs interleaved with the other arm's in the same blocks; the baseline reads each node's command
line back, the claim rests on it, and the study's own cluster is gone when the study ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassperf.cluster.local import LocalCluster
from cassperf.experiments.executor import execute
from cassperf.experiments.outcome import load_outcome
from cassperf.experiments.question import QuestionStudy
from cassperf.results.catalog import catalog
from tests.conftest import cassperf_processes
from tests.notebooks.studykit import stop_study_clusters

pytestmark = pytest.mark.cluster

OPTION = "-XX:MaxGCPauseMillis=250"


def test_an_arm_with_a_jvm_option_runs_on_a_cluster_of_its_own(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("CASSPERF_DATA", str(data))
    study = QuestionStudy(experiment="node", arm_options=("base: compaction STCS", f"paused: jvm {OPTION}"),
                          workloads=("write",), claims=("paused writes faster than base",), repeats=2, run_s=2,
                          interval_s=0.1, rows=1000, threads=4, warm_max_steps=1, warm_step_s=2, warm_arm_s=0)
    try:
        with LocalCluster("qnode", "dc1:1", heap_mb=512, first_address="127.0.63.1") as cluster:
            cluster.start()
            execute(study, cluster)
            beside = LocalCluster("qnode-paused", "dc1:1", heap_mb=512, first_address="127.0.63.2")
            assert not any(s.up for s in beside.status()), "the study's own cluster stops with the study"
            assert {p.pid for p in cassperf_processes(data)} == {cluster.nodes[0].pid()}
        outcome = load_outcome(study)
        settings = {s["setting"]: s for s in outcome.record["baseline"][-1]["settings"]}
        assert OPTION in settings["paused"]["measured_jvm"].split()
        assert OPTION not in settings["base"]["measured_jvm"].split()
        runs = catalog(study="your-question", experiment="node", role="measure")
        assert sorted(zip(runs["arm"], runs["block"])) == sorted(
            (a, b) for a in ("base write", "paused write", "base write (A/A)") for b in ("1", "2"))
        claims = study.analysis().conclude(outcome).claims
        assert claims["check_took"].tolist()[1:] == [True], claims["check"].tolist()
        assert "paused: compaction" in claims["check"][1] and f"JVM options found: {OPTION}" in claims["check"][1]
    finally:
        stop_study_clusters(data)
