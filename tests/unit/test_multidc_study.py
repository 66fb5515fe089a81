"""The multi-DC study's plan and analysis (cassperf.experiments.multidc, network) on built runs
and real tool output: no cluster."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cassperf.analysis import steady_state
from cassperf.analysis.samples import op_samples
from cassperf.errors import ConfigError
from cassperf.experiments import multidc, network
from tests.unit.analysis_runs import LAYOUT, lognormal, make_run, pooled_stats


def test_plan_of_the_local_defaults_with_rf_capped_at_two_nodes_per_dc() -> None:
    study = multidc.MultiDCStudy(nodes_per_dc=2, write_threads=64, read_threads=32, quorum_threads=(8, 32), rows=6000, read_s=8)
    assert study.rf_used == 2
    assert study.rf_note == ("replicated keyspaces: dc1=2, dc2=2: RF capped at the nodes per DC, 2 "
                             "(the study: 3 of 6)")
    steps = multidc.plan(study)
    assert [(s.labels["part"], s.labels["cl"], s.labels["threads"], tuple(dc for dc, _ in s.specs)) for s in steps] == [
        ("independent", "LOCAL_QUORUM", "64", ("dc1", "dc2")), ("replicated", "LOCAL_QUORUM", "64", ("dc1", "dc2")),
        ("mixed", "LOCAL_QUORUM", "32", ("dc1", "dc2")),
        ("cl-write", "LOCAL_QUORUM", "64", ("dc1",)), ("cl-write", "EACH_QUORUM", "64", ("dc1",)),
        ("cl-read", "LOCAL_QUORUM", "32", ("dc1",)), ("cl-read", "EACH_QUORUM", "32", ("dc1",)),
        ("quorum-read", "QUORUM", "8", ("dc1",)), ("quorum-read", "QUORUM", "32", ("dc1",))]
    independent, replicated = steps[0].specs, steps[1].specs
    assert [(dc, s.keyspace, s.replication.factors(), s.local_dc, s.n) for dc, s in independent] == [
        ("dc1", "ks410dc1rf1", {"dc1": 1}, "dc1", 6000), ("dc2", "ks410dc2rf1", {"dc2": 1}, "dc2", 6000)]
    assert [(s.keyspace, s.replication.factors()) for _, s in replicated] == [
        ("ks410dc1dc2rf2", {"dc1": 2, "dc2": 2}), ("ks410dc2dc1rf2", {"dc1": 2, "dc2": 2})]
    assert steps[1].watch_network and not steps[0].watch_network
    assert all(s.duration == 8 and s.n is None for st in steps[5:] for _, s in st.specs)


def test_the_papers_keyspace_names_at_rf_3() -> None:
    study = multidc.MultiDCStudy(nodes_per_dc=6)
    assert (study.independent_keyspace("dc2"), study.replicated_keyspace("dc1"), study.replicated_keyspace("dc2")) \
        == ("ks410dc2rf1", "ks410dc1dc2rf3", "ks410dc2dc1rf3")
    assert study.rf_note == "replicated keyspaces: dc1=3, dc2=3, as the study"


@pytest.mark.parametrize("kwargs,message", [
    ({"dcs": ("dc1",)}, r"^dcs=\['dc1'\]: the study needs exactly two data centers, e.g. dc1,dc2$"),
    ({"cl_dc": "dc3"}, r"^cl_dc='dc3': expected one of the study's DCs \(dc1, dc2\)$"),
    ({"rows": 0}, r"^rows=0: expected a whole number >= 1$"),
    ({"quorum_threads": (8, "x")}, r"^quorum_threads=\[8, 'x'\]: expected client thread counts >= 1$"),
])
def test_bad_parameters_get_one_line(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        multidc.MultiDCStudy(**kwargs)


def test_combined_sums_throughput_and_merges_both_clients_histograms() -> None:
    a, drawn_a = make_run({"write": lognormal(2.0, per_interval=300)}, 20, seed=1, latency_type="service",
                          labels={"part": "replicated", "cl": "LOCAL_QUORUM", "threads": "64", "dc": "dc1"}, run_id="a")
    b, drawn_b = make_run({"write": lognormal(9.0, per_interval=100)}, 20, seed=2, latency_type="service",
                          labels={"part": "replicated", "cl": "LOCAL_QUORUM", "threads": "64", "dc": "dc2"}, run_id="b")
    out = multidc.combined([a, b])
    assert len(out) == 1
    row = out.iloc[0]
    assert (row["part"], row["op"], row["clients"], row["dcs"], row["threads"]) == ("replicated", "write", 2,
                                                                                      "dc1+dc2", 64)
    wins = {r.run_id: steady_state(r).window for r in (a, b)}
    kept = {r.run_id: [i for i in range(20) if wins[r.run_id].start_s <= i + 0.5 < wins[r.run_id].end_s]
            for r in (a, b)}
    rate = sum(len([v for i in kept[rid] for v in d["write"][i]]) / len(kept[rid])
               for rid, d in (("a", drawn_a), ("b", drawn_b)))
    assert row["rate_ops_s"] == pytest.approx(rate)
    pooled = pooled_stats([drawn_a["write"][i] for i in kept["a"]] + [drawn_b["write"][i] for i in kept["b"]])
    for p in ("p50", "p95", "p99"):
        assert row[f"latency_{p}_ms"] == pytest.approx(pooled[f"latency_{p}_ms"])
    # merged, not averaged: the mean of the two clients' p95 is another number
    each = [op_samples(r, "write", wins[r.run_id].start_s, wins[r.run_id].end_s) for r in (a, b)]
    assert LAYOUT.significant_figures == 3 and len(each) == 2
    assert not math.isclose(row["latency_p95_ms"], np.mean([pooled_stats([d["write"][i] for i in kept[k]])
                                                            ["latency_p95_ms"] for k, d in (("a", drawn_a),
                                                                                            ("b", drawn_b))]))


PING = """PING 10.21.2.1 (10.21.2.1) 56(84) bytes of data.
64 bytes from 10.21.2.1: icmp_seq=1 ttl=63 time=27.4 ms
64 bytes from 10.21.2.1: icmp_seq=2 ttl=63 time=27.6 ms

