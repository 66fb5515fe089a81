"""Notebook 05 (storage and cache) run by papermill in a real kernel against a real one-node
embedded cluster with its smallest parameter set (notebooks/params/test/), including the
configuration on a real loop-device ext4 filesystem (root). Checked against the stored runs: every
point of the plan with labels measured from the cluster (system_schema's chunk length, the data
folder's device), the tables equal to the analysis functions on those runs, nothing left of the
loop filesystem, the runbook printed and nothing run, and analyse_only rebuilding the same claims."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import nbformat
import papermill
import pytest
import yaml

from cassperf import config
from cassperf.results.catalog import catalog
from tests.conftest import cassperf_processes

pytestmark = [pytest.mark.notebook, pytest.mark.cluster]

ADDRESS = "127.0.23.1"
NAME = "storagetest"


@pytest.fixture(scope="module")
def study_env(tmp_path_factory):
    """A data folder of its own; every node the notebook starts is stopped at the end."""
    data = tmp_path_factory.mktemp("storage-data")
    mp = pytest.MonkeyPatch()
    mp.setenv("CASSPERF_DATA", str(data))
    try:
        yield data
    finally:
        from cassperf.cluster.local import LocalCluster
        from cassperf.cluster.study import cluster_name_for

        try:
            LocalCluster(cluster_name_for(NAME, "dc1:1"), "dc1:1", first_address=ADDRESS, root=data / "clusters").stop()
        finally:
            for proc in cassperf_processes(data):
                proc.kill()
            mp.undo()


def _execute(out_dir: Path, **extra) -> nbformat.NotebookNode:
    name = "05-storage-and-cache.ipynb"
    params = yaml.safe_load((config.notebooks_dir() / "params" / "test" / "05-storage-and-cache.yaml").read_text())
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


def _text(nb: nbformat.NotebookNode) -> str:
    return "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/markdown", ""))
                     for c in nb.cells for o in c.get("outputs", []))


def test_storage_notebook_stores_every_point_labelled_as_measured_and_tables_match_the_runs(study_env, tmp_path):
    from cassperf.experiments import storage_cache as study_sc
    from cassperf.experiments.sweep import latest_runs

    if os.geteuid() != 0:
        pytest.skip("the loop-device configuration needs root")
    nb = _execute(tmp_path)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    runs = catalog(study="storage-and-cache", experiment="test")
    assert runs["complete"].all()
    points = sorted(zip(runs["storage"], runs["chunk_kb"], runs["part"], runs["cache"].fillna(""), runs["run"],
                        runs["threads"], strict=True))
    from cassperf.storage.loopfs import storage_of

    here = storage_of(study_env)   # the data folder's disk, as the notebook measures it
    disk = study_sc.storage_name(here)
    loop = "ext4 on a loop device"
    expected = []
    for storage, chunk, empty in ((disk, "4", False), (disk, "64", True), (loop, "64", True)):
        expected.append((storage, chunk, "write", "", "a", "64"))
        sweeps = [("full", "a")] + ([("empty", "a"), ("empty", "b")] if empty else [])
        expected += [(storage, chunk, "read", cache, run, t) for cache, run in sweeps for t in ("4", "32")]
    assert points == sorted(expected)
    # labelled from what was measured: system_schema's compression, the data folder's device
    assert set(runs["compression"]) == {"LZ4Compressor, chunk_length_in_kb=4", "LZ4Compressor, chunk_length_in_kb=64"}
    assert set(runs.loc[runs["storage"] == disk, "storage_device"]) == {here.device}
    loop_devices = set(runs.loc[runs["storage"] == loop, "storage_device"])
    assert len(loop_devices) == 1 and next(iter(loop_devices)).startswith("/dev/loop")
    assert set(runs["storage_fs"]) == {here.fstype, "ext4"}
    # nothing of the loop filesystem is left: no mount, no backing file, no loop device on it
    backing = study_env / "loopfs" / NAME / "backing.img"
    assert not backing.exists()
    assert str(backing) not in subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    # the empty-cache run a followed a cold step that said what it did
    text = _text(nb)
    assert "cold: memtables flushed, key and row caches invalidated, nodes restarted, OS page cache dropped" in text
    # the tables equal the analysis functions on the stored runs
    out = _json_outputs(nb)
    stored = latest_runs(study_sc.POINT_LABELS, study="storage-and-cache", experiment="test")
    frame = study_sc.results(stored)
    shown = {r["run_id"]: r for r in out["runs_frame"]}
    assert set(shown) == set(frame["run_id"]) and len(shown) == 17
    for row in frame.itertuples():
        got = shown[row.run_id]
        assert got["rate_ops_s"] == pytest.approx(row.rate_ops_s, rel=1e-12)
        assert got["latency_p99_ms"] == pytest.approx(row.latency_p99_ms, rel=1e-12)
        assert got["config"] == row.config
    ab = study_sc.run_ab(stored, reps=200)
    assert len(out["run_ab"]) == len(ab) == 8          # 2 storages x 2 thread counts x (ops/s, p99)
    for got, row in zip(out["run_ab"], ab.itertuples(), strict=True):
        assert (got["storage"], got["chunk_kb"], got["threads"], got["metric"]) == \
            (row.storage, row.chunk_kb, row.threads, row.metric)
        assert got["change_pct"] == pytest.approx(row.change_pct, rel=1e-12) and got["verdict"] == row.verdict
    claims = study_sc.claims(stored, reps=200)
    assert out["claims"] == claims.to_dict(orient="records")
    assert {c["verdict"] for c in out["claims"]} <= {"holds", "does not hold", "not shown"}
    assert out["claims"][2]["measured"] == "needs 128 KiB and 64 or 256 KiB on one storage"
    # the runbook is printed for the study's chunk sizes and nothing is run
    assert "mdadm --create /dev/md0 --level=raid0 --chunk=128 --raid-devices=4 /dev/sdc /dev/sdd /dev/sde /dev/sdf" \
        in text
    assert "Printed only: `allow_destructive` is False." in text
    # analyse_only rebuilds the same claims from the store, without a cluster; asked to run the runbook
    # without an explicit device list it refuses in one line and runs nothing
    only = _execute(tmp_path / "only", analyse_only=True, allow_destructive=True)
    assert _json_outputs(only)["claims"] == out["claims"]
    assert ("**Runbook not run:** not run: pass the devices the runbook may erase explicitly, e.g. "
            "devices=['/dev/nvme1n1', '/dev/nvme2n1']") in _text(only)

