"""The published garbagecollect table and the one-row-per-run frame of the sweep charts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.unit.analysis_runs import lognormal, make_run, shaped_run

from cassperf.analysis import (
    fmt_micros,
    fmt_rate,
    phase_table,
    phase_window,
    runs_frame,
    steady_state,
    window_before,
    window_stats,
)

PUBLISHED_ROWS = ["Read Throughput", "Read Latency avg.", "Read Latency p95", "Read Latency p99",
                  "Write Throughput", "Write Latency avg.", "Write Latency p95", "Write Latency p99"]


def gc_run():
    """60 s of a 5:4 read/write load at a fixed rate; garbagecollect from 30.2 s to 50.1 s
    doubles read latency."""
    def read(op: str, i: int, rng: np.random.Generator) -> list[int]:
        median = 10.0 if 30 <= i < 50 else 5.0
        return rng.lognormal(np.log(median * 1e6), 0.5, 150).astype(np.int64).tolist()
    events = [(30.2, "garbagecollect:start", "nodetool garbagecollect ks standard1"), (50.1, "garbagecollect:end", "")]
    return make_run({"read": read, "write": lognormal(0.5, 0.4, 120)}, 60, events=events, seed=5)


def test_phase_table_has_the_published_rows_units_and_columns() -> None:
    run, drawn = gc_run()
    gc = phase_window(run, "garbagecollect")
    steady = window_before(gc)
    table = phase_table(run, steady, gc, reps=300)
    assert table["Metric"].tolist() == PUBLISHED_ROWS
    assert list(table.columns[:3]) == ["Metric", "Steady State", "With GarbageCollect"]
    assert table["unit"].tolist() == ["ops/s", "micros", "micros", "micros"] * 2
    for col in ("steady_value", "phase_value", "change_pct", "ci_low_pct", "ci_high_pct", "significant", "verdict"):
        assert col in table.columns
    read_gc = window_stats(run, gc, "read")
    read_p99 = table.set_index("Metric").loc["Read Latency p99"]
    assert read_p99["phase_value"] == read_gc["latency_p99_ms"] * 1000
    assert read_p99["With GarbageCollect"] == fmt_micros(read_gc["latency_p99_ms"] * 1000)
    assert read_p99["significant"] and read_p99["change_pct"] == pytest.approx(100.0, abs=15.0)
    thr = table.set_index("Metric").loc["Write Throughput"]
    assert thr["Steady State"] == fmt_rate(window_stats(run, steady, "write")["rate_ops_s"]) == "120/s"
    assert not table.set_index("Metric").loc["Write Latency p99"]["significant"]


def test_phase_table_titles_are_parameters() -> None:
    run = shaped_run([1000] * 20, op="read")
    from cassperf.analysis import Window
    table = phase_table(run, Window(0, 10), Window(10, 20), ops=("read",), phase_title="With Repair", reps=50)
    assert list(table.columns[:3]) == ["Metric", "Steady State", "With Repair"]
    assert table["Metric"].tolist() == PUBLISHED_ROWS[:4]
    assert table["Steady State"].tolist()[0] == "1.0k/s"


def test_runs_frame_one_row_per_run_with_labels_and_steady_figures() -> None:
    runs = [shaped_run([300, 600, 900] + [1000] * 40, run_id=f"r{rf}", labels={"rf": str(rf), "run": "a"})
            for rf in (1, 3)]
    runs.append(shaped_run([1000] * 30, [2.0] * 30, run_id="r5", labels={"rf": "5", "cl": "ONE", "op": "x"}))
    frame = runs_frame(runs, op="write")
    assert frame["run_id"].tolist() == ["r1", "r3", "r5"]
    assert list(frame.columns[:5]) == ["run_id", "rf", "run", "cl", "label_op"]
    assert frame["rf"].tolist() == ["1", "3", "5"] and pd.isna(frame["cl"].iloc[0])
    steady = steady_state(runs[0]).window
    expected = window_stats(runs[0], steady, "write")
    row = frame.iloc[0]
    for key in ("rate_ops_s", "latency_p99_ms", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms"):
        assert row[key] == expected[key]
    assert (row["window_start_s"], row["window_end_s"]) == (steady.start_s, steady.end_s)
    assert row["rate_ops_s"] == 1000.0 and row["cv"] == 0.0 and not row["unstable"]
    assert row["latency_type"] == "response" and bool(row["percentiles_merged"])
    assert frame["latency_p99_ms"].iloc[2] == pytest.approx(2 * frame["latency_p99_ms"].iloc[1], rel=0.002)
    whole = runs_frame(runs[:1], steady=False)
    assert whole["rate_ops_s"].iloc[0] == pytest.approx((300 + 600 + 900 + 40_000) / 43)


def test_runs_frame_rows_per_op_and_error_share() -> None:
    run, _ = make_run({"read": lognormal(1.0, per_interval=90), "write": lognormal(1.0, per_interval=45)}, 12,
                      errors=10, labels={"rf": "3"})
    frame = runs_frame([run])
    assert frame["op"].tolist() == ["read", "write"]
    n = len(frame) and int((frame["window_end_s"] - frame["window_start_s"]).iloc[0])
    assert frame["errors"].tolist() == [10 * n, 10 * n]
    assert frame["error_share"].tolist() == pytest.approx([10 / 100, 10 / 55])
    assert runs_frame([run], op="delete").empty


def test_phase_table_write_row_can_combine_writes_and_deletes_from_their_histograms() -> None:
    """The published Write rows count every mutation: ("write", ["write", "delete"]) sums the
    two ops' histograms interval by interval; the p99 is the pooled samples' p99."""
    from tests.unit.analysis_runs import pooled_stats

    from cassperf.analysis import Window

    run, drawn = make_run({"read": lognormal(5.0, 0.5, 50), "write": lognormal(0.5, 0.3, 40),
                           "delete": lognormal(4.0, 0.3, 10)}, 20, seed=9)
    table = phase_table(run, Window(0, 10), Window(10, 20), ops=("read", ("write", ["write", "delete"])), reps=50)
    assert table["Metric"].tolist() == PUBLISHED_ROWS
    row = table.set_index("Metric")
    assert row.loc["Write Throughput", "steady_value"] == 50.0          # 40 writes + 10 deletes a second
    pooled = pooled_stats(drawn["write"][10:] + drawn["delete"][10:])
    assert row.loc["Write Latency p99", "phase_value"] == pooled["latency_p99_ms"] * 1000
    writes_only = pooled_stats(drawn["write"][10:])["latency_p99_ms"] * 1000
    assert row.loc["Write Latency p99", "phase_value"] > writes_only  # the deletes' tail is in it


def test_claim_verdicts_never_make_a_finding_of_noise() -> None:
    """A claimed rise holds only when significant that way; the absence of a significant
    difference is 'not shown', never 'does not hold'; 'alike' needs the whole CI in the band."""
    from cassperf.analysis.claims import FAILS, HOLDS, NOT_SHOWN, alike, higher, lower
    from cassperf.analysis.compare import Comparison

    def c(change, low, high, significant, unstable=False, verdict="x"):
        return Comparison(1.0, 1.0 + change / 100, change, low, high, 0.01, significant, verdict, "welch",
                          unstable, False, 20, 20)

    assert higher(c(12.0, 8.0, 16.0, True)) == HOLDS
    assert higher(c(-12.0, -16.0, -8.0, True)) == FAILS
    assert higher(c(3.0, -2.0, 8.0, False)) == NOT_SHOWN
    assert lower(c(-12.0, -16.0, -8.0, True)) == HOLDS
    assert higher(c(30.0, 20.0, 40.0, True, unstable=True)) == NOT_SHOWN
    assert higher(None) == NOT_SHOWN
    assert alike(c(2.0, -3.0, 7.0, False), 15.0) == HOLDS
    assert alike(c(2.0, -20.0, 24.0, False), 15.0) == NOT_SHOWN      # straddles the band: cannot tell
    assert alike(c(30.0, 20.0, 40.0, True), 15.0) == FAILS           # wholly outside: a real difference
    assert alike(c(2.0, float("nan"), float("nan"), False), 15.0) == NOT_SHOWN