--- 10.21.2.1 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 51ms
rtt min/avg/max/mdev = 27.400/27.500/27.600/0.100 ms
"""

NET_DEV = """Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:  1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
    rt: 5000000    400    0    0    0     0          0         0  7000000    500    0    0    0     0       0          0
"""


def test_network_table_from_ping_output_counters_and_a_missing_iperf3() -> None:
    assert network.parse_net_dev(NET_DEV) == {"rt": [5_000_000, 7_000_000]}
    before = {"interfaces": {"rt": [1_000_000, 2_000_000]}, "time": 100.0}
    after = {"interfaces": network.parse_net_dev(NET_DEV), "time": 102.0}
    r = network.rates(before, after)
    assert (r["receive_mb_s"], r["send_mb_s"], r["interfaces"]) == (2.0, 2.5, "rt")
    baseline = {"ping": [{"from": "dc1", "to": "dc2", "address": "10.21.2.1", "text": PING}],
                "iperf3": [{"from": "dc1", "to": "dc2", "streams": 1, "address": "10.21.2.1",
                            "error": "iperf3 is not installed (make iperf3, or apt-get install iperf3)"}]}
    table = network.baseline_table(baseline, 27.0, [{"part": "replicated", "where": "dc1 (dc1-c1)", "how": "rt",
                                                     **r}])
    assert table[["measure", "between", "value", "unit"]].values.tolist()[:3] == [
        ["RTT configured", "dc1-dc2", 27.0, "ms"], ["ping RTT avg", "dc1->dc2", 27.5, "ms"],
        ["ping RTT min", "dc1->dc2", 27.4, "ms"]]
    iperf = table[table["measure"] == "iperf3, 1 stream"].iloc[0]
    assert math.isnan(iperf["value"]) and iperf["how"] == ("not measured: iperf3 is not installed (make iperf3, "
                                                           "or apt-get install iperf3)")
    assert table[table["measure"].str.startswith("network")][["measure", "value"]].values.tolist() == [
        ["network send during replicated writes", 2.5], ["network receive during replicated writes", 2.0]]


def test_the_report_pipeline_starts_the_cluster_with_the_declared_distance() -> None:
    from pathlib import Path

    from cassperf import config
    from cassperf.report.clusters import ClusterNeed, PipelineClusters, cluster_need
    from cassperf.report.params import resolve

    effective = resolve(config.notebooks_dir() / "02-multi-dc.ipynb").effective
    need = cluster_need(effective)
    assert need == ClusterNeed("cassperf-dc1_2-dc2_2-rtt27", "dc1:2,dc2:2", "127.0.0.1", 512, None, 27.0)
    assert need.label == "cassperf-dc1_2-dc2_2-rtt27 (dc1:2,dc2:2 on 127.0.0.1, heap 512 MB, 27 ms between DCs)"
    cluster = PipelineClusters(Path("/nonexistent"))._cluster(need)
    assert cluster.network is not None and cluster.network.rtt_ms == 27.0
    assert [n.address for n in cluster.nodes] == ["10.0.1.1", "10.0.1.2", "10.0.2.1", "10.0.2.2"]
    flat = cluster_need({**effective, "inter_dc_rtt_ms": 0})
    assert flat is not None and flat.name == "cassperf-dc1_2-dc2_2" and flat.inter_dc_rtt_ms is None


@pytest.mark.skipif(__import__("os").geteuid() != 0, reason="needs root to drop to another user")
def test_without_root_the_pipeline_starts_the_cluster_without_distance_and_the_notebook_is_told_why() -> None:
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import os
        from cassperf.cluster import netns
        from cassperf.cluster.study import distance_problem
        from cassperf.report.clusters import cluster_need
        from cassperf.cluster.study import cluster_name_for
        os.setgid(65534); os.setuid(65534)
        need = cluster_need({"cluster_topology": "dc1:2,dc2:2", "inter_dc_rtt_ms": 27.0})
        print(need.name, need.inter_dc_rtt_ms)
        print(distance_problem(27.0))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "CASSPERF_DATA": "/tmp"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "cassperf-dc1_2-dc2_2 None",
        "inter_dc_rtt_ms=27 puts each DC in a network namespace, which needs root (running as uid 65534); run as "
        "root, or leave inter_dc_rtt_ms unset (no distance between DCs)"]
