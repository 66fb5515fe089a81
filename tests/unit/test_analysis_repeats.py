"""Run figures over repeats: one row per run and op, its steady-window figures, diagnostics as
columns, and a stated reason for every run that leaves the comparisons."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tests.unit.analysis_runs import lognormal, make_run, shaped_run

from cassperf.analysis import AnalysisError, steady_state, window_stats
from cassperf.analysis.compare import lag1, stability
from cassperf.analysis.repeats import FIGURE_COLUMNS, WindowHistogram, left_out, run_figures
from cassperf.analysis.samples import op_samples
from cassperf.results.model import Run


def steady_counts(n: int = 40, seed: int = 1, mean: float = 1000.0, sd: float = 30.0) -> list[int]:
    return np.random.default_rng(seed).normal(mean, sd, n).round().astype(int).tolist()


def test_one_row_per_run_and_op_with_labels_figures_and_diagnostics() -> None:
    run, _ = make_run({"write": lognormal(2.0, per_interval=120), "read": lognormal(1.0, per_interval=80)}, 30,
                      seed=3, labels={"arm": "rf=1", "block": "2", "rf": "1", "cv": "x"}, run_id="r1")
    frame = run_figures([run])
    assert list(frame.columns) == ["run_id", "arm", "block", "rf", "label_cv", *FIGURE_COLUMNS]
    assert list(frame["op"]) == ["write", "read"] and list(frame["status"]) == ["ok", "ok"]
    assert frame["block"].dtype == "Int64" and frame["block"].tolist() == [2, 2]
    assert frame["arm"].tolist() == ["rf=1", "rf=1"] and frame["label_cv"].tolist() == ["x", "x"]
    window = steady_state(run).window
    for row in frame.itertuples():
        stats = window_stats(run, window, row.op)
        assert (row.window_start_s, row.window_end_s) == (window.start_s, window.end_s)
        assert (row.intervals, row.count) == (stats["intervals"], stats["count"])
        for col in ("rate_ops_s", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
                    "latency_p999_ms"):
            assert getattr(row, col) == pytest.approx(stats[col], rel=1e-12)
        s = op_samples(run, row.op, window.start_s, window.end_s)
        assert row.cv == pytest.approx(stability(s.rate_ops_s)[0])
        assert row.lag1 == pytest.approx(lag1(s.rate_ops_s))
        assert row.percentiles_merged and row.latency_type == "response"


def test_the_window_merged_histogram_is_kept_for_percentile_comparisons() -> None:
    run = shaped_run(steady_counts(), labels={"arm": "a", "block": "1"})
    row = run_figures([run]).iloc[0]
    hist = row["histogram"]
    assert isinstance(hist, WindowHistogram) and hist.unit == "ns"
    assert hist.total == row["count"] and hist.counts.matrix.shape[0] == 1
    assert repr(hist) == f"WindowHistogram({row['count']:,} values in ns)"
    p99 = hist.counts.percentile_ms(hist.counts.matrix, 99.0, hist.unit)[0]
    assert p99 == row["latency_p99_ms"]


def test_drift_is_the_linear_trend_across_the_steady_window_in_percent() -> None:
    # throughput rising 2 ops/s each 1 s interval from 1000, no noise: the trend is exact
    counts = [1000 + 2 * i for i in range(40)]
    row = run_figures([shaped_run(counts, labels={"arm": "a", "block": "1"})]).iloc[0]
    kept = counts[int(row["window_start_s"]):int(row["window_end_s"])]
    span = row["window_end_s"] - row["window_start_s"]
    assert row["drift_pct"] == pytest.approx(100 * 2 * span / np.mean(kept))     # about +7.4%
    assert row["drift_p"] == 0.0
    assert row["status"] == "ok"                      # significant, but within the ±10% bound


def test_a_run_leaves_only_for_a_stated_reason() -> None:
    ok = shaped_run(steady_counts(seed=1), run_id="ok", labels={"arm": "a", "block": "1"})
    failed = shaped_run(steady_counts(seed=2), run_id="failed", labels={"arm": "a", "block": "2"})
    failed.manifest.update(failed=True, failure="write timeouts from 2 nodes")
    killed = shaped_run(steady_counts(seed=3), run_id="killed", labels={"arm": "a", "block": "3"})
    killed.manifest["complete"] = False
    short = shaped_run(steady_counts(n=8, seed=4), run_id="short", labels={"arm": "a", "block": "4"})
    idle = shaped_run([0] * 20 + [1000] * 20, run_id="idle", labels={"arm": "a", "block": "5"})
    idle.histograms = idle.histograms.iloc[:0]
    idle.intervals.loc[:, "count"] = 0
    idle.intervals.loc[:, "rate_ops_s"] = 0.0
    ramp = shaped_run([int(v) for v in np.linspace(500, 2000, 60)], run_id="ramp",
                      labels={"arm": "a", "block": "6"})
    empty = Run({"run_id": "empty", "labels": {"arm": "a", "block": "7"}})
    frame = run_figures([ok, failed, killed, short, idle, ramp, empty])
    reasons = dict(zip(frame["run_id"], frame["reason"], strict=True))
    assert reasons["ok"] == ""
    assert reasons["failed"] == "failed: write timeouts from 2 nodes"
    assert reasons["killed"] == "incomplete: the run was killed or cut short"
    assert reasons["short"] == ("no steady state: too few intervals for MSER-5 (7 after the cool-down trim, 10 "
                                "needed), so a warm-up could not be told apart")
    assert reasons["idle"] == "no ops in the steady window"
    assert reasons["ramp"].startswith("drift: throughput trends +") and reasons["ramp"].endswith(
        "across the steady window (p < 0.001; the bound is ±25% at p < 0.001)")
    assert reasons["empty"] == "no steady state: no intervals"
    assert frame.set_index("run_id").loc["empty", "op"] is pd.NA
    assert frame["status"].tolist() == ["ok"] + ["excluded"] * 6
    # a failed run keeps its figures for the report: it leaves the comparisons, not the table
    assert frame.set_index("run_id").loc["failed", "rate_ops_s"] == pytest.approx(1000, rel=0.05)
    listed = left_out(frame)
    assert list(listed.columns) == ["run_id", "arm", "block", "op", "reason"]
    assert listed["run_id"].tolist() == ["failed", "killed", "short", "idle", "ramp", "empty"]


def test_ops_asked_for_and_a_run_without_them() -> None:
    run = shaped_run(steady_counts(), run_id="w", labels={"arm": "a", "block": "1"}, op="write")
    assert run_figures([run], ops=["write"])["op"].tolist() == ["write"]
    frame = run_figures([run], ops=["read"])
    assert frame["op"].isna().all() and frame["reason"].tolist() == ["no intervals for read"]


def test_runs_without_arm_or_block_labels_and_a_bad_block() -> None:
    frame = run_figures([shaped_run(steady_counts(), run_id="plain")])
    assert frame["arm"].isna().all() and frame["block"].isna().all() and frame["status"].tolist() == ["ok"]
    with pytest.raises(AnalysisError, match=r"label block='first': expected a block number \(1, 2, \.\.\.\)"):
        run_figures([shaped_run(steady_counts(), labels={"arm": "a", "block": "first"})])


def test_runs_without_histograms_fall_back_to_interval_columns() -> None:
    run, _ = make_run({"write": lognormal(2.0, per_interval=50)}, 20, histograms=False,
                      labels={"arm": "a", "block": "1"})
    row = run_figures([run]).iloc[0]
    assert row["histogram"] is None and not row["percentiles_merged"]
    assert math.isfinite(row["latency_p99_ms"]) and row["status"] == "ok"


def test_kept_despite_drift_keeps_only_the_runs_left_out_for_drift() -> None:
    import pandas as pd

    from cassperf.analysis.repeats import kept_despite_drift

    figs = pd.DataFrame({"status": ["excluded", "excluded", "ok"],
                         "reason": ["drift: throughput trends +40% across the steady window (p = 0.001; the bound "
                                    "is ±20% at p < 0.01)", "failed: marked failed", ""],
                         "window_note": ["steady", "steady", "steady"]})
    kept = kept_despite_drift(figs)
    assert kept["status"].tolist() == ["ok", "excluded", "ok"]
    assert kept["reason"].tolist() == ["", "failed: marked failed", ""]
    assert kept["window_note"][0] == "steady; kept despite " + figs["reason"][0]
    assert figs["status"][0] == "excluded"          # the caller's frame is left as it was
