"""The study charts show a throughput figure with its uncertainty: error bars from the frame's
95% CI and "unstable" on a run whose intervals were, with a caption saying what both mean."""

from __future__ import annotations

import math

import pandas as pd

from cassperf.plots.studies import UNCERTAINTY_NOTE, bars, lines


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"rf": ["1", "2", "3"], "threads": [16, 64, 256], "rate_ops_s": [1500.0, 900.4, 880.0],
                         "rate_ci_ops_s": [30.0, math.nan, 12.5], "unstable": [False, True, False]})


def test_throughput_bars_carry_the_ci_and_mark_unstable_runs():
    fig = bars(_frame(), "rf", "rate_ops_s", "Write ops/s by RF", "ops/s")
    bar = fig.data[0]
    assert list(bar.error_y.array) == [30.0, 0.0, 12.5]          # no CI: no bar, never a made-up one
    assert list(bar.text) == ["1,500", "900 unstable", "880"]
    assert [a.text for a in fig.layout.annotations] == [UNCERTAINTY_NOTE]


def test_throughput_lines_carry_the_ci_too_and_other_figures_do_not():
    fig = lines(_frame().assign(rf="1"), "threads", "rate_ops_s", "rf", "Write ops/s vs threads", "ops/s")
    assert list(fig.data[0].error_y.array) == [30.0, 0.0, 12.5]
    assert list(fig.data[0].hovertext) == ["1,500", "900 unstable", "880"]
    plain = bars(pd.DataFrame({"x": ["a"], "p": [3.0]}), "x", "p", "t", "ms")
    assert plain.data[0].error_y.array is None and not plain.layout.annotations


def test_lines_draw_one_percentile_per_chart_named_by_value_under_a_legend_title():
    frame = _frame().assign(configuration=["disk 64 KiB", "disk 64 KiB", "loop 64 KiB"], latency_p50_ms=1.0)
    ops = lines(frame, "threads", "rate_ops_s", "configuration", "Full cache: ops/s", "ops/s",
                legend_title="configuration")
    p50 = lines(frame, "threads", "latency_p50_ms", "configuration", "Full cache: latency p50", "ms",
                legend_title="configuration")
    assert [t.name for t in ops.data] == ["disk 64 KiB", "loop 64 KiB"] and ops.layout.legend.title.text == \
        "configuration"
    assert list(ops.data[0].error_y.array) == [30.0, 0.0]
    assert [a.text for a in ops.layout.annotations] == [UNCERTAINTY_NOTE]
    assert p50.data[0].error_y.array is None and not p50.layout.annotations
    assert [t.name for t in lines(frame, "threads", "rate_ops_s", "rf", "t", "ops/s").data] == ["rf 1", "rf 2", "rf 3"]
