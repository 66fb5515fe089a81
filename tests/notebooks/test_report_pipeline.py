"""The main job end to end: report notebooks executed by papermill in a real kernel against a
real embedded cluster, exported to HTML, linked from reports/index.html."""

from __future__ import annotations

import re

import nbformat
import pytest

from cassperf.report import run_reports
from tests.conftest import cassperf_processes

pytestmark = [pytest.mark.cluster, pytest.mark.notebook]


def test_overview_report_runs_on_the_embedded_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path / "data"))
    reports = tmp_path / "reports"
    try:
        results = run_reports(["00-cluster-overview.ipynb"], reports_dir=reports, cluster_name="reporttest",
                              first_address="127.0.6.1")
    finally:
        leftover = cassperf_processes(tmp_path / "data")
        for p in leftover:
            p.kill()
    assert not leftover, "the pipeline stops the cluster it started"
    [r] = results
    assert r.ok, r.error
    executed = nbformat.read(reports / "executed" / "00-cluster-overview.ipynb", as_version=4)
    outputs = "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                        for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "rows in cassperf_overview.standard1: 5000" in outputs
    assert re.search(r"UN\s+127\.0\.6\.1", outputs)
    assert not [o for c in executed.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]

    html = (reports / "00-cluster-overview.html").read_text()
    assert "<h1" in html and "Cluster overview" in html
    assert "application/vnd.plotly.v1+json" in html or "Plotly.newPlot" in html
    index = (reports / "index.html").read_text()
    assert '<a href="00-cluster-overview.html">Cluster overview</a>' in index
    assert 'class="ok"' in index and "failed" not in index.split("<tbody>")[1]
