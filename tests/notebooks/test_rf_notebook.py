"""Notebook 01 (replication factor) run by papermill in a real kernel against a real 3-node
embedded cluster with its test parameter set: 2 randomized blocks, the warm-up, the calibration,
the A/A control. What it publishes is checked against the stored runs and the study's record."""

from __future__ import annotations

import pytest

from cassperf.experiments.outcome import load_outcome
from cassperf.experiments.replication_factor import RFStudy
from cassperf.experiments.study import MIN_IN_FLIGHT
from cassperf.results.catalog import catalog
from tests.notebooks.studykit import (check_in_chromium, check_report_shape, execute_study, study_data,  # noqa: F401
                                      study_with_test_params)

pytestmark = [pytest.mark.notebook, pytest.mark.cluster]

NB = "01-replication-factor.ipynb"
WHERE = {"cluster_name": "rftest", "first_address": "127.0.7.1"}


def test_rf_notebook_runs_every_arm_in_randomized_blocks_and_leads_with_its_findings(study_data, tmp_path):
    run = execute_study(NB, tmp_path / "first", **WHERE)
    check_report_shape(run)
    measured = catalog(study="replication-factor", experiment="test", role="measure")
    study = study_with_test_params(RFStudy, NB)
    outcome = load_outcome(study)
    arms = outcome.arm_names
    # the plan's arms at the calibrated concurrency, the A/A twin last; every arm once per block
    planned = [a.name for a in study.arms(outcome.calibrated)]
    assert arms == [*planned, "write rf=1 (A/A)"]
    assert {"write rf=1", "write rf=3", "read rf=1 run=a", "read rf=1 run=b", "read rf=3 cl=ONE", "mixed rf=3"} \
        <= set(planned)
    assert sorted(zip(measured["arm"], measured["block"])) == sorted((a, b) for a in arms for b in ("1", "2"))
    order = outcome.record["order"]
    assert [o[2] for o in order if o[0] == 1] != [o[2] for o in order if o[0] == 2] or len(arms) < 3
    for block in (1, 2):   # run b right after its run a
        names = [o[2] for o in order if o[0] == block]
        assert names.index("read rf=1 run=b") == names.index("read rf=1 run=a") + 1
    # calibration ran once and set the concurrency of the arms
    cal = outcome.record["calibration"]
    assert cal["knee"] >= 1 and len(cal["points"]) >= 3
    writes = measured[measured["arm"] == "write rf=1"]
    assert set(writes["concurrency"]) == {str(max(MIN_IN_FLIGHT, cal["knee"] // 2))}   # half the knee, at least 4
    assert outcome.record["warmup"] and outcome.record["warmup"][0]["rates_ops_s"]
    # the warm pass ran every arm once, unmeasured, before block 1 (not the A/A twin: its arm warmed it)
    warm = catalog(study="replication-factor", experiment="test", role="warmup")
    passed = sorted(n[len("warm pass "):] for n in warm["name"] if n.startswith("warm pass "))
    assert passed == sorted(planned) and len(outcome.record["warm_pass"]["runs"]) == len(planned)
    # every measured run carries its pool, its op's at its load: the cold run a and the run b
    # right after it too (analysis.arms, 5.)
    pools = dict(zip(measured["arm"], measured["pool"], strict=False))
    threads = dict(zip(measured["arm"], measured["concurrency"], strict=False))
    assert pools["read rf=1 run=a"] == pools["read rf=1 run=b"] == f"read x{threads['read rf=1 run=a']}"
    assert pools["read rf=3 cl=ONE"] == f"read x{threads['read rf=3 cl=ONE']}"
    assert pools["mixed rf=3"] == f"mixed x{threads['mixed rf=3']}"
    # the published claims are the analysis functions' on the stored runs
    expected = outcome.study.analysis().conclude(outcome).claims
    assert [c["verdict"] for c in run.claims] == expected["verdict"].tolist()
    assert [c["claim"] for c in run.claims] == expected["claim"].tolist()
    check_in_chromium(run, tmp_path)
    # a second execution runs nothing (every slot stored), and no warm-up either
    stored = len(catalog(study="replication-factor", experiment="test", include_failed=True))
    again = execute_study(NB, tmp_path / "again", **WHERE)
    assert len(catalog(study="replication-factor", experiment="test", include_failed=True)) == stored
    assert again.claims == run.claims
    # analyse_only rebuilds the same report from the store, no cluster
    only = execute_study(NB, tmp_path / "only", analyse_only=True, cluster_topology="dc1:1", **WHERE)
    assert only.claims == run.claims
