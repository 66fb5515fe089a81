"""The cluster-overview notebook pointed at a named cluster from a machine without nodetool:
the nodetool cells say what is missing and the rest runs (issue 11, item 7)."""

from __future__ import annotations

import os
import sys

import nbformat
import papermill
import pytest

from cassperf import config
from tests.conftest import cassperf_processes

pytestmark = [pytest.mark.notebook, pytest.mark.cluster]


def test_overview_of_a_named_cluster_runs_without_nodetool(tmp_path, monkeypatch):
    from cassperf.cluster import LocalCluster

    root = tmp_path / "clusters"
    node = LocalCluster("nonodetool", "dc1:1", first_address="127.0.7.31", root=root, heap_mb=512)
    try:
        node.start()
        role = node.access().cql          # the named cluster's role, as a user exports theirs
        monkeypatch.setenv("CASSPERF_USERNAME", role.user)
        monkeypatch.setenv("CASSPERF_PASSWORD", role.password)
        monkeypatch.setenv("CASSPERF_DATA", str(tmp_path / "data"))
        monkeypatch.delenv("CASSANDRA_HOME", raising=False)
        empty = tmp_path / "bin"
        empty.mkdir()
        python_dir = os.path.dirname(os.path.realpath(sys.executable))
        monkeypatch.setenv("PATH", f"{empty}{os.pathsep}{python_dir}")   # python, but no nodetool
        out = tmp_path / "overview.ipynb"
        papermill.execute_notebook(str(config.notebooks_dir() / "00-cluster-overview.ipynb"), str(out),
                                   parameters={"contact_points": "127.0.7.31", "local_dc": "dc1", "rows": 500},
                                   cwd=str(config.notebooks_dir()), progress_bar=False, kernel_name="python3")
    finally:
        node.close()
        node.stop(kill=True)
        for proc in cassperf_processes(root):
            proc.kill()
    nb = nbformat.read(out, as_version=4)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    text = "\n".join(str(o.get("text", "")) for c in nb.cells for o in c.get("outputs", []))
    assert "nodetool status not shown: no nodetool for this remote cluster" in text
    assert "rows in cassperf_overview.standard1: 500" in text
