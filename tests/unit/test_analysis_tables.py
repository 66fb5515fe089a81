"""The one-row-per-run frame (runs_frame)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.unit.analysis_runs import lognormal, make_run, shaped_run

from cassperf.analysis import runs_frame, steady_state, window_stats

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


