"""Notebook 02 (two DCs) run by papermill in a real kernel against a real two-DC embedded cluster
(one node per DC, 27 ms apart in network namespaces) with its test parameter set: 2 randomized
blocks, the warm-up, the calibration, the A/A control, a client in each DC placed by Dask. What
it publishes is checked against the stored runs and the study's record, and nothing is left
behind (nodes, namespaces, router, Dask scheduler and workers, engine workers, TLS files).

Run under the CPU lock:  flock /tmp/cassperf-cpu.lock .venv/bin/pytest tests/notebooks/test_multidc_notebook.py -x -q
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import yaml

from cassperf import config
from cassperf.experiments.clients import group_records, overlap_s
from cassperf.experiments.multidc import MultiDCStudy
from cassperf.experiments.outcome import load_outcome
from cassperf.experiments.study import Calibrated
from cassperf.results.catalog import catalog
from tests.notebooks.studykit import check_in_chromium, check_report_shape, execute_study, study_data  # noqa: F401

# alone: asserts the ping RTT band and scans the machine's Dask TLS folders; make test runs it with no other test beside
# it
pytestmark = [pytest.mark.alone, pytest.mark.notebook, pytest.mark.cluster]

NB = "02-multi-dc.ipynb"
WHERE = {"cluster_name": "multidcnb", "first_address": "127.0.8.41"}
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
def two_dc_data(study_data: Path) -> Iterator[Path]:
    """study_data, and at the end the two-DC cluster stopped with its network, checked gone."""
    if os.geteuid() != 0:
        pytest.skip("the distance between DCs needs root (network namespaces)")
    try:
        yield study_data
    finally:
        from cassperf.cluster import netns
        from cassperf.cluster.local import LocalCluster
        from cassperf.cluster.study import cluster_name_for

        cluster = LocalCluster(cluster_name_for(WHERE["cluster_name"], TOPOLOGY, RTT_MS), TOPOLOGY,
                               first_address=WHERE["first_address"], root=study_data / "clusters",
                               inter_dc_rtt_ms=RTT_MS)
        cluster.stop(kill=True)
        netid = netns.network_id(cluster.name, cluster.root)
        assert (netns.leftover_namespaces(netid), netns.router_pids(netid)) == ([], [])
        assert _ours(study_data) == [], "processes left behind"


def _study() -> MultiDCStudy:
    params = yaml.safe_load((config.notebooks_dir() / "params" / "test" / "02-multi-dc.yaml").read_text())
    return MultiDCStudy.from_parameters(params)


def _tls_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("cassperf-dask-tls-*"))


def test_multidc_notebook_runs_every_arm_with_a_client_per_dc_and_leads_with_its_findings(two_dc_data, tmp_path):
    before = _tls_folders()
    run = execute_study(NB, tmp_path / "first", **WHERE)
    check_report_shape(run)
    study = _study()
    outcome = load_outcome(study)
    arms = outcome.arm_names
    assert arms == ["independent write", "replicated write", "replicated mixed", "write LOCAL_QUORUM",
                    "write EACH_QUORUM", "read LOCAL_QUORUM", "read EACH_QUORUM", "QUORUM read threads=2",
                    "QUORUM read threads=8", "replicated write (A/A)"]
    # every arm once per block: a client in each DC for the first three and the A/A twin, dc1's alone otherwise
    measured = catalog(study="multi-dc", experiment="test", role="measure")
    both = {"independent write", "replicated write", "replicated mixed", "replicated write (A/A)"}
    expected = sorted((a, b, dc, f"{dc}-c1") for a in arms for b in ("1", "2")
                      for dc in (("dc1", "dc2") if a in both else ("dc1",)))
    assert sorted(zip(measured["arm"], measured["block"], measured["dc"], measured["client"], strict=True)) == expected
    assert measured["complete"].all()
    assert {s["status"] for s in outcome.record["slots"].values()} == {"ran"}
    # the two clients of a slot measured at the same time (they meet before their load starts)
    for (arm, block), pair in measured[measured["arm"].isin(both)].groupby(["arm", "block"]):
        runs = [r for r in outcome.runs if r.run_id in set(pair["run_id"])]
        assert overlap_s(runs) >= study.run_s / 2, (arm, block, overlap_s(runs))
    # calibration ran once and set the concurrency: two clients below the knee together, one client light
    cal = outcome.record["calibration"]
    below = Calibrated.from_json(cal).below_knee
    light = min(c for c, rate in cal["points"] if rate >= 0.5 * cal["best_ops_s"])
    assert set(measured[measured["arm"] == "replicated write"]["concurrency"]) == {str(max(1, below // 2))}
    assert set(measured[measured["arm"] == "write EACH_QUORUM"]["concurrency"]) == {str(light)}
    assert outcome.record["warmup"] and outcome.record["warmup"][0]["rates_ops_s"]
    # the network baseline is the study's, in its record: ping each way near the RTT, iperf3
    baseline = outcome.record["baseline"][-1]
    assert baseline["far"] is True and baseline["rtt_configured_ms"] == RTT_MS
    from cassperf.experiments.network import baseline_table

    net = {(r.measure, r.between): r for r in baseline_table(baseline).itertuples()}
    for between in ("dc1->dc2", "dc2->dc1"):
        assert 0.8 * RTT_MS <= net[("ping RTT avg", between)].value <= 1.2 * RTT_MS
    for streams in ("iperf3, 1 stream", "iperf3, 16 streams"):
        row = net[(streams, "dc1->dc2")]
        assert row.value > 0 or row.how.startswith("not measured: iperf3 is not installed")
    # the interface counters around the replicated writes: replicas crossed to the other DC
    ids = set(measured[measured["arm"] == "replicated write"]["run_id"])
    traffic = [t for g in group_records() if {c["run_id"] for c in g["clients"]} <= ids for t in g["traffic"]]
    assert sorted(t["where"] for t in traffic) == ["dc1 (dc1-c1)", "dc1 (dc1-c1)", "dc2 (dc2-c1)", "dc2 (dc2-c1)"]
    assert all(t["send_mb_s"] > 0 and t["receive_mb_s"] > 0 for t in traffic)
    # the published claims are the analysis functions' on the stored runs
    expected_claims = outcome.study.analysis().conclude(outcome).claims
    assert [c["claim"] for c in run.claims] == expected_claims["claim"].tolist()
    assert [c["verdict"] for c in run.claims] == expected_claims["verdict"].tolist()
    assert run.claims[0]["claim"] == ("A/A control: 'replicated write' against its identical twin, both DCs' clients "
                                      "summed per block")
    assert _tls_folders() <= before, "TLS certificates left behind"
    check_in_chromium(run, tmp_path)
    # analyse_only rebuilds the same report from the store, no cluster (a second execution that runs
    # nothing, every slot stored: 01's notebook test, on the same executor)
    only = execute_study(NB, tmp_path / "only", analyse_only=True, **WHERE)
    assert only.claims == run.claims
