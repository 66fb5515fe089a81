"""Notebook 03 (garbagecollect) run by papermill in a real kernel against a real 3-node embedded
cluster with its test parameter set: the garbagecollect and placebo arms and the A/A control in 2
blocks, two of the arms' six orders. What it publishes is checked against the stored runs."""

from __future__ import annotations

import re

import pytest

from cassperf.analysis import phase_window
from cassperf.experiments.garbagecollect import GCStudy
from cassperf.experiments.garbagecollect_analysis import published_table, windows
from cassperf.experiments.outcome import load_outcome
from cassperf.results.catalog import catalog
from tests.notebooks.studykit import (check_in_chromium, check_report_shape, execute_study, study_data,  # noqa: F401
                                      study_with_test_params)

pytestmark = [pytest.mark.notebook, pytest.mark.cluster]

NB = "03-garbagecollect-impact.ipynb"
WHERE = {"cluster_name": "gctest", "first_address": "127.0.7.11"}
PUBLISHED_ROWS = ["Read Throughput", "Read Latency avg.", "Read Latency p95", "Read Latency p99",
                  "Write Throughput", "Write Latency avg.", "Write Latency p95", "Write Latency p99"]


def test_gc_notebook_runs_garbagecollect_beside_a_placebo_and_publishes_the_table(study_data, tmp_path):
    run = execute_study(NB, tmp_path, **WHERE)
    check_report_shape(run)
    measured = catalog(study="garbagecollect", experiment="test", role="measure")
    assert sorted(zip(measured["arm"], measured["block"])) == sorted(
        (a, b) for a in ("garbagecollect", "placebo", "placebo (A/A)") for b in ("1", "2"))
    assert set(measured["rate"]) == {"300"} and set(measured["ratio"]) == {"5:4:1"}
    study = study_with_test_params(GCStudy, NB)
    outcome = load_outcome(study)
    for r in outcome.runs:
        assert r.manifest["latency_type"] == "response"
        phase = phase_window(r, "garbagecollect" if r.labels["arm"] == "garbagecollect" else "placebo")
        steady, op = windows(r, 6, 4)
        assert op.start_s == phase.start_s and op.length_s == 6 and steady.end_s == op.start_s
    # one garbagecollect ran unmeasured before block 1 (GCStudy.baseline: why), over a JMX session
    first = outcome.record["baseline"][-1]["first_garbagecollect"]
    assert re.fullmatch(r"3 nodes in \d+\.\d s, over one JMX session opened before the run", first), first
    assert "One garbagecollect of the table ran unmeasured before block 1 (3 nodes in " in run.text()
    # the blocks are orders of the three arms, block 2 starting with the arm that ended block 1 (ALL_ORDERS)
    blocks = [[a for _, _, a in sorted(s for s in outcome.record["order"] if s[0] == b)] for b in (1, 2)]
    assert sorted(blocks[0]) == sorted(blocks[1]) and blocks[1][0] == blocks[0][-1] and blocks[0] != blocks[1]
    assert "every arm runs right after every other equally often" in " ".join(run.text().split())
    table = published_table(outcome)
    assert table["Metric"].tolist() == PUBLISHED_ROWS
    assert all(v.endswith(("/s", " micros")) for v in table["Steady State"])
    assert "With GarbageCollect" in run.text()
    found = outcome.study.analysis().conclude(outcome)
    assert [c["verdict"] for c in run.claims] == found.claims["verdict"].tolist()
    # every run's operation window counts (the windows are fixed by the phase: nothing to search, no
    # drift rule hiding the operation's effect): the A/A row compares 2 runs a side
    assert run.claims[0]["n_a"] == 2 and run.claims[0]["n_b"] == 2, run.claims[0]
    assert set(found.figures["status"]) == {"ok"}
    check_in_chromium(run, tmp_path)
