"""Sweep plans: ordered parameter products, and which points still have no usable stored run."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassperf.analysis import AnalysisError, SweepPlan, pending
from cassperf.results import Run, catalog, save_run


def test_product_is_ordered_first_parameter_slowest_with_string_labels() -> None:
    plan = SweepPlan.product({"study": "rf"}, rf=[1, 3], op=["write", "read"], run=["a", "b"])
    assert len(plan) == 8 and plan.params == ("rf", "op", "run")
    assert plan.points[0] == {"study": "rf", "rf": "1", "op": "write", "run": "a"}
    assert plan.points[1] == {"study": "rf", "rf": "1", "op": "write", "run": "b"}
    assert plan.points[-1] == {"study": "rf", "rf": "3", "op": "read", "run": "b"}
    assert [p["rf"] for p in plan] == ["1"] * 4 + ["3"] * 4
    assert plan.frame().shape == (8, 4)


def test_bad_plans_are_one_clear_error() -> None:
    with pytest.raises(AnalysisError, match=r"\['rf'\] both a base label and a swept parameter"):
        SweepPlan.product({"rf": "1"}, rf=[1, 3])
    with pytest.raises(AnalysisError, match="parameter threads=64 must be a list of values"):
        SweepPlan.product(threads=64)  # type: ignore[arg-type]
    with pytest.raises(AnalysisError, match="parameter 'cl' has no values"):
        SweepPlan.product(cl=[])


def store(root: Path, labels: dict[str, str], **manifest: object) -> None:
    save_run(Run({"tool": "cassperf-engine", "labels": labels, **manifest}), root)


def test_pending_skips_points_with_a_complete_run_of_the_same_labels(tmp_path: Path) -> None:
    plan = SweepPlan.product({"study": "rf"}, rf=[1, 3], run=["a", "b"])
    store(tmp_path, {"study": "rf", "rf": "1", "run": "a"})
    store(tmp_path, {"study": "rf", "rf": "1", "run": "b"}, complete=False)           # stopped half-way
    store(tmp_path, {"study": "rf", "rf": "3", "run": "a", "extra": "x"})              # extra labels are fine
    store(tmp_path, {"study": "other", "rf": "3", "run": "b"})
    todo = pending(plan, catalog(tmp_path))
    assert todo == [{"study": "rf", "rf": "1", "run": "b"}, {"study": "rf", "rf": "3", "run": "b"}]
    assert pending(plan, catalog(tmp_path / "empty")) == list(plan)


def test_failed_runs_do_not_count_whether_or_not_the_catalog_has_the_column(tmp_path: Path) -> None:
    plan = SweepPlan.product(rf=[1, 3])
    store(tmp_path, {"rf": "1"}, failed=True)
    store(tmp_path, {"rf": "3"})
    assert pending(plan, catalog(tmp_path)) == [{"rf": "1"}]     # the catalog leaves failed runs out
    frame = catalog(tmp_path, include_failed=True)
    assert frame.set_index("rf")["failed"].to_dict() == {"1": True, "3": False}
    assert pending(plan, frame) == [{"rf": "1"}]
    assert pending(plan, frame.drop(columns="failed")) == []    # no column: nothing counts as failed
    assert pending(plan, frame.assign(failed="false")) == []


def test_spec_key_reruns_points_whose_spec_changed(tmp_path: Path) -> None:
    plan = SweepPlan.product(threads=[16, 64])
    store(tmp_path, {"threads": "16", "spec_key": "v1-16"})
    store(tmp_path, {"threads": "64", "spec_key": "v1-64"})
    assert pending(plan, catalog(tmp_path), spec_key=lambda p: f"v1-{p['threads']}") == []
    assert pending(plan, catalog(tmp_path), spec_key=lambda p: f"v2-{p['threads']}") == list(plan)


def test_labels_the_catalog_renames_are_found(tmp_path: Path) -> None:
    plan = SweepPlan.product(tool=["latte", "engine"])
    store(tmp_path, {"tool": "latte"})
    frame = catalog(tmp_path)
    assert "label_tool" in frame.columns
    assert pending(plan, frame) == [{"tool": "engine"}]
