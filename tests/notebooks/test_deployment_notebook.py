"""Notebook 04 run by papermill in a real kernel with its test parameter set: every default
deployment (5.0.6 on Java 17: data on disk, on tmpfs, and the node in a container under podman)
gets a one-node cluster of its own, all side by side, and their arms interleave in 2 randomized
blocks. Then a real cassandra-stress log from another machine is imported (deployment=Docker,
machine=server2): it joins a table of its own with the printed row rate and the note that its
hardware is unknown; a second execution runs nothing, and analyse_only rebuilds the same claims."""

from __future__ import annotations

import html
import shutil

import pytest

from cassperf.experiments.deployment import DeploymentStudy, cluster_name, parse_deployments, tmpfs_folder
from cassperf.experiments.outcome import load_outcome
from cassperf.results.catalog import catalog
from tests.notebooks.studykit import (check_in_chromium, check_report_shape, execute_study, study_data,  # noqa: F401
                                      study_with_test_params)

# alone: its three deployments' clusters (one a container) start and load side by side; beside 05's notebook
# in make test both took about twice their time alone (04 371 s against 193 s, 05 466 s against 246 s: CI of
# 63c8e85), so it runs with no other test beside it
pytestmark = [pytest.mark.alone, pytest.mark.notebook, pytest.mark.cluster]

NB = "04-deployment-comparison.ipynb"
WHERE = {"cluster_name": "deploytest", "first_address": "127.0.22.1"}
FIXTURE = "cassandra-stress/cs_4.1.11_write_n25000_threads3_full_crystalloide.txt"
DEPLOYMENTS = ("5.0.6-java17-disk", "5.0.6-java17-tmpfs", "5.0.6-java17-container")


@pytest.fixture
def tmpfs_cleanup():
    yield
    for dep in parse_deployments(DeploymentStudy().deployments):
        shutil.rmtree(tmpfs_folder("/dev/shm", cluster_name(WHERE["cluster_name"], dep)), ignore_errors=True)


def test_deployments_interleave_side_by_side_and_imported_logs_join_their_own_table(study_data, tmp_path, fixtures,
                                                                                     tmpfs_cleanup):
    from cassperf.cli import main

    run = execute_study(NB, tmp_path / "first", **WHERE)
    check_report_shape(run)
    measured = catalog(study="deployment-comparison", experiment="test", role="measure")
    arms = {f"{d} {op}" for d in DEPLOYMENTS for op in ("write", "read")} | {f"{DEPLOYMENTS[0]} write (A/A)"}
    assert sorted(zip(measured["arm"], measured["block"])) == sorted((a, b) for a in arms for b in ("1", "2"))
    fs = dict(zip(measured["deployment"], measured["data_fs"], strict=True))
    assert fs["5.0.6-java17-tmpfs"] == "tmpfs" and fs["5.0.6-java17-disk"] != "tmpfs"
    assert set(zip(measured["deployment"], measured["cassandra"], measured["java"])) == {
        (d, "5.0.6", "17") for d in DEPLOYMENTS}
    assert set(measured[measured["deployment"] == "5.0.6-java17-container"]["container_limits"]) == {"none"}
    # interleaved: within a block, the deployments' runs alternate rather than run one after the other
    record = load_outcome(study_with_test_params(DeploymentStudy, NB)).record
    order = record["order"]
    # every measured run waited for the three deployments' nodes to go idle, and the report says so
    waits = [s["quiet"] for s in record["slots"].values()]
    assert len(waits) == len(measured) and all(0.4 < w["waited_s"] <= 3 + 1 for w in waits)
    assert "Before each measured run, the executor waited for the study's nodes to go idle (their CPU below " \
           "0.15 cores over 0.5 s, at most 3 s)" in html.unescape(run.text())
    block1 = [a.rsplit(" ", 1)[0].replace(" (A/A)", "").rsplit(" ", 1)[0] for b, _, a in order if b == 1]
    assert len({tuple(block1[i:i + 3]) for i in range(0, 6, 3)}) > 1 or len(set(block1[:3])) > 1
    study = study_with_test_params(DeploymentStudy, NB)
    outcome = load_outcome(study)
    assert [c["verdict"] for c in run.claims] == outcome.study.analysis().conclude(outcome).claims["verdict"].tolist()
    assert "Write node CPU (ms/1k rows)" in run.text()
    check_in_chromium(run, tmp_path)

    # a real log from another machine: its own table with the printed row rate, in the report analyse_only
    # rebuilds from the store (a second execution that runs nothing: 01's notebook test, on the same executor)
    stored = len(catalog(study="deployment-comparison", experiment="test", include_failed=True))
    assert main(["import", str(fixtures / FIXTURE), "--label", "deployment=Docker", "--label", "machine=server2"]) == 0
    only = execute_study(NB, tmp_path / "only", analyse_only=True, imported_filter="machine=server2", **WHERE)
    assert not only.errors
    assert len(catalog(study="deployment-comparison", experiment="test", include_failed=True)) == stored
    text = only.text()
    assert "server2 (hardware not recorded)" in text and ">483<" in text.replace(" ", "")
    docker = [c for c in only.claims if c["claim"].startswith("Cassandra in Docker")]
    assert docker and docker[0]["verdict"] == "not shown"
