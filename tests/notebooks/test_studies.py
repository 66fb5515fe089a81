"""The two study notebooks run by papermill in a real kernel against a real 3-node embedded
cluster with their smallest parameter set (notebooks/params/test/), and what they publish is
checked against the stored runs: labels, the tables equal to the analysis functions on those
runs, the published table's eight rows and units, the shaded window equal to the phase event."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import papermill
import pytest
import yaml

from cassperf import config
from cassperf.results.catalog import catalog
from cassperf.results.store import load_run
from tests.conftest import cassperf_processes

pytestmark = [pytest.mark.notebook, pytest.mark.cluster]

ADDRESS = "127.0.7.1"
PUBLISHED_ROWS = ["Read Throughput", "Read Latency avg.", "Read Latency p95", "Read Latency p99",
                  "Write Throughput", "Write Latency avg.", "Write Latency p95", "Write Latency p99"]


@pytest.fixture(scope="module")
def study_env(tmp_path_factory):
    """A data folder of its own; every node the notebooks start is stopped at the end."""
    data = tmp_path_factory.mktemp("studies-data")
    mp = pytest.MonkeyPatch()
    mp.setenv("CASSPERF_DATA", str(data))
    try:
        yield data
    finally:
        from cassperf.cluster.local import LocalCluster
        from cassperf.cluster.study import cluster_name_for

        try:
            LocalCluster(cluster_name_for("studytest", "dc1:3"), "dc1:3", first_address=ADDRESS,
                         root=data / "clusters").stop()
        finally:
            for proc in cassperf_processes(data):
                proc.kill()
            mp.undo()


def _execute(name: str, out_dir: Path, **extra) -> nbformat.NotebookNode:
    params = yaml.safe_load((config.notebooks_dir() / "params" / "test" / f"{Path(name).stem}.yaml").read_text())
    params.update(cluster_name="studytest", first_address=ADDRESS, **extra)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / name
    papermill.execute_notebook(str(config.notebooks_dir() / name), str(out), parameters=params,
                               cwd=str(config.notebooks_dir()), progress_bar=False, kernel_name="python3")
    return nbformat.read(out, as_version=4)


def _json_outputs(nb: nbformat.NotebookNode) -> dict:
    found: dict = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get("application/json")
            if data:
                found.update(data if isinstance(data, dict) else json.loads(data))
    return found


def _figures(nb: nbformat.NotebookNode) -> list[dict]:
    return [o["data"]["application/vnd.plotly.v1+json"] for c in nb.cells for o in c.get("outputs", [])
            if "application/vnd.plotly.v1+json" in o.get("data", {})]


def _published_in_chromium(nb_path: Path, tmp_path: Path, table_text: str) -> None:
    """The executed study exported as a report opens offline in headless Chromium: no console
    message, every figure drew, the table is there, the code is hidden."""
    from cassperf.report.html import export_html
    from tests.notebooks.reportkit import chromium_or_skip, open_in_chromium

    chromium_or_skip()
    html = tmp_path / (nb_path.stem + ".html")
    export_html(nb_path, html)
    page = open_in_chromium(html, tmp_path / "profile")
    assert page.console == [], page.console
    figures = sum(1 for c in nbformat.read(nb_path, as_version=4).cells for o in c.get("outputs", [])
                  if "application/vnd.plotly.v1+json" in o.get("data", {}))
    assert figures > 0 and page.figures_drawn == figures
    assert table_text in page.dom
    assert "study_cluster(" not in page.dom, "code cells are hidden in a published report"


def test_garbagecollect_notebook_publishes_the_table_of_its_stored_run(study_env, tmp_path):
    from cassperf.analysis import phase_window
    from cassperf.experiments import garbagecollect as study_gc

    nb = _execute("03-garbagecollect-impact.ipynb", tmp_path)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    out = _json_outputs(nb)
    runs = catalog(study="garbagecollect", experiment="test")
    assert sorted(runs["part"]) == ["gc", "load"]
    assert set(runs["rf"]) == {"3"} and set(runs["cl"]) == {"LOCAL_ONE"}
    run = load_run(out["run_id"])
    assert run.labels["part"] == "gc" and run.labels["ratio"] == "5:4:1" and run.labels["rate"] == "300"
    assert run.manifest["latency_type"] == "response"
    # the published table: its eight rows and units, equal to the analysis functions on the run
    table = out["published_table"]
    assert [r["Metric"] for r in table] == PUBLISHED_ROWS
    assert [r["unit"] for r in table] == ["ops/s", "micros", "micros", "micros"] * 2
    assert all(r["Steady State"].endswith(("/s", " micros")) for r in table)
    expected = study_gc.table(run, reps=200)
    assert [r["Steady State"] for r in table] == expected["Steady State"].tolist()
    assert [r["With GarbageCollect"] for r in table] == expected["With GarbageCollect"].tolist()
    assert [r["verdict"] for r in table] == expected["verdict"].tolist()
    # the shaded window is the recorded phase
    gc = phase_window(run, "garbagecollect")
    assert out["windows"]["gc"] == [gc.start_s, gc.end_s]
    shaded = [(s["x0"], s["x1"]) for f in _figures(nb) for s in f["layout"].get("shapes", [])]
    assert (gc.start_s, gc.end_s) in shaded
    claims = out["claims"]
    assert any(c["claim"].startswith("Read latency (p99) rises") for c in claims)
    assert {c["verdict"] for c in claims} <= {"holds", "does not hold", "not shown"}
    html_tables = [o for c in nb.cells for o in c.get("outputs", []) if "text/html" in o.get("data", {})
                   and "With GarbageCollect" in o["data"]["text/html"]]
    assert html_tables, "the published table is shown"
    _published_in_chromium(tmp_path / "03-garbagecollect-impact.ipynb", tmp_path, "With GarbageCollect")


def test_replication_factor_notebook_stores_every_point_and_tables_match_the_runs(study_env, tmp_path):
    from cassperf.experiments import replication_factor as study_rf
    from cassperf.experiments.sweep import latest_runs

    nb = _execute("01-replication-factor.ipynb", tmp_path)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    runs = catalog(study="replication-factor", experiment="test")
    points = sorted(zip(runs["part"], runs["rf"], runs["op"], runs["threads"], runs["cl"], runs["run"], strict=True))
    assert points == sorted([
        ("rf-write", "1", "write", "32", "LOCAL_QUORUM", "a"), ("rf-read", "1", "read", "32", "LOCAL_QUORUM", "a"),
        ("rf-read", "1", "read", "32", "LOCAL_QUORUM", "b"), ("rf-write", "3", "write", "32", "LOCAL_QUORUM", "a"),
        ("rf-read", "3", "read", "32", "LOCAL_QUORUM", "a"), ("rf-read", "3", "read", "32", "LOCAL_QUORUM", "b"),
        ("cl-read", "3", "read", "32", "ONE", "b"), ("cl-read", "3", "read", "32", "TWO", "b"),
        ("threads-write", "1", "write", "8", "LOCAL_QUORUM", "a"),
        ("mixed", "1", "mixed", "32", "LOCAL_QUORUM", "b"), ("mixed", "3", "mixed", "32", "LOCAL_QUORUM", "b")])
    assert runs["complete"].all()
    out = _json_outputs(nb)
    stored = latest_runs(study_rf.POINT_LABELS, study="replication-factor", experiment="test")
    expected = study_rf.results(stored)
    shown = {(r["run_id"], r["op"]): r for r in out["runs_frame"]}
    assert len(shown) == len(expected)
    for row in expected.itertuples():
        got = shown[(row.run_id, row.op)]
        assert got["rate_ops_s"] == pytest.approx(row.rate_ops_s, rel=1e-12)
        assert got["latency_p99_ms"] == pytest.approx(row.latency_p99_ms, rel=1e-12)
    assert {c["claim"] for c in out["claims"]} >= {
        "RF 2 and RF 3 write at about the same rate at LOCAL_QUORUM (both wait for 2 replicas)",
        "50/50 mixed throughput falls as RF rises"}
    _published_in_chromium(tmp_path / "01-replication-factor.ipynb", tmp_path, "What the published study found")
    # a second run of the same sweep runs nothing: every point is stored already
    again = _execute("01-replication-factor.ipynb", tmp_path / "again")
    text = "\n".join(str(o.get("text", "")) for c in again.cells for o in c.get("outputs", []))
    assert text.count("stored already") == 11
    assert len(catalog(study="replication-factor", experiment="test")) == 11
    # analyse_only rebuilds the same tables from the store without a cluster
    only = _execute("01-replication-factor.ipynb", tmp_path / "only", analyse_only=True)
    assert _json_outputs(only)["claims"] == out["claims"]
