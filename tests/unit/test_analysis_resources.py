"""Resource figures over a window, the limit rule and the client flag, on hand-made metric frames
whose expected values are worked out by hand in the comments."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cassperf.analysis.resources import (
    ARM_COLUMNS,
    RESOURCE_COLUMNS,
    Limit,
    arm_resources,
    arm_rows,
    client_flag,
    client_processes,
    counter_increase,
    level_stats,
    limit_of,
    limit_sentence,
    node_resource_frame,
    node_resources,
    run_resource_frame,
    run_resources,
    span_mean,
)
from cassperf.results.model import Run

STARTED = pd.Timestamp("2026-11-23T10:00:00Z")
TIMES = [-2.0, 0.0, 2.0, 4.0, 6.0]          # sample times on the run's axis (s)
MIB = 2**20


def series(node: str, metric: str, values: list[float], times: list[float] = TIMES) -> list[dict]:
    return [{"time": STARTED + pd.Timedelta(seconds=t), "node": node, "metric": metric, "value": float(v)}
            for t, v in zip(times, values, strict=True)]


def make_run(rows: list[dict], run_id: str = "r1", writes_per_s: float = 1000.0, manifest: dict | None = None) -> Run:
    intervals = pd.DataFrame([{"time_s": float(k + 1), "start_s": float(k), "interval_s": 1.0, "op": "write",
                               "count": int(writes_per_s), "rate_ops_s": writes_per_s} for k in range(6)])
    return Run(manifest={"run_id": run_id, "started_utc": STARTED.isoformat(), "latency_type": "service",
                         **(manifest or {})},
               intervals=intervals, metrics=pd.DataFrame(rows))


def full_rows() -> list[dict]:
    host = "host:box"
    return [
        # since-previous gauges: a value holds for the span before its sample
        *series(host, "host_cpu_pct", [0, 10, 60, 80, 100]),
        *series(host, "host_cpu_user_pct", [0, 5, 30, 40, 50]),
        *series(host, "host_cpu_system_pct", [0, 5, 20, 20, 20]),
        *series(host, "host_cpu_iowait_pct", [0, 0, 4, 4, 4]),
        *series(host, "host_cpu_steal_pct", [0, 0, 0, 0, 0]),
        *series("node1", "process_cpu_pct", [0, 100, 100, 100, 100]),
        *series("node2", "process_cpu_pct", [0, 0, 20, 40, 60]),
        # counters
        *series("client:engine", "client_cpu_s", [0, 0.2, 0.4, 0.6, 0.8]),
        *series("client:worker-0", "client_cpu_s", [0, 1.0, 2.8, 4.6, 6.4]),
        *series("client:worker-1", "client_cpu_s", [0, 0.5, 1.5, 2.5, 3.5]),
        *series("disk:vda", "disk_busy_ms", [0, 0, 1000, 2000, 3000]),
        *series("disk:vda", "disk_read_bytes", [0, 0, 4e6, 8e6, 12e6]),
        *series("disk:vda", "disk_write_bytes", [0, 0, 2e6, 4e6, 6e6]),
        *series("disk:vda", "disk_reads", [0, 0, 200, 400, 600]),
        *series("disk:vda", "disk_writes", [0, 0, 100, 200, 300]),
        *series("node1", "process_read_bytes", [0, 0, 1e6, 2e6, 3e6]),
        *series("node2", "process_read_bytes", [0, 0, 1e6, 2e6, 3e6]),
        *series("node1", "process_write_bytes", [0, 0, 5e5, 1e6, 1.5e6]),
        *series("node1", "gc_time_ms", [0, 0, 100, 200, 300]),
        *series("node2", "gc_time_ms", [0, 0, 300, 600, 900]),
        *series("node1", "dropped_messages", [0, 0, 0, 10, 10]),
        *series("node1", "read_timeouts", [0, 0, 0, 0, 2]),
        *series("node1", "local_writes:ks.t", [0, 0, 2000, 4000, 6000]),
        *series("node2", "local_writes:ks.t", [0, 0, 2000, 4000, 6000]),
        # levels
        *series("node1", "compactions_pending", [0, 0, 4, 2, 0]),
        *series("node1", "node_page_cache_bytes", [64 * MIB] * 5),
        *series("node2", "node_page_cache_bytes", [32 * MIB] * 5),
        *series("node1", "node_anon_bytes", [700 * MIB] * 5),
        *series("node1", "node_memory_limit_bytes", [780 * MIB] * 5),
    ]


# -- the three kinds of series ----------------------------------------------------------------------
def test_span_mean_weights_each_span_by_its_overlap() -> None:
    t, v = np.array([0.0, 2.0, 4.0]), np.array([999.0, 50.0, 100.0])
    # [1, 3): 1 s of (0, 2] at 50, 1 s of (2, 4] at 100; the first sample's span is unknown
    assert span_mean(t, v, 1.0, 3.0) == (75.0, 2.0)


def test_counter_increase_spreads_each_span_evenly_and_skips_a_restart() -> None:
    t = np.array([0.0, 2.0, 4.0])
    assert counter_increase(t, np.array([0.0, 10.0, 30.0]), 1.0, 3.0) == (15.0, 2.0)   # 10/2 + 20/2
    assert counter_increase(t, np.array([0.0, 10.0, 5.0]), 1.0, 3.0) == (5.0, 1.0)    # fell: restarted


def test_level_stats_is_the_line_between_samples() -> None:
    t, v = np.array([0.0, 2.0, 4.0]), np.array([0.0, 20.0, 20.0])
    # on [1, 3): 10 at 1, 20 at 2, 20 at 3 -> area 15 + 20 over 2 s
    assert level_stats(t, v, 1.0, 3.0) == (17.5, 20.0, 2.0)


# -- one run ---------------------------------------------------------------------------------------
def test_run_resources_on_a_known_run() -> None:
    res = run_resources(make_run(full_rows()), 1.0, 5.0)
    assert list(res) == list(RESOURCE_COLUMNS)
    expected = {
        "host_cpu_pct": 80.0,                   # (60 x 1 + 80 x 2 + 100 x 1) / 4
        "host_cpu_user_pct": 40.0,              # (30 + 80 + 50) / 4
        "host_cpu_system_pct": 20.0,
        "host_cpu_iowait_pct": 4.0,
        "host_cpu_steal_pct": 0.0,
        "node_cpu_pct": 70.0,                   # node1 100, node2 (20 + 80 + 60) / 4 = 40
        "node_cpu_max_pct": 100.0,
        "client_cpu_pct": 150.0,                # 0.4 + 3.6 + 2.0 CPU s in 4 s
        "client_cpu_max_pct": 90.0,             # worker-0: 0.9 s per s
        "disk_busy_pct": 50.0,                  # 500 ms busy per s
        "disk_read_mb_s": 2.0, "disk_write_mb_s": 1.0, "disk_reads_s": 100.0, "disk_writes_s": 50.0,
        "node_read_mb": 4.0,                    # 2 MB each of two nodes
        "node_write_mb": 1.0,
        "node_read_kb_per_op": 1.0,             # 4 MB over 4,000 writes (intervals 1-5 s)
        "node_write_kb_per_op": 0.25,
        "page_cache_mb": 48.0, "page_cache_max_mb": 64.0, "anon_mb": 700.0, "memory_limit_mb": 780.0,
        "gc_pause_pct": 10.0,                   # node1 50 ms/s = 5%, node2 15%
        "gc_pause_max_pct": 15.0,
        "compactions_pending_max": 4.0,
        "dropped_messages": 10.0,
        "timeouts": 1.0,                        # 2 over (4, 6], half of it before 5 s
        "local_writes": 8000.0,
        "local_reads": math.nan,                # not sampled: NaN, never 0
        "local_writes_per_write": 2.0,          # 8,000 applied for 4,000 client writes: 2 replicas each
        "local_reads_per_read": math.nan,
        "ops": 4000.0,
    }
    for col, want in expected.items():
        got = res[col]
        assert (math.isnan(got) if math.isnan(want) else got == pytest.approx(want, abs=1e-9)), (col, got, want)


def test_nothing_measured_is_nan_never_zero() -> None:
    res = run_resources(make_run([]), 1.0, 5.0)
    assert all(math.isnan(v) for k, v in res.items() if k != "ops")
    assert res["ops"] == 4000.0
    assert limit_of(res) == Limit((), measured=False)
    assert limit_of(res).label == "resources not measured"


def test_samples_covering_under_half_the_window_give_nan() -> None:
    rows = series("host:box", "host_cpu_pct", [50, 50], times=[4.0, 6.0])
    # only (4, 6] is a known span: 1 s of the 4 s window
    assert math.isnan(run_resources(make_run(rows), 1.0, 5.0)["host_cpu_pct"])
    assert run_resources(make_run(rows), 3.0, 5.0)["host_cpu_pct"] == 50.0


def test_node_resources_per_node() -> None:
    frame = node_resources(make_run(full_rows()), 1.0, 5.0)
    assert frame["node"].tolist() == ["node1", "node2"]
    node1, node2 = frame.iloc[0], frame.iloc[1]
    assert (node1["cpu_pct"], node2["cpu_pct"]) == (100.0, 40.0)
    assert (node1["local_writes"], node2["local_writes"]) == (4000.0, 4000.0)
    assert (node1["gc_pause_pct"], node2["gc_pause_pct"]) == (5.0, 15.0)
    assert math.isnan(node2["dropped_messages"])


def test_client_processes_busiest_first() -> None:
    frame = client_processes(make_run(full_rows()), 1.0, 5.0)
    assert frame["process"].tolist() == ["worker-0", "worker-1", "engine"]
    assert frame["cpu_pct"].round(9).tolist() == [90.0, 50.0, 10.0]


def test_a_client_process_that_started_in_the_window_counts_its_cpu_while_it_ran() -> None:
    # a tool started at 3.5 s (the source's zero row at its start), 1.5 CPU s by 5 s, 2.5 by 7 s
    rows = series("client:cassandra-stress", "client_cpu_s", [0.0, 1.5, 2.5], times=[3.5, 5.0, 7.0])
    alone = run_resources(make_run(rows), 1.0, 5.0)
    assert math.isnan(alone["client_cpu_pct"])                 # no client process covers half the window
    rows += series("client:python", "client_cpu_s", [0.0, 0.0, 0.0, 0.0, 0.0])   # its parent, idle throughout
    res = run_resources(make_run(rows), 1.0, 5.0)
    assert res["client_cpu_pct"] == pytest.approx(37.5)        # 1.5 CPU s in the 4 s window
    # its own rate is a core while it ran, but 1.5 s is under half of the window: not known, so the
    # busiest process with a known rate is the idle parent
    assert client_processes(make_run(rows), 1.0, 5.0)["cpu_pct"].isna().tolist() == [False, True]
    assert res["client_cpu_max_pct"] == 0.0
    assert run_resources(make_run(rows), 3.0, 5.0)["client_cpu_max_pct"] == pytest.approx(100.0)


# -- the limit rule ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("row", "resources"), [
    ({"host_cpu_pct": 90.0, "client_cpu_max_pct": 31, "disk_busy_pct": 2, "gc_pause_max_pct": 1}, ("host CPU",)),
    ({"host_cpu_pct": 89.99, "client_cpu_max_pct": 31, "disk_busy_pct": 2, "gc_pause_max_pct": 1}, ()),
    ({"host_cpu_pct": 50, "client_cpu_max_pct": 90.0, "disk_busy_pct": 2, "gc_pause_max_pct": 1}, ("client",)),
    ({"host_cpu_pct": 50, "client_cpu_max_pct": 89.9, "disk_busy_pct": 80.0, "gc_pause_max_pct": 1}, ("disk",)),
    ({"host_cpu_pct": 50, "client_cpu_max_pct": 10, "disk_busy_pct": 79.9, "gc_pause_max_pct": 10.0}, ("GC",)),
    ({"host_cpu_pct": 50, "client_cpu_max_pct": 10, "disk_busy_pct": 1, "gc_pause_max_pct": 9.99}, ()),
    ({"host_cpu_pct": 97, "client_cpu_max_pct": 95, "disk_busy_pct": 85, "gc_pause_max_pct": 12},
     ("host CPU", "client", "disk", "GC")),
    ({"host_cpu_pct": math.nan, "client_cpu_max_pct": 95}, ("client",)),
])
def test_limit_rule_thresholds(row: dict, resources: tuple[str, ...]) -> None:
    assert limit_of(row).resources == resources


def test_limit_labels() -> None:
    assert Limit(("host CPU",)).label == "CPU-bound"
    assert Limit(("client", "GC")).label == "client-bound and GC-bound"
    assert Limit(()).label == "no resource saturated"
    assert Limit(()).resource == "no resource saturated"
    assert Limit(("disk",)).resource == "disk"
    assert limit_of(run_resources(make_run(full_rows()), 1.0, 5.0)).label == "client-bound and GC-bound"


def test_limit_sentence_one_clause_when_the_arms_agree() -> None:
    arms = {"rf1": {"host_cpu_pct": 97.2, "client_cpu_max_pct": 31.0, "disk_busy_pct": 2.0, "gc_pause_max_pct": 1.0},
            "rf3": {"host_cpu_pct": 95.4, "client_cpu_max_pct": 30.8, "disk_busy_pct": 2.2, "gc_pause_max_pct": 0.6}}
    assert limit_sentence(arms) == "both arms: host CPU 95-97%, client 31% of a core, disk 2%, GC 1%: CPU-bound"


def test_limit_sentence_one_clause_per_arm_when_they_differ() -> None:
    arms = {"a": {"host_cpu_pct": 40.0, "client_cpu_max_pct": 20.0, "disk_busy_pct": 85.0, "gc_pause_max_pct": 1.0},
            "b": {"host_cpu_pct": 40.0, "client_cpu_max_pct": 20.0, "disk_busy_pct": 5.0}}
    assert limit_sentence(arms) == ("a: host CPU 40%, client 20% of a core, disk 85%, GC 1%: disk-bound; "
                                    "b: host CPU 40%, client 20% of a core, disk 5%, GC not measured: "
                                    "no resource saturated")
    assert limit_sentence({"x": {}, "y": {}, "z": {}}).startswith("all 3 arms: host CPU not measured")


# -- the client flag --------------------------------------------------------------------------------
def test_client_flag() -> None:
    assert client_flag({"client_cpu_max_pct": 89.0}, {}) is None
    assert client_flag({"client_cpu_max_pct": 95.2}, {}) == "client at 95% of a core"
    behind = {"engine": {"fell_behind": True, "achieved_rate_ops_s": 4100.4, "target_rate_ops_s": 5000.0}}
    assert client_flag({"client_cpu_max_pct": 40.0}, behind) == "client fell behind its schedule: 4,100 of 5,000 ops/s"
    assert client_flag({}, {"engine": {"fell_behind": False}}) is None


# -- runs and arms ------------------------------------------------------------------------------------
def figures_frame(rows: list[tuple[str, str, int, str, float, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"run_id": r, "arm": a, "block": b, "op": "write", "status": s, "window_start_s": ws,
                          "window_end_s": we} for r, a, b, s, ws, we in rows])


def test_run_and_arm_frames() -> None:
    slow = [row | {"value": row["value"] * 0.5} if row["metric"] == "host_cpu_pct" else row for row in full_rows()]
    runs = [make_run(full_rows(), "r1"), make_run(slow, "r2"), make_run(full_rows(), "r3"),
            make_run(full_rows(), "r4")]
    figures = figures_frame([("r1", "a", 1, "ok", 1.0, 5.0), ("r2", "a", 2, "ok", 1.0, 5.0),
                             ("r3", "b", 1, "ok", 1.0, 5.0), ("r4", "b", 2, "excluded", 1.0, 5.0)])
    per_run = run_resource_frame(figures, runs)
    assert per_run["run_id"].tolist() == ["r1", "r2", "r3"]                # the excluded run does not count
    assert per_run["host_cpu_pct"].tolist() == [80.0, 40.0, 80.0]
    assert per_run["client_flag"].tolist() == ["client at 90% of a core"] * 3
    table = arm_resources(per_run)
    assert table["arm"].tolist() == ["a", "b"]
    assert table["runs"].tolist() == [2, 1]
    assert table["flagged_runs"].tolist() == [2, 1]
    assert table["host_cpu_pct"].tolist() == [60.0, 80.0]
    assert list(table.columns) == ["arm", "runs", "flagged_runs", *ARM_COLUMNS, "limit"]
    assert table["limit"].tolist() == ["client-bound and GC-bound"] * 2
    assert limit_sentence(arm_rows(table)) == ("both arms: host CPU 60-80%, client 90% of a core, disk 50%, GC 15%: "
                                               "client-bound and GC-bound")


def test_node_resource_frame_per_run_and_node() -> None:
    runs = {"r1": make_run(full_rows(), "r1"), "r2": make_run(full_rows(), "r2")}
    figures = figures_frame([("r1", "a", 1, "ok", 1.0, 5.0), ("r2", "a", 2, "excluded", 1.0, 5.0)])
    frame = node_resource_frame(figures, runs)
    assert frame[["run_id", "arm", "block", "node", "local_writes"]].values.tolist() == [
        ["r1", "a", 1, "node1", 4000.0], ["r1", "a", 1, "node2", 4000.0]]
    assert node_resource_frame(figures.iloc[1:], runs).empty


def test_a_node_reading_at_its_disk_throttle_is_disk_bound_whatever_the_device_s_busy_share() -> None:
    row = {"host_cpu_pct": 78.0, "client_cpu_max_pct": 7.0, "disk_busy_pct": 2.0, "disk_throttle_pct": 97.0,
           "gc_pause_max_pct": 1.0}
    assert limit_of(row).label == "disk-bound"
    assert limit_sentence({"run a": row}) == ("arm run a: host CPU 78%, client 7% of a core, disk 2%, disk reads at 97% "
                                              "of the throttle, GC 1%: disk-bound")
    assert limit_of({**row, "disk_throttle_pct": 40.0}).label == "no resource saturated"
    assert limit_of({**row, "disk_busy_pct": 85.0}).resources == ("disk",)      # named once, whichever measure said it
