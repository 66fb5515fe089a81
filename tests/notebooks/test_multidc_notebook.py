"""02-multi-dc run by papermill in a real kernel against a real two-DC embedded cluster (one node
per DC, 27 ms apart in network namespaces) with its smallest parameter set
(notebooks/params/test/02-multi-dc.yaml): every client's run stored with its DC and client, the
tables equal to the analysis functions on the stored runs, the network table measured, analyse_only
giving the same claims, and nothing left behind (nodes, namespaces, router, Dask scheduler and
workers, engine workers, TLS files).

Run under the CPU lock:  flock /tmp/cassperf-cpu.lock .venv/bin/pytest tests/notebooks/test_multidc_notebook.py -x -q
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import nbformat
import papermill
import psutil
import pytest
import yaml

from cassperf import config
from cassperf.results.catalog import catalog
from tests.conftest import cassperf_processes

pytestmark = [pytest.mark.notebook, pytest.mark.cluster]

ADDRESS = "127.0.21.1"
NAME = "multidcnb"
TOPOLOGY = "dc1:1,dc2:1"
RTT_MS = 27.0


def _ours(data: Path) -> list[str]:
    """Live processes started for this test's data folder (their environment names it): the
    kernels, Dask scheduler and workers, engine workers, nodes, routers. This process excepted."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if proc.pid != os.getpid() and proc.environ().get("CASSPERF_DATA") == str(data) \
                    and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(f"{proc.pid} {' '.join(proc.info['cmdline'] or [])[:120]}")
        except psutil.Error:
            continue
    return found


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("the distance between DCs needs root (network namespaces)")
    data = tmp_path_factory.mktemp("multidc-data")
    mp = pytest.MonkeyPatch()
    mp.setenv("CASSPERF_DATA", str(data))
    try:
        yield data
    finally:
        from cassperf.cluster import netns
        from cassperf.cluster.local import LocalCluster
        from cassperf.cluster.study import cluster_name_for

        cluster = LocalCluster(cluster_name_for(NAME, TOPOLOGY, RTT_MS), TOPOLOGY, first_address=ADDRESS,
                               root=data / "clusters", inter_dc_rtt_ms=RTT_MS)
        try:
            cluster.stop(timeout_s=30)
        finally:
            left = cassperf_processes(data)
            for proc in left:
                proc.kill()
            mp.undo()
        netid = netns.network_id(cluster.name, cluster.root)
        assert not left, f"nodes still running after stop: {[p.pid for p in left]}"
        assert (netns.leftover_namespaces(netid), netns.router_pids(netid)) == ([], [])
        assert _ours(data) == [], "processes left behind"


def _execute(out_dir: Path, **extra) -> nbformat.NotebookNode:
    name = "02-multi-dc.ipynb"
    params = yaml.safe_load((config.notebooks_dir() / "params" / "test" / "02-multi-dc.yaml").read_text())
    params.update(cluster_name=NAME, first_address=ADDRESS, **extra)
    out_dir.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(str(config.notebooks_dir() / name), str(out_dir / name), parameters=params,
                               cwd=str(config.notebooks_dir()), progress_bar=False, kernel_name="python3")
    return nbformat.read(out_dir / name, as_version=4)


def _json_outputs(nb: nbformat.NotebookNode) -> dict:
    found: dict = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get("application/json")
            if data:
                found.update(data if isinstance(data, dict) else json.loads(data))
    return found


def test_multidc_notebook_stores_each_clients_run_and_its_tables_match_the_runs(env, tmp_path):
    from cassperf.experiments import multidc
    from cassperf.experiments.sweep import latest_runs

    nb = _execute(tmp_path)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    runs = catalog(study="multi-dc", experiment="test")
    points = sorted(zip(runs["part"], runs["op"], runs["threads"], runs["cl"], runs["rf"], runs["dc"],
                        runs["client"], strict=True))
    lq, eq = "LOCAL_QUORUM", "EACH_QUORUM"
    assert points == sorted([
        ("independent", "write", "16", lq, "1", "dc1", "dc1-c1"), ("independent", "write", "16", lq, "1", "dc2", "dc2-c1"),
        ("replicated", "write", "16", lq, "1", "dc1", "dc1-c1"), ("replicated", "write", "16", lq, "1", "dc2", "dc2-c1"),
        ("mixed", "mixed", "16", lq, "1", "dc1", "dc1-c1"), ("mixed", "mixed", "16", lq, "1", "dc2", "dc2-c1"),
        ("cl-write", "write", "16", lq, "1", "dc1", "dc1-c1"), ("cl-write", "write", "16", eq, "1", "dc1", "dc1-c1"),
        ("cl-read", "read", "16", lq, "1", "dc1", "dc1-c1"), ("cl-read", "read", "16", eq, "1", "dc1", "dc1-c1"),
        ("quorum-read", "read", "4", "QUORUM", "1", "dc1", "dc1-c1"),
        ("quorum-read", "read", "16", "QUORUM", "1", "dc1", "dc1-c1")])
    assert runs["complete"].all()
    out = _json_outputs(nb)
    stored = latest_runs(multidc.POINT_LABELS, study="multi-dc", experiment="test")
    expected = multidc.results(stored)
    shown = {(r["run_id"], r["op"]): r for r in out["runs_frame"]}
    assert len(shown) == len(expected) == 14
    for row in expected.itertuples():
        got = shown[(row.run_id, row.op)]
        assert got["rate_ops_s"] == pytest.approx(row.rate_ops_s, rel=1e-12)
        assert got["latency_p99_ms"] == pytest.approx(row.latency_p99_ms, rel=1e-12)
    together = multidc.combined(stored)
    got = {(r["part"], r["cl"], r["threads"], r["op"]): r for r in out["combined"]}
    assert len(got) == len(together)
    for row in together.itertuples():
        g = got[(row.part, row.cl, int(row.threads), row.op)]
        assert g["rate_ops_s"] == pytest.approx(row.rate_ops_s, rel=1e-12)
        assert g["latency_p95_ms"] == pytest.approx(row.latency_p95_ms, rel=1e-12)
    replicated = got[("replicated", "LOCAL_QUORUM", 16, "write")]
    assert replicated["clients"] == 2 and replicated["dcs"] == "dc1+dc2"
    net = {(r["measure"], r["between"]): r for r in out["network_table"]}
    for between in ("dc1->dc2", "dc2->dc1"):
        assert 0.8 * RTT_MS <= net[("ping RTT avg", between)]["value"] <= 1.2 * RTT_MS
    assert net[("RTT configured", "dc1-dc2")]["value"] == RTT_MS
    for streams in ("iperf3, 1 stream", "iperf3, 16 streams"):
        row = net[(streams, "dc1->dc2")]
        assert (row["value"] or 0) > 0 or row["how"].startswith("not measured: iperf3 is not installed")
    sent = [r for r in out["network_table"] if r["measure"] == "network send during replicated writes"]
    assert [r["between"] for r in sent] == ["dc1 (dc1-c1)", "dc2 (dc2-c1)"]
    assert all(r["value"] > 0 for r in sent)       # replicas crossed to the other DC
    assert [c["claim"] for c in out["claims"]][0].startswith("EACH_QUORUM is far slower than LOCAL_QUORUM")
    assert not list(Path(tempfile.gettempdir()).glob("cassperf-dask-tls-*")), "TLS certificates left behind"
    # analyse_only rebuilds the same tables from the store without a cluster
    only = _execute(tmp_path / "only", analyse_only=True)
    again = _json_outputs(only)
    assert again["claims"] == out["claims"] and again["combined"] == out["combined"]
