"""The main job end to end: report notebooks executed by papermill in a real kernel against a
real embedded cluster, exported to HTML, linked from reports/index.html."""

from __future__ import annotations

import re

import nbformat
import pytest

from cassperf.report import run_reports
from tests.conftest import cassperf_processes

pytestmark = pytest.mark.notebook


@pytest.mark.cluster
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


def test_report_html_renders_its_charts_in_a_real_browser(tmp_path):
    """Headless Chromium opens an exported report from disk (no network) and plotly draws its
    charts: the figure's SVG exists in the DOM after scripts ran."""
    import shutil
    import subprocess

    import nbformat
    import plotly.graph_objects as go

    from cassperf.plots import use_report_renderer
    from cassperf.report.html import export_html

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed (make browser installs it)")
    # a real executed notebook with a figure: run it in a kernel through papermill
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Chart check"),
                nbformat.v4.new_code_cell("from cassperf.plots import use_report_renderer\nuse_report_renderer()\n"
                                          "import plotly.graph_objects as go\n"
                                          "go.Figure(go.Bar(x=['write', 'read'], y=[5000, 4000]))")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src, out = tmp_path / "chart.ipynb", tmp_path / "executed.ipynb"
    nbformat.write(nb, src)
    from cassperf.report.execute import execute
    assert execute(src, out).ok
    html = tmp_path / "chart.html"
    assert export_html(out, html) == "Chart check"
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=15000", "--dump-dom",
                          html.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert 'class="main-svg"' in dom, "plotly did not draw the chart (plotly.js must be embedded: offline reports)"
    assert "write" in dom and "read" in dom
