"""A study made of imported runs (experiments.outcome.imported_outcome): arms from labels, blocks
from labels or from each arm's order of start, and the same statistics as the executor's runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cassperf.errors import ConfigError
from cassperf.experiments.outcome import load_outcome
from cassperf.experiments.replication_factor import RFStudy
from cassperf.results.store import save_run
from tests.unit.analysis_runs import shaped_run


def store(root: Path, counts: list[int], scale: float, labels: dict[str, str], started: str) -> None:
    run = shaped_run(counts, scale, op="read", labels=labels, run_id="")
    run = dataclasses.replace(run, manifest={**run.manifest, "run_id": None, "tool": "cassandra-stress",
                                             "started_utc": started, "complete": True})
    save_run(run, root)


def test_imported_runs_pair_by_their_order_and_meet_the_studys_statistics(tmp_path: Path) -> None:
    for block in range(1, 4):          # RF 3 reads a tenth slower, each block its own level
        level = 1000 + 100 * block
        for rf, factor in ((1, 1.0), (3, 0.9)):
            store(tmp_path, [int(level * factor)] * 20, 1.0, {"study": "replication-factor", "rf": str(rf),
                                                               "op": "read"}, f"2026-11-0{block}T10:0{rf}:00Z")
    outcome = load_outcome(RFStudy(experiment="local", rfs=(1, 3), read_rfs=(1, 3), cold_read_rfs=(),
                                   mixed_rfs=()), tmp_path, empty_ok=True)
    assert outcome.record["imported"] and [r.labels["block"] for r in outcome.runs][:2] == ["1", "1"]
    assert {r.labels["arm"] for r in outcome.runs} == {"read rf=1 run=b", "read rf=3 run=b"}
    found = outcome.study.analysis().conclude(outcome)
    reads = found.claims.set_index("claim").loc["Reads slow down from RF 1 to RF 3 (warm run b)"]
    assert (reads["n_a"], reads["n_b"]) == (3, 3)
    assert reads["change_pct"] == pytest.approx(-10.0, abs=0.01) and reads["verdict"] == "holds"
    assert "3 runs" not in outcome.note and "single run" not in outcome.note


def test_a_block_label_that_is_no_number_is_refused_in_one_line(tmp_path: Path) -> None:
    store(tmp_path, [100] * 20, 1.0, {"study": "replication-factor", "arm": "write rf=1", "block": "first"},
          "2026-11-01T10:00:00Z")
    with pytest.raises(ConfigError, match=r"^imported replication-factor runs whose block label is no block number: "
                                          r".* \(block='first'\); label blocks 1, 2, \.\.\."):
        load_outcome(RFStudy(experiment="local"), tmp_path, empty_ok=True)


def test_runs_of_another_experiment_or_an_executor_are_not_imported_ones(tmp_path: Path) -> None:
    store(tmp_path, [100] * 20, 1.0, {"study": "replication-factor", "arm": "write rf=1", "experiment": "prod"},
          "2026-11-01T10:00:00Z")
    store(tmp_path, [100] * 20, 1.0, {"study": "replication-factor", "arm": "write rf=1", "plan": "abc",
                                      "role": "measure"}, "2026-11-01T10:01:00Z")
    assert load_outcome(RFStudy(experiment="local"), tmp_path, empty_ok=True).runs == []
    prod = load_outcome(RFStudy(experiment="prod"), tmp_path, empty_ok=True)
    assert len(prod.runs) == 1 and "a single run" in prod.note
