"""What the study records say a study made on a cluster (cassperf.experiments.made), on records as
the executor writes them (StudyRecord.open of a real RFStudy, its arms as the executor lists them,
the clusters it saw): a keyspace is the study's when its plan names it, the cluster is the one the
record saw (a shared host id) and the keyspace was not there before the study."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cassperf.experiments.executor import StudyRecord
from cassperf.experiments.made import Found, Made, made_on, planned_keyspaces
from cassperf.experiments.replication_factor import RFStudy

STUDY = RFStudy(experiment="lab", rfs=(1, 2, 3), read_rfs=(1,), cold_read_rfs=(), cl_sweep=(), cl_sweep_rf=3,
                mixed_rfs=())


def _record(runs: Path, clusters: dict[str, Any] | None, study: RFStudy = STUDY) -> Path:
    record = StudyRecord.open(runs, study)
    record.data["arms"] = [{"name": a.name, "labels": dict(a.labels), "context": a.context, "follows": a.follows,
                            "spec": repr(a.spec)} for a in study.arms(None)]
    if clusters is not None:
        record.data["clusters"] = clusters
    record.save()
    return record.path


def test_a_plan_names_its_keyspaces_from_its_study_and_from_the_arms_it_recorded(tmp_path: Path) -> None:
    path = _record(tmp_path, None)
    record = json.loads(path.read_text())
    assert planned_keyspaces(record) == {"": {"ks410rf1", "ks410rf2", "ks410rf3"}}
    record["study_class"] = "cassperf.experiments.gone.OldStudy"        # cannot be rebuilt: its arms still say
    assert planned_keyspaces(record) == {"": {"ks410rf1", "ks410rf2", "ks410rf3"}}


def test_what_the_study_made_is_what_it_names_that_was_not_there_before(tmp_path: Path) -> None:
    path = _record(tmp_path, {"": {"cluster_name": "lab", "host_ids": ["h1", "h2"], "keyspaces": ["ks410rf3", "app"]}})
    now = {"host_ids": ["h2", "h3"], "keyspaces": ["app", "ks410rf1", "ks410rf2", "ks410rf3", "other"]}
    assert made_on(now, tmp_path) == Found((Made("ks410rf1", "replication-factor", "lab", "", path),
                                            Made("ks410rf2", "replication-factor", "lab", "", path)), ())


def test_another_cluster_or_a_keyspace_dropped_since_is_not_listed(tmp_path: Path) -> None:
    _record(tmp_path, {"": {"host_ids": ["h1"], "keyspaces": []}})
    assert made_on({"host_ids": ["h9"], "keyspaces": ["ks410rf1"]}, tmp_path) == Found((), ())
    [made] = made_on({"host_ids": ["h1"], "keyspaces": ["ks410rf2"]}, tmp_path).made
    assert made.keyspace == "ks410rf2"


def test_a_record_that_does_not_say_its_cluster_is_counted_not_used(tmp_path: Path) -> None:
    path = _record(tmp_path, None)
    assert made_on({"host_ids": ["h1"], "keyspaces": ["ks410rf1"]}, tmp_path) == Found((), (path,))


def test_a_keyspace_two_studies_name_is_the_one_of_the_study_that_made_it(tmp_path: Path) -> None:
    first = _record(tmp_path, {"": {"host_ids": ["h1"], "keyspaces": []}})
    later = RFStudy(experiment="again", rfs=(1,), read_rfs=(1,), cold_read_rfs=(), cl_sweep=(), cl_sweep_rf=1,
                    mixed_rfs=())
    _record(tmp_path, {"": {"host_ids": ["h1"], "keyspaces": ["ks410rf1", "ks410rf2", "ks410rf3"]}}, later)
    found = made_on({"host_ids": ["h1"], "keyspaces": ["ks410rf1"]}, tmp_path)
    assert [(m.keyspace, m.experiment, m.record) for m in found.made] == [("ks410rf1", "lab", first)]
