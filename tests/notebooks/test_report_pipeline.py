"""The main job end to end on real nodes: each report notebook runs on the embedded cluster its
parameters declare; the pipeline starts it, reuses it for the next notebook of the same shape,
replaces it for another shape, and stops what it started while a cluster that ran before is
left running. Run under the CPU lock (addresses 127.0.5.x, clusters named publish-*)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest

from cassperf import config
from cassperf.cluster import LocalCluster
from cassperf.workbook.preflight import run_reports
from tests.conftest import cassperf_processes
from tests.notebooks.reportkit import write_notebook

pytestmark = [pytest.mark.notebook, pytest.mark.cluster]

CLUSTER_PARAMS = '''contact_points: str = ""  # your cluster, empty for the embedded one
cluster_topology: str = "{shape}"  # embedded cluster topology
cluster_name: str = "cassperf"  # embedded cluster base name
first_address: str = "127.0.0.1"  # address of node1
cluster_heap_mb: int = 1024  # heap per node, MB'''

PROBE = ['''from cassperf.cluster.study import study_cluster
cluster = study_cluster(cluster_name=cluster_name, first_address=first_address, cluster_topology=cluster_topology,
                        cluster_heap_mb=cluster_heap_mb, start=False)
print(f"{cluster.name}: {sum(s.up for s in cluster.status())} of {len(cluster.nodes)} nodes up")''']

EXPLICIT = {"cluster_name": "publish", "first_address": "127.0.5.1", "cluster_heap_mb": 512, "rows": 500}


def _made(folder: Path, stem: str, suffix: str) -> Path:
    """The one file the pipeline made for notebook `stem` in `folder`: <stem><suffix>, or
    <stem>--<variant><suffix> for a run with parameters of its own."""
    [path] = [p for p in folder.glob(f"{stem}*{suffix}") if p.name == stem + suffix or p.name.startswith(f"{stem}--")]
    return path


def _printed(reports, name: str) -> str:
    nb = nbformat.read(_made(reports / "executed", Path(name).stem, ".ipynb"), as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path / "data"))
    yield tmp_path / "data"
    leftover = cassperf_processes(tmp_path / "data")
    for proc in leftover:  # only nodes under this test's folder, found by their marker
        proc.kill()
    assert not leftover, f"nodes left running: {[p.pid for p in leftover]}"


def test_clusters_are_started_reused_replaced_and_stopped_per_notebook(tmp_path, data):
    nbs = tmp_path / "notebooks"
    write_notebook(nbs, "01-same-shape.ipynb", CLUSTER_PARAMS.format(shape="dc1:1"), PROBE)
    write_notebook(nbs, "02-two-nodes.ipynb", CLUSTER_PARAMS.format(shape="dc1:2"), PROBE)
    shutil.copy(config.notebooks_dir() / "00-cluster-overview.ipynb", nbs / "00-cluster-overview.ipynb")
    log: list[str] = []
    results = run_reports(None, "local", explicit=EXPLICIT, reports_dir=tmp_path / "reports", notebooks_dir=nbs,
                          log=log.append)
    by_name = {r.notebook: r for r in results}
    assert all(r.ok for r in results), [r.error for r in results]
    assert [line.strip() for line in log if not line.startswith(("ok", "FAILED")) and "running" not in line] == [
        "00-cluster-overview.ipynb: cluster publish-dc1_1 (dc1:1 on 127.0.5.1, heap 512 MB)",
        next(ln.strip() for ln in log if ln.strip().startswith("started in")),
        "01-same-shape.ipynb: cluster publish-dc1_1 (dc1:1 on 127.0.5.1, heap 512 MB)",
        next(ln.strip() for ln in log if ln.strip().startswith("reused in")),
        "02-two-nodes.ipynb: cluster publish-dc1_2 (dc1:2 on 127.0.5.1, heap 512 MB)",
        "stopped publish-dc1_1 (another shape)",
        [ln.strip() for ln in log if ln.strip().startswith("started in")][1],
        "stopped the clusters this run started: publish-dc1_2"]
    reports = tmp_path / "reports"
    assert "publish-dc1_1: 1 of 1 nodes up" in _printed(reports, "01-same-shape.ipynb")
    assert "publish-dc1_2: 2 of 2 nodes up" in _printed(reports, "02-two-nodes.ipynb")
    overview = _printed(reports, "00-cluster-overview.ipynb")
    assert "rows in cassperf_overview.standard1: 500" in overview
    assert re.search(r"UN\s+127\.0\.5\.1", overview)
    assert by_name["00-cluster-overview.ipynb"].cluster_s > 1 and by_name["01-same-shape.ipynb"].cluster_s < 5
    assert by_name["02-two-nodes.ipynb"].cluster == "publish-dc1_2 (dc1:2 on 127.0.5.1, heap 512 MB)"
    page = _made(reports, "00-cluster-overview", ".html").read_text()
    assert "<h1" in page and "Cluster overview" in page
    header = page[page.index('class="cassperf-header"'):]
    header = re.sub(r"<[^>]+>", " ", header[:header.index("</table></div></div>")])
    assert re.search(r"Cassandra\s+5\.0\.6\s+Nodes\s+1 \(1 up\)\s+Data centers\s+dc1: 1 node", header), header
    assert re.search(r"Name\s+publish-dc1_1\s+Kind\s+embedded: nodes on this machine", header), header
    index = (reports / "index.html").read_text()
    assert index.count('class="status ok"') == 3
    assert not cassperf_processes(data), "the pipeline stops the clusters it started"


def test_a_cluster_running_before_is_reused_and_left_running(tmp_path, data):
    nbs = tmp_path / "notebooks"
    write_notebook(nbs, "01-same-shape.ipynb", CLUSTER_PARAMS.format(shape="dc1:1"), PROBE)
    before = LocalCluster("publish-dc1_1", "dc1:1", heap_mb=512, first_address="127.0.5.1")
    try:
        before.start()
        log: list[str] = []
        explicit = {k: v for k, v in EXPLICIT.items() if k != "rows"}
        [result] = run_reports(None, "local", explicit=explicit, reports_dir=tmp_path / "reports",
                               notebooks_dir=nbs, log=log.append)
        assert result.ok, result.error
        assert any(ln.strip().startswith("reused in") for ln in log), log
        assert not any("stopped" in ln for ln in log), log
        assert all(s.up for s in before.status()), "a cluster that ran before the pipeline still runs"
    finally:
        before.stop()
