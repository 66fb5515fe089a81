"""Steady state: MSER-5 drops a warm-up ramp where it ends, the last interval is the cool-down."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cassperf.analysis import AnalysisError, Window, steady_state
from cassperf.analysis.steady import mser5_truncation, throughput_series
from cassperf.results.model import Run


def intervals(rates: list[float] | np.ndarray, ops: tuple[str, ...] = ("write",)) -> pd.DataFrame:
    """Engine-shaped interval rows, 1 s each; every op gets rate / len(ops)."""
    return pd.DataFrame([{"time_s": i + 1.0, "start_s": float(i), "op": op, "rate_ops_s": r / len(ops),
                          "count": int(r / len(ops))} for i, r in enumerate(rates) for op in ops])


def ramp_then_flat(ramp: int = 20, flat: int = 80, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    warm = np.linspace(200.0, 1000.0, ramp, endpoint=False)
    return np.concatenate([warm, 1000.0 + rng.normal(0, 10, flat)])


def test_mser5_drops_a_warm_up_ramp_up_to_where_it_ends() -> None:
    s = steady_state(intervals(ramp_then_flat(20, 80)))
    assert s.window == Window(20.0, 99.0, "steady")
    assert (s.dropped_head_s, s.dropped_tail_s, s.rule) == (20.0, 1.0, "mser5")
    assert s.note == "MSER-5 on rate_ops_s over 99 intervals: dropped the first 20 and the last 1 (cool-down)"


@pytest.mark.parametrize("ramp", [10, 15, 30])
def test_mser5_truncation_is_the_ramp_rounded_to_batches(ramp: int) -> None:
    assert mser5_truncation(ramp_then_flat(ramp, 90)) == 5 * -(-ramp // 5)


def test_a_flat_run_keeps_everything_but_the_last_interval() -> None:
    s = steady_state(intervals([500.0] * 40))
    assert (s.window.start_s, s.window.end_s, s.dropped_head_s, s.dropped_tail_s) == (0.0, 39.0, 0.0, 1.0)


def test_mser5_never_drops_more_than_half() -> None:
    # throughput falling all along: the statistic would like to drop everything
    assert mser5_truncation(np.linspace(1000.0, 100.0, 100)) == 50


def test_too_few_intervals_drop_no_warm_up_and_say_so() -> None:
    s = steady_state(intervals([100.0, 500.0, 900.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0]))
    assert (s.window.start_s, s.window.end_s) == (0.0, 7.0)
    assert s.note.startswith("too few intervals for MSER-5 (7 after the cool-down trim, 10 needed)")


def test_the_ops_throughput_is_summed_and_total_rows_ignored() -> None:
    rows = intervals(ramp_then_flat(20, 60), ops=("read", "write"))
    total = rows.groupby("time_s", as_index=False).agg(start_s=("start_s", "min"), rate_ops_s=("rate_ops_s", "sum"))
    rows = pd.concat([rows, total.assign(op="total", rate_ops_s=total["rate_ops_s"] * 0 + 5.0)], ignore_index=True)
    series = throughput_series(rows)
    assert len(series) == 80 and series["rate_ops_s"].iloc[-1] == pytest.approx(ramp_then_flat(20, 60)[-1])
    run = Run({"run_id": "mixed"}, intervals=rows)
    assert steady_state(run).window == Window(20.0, 79.0, "steady")


def test_a_fixed_trim_drops_the_seconds_asked() -> None:
    s = steady_state(intervals([1000.0] * 60), rule="trim", head_s=10, tail_s=5)
    assert s.window == Window(10.0, 55.0, "steady")
    assert (s.dropped_head_s, s.dropped_tail_s, s.note) == (10.0, 5.0, "fixed trim: 10 s head, 5 s tail")


def test_bad_rules_and_empty_runs_are_one_clear_error() -> None:
    with pytest.raises(AnalysisError, match="rule must be 'mser5' or 'trim', got 'median'"):
        steady_state(intervals([1.0] * 20), rule="median")
    with pytest.raises(AnalysisError, match="run empty: no intervals, so no steady state"):
        steady_state(Run({"run_id": "empty"}))
    with pytest.raises(AnalysisError, match="trimming 30 s and 30 s leaves no interval of its 20.0 s"):
        steady_state(intervals([1.0] * 20), rule="trim", head_s=30, tail_s=30)


def test_mser5_on_latency_under_a_fixed_rate() -> None:
    # fixed rate: throughput flat, latency high while the JIT and caches warm up
    rates = [1000.0] * 60
    rows = intervals(rates)
    rows["latency_mean_ms"] = [20.0 - i for i in range(15)] + [5.0 + 0.01 * (i % 3) for i in range(45)]
    assert steady_state(rows).dropped_head_s == 0.0
    assert steady_state(rows, column="latency_mean_ms").dropped_head_s == 15.0
