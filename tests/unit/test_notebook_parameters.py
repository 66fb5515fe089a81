"""Every report notebook documents its parameters the papermill way: one cell tagged
`parameters`, each parameter a plain value with a type annotation and a trailing comment, so
`papermill --help-notebook` lists them all; no credentials among them."""

from __future__ import annotations

import re

import nbformat
import papermill
import pytest

from cassperf import config
from cassperf.report.params import discover_notebooks


@pytest.mark.parametrize("name", [p.name for p in discover_notebooks()])
def test_parameters_are_typed_commented_and_inferred_by_papermill(name):
    path = config.notebooks_dir() / name
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{name}: expected exactly one cell tagged 'parameters'"
    lines = [ln for ln in tagged[0].source.splitlines() if ln.strip()]
    inferred = papermill.inspect_notebook(str(path))
    assert list(inferred) == [ln.split(":")[0] for ln in lines], "papermill must infer every parameter"
    for line in lines:
        assert re.match(r"^\w+: (str|int|float|bool|list|dict) = .+  # \S", line), f"{name}: {line!r}"
        assert not re.search(r"password|secret|token|credential", line.split("#")[0], re.I), \
            f"{name}: credentials come from the environment, never from parameters: {line!r}"
    for p in inferred.values():
        assert p["help"], f"{name}: parameter {p['name']} has no comment"
    if "cluster_topology" in inferred:  # a notebook that declares an embedded cluster declares all of it
        assert {"cluster_name", "first_address", "cluster_heap_mb", "contact_points"} <= set(inferred), \
            f"{name}: the report pipeline starts its cluster from these"
