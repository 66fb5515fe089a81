"""run_spec on a real node: a run in which every operation failed is stored, marked failed,
left out of the catalog, and the CLI exits non-zero; a good run with the sampler and a during
action is stored complete with its phase."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from cassperf.results.catalog import catalog
from cassperf.results.store import load_run
from cassperf.workload.run import RunFailedError, run_spec
from cassperf.workload.spec import Replication, WorkloadSpec

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    from cassperf.cluster import LocalCluster
    from tests.conftest import cassperf_processes

    root = tmp_path_factory.mktemp("runspec-clusters")
    cluster = LocalCluster("runspec", "dc1:1", first_address="127.0.7.21", root=root, heap_mb=512)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()
        cluster.stop(kill=True)
        for proc in cassperf_processes(root):
            proc.kill()


def test_every_operation_failing_makes_a_failed_run_that_the_catalog_leaves_out(node, tmp_path):
    spec = WorkloadSpec(op="write", n=200, cl="QUORUM", concurrency=8, keyspace="runspec_rf3",
                        replication=Replication.network_topology({"dc1": 3}), warmup=False)
    root = tmp_path / "runs"
    with pytest.raises(RunFailedError, match=r"FAILED: no operation succeeded \(200 failed\)") as caught:
        run_spec(spec, node, root=root, progress=False)
    run = load_run(caught.value.run_id, root=root)
    assert run.manifest["failed"] is True
    assert run.manifest["failure"] == "no operation succeeded (200 failed)"
    assert int(run.summary["errors"].sum()) == 200
    assert catalog(root).empty
    assert list(catalog(root, include_failed=True)["run_id"]) == [caught.value.run_id]


def test_a_good_run_carries_its_sampler_rows_and_the_during_phase(node, tmp_path):
    spec = WorkloadSpec(op="write", duration=4, cl="ONE", concurrency=8, keyspace="runspec_ok", warmup=False)

    def during(writer):
        time.sleep(1.0)
        with writer.phase("flush", "nodetool flush"):
            node.nodetool("node1", "flush", "runspec_ok")

    run = run_spec(spec, node, root=tmp_path / "runs", progress=False, labels={"case": "good"},
                   sampler={"tables": [("runspec_ok", "standard1")], "interval_s": 1.0}, during=during)
    assert run.complete and not run.manifest.get("failed")
    assert run.labels == {"case": "good"}
    assert {"flush:start", "flush:end"} <= set(run.events["name"])
    assert "gc_count" in set(run.metrics["metric"])
    assert int(run.summary["count"].sum()) > 0


def test_the_cli_says_failed_and_exits_non_zero(node, tmp_path):
    env_data = tmp_path / "data"
    cmd = [sys.executable, "-m", "cassperf.cli", "run", "--hosts", "127.0.7.21", "--local-dc", "dc1",
           "--no-progress", "--sample-interval", "0",
           "write n=100 cl=QUORUM -rate threads=8 -schema keyspace=runspec_cli "
           "replication(strategy=NetworkTopologyStrategy,dc1=3)"]
    role = node.access().cql          # --hosts: reached as a user's cluster, its role's credential exported
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "CASSPERF_DATA": str(env_data),
                               "CASSPERF_USERNAME": role.user, "CASSPERF_PASSWORD": role.password})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED: no operation succeeded (100 failed)" in proc.stdout
