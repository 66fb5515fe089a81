"""Clients placed per DC on a two-DC cluster with distance between the DCs (issue 13).

Real parts: two Cassandra nodes (dc1:1, dc2:1, heap 512 MB) in their DC network namespaces
with a 27 ms round trip between them, the load engine. Cluster names start with "multidc";
node numbering from 127.0.21.1, so the nodes live on 10.21.1.1 (dc1) and 10.21.2.1 (dc2).

Run under the CPU lock:  flock /tmp/cassperf-cpu.lock .venv/bin/pytest tests/cluster/test_multidc_clients.py -x -q
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassperf.cluster import LocalCluster, netns
from cassperf.workload import WorkloadSpec
from tests.conftest import cassperf_processes

RTT_MS = 27.0
FIRST = "127.0.21.1"
pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def two_dcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    root = tmp_path_factory.mktemp("multidc-clusters")
    cluster = LocalCluster("multidc-clients", "dc1:1,dc2:1", first_address=FIRST, heap_mb=512, root=root,
                           inter_dc_rtt_ms=RTT_MS)
    try:
        t0 = time.monotonic()
        cluster.start()
        print(f"\n2-DC cluster CQL-ready in {time.monotonic() - t0:.1f} s")
        yield cluster
    finally:
        cluster.stop(timeout_s=30)
        left = cassperf_processes(root)
        for proc in left:
            proc.kill()
        assert not left, f"nodes still running after stop: {[p.pid for p in left]}"
        netid = netns.network_id(cluster.name, cluster.root)
        assert (netns.leftover_namespaces(netid), netns.router_pids(netid)) == ([], [])


def test_the_engine_routes_a_dc2_client_to_dc2s_nodes(two_dcs: LocalCluster, tmp_path: Path) -> None:
    """A LOCAL_QUORUM write from dc2's namespace with local_dc=dc2 is coordinated in dc2 (p50 far
    below the RTT); routed to the handle's first DC (dc1), every op would cross the link twice."""
    from cassperf.workload.engine import run_workload

    spec = WorkloadSpec(op="write", n=300, cl="LOCAL_QUORUM", concurrency=1, keyspace="multidc_route",
                        replication={"dc1": 1, "dc2": 1}, local_dc="dc2", warmup=False)
    with two_dcs.in_dc("dc2"):
        run = run_workload(spec, two_dcs, root=tmp_path, processes=1, progress=False)
    summary = run.summary.iloc[0]
    print(f"\ndc2 client, LOCAL_QUORUM write p50 {summary['latency_p50_ms']:.2f} ms (RTT {RTT_MS} ms)")
    assert int(summary["count"]) == 300 and int(summary["errors"]) == 0
    assert summary["latency_p50_ms"] < RTT_MS / 2
    assert run.manifest["cluster"]["local_dc"] == "dc1"          # the handle's; the client's is the spec's
    assert run.manifest["parameters"]["local_dc"] == "dc2"


def test_without_in_dc_the_engine_places_its_workers_in_the_local_dcs_namespace(two_dcs: LocalCluster,
                                                                                tmp_path: Path) -> None:
    """On the host's own namespace the nodes' 10.21.x.x addresses do not exist: the engine starts
    its workers in the spec's local DC (dc2), so the run works and stays local there."""
    from cassperf.workload.engine import run_workload

    spec = WorkloadSpec(op="write", n=200, cl="LOCAL_ONE", concurrency=1, keyspace="multidc_route",
                        replication={"dc1": 1, "dc2": 1}, local_dc="dc2", warmup=False)
    run = run_workload(spec, two_dcs, root=tmp_path, processes=1, progress=False)
    summary = run.summary.iloc[0]
    assert int(summary["count"]) == 200 and int(summary["errors"]) == 0
    assert summary["latency_p50_ms"] < RTT_MS / 2
