"""The multi-DC study on the Study contract (cassperf.experiments.multidc, multidc_analysis,
network): its plan, its parameters' checks, the analysis of built runs (per DC, both DCs
together, a lost client listed) and the network table from real tool output. No cluster."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from cassperf.errors import ConfigError
from cassperf.experiments import multidc, multidc_analysis, network
from cassperf.experiments.outcome import StudyOutcome
from cassperf.experiments.study import Calibrated
from tests.unit.analysis_runs import lognormal, make_run

#: what calibration could have found: the knee at 8 in flight, half the best (167.5 ops/s) first reached at 2
KNEE_8 = Calibrated(((1, 100.0), (2, 190.0), (4, 300.0), (8, 330.0), (16, 335.0)), 8, 335.0, "write")


def test_the_arms_of_the_local_defaults_from_a_calibrated_knee() -> None:
    study = multidc.MultiDCStudy()
    arms = study.arms(KNEE_8)
    assert [(a.name, a.labels["part"], a.labels["op"], a.labels["concurrency"], a.labels["cl"], a.labels["rf"],
             tuple(dc for dc, _ in a.clients)) for a in arms] == [
        ("independent write", "independent", "write", "2", "LOCAL_QUORUM", "1", ("dc1", "dc2")),
        ("replicated write", "replicated", "write", "2", "LOCAL_QUORUM", "2", ("dc1", "dc2")),
        ("replicated mixed", "mixed", "mixed", "2", "LOCAL_QUORUM", "2", ("dc1", "dc2")),
        ("write LOCAL_QUORUM", "cl-write", "write", "2", "LOCAL_QUORUM", "2", ("dc1",)),
        ("write EACH_QUORUM", "cl-write", "write", "2", "EACH_QUORUM", "2", ("dc1",)),
        ("read LOCAL_QUORUM", "cl-read", "read", "2", "LOCAL_QUORUM", "2", ("dc1",)),
        ("read EACH_QUORUM", "cl-read", "read", "2", "EACH_QUORUM", "2", ("dc1",)),
        ("QUORUM read threads=2", "quorum-read", "read", "2", "QUORUM", "2", ("dc1",)),
        ("QUORUM read threads=8", "quorum-read", "read", "8", "QUORUM", "2", ("dc1",))]
    independent, replicated = arms[0].clients, arms[1].clients
    assert [(dc, s.keyspace, s.replication.factors(), s.local_dc, s.concurrency) for dc, s in independent] == [
        ("dc1", "ks410dc1rf1", {"dc1": 1}, "dc1", 2), ("dc2", "ks410dc2rf1", {"dc2": 1}, "dc2", 2)]
    assert [(s.keyspace, s.replication.factors(), s.local_dc) for _, s in replicated] == [
        ("ks410dc1dc2rf2", {"dc1": 2, "dc2": 2}, "dc1"), ("ks410dc2dc1rf2", {"dc1": 2, "dc2": 2}, "dc2")]
    # every arm a run of run_s seconds over the loaded keys, never a count of operations
    assert {(s.duration, s.n, str(s.population)) for a in arms for _, s in a.clients} == {
        (3, None, str(arms[0].clients[0][1].population))}
    assert arms[0].clients[0][1].population.high == 2_500
    assert study.aa_arm(arms) == "replicated write" and all(a.spec is None for a in arms)
    # the reads' rows are loaded first, into each DC's replicated keyspace from its own DC
    assert [(p.name, p.spec.keyspace, p.spec.local_dc, p.spec.n, p.spec.population.kind) for p in
            study.preparations()] == [("ks410dc1dc2rf2", "ks410dc1dc2rf2", "dc1", 2_500, "seq"),
                                      ("ks410dc2dc1rf2", "ks410dc2dc1rf2", "dc2", 2_500, "seq")]
    cal = study.calibration_spec()
    assert (cal.op, cal.keyspace, cal.local_dc, cal.cl) == ("write", "ks410dc1dc2rf2", "dc1", "LOCAL_QUORUM")
    assert study.dropped(KNEE_8) == (
        "The published study ran QUORUM reads at 16, 32, 64, 128, 256 threads (here 2, 8); 256 write and 128 "
        "mixed threads per client from both DCs (here 2 and 2); RF 3 per DC on 6 nodes each (here RF 2): scaled to "
        "this machine, where every node and client share its cores.")


def test_given_thread_counts_are_per_client_and_need_no_calibration() -> None:
    study = multidc.MultiDCStudy(write_threads=256, read_threads=128, cl_threads=64, quorum_threads=(16, 256), rf=3)
    assert study.calibration_spec() is None
    assert multidc.MultiDCStudy(write_threads=256, read_threads=128, quorum_threads=(16, 256)).calibration_spec() \
        is not None                        # cl_threads 0: calibrated
    arms = {a.name: a for a in study.arms(None)}
    assert [s.concurrency for _, s in arms["replicated write"].clients] == [256, 256]
    assert [s.concurrency for _, s in arms["replicated mixed"].clients] == [128, 128]
    assert [s.concurrency for _, s in arms["write EACH_QUORUM"].clients] == [64]
    assert list(arms)[-2:] == ["QUORUM read threads=16", "QUORUM read threads=256"]
    assert (study.independent_keyspace("dc2"), study.replicated_keyspace("dc1"), study.replicated_keyspace("dc2")) \
        == ("ks410dc2rf1", "ks410dc1dc2rf3", "ks410dc2dc1rf3")
    assert study.rf_note == "replicated keyspaces dc1=3, dc2=3, as the study"


@pytest.mark.parametrize("kwargs,message", [
    ({"dcs": ("dc1",)}, r"^dcs=\['dc1'\]: the study needs exactly two data centers, e.g. dc1,dc2$"),
    ({"cl_dc": "dc3"}, r"^cl_dc='dc3': expected one of the study's DCs \(dc1, dc2\)$"),
    ({"rows": 0}, r"^rows=0: expected a whole number >= 1$"),
    ({"write_threads": -1}, r"^write_threads=-1: expected a whole number >= 0 \(0: calibrated\)$"),
    ({"quorum_threads": (8, "x")}, r"^quorum_threads=\[8, 'x'\]: expected client thread counts, each a whole number "
                                   r">= 1 \(empty: x1 and x4 of cl_threads\)$"),
    ({"inter_dc_rtt_ms": -5}, r"^inter_dc_rtt_ms=-5: expected milliseconds >= 0 \(0: no distance\)$"),
    ({"client_hosts": "dc3=vm-a"}, r"^client_hosts names DC 'dc3', which the study does not use; DCs: dc1, dc2$"),
    ({"run_s": 1}, r"^run_s=1 at interval_s=0.1 gives 10 intervals: a run needs at least 20; raise run_s or lower "
                   r"interval_s$"),
])
def test_bad_parameters_get_one_line(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        multidc.MultiDCStudy(**kwargs)


def test_the_cluster_a_notebook_names_is_checked_before_it_starts() -> None:
    study = multidc.MultiDCStudy(rf=2)
    study.check_parameters({"cluster_topology": "dc1:2,dc2:2"})
    with pytest.raises(ConfigError, match=r"^rf=2 needs 2 nodes in dc1; cluster_topology='dc1:1,dc2:1' has 1: lower rf "
                                          r"or give a larger cluster_topology$"):
        study.check_parameters({"cluster_topology": "dc1:1,dc2:1"})
    with pytest.raises(ConfigError, match=r"^cluster_topology='dc1:2' has no data center 'dc2' \(it has dc1\): the "
                                          r"study runs in dcs=\['dc1', 'dc2'\]; name the cluster's DCs in dcs$"):
        study.check_parameters({"cluster_topology": "dc1:2"})
    with pytest.raises(ConfigError, match=r"^rows=10,000,000 is the published scale"):
        multidc.MultiDCStudy(rows=10_000_000).check_parameters({"cluster_topology": "dc1:6,dc2:6"})
    study.check_parameters({"contact_points": "10.0.0.4", "cluster_topology": "dc1:1,dc2:1"})   # yours: not checked


# -- the analysis of built runs -----------------------------------------------------------------
def _run(arm: str, block: int, dc: str, per_interval: int, seed: int, part: str = "replicated",
         failed: str = "") -> object:
    labels = {"arm": arm, "block": str(block), "dc": dc, "client": f"{dc}-c1", "part": part, "op": "write",
              "concurrency": "2", "cl": "LOCAL_QUORUM", "rf": "2", "role": "measure"}
    run, _ = make_run({"write": lognormal(5.0, sigma=0.1, per_interval=per_interval)}, 24, interval_s=0.25,
                      seed=seed, latency_type="service", labels=labels, run_id=f"{arm}-{block}-{dc}")
    if failed:
        run.manifest.update({"failed": True, "complete": False, "failure": failed})
    return run


def _outcome(runs: list, baseline: dict | None = None) -> StudyOutcome:
    arms = [{"name": n, "labels": {"part": p}} for n, p in (("independent write", "independent"),
                                                              ("replicated write", "replicated"),
                                                              ("replicated write (A/A)", "replicated"))]
    record = {"arms": arms, "order": [], "baseline": [baseline] if baseline else []}
    return StudyOutcome(multidc.MultiDCStudy(repeats=2), record, runs)


def test_per_dc_and_both_dcs_together_and_a_lost_client_listed() -> None:
    """Each DC's runs are one row per arm and DC; together, the clients' ops/s are added per block
    (only blocks where every client counted) and averaged over blocks. A run of a client that
    died is left out, and the comparisons of its arm list it."""
    # rates in ops/s: per_interval / 0.25 s
    runs = [_run("independent write", 1, "dc1", 100, 1, "independent"),
            _run("independent write", 1, "dc2", 50, 2, "independent"),
            _run("independent write", 2, "dc1", 110, 3, "independent"),
            _run("independent write", 2, "dc2", 60, 4, "independent"),
            _run("replicated write", 1, "dc1", 40, 5), _run("replicated write", 1, "dc2", 30, 6),
            _run("replicated write", 2, "dc1", 44, 7),
            _run("replicated write", 2, "dc2", 30, 8, failed="client dc2-c1 did not finish: KilledWorker: gone")]
    outcome = _outcome(runs)
    figures = outcome.study.analysis().figures(outcome)
    dcs = multidc_analysis.per_dc(outcome, figures)
    rates = {(r.arm, r.dc): (r.n_runs, r.rate_ops_s) for r in dcs.itertuples()}
    assert rates == {("independent write", "dc1"): (2, pytest.approx(420.0)),
                     ("independent write", "dc2"): (2, pytest.approx(220.0)),
                     ("replicated write", "dc1"): (2, pytest.approx(168.0)),
                     ("replicated write", "dc2"): (1, pytest.approx(120.0))}
    both = multidc_analysis.together(outcome, figures).set_index("arm")
    assert both.loc["independent write", "rate_ops_s"] == pytest.approx(640.0)      # (600 + 680) / 2
    assert both.loc["independent write", "n_blocks"] == 2
    assert both.loc["replicated write", "rate_ops_s"] == pytest.approx(280.0)       # block 1 only: 160 + 120
    assert both.loc["replicated write", "n_blocks"] == 1 and math.isnan(both.loc["replicated write", "rate_ci_ops_s"])
    claims = outcome.study.analysis().claims(outcome, figures)
    assert claims["claim"].iloc[0] == ("A/A control: 'replicated write' against its identical twin, both DCs' clients "
                                       "summed per block")
    replicated = claims[claims["claim"].str.startswith("Replicating to the other DC")].iloc[0]
    summed, rest = replicated["measured"].split("; dc1 alone: ")
    dc1, dc2 = rest.split("; dc2 alone: ")
    # the sum leaves block 2, where dc2's client died, and says so; each DC's own change stands beside it
    assert summed.startswith("both DCs, summed per block: ") and summed.endswith(
        "(left out: replicated write-2-dc1+replicated write-2-dc2: client dc2-c1: failed: client dc2-c1 did not "
        "finish: KilledWorker: gone)"), summed
    assert dc1.startswith("-60.0% ") and dc2.startswith("-45.2%: too few runs counted"), (dc1, dc2)
    # dc1 falls 420 -> 168 ops/s in both blocks, but only block 1 has both clients: the claim cannot be decided
    assert (replicated["verdict"], replicated["reason"]) == (
        "not shown", "the runs cannot decide: too few runs counted (2 of independent write, 1 of replicated write; 2 "
                     "a side needed)")
    # no baseline, so no distance known: the claims on the round trip are not tested here, and say why
    eq = claims[claims["claim"].str.startswith("EACH_QUORUM is far slower")].iloc[0]
    assert (eq["verdict"], eq["reason"]) == ("not tested here", "a distance between the DCs did not take: no network "
                                                                "baseline was measured")
    assert eq["check"] == "a distance between the DCs: no network baseline was measured" and eq["check_took"] is False


def test_clients_of_a_block_share_the_cores_so_their_ops_are_summed_per_block() -> None:
    """Both clients of a block run at once on the same cores, so the scheduler splits the ops
    between the DCs differently from block to block (the make report runs of 2026-11-26: 438 and
    149 ops/s, then 287 and 935). Each DC alone then cannot show a fall of 60%; the sum per
    block can, and the claim is judged on it."""
    dc1_share = {"independent write": (0.3, 0.75, 0.5), "replicated write": (0.8, 0.3, 0.55),   # of a block's ops
                 "replicated write (A/A)": (0.25, 0.6, 0.7)}
    runs, seed = [], 0
    for arm, part, total in (("independent write", "independent", 400), ("replicated write", "replicated", 160),
                             ("replicated write (A/A)", "replicated", 160)):
        for block, share in enumerate(dc1_share[arm], start=1):
            for dc, part_of in (("dc1", share), ("dc2", 1 - share)):
                seed += 1
                runs.append(_run(arm, block, dc, round(total * part_of * (1 + 0.02 * block)), seed, part))
    outcome = _outcome(runs)
    figures = outcome.study.analysis().figures(outcome)
    summed = multidc_analysis.clients_summed(figures)
    assert summed.groupby("arm")["rate_ops_s"].apply(lambda r: [round(x) for x in r]).to_dict() == {
        "independent write": [1632, 1664, 1696], "replicated write": [656, 664, 676],
        "replicated write (A/A)": [652, 668, 680]}
    assert set(summed["status"]) == {"ok"} and summed["run_id"].iloc[0] == "independent write-1-dc1+independent write-1-dc2"
    claims = outcome.study.analysis().claims(outcome, figures).set_index("claim")
    aa = claims.iloc[0]
    assert aa["verdict"] == "holds" and abs(aa["change_pct"]) < 1.0, aa["measured"]
    replicated = claims.loc["Replicating to the other DC lowers each DC's write ops/s against independent RF 1 writes, "
                            "even at LOCAL_QUORUM"]
    assert replicated["verdict"] == "holds" and replicated["change_pct"] == pytest.approx(-60.0, abs=0.5)
    assert replicated["reason"].endswith("a significant fall"), replicated["reason"]
    dc1, dc2 = replicated["measured"].split("; dc1 alone: ")[1].split("; dc2 alone: ")
    p_values = [float(part.split("p = ")[1].split(",")[0]) for part in (dc1, dc2)]
    assert all(p > 0.05 for p in p_values), (dc1, dc2)         # neither DC alone can show it


def test_the_round_trip_the_claims_use_is_the_measured_ping_and_none_without_distance() -> None:
    far = {"rtt_configured_ms": 27.0, "far": True, "distance": "27 ms round trip between the DCs",
           "ping": [{"from": "dc1", "to": "dc2", "address": "10.21.2.1", "text": PING}]}
    assert multidc_analysis.rtt_ms(_outcome([], far)) == pytest.approx(27.5)
    near = {"rtt_configured_ms": None, "far": False, "distance": "no distance between the DCs on this machine (x)",
            "ping": [{"from": "dc1", "to": "dc2", "address": "127.0.0.1", "text": PING}]}
    assert multidc_analysis.rtt_ms(_outcome([], near)) is None
    assert multidc_analysis.rtt_ms(_outcome([], {**far, "ping": []})) == 27.0


def test_traffic_is_the_mean_over_an_arms_runs_per_client_location(tmp_path) -> None:
    import json

    runs = [_run("replicated write", b, dc, 40, b * 10 + i) for b in (1, 2) for i, dc in enumerate(("dc1", "dc2"))]
    folder = tmp_path / ".groups"
    folder.mkdir()
    for b, send in ((1, 2.0), (2, 4.0)):
        record = {"group": f"g{b}", "clients": [{"run_id": f"replicated write-{b}-{dc}"} for dc in ("dc1", "dc2")],
                  "traffic": [{"dc": dc, "where": f"{dc} ({dc}-c1)", "how": "rt", "send_mb_s": send * k,
                               "receive_mb_s": 1.0, "seconds": 5.0} for k, dc in ((1, "dc1"), (2, "dc2"))]}
        (folder / f"g{b}.json").write_text(json.dumps(record))
    (folder / "other.json").write_text(json.dumps({"group": "x", "clients": [{"run_id": "elsewhere"}],
                                                   "traffic": [{"where": "dc1 (dc1-c1)", "send_mb_s": 99.0}]}))
    table = multidc_analysis.traffic(_outcome(runs), tmp_path)
    assert table.values.tolist() == [["replicated write", "dc1 (dc1-c1)", 3.0, 1.0, 2, "rt"],
                                     ["replicated write", "dc2 (dc2-c1)", 6.0, 1.0, 2, "rt"]]


# -- the network -------------------------------------------------------------------------------
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
    baseline = {"rtt_configured_ms": 27.0, "far": True, "distance": "27 ms round trip between the DCs (...)",
                "ping": [{"from": "dc1", "to": "dc2", "address": "10.21.2.1", "text": PING}],
                "iperf3": [{"from": "dc1", "to": "dc2", "streams": 1, "address": "10.21.2.1",
                            "error": "iperf3 is not installed (make iperf3, or apt-get install iperf3)"}]}
    table = network.baseline_table(baseline)
    assert table[["measure", "between", "value", "unit", "how"]].values.tolist()[:3] == [
        ["RTT configured", "dc1-dc2", 27.0, "ms", "27 ms round trip between the DCs (...)"],
        ["ping RTT avg", "dc1->dc2", 27.5, "ms", "ping -c 2 10.21.2.1, 2 received"],
        ["ping RTT min", "dc1->dc2", 27.4, "ms", "ping -c 2 10.21.2.1, 2 received"]]
    iperf = table[table["measure"] == "iperf3, 1 stream"].iloc[0]
    assert math.isnan(iperf["value"]) and iperf["how"] == ("not measured: iperf3 is not installed (make iperf3, "
                                                           "or apt-get install iperf3)")
    none = network.baseline_table(None)
    assert none["how"].tolist() == ["", "not measured: no baseline in the study's record"]
    assert isinstance(none, pd.DataFrame) and network.measured_rtt_ms(None) is None


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
    # the notebook's parameters are the study's: the pipeline validates them before any cluster starts
    study = multidc.MultiDCStudy.from_parameters(effective)
    assert (study.rf, study.inter_dc_rtt_ms, study.write_threads, tuple(study.quorum_threads)) == (2, 27.0, 0, ())
    study.check_parameters(effective)


@pytest.mark.skipif(__import__("os").geteuid() != 0, reason="needs root to drop to another user")
def test_without_root_the_pipeline_starts_the_cluster_without_distance_and_the_study_says_why() -> None:
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import os
        from cassperf.cluster.local import LocalCluster
        from cassperf.experiments.network import distance
        from cassperf.report.clusters import cluster_need
        import cassperf.cluster.study  # before the uid drop: a checkout in a 0700 folder is not nobody's to read
        os.setgid(65534); os.setuid(65534)
        need = cluster_need({"cluster_topology": "dc1:2,dc2:2", "inter_dc_rtt_ms": 27.0})
        print(need.name, need.inter_dc_rtt_ms)
        from pathlib import Path
        print(distance(LocalCluster(need.name, "dc1:2,dc2:2", root=Path("/tmp/nowhere")), 27.0))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "CASSPERF_DATA": "/tmp"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "cassperf-dc1_2-dc2_2 None",
        "{'rtt_configured_ms': None, 'far': False, 'distance': 'no distance between the DCs on this machine "
        "(inter_dc_rtt_ms=27 puts each DC in a network namespace, which needs root (running as uid 65534); run as "
        "root, or leave inter_dc_rtt_ms unset (no distance between DCs)): they share one loopback, so nothing here "
        "measures distance'}"]


def test_the_sections_of_built_runs_and_of_nothing_stored() -> None:
    from cassperf.experiments.analysis import Section

    runs = [_run(arm, b, dc, 40 + b, b * 10 + i, part) for arm, part in (("independent write", "independent"),
                                                                       ("replicated write", "replicated"))
            for b in (1, 2) for i, dc in enumerate(("dc1", "dc2"))]
    outcome = _outcome(runs)
    built = outcome.study.analysis().sections(outcome, outcome.study.analysis().figures(outcome))
    assert list(built) == ["network", "writes", "mixed", "consistency", "quorum"]
    writes = built["writes"]()
    assert isinstance(writes, Section) and [type(i).__name__ for i in writes.items] == ["Figure"] * 4
    assert [built[k]().text for k in ("mixed", "consistency", "quorum")] == [multidc_analysis.NONE] * 3
    net = built["network"]()
    assert net.text.startswith("Measured from the client locations") and len(net.items) == 2
    nothing = _outcome([]).study.analysis().sections(_outcome([]), _outcome([]).study.analysis().figures(_outcome([])))
    assert [nothing[k]().text for k in ("writes", "mixed", "consistency", "quorum")] == [multidc_analysis.NONE] * 4
