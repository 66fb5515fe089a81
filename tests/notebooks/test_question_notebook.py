"""Notebook 06 (your question) run by papermill in a real kernel against a real 1-node embedded
cluster with its test parameter set: two arms (STCS; LCS with LZ4 16 KiB chunks), writes and
reads, 2 randomized blocks, the warm-up, the calibration, the A/A control, and one claim of each
form of the claim grammar. What it publishes is checked against the stored runs, the study's
record and the tables as Cassandra reports them."""

from __future__ import annotations

import pytest

from cassperf.experiments.outcome import load_outcome
from cassperf.experiments.question import QuestionStudy
from cassperf.results.catalog import catalog
from tests.notebooks.studykit import (check_in_chromium, check_report_shape, execute_study, study_data,  # noqa: F401
                                      study_with_test_params)

pytestmark = [pytest.mark.notebook, pytest.mark.cluster]

NB = "06-your-question.ipynb"
WHERE = {"cluster_name": "questiontest", "first_address": "127.0.61.1"}


def test_your_question_runs_every_arm_on_every_workload_and_decides_each_claim(study_data, tmp_path):
    run = execute_study(NB, tmp_path / "first", **WHERE)
    check_report_shape(run)
    study = study_with_test_params(QuestionStudy, NB)
    outcome = load_outcome(study)
    # every arm on every workload, the A/A twin of the first last; each once per block
    assert outcome.arm_names == ["STCS write", "STCS read", "LCS write", "LCS read", "STCS write (A/A)"]
    measured = catalog(study="your-question", experiment="test", role="measure")
    assert sorted(zip(measured["arm"], measured["block"])) == sorted(
        (a, b) for a in outcome.arm_names for b in ("1", "2"))
    # the calibrated concurrency, each arm's own keyspace with its table options as Cassandra reports them
    knee = outcome.record["calibration"]["knee"]
    assert set(measured["concurrency"]) == {str(max(4, knee // 2))}
    settings = {s["setting"]: s for s in outcome.record["baseline"][-1]["settings"]}
    assert settings["STCS"]["measured_compaction"].startswith("class=SizeTieredCompactionStrategy")
    assert settings["LCS"]["measured_compaction"].startswith("class=LeveledCompactionStrategy")
    assert "class=LZ4Compressor" in settings["LCS"]["measured_compression"]
    assert "chunk_length_in_kb=16" in settings["LCS"]["measured_compression"]
    assert settings["LCS"]["flushed"] == "yes" and settings["LCS"]["keyspace"] == study.keyspace(study.setting("LCS"))
    # the A/A row first, then one verdict per claim, in the order given, each resting on the settings check
    claims = run.claims
    assert [c["claim"] for c in claims] == ["A/A control: 'STCS write' against its identical twin", *study.claims]
    assert all(c["check_took"] is True for c in claims[1:]), [c["check"] for c in claims]
    rules = [c["rule"] for c in claims[1:]]
    assert "does not hold either when the fall is shown below 10%" in rules[0]
    assert rules[3] == "TOST at 5%: the 90% CI of the change within ±50%"
    assert (claims[3]["arm_a"], claims[3]["arm_b"]) == ("STCS read", "LCS read") and "p99" in claims[3]["measured"]
    expected = outcome.study.analysis().conclude(outcome).claims
    assert [c["verdict"] for c in claims] == expected["verdict"].tolist()
    assert "What each arm was" in run.text() and "Throughput per arm" in run.text()
    check_in_chromium(run, tmp_path)
    # analyse_only rebuilds the same report from the store, no cluster
    only = execute_study(NB, tmp_path / "only", analyse_only=True, **WHERE)
    assert only.claims == run.claims
