"""Every study notebook's parameter defaults are its Study class's defaults: a test (or an
analyse-only caller) that builds the study from a few parameters then finds the same plan as the
notebook made, and a reader of either sees the same local defaults."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import nbformat
import pytest

from cassperf.experiments.deployment import DeploymentStudy
from cassperf.experiments.garbagecollect import GCStudy
from cassperf.experiments.multidc import MultiDCStudy
from cassperf.experiments.question import QuestionStudy
from cassperf.experiments.replication_factor import RFStudy
from cassperf.experiments.storage_cache import StorageStudy

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
STUDIES = {"01-replication-factor": RFStudy, "02-multi-dc": MultiDCStudy, "03-garbagecollect-impact": GCStudy,
           "04-deployment-comparison": DeploymentStudy, "05-storage-and-cache": StorageStudy,
           "06-your-question": QuestionStudy}


def _parameters(stem: str) -> dict:
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    return {node.target.id: ast.literal_eval(node.value) for node in ast.parse(cell.source).body
            if isinstance(node, ast.AnnAssign) and node.value is not None}


@pytest.mark.parametrize("stem", sorted(STUDIES))
def test_the_notebooks_defaults_are_the_studys(stem: str) -> None:
    study = STUDIES[stem]()
    fields = {f.name for f in dataclasses.fields(study)}
    mine = {k: (tuple(v) if isinstance(v, list) else v) for k, v in _parameters(stem).items() if k in fields}
    theirs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in
              ((k, getattr(study, k)) for k in mine)}
    assert {k: v for k, v in mine.items() if theirs[k] != v} == {}, f"{stem}: notebook defaults differ from {theirs}"
