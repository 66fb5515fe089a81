"""Comparisons: Welch on batch means for throughput and mean latency, a block bootstrap of
HDR-merged percentiles, and unstable runs never presented as a finding."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.unit.analysis_runs import lognormal, make_run, shaped_run

from cassperf.analysis import (
    AnalysisError,
    Window,
    compare_groups,
    compare_runs,
    compare_windows,
    run_window,
    stability,
)
from cassperf.analysis.compare import batch_means, lag1
from cassperf.analysis.samples import op_samples
from cassperf.analysis.steady import mser5_truncation
from cassperf.results import hdr


def counts(seed: int, mean: float, n: int = 60, sd: float = 20.0) -> list[int]:
    return np.random.default_rng(seed).normal(mean, sd, n).round().astype(int).tolist()


def whole(run_a, run_b, metric: str, op: str = "write", **kw):
    return compare_windows(run_a, run_window(run_a), run_b, run_window(run_b), op, metric, **kw)


def test_stability_is_the_coefficient_of_variation_with_a_10_percent_threshold() -> None:
    assert stability([100.0, 100.0, 100.0]) == (0.0, False)
    cv, unstable = stability([90.0, 110.0])
    assert cv == pytest.approx(np.std([90, 110], ddof=1) / 100) and unstable is True      # 14.1%
    assert stability([95.0, 105.0])[1] is False                                            # 7.1%
    assert math.isnan(stability([5.0])[0])


def test_welch_on_batch_means_finds_a_real_20_percent_throughput_shift() -> None:
    a, b = shaped_run(counts(1, 1000)), shaped_run(counts(2, 1200))
    c = whole(a, b, "rate_ops_s")
    assert c.change_pct == pytest.approx(20.0, abs=1.5)
    assert c.ci_low_pct < 20.0 < c.ci_high_pct
    assert c.significant and c.p_value is not None and c.p_value < 1e-6
    assert c.verdict == f"{c.change_pct:+.1f}% ± {(c.ci_high_pct - c.ci_low_pct) / 2:.1f}%, significant"
    assert (c.n_a, c.n_b, c.unstable_a, c.unstable_b) == (60, 60, False, False)
    assert c.method.startswith("Welch t-test on batch means")


def test_two_runs_from_one_distribution_are_not_significantly_different() -> None:
    a, b = shaped_run(counts(11, 1000)), shaped_run(counts(12, 1000))
    c = whole(a, b, "rate_ops_s")
    assert not c.significant and c.p_value > 0.05
    assert c.ci_low_pct < 0 < c.ci_high_pct
    assert c.verdict.endswith("no significant difference")


def test_welch_on_batch_means_of_mean_latency() -> None:
    rng = np.random.default_rng(5)
    base = rng.normal(1.0, 0.05, 60)
    a = shaped_run([1000] * 60, base)
    b = shaped_run([1000] * 60, rng.normal(1.0, 0.05, 60) * 1.2)
    c = whole(a, b, "latency_mean_ms")
    assert c.change_pct == pytest.approx(20.0, abs=2.0) and c.significant
    same = whole(a, shaped_run([1000] * 60, rng.normal(1.0, 0.05, 60)), "latency_mean_ms")
    assert not same.significant


def test_batches_grow_until_the_batch_means_are_not_autocorrelated() -> None:
    # an AR(1) series with strong positive correlation needs batches of more than one interval
    rng = np.random.default_rng(9)
    x = np.zeros(256)
    for i in range(1, 256):
        x[i] = 0.9 * x[i - 1] + rng.normal()
    values = 1000 + 20 * x
    assert lag1(values) > 0.8
    means, size, problem = batch_means(values, np.ones_like(values))
    assert problem == "" and size > 1 and lag1(means) <= 0.2 and len(means) >= 5
    means, size, _ = batch_means(np.random.default_rng(1).normal(size=64), np.ones(64))
    assert size == 1


def test_too_few_intervals_and_a_trend_are_never_significant() -> None:
    a, b = shaped_run([1000] * 4), shaped_run([2000] * 4)
    c = whole(a, b, "rate_ops_s")
    assert not c.significant and c.verdict == "+100.0%: A: too few intervals (4 < 5); B: too few intervals (4 < 5)"
    trend_a, trend_b = shaped_run(list(range(1000, 1040))), shaped_run(list(range(1500, 1540)))
    t = whole(trend_a, trend_b, "rate_ops_s")
    assert not t.significant and "too autocorrelated" in t.verdict


def test_bootstrap_ci_of_p99_contains_the_true_change() -> None:
    # B's latencies are A's distribution scaled by 1.3: the true p99 change is +30%
    run_a, _ = make_run({"write": lognormal(2.0, 0.6, 300)}, 40, seed=21)
    run_b, _ = make_run({"write": lognormal(2.6, 0.6, 300)}, 40, seed=22)
    c = whole(run_a, run_b, "latency_p99_ms")
    assert c.ci_low_pct < 30.0 < c.ci_high_pct and c.ci_low_pct > 0
    assert c.significant and c.p_value is None
    assert c.method == "circular block bootstrap of HDR-merged p99, B=1000"
    assert c.verdict == f"{c.change_pct:+.1f}% [{c.ci_low_pct:+.1f}%, {c.ci_high_pct:+.1f}%], significant"
    again = whole(run_a, run_b, "latency_p99_ms")
    assert (again.ci_low_pct, again.ci_high_pct) == (c.ci_low_pct, c.ci_high_pct)       # seeded
    other_seed = whole(run_a, run_b, "latency_p99_ms", seed=7)
    assert other_seed.ci_low_pct != c.ci_low_pct
    same, _ = make_run({"write": lognormal(2.0, 0.6, 300)}, 40, seed=23)
    n = whole(run_a, same, "latency_p99_ms")
    assert n.ci_low_pct < 0 < n.ci_high_pct and not n.significant


def test_bootstrap_replicates_re_merge_the_histograms_exactly() -> None:
    # the vectorised percentile of a weighted row sum equals cassperf.results.hdr on the same counts
    run, _ = make_run({"write": lognormal(2.0, 0.8, 50)}, 12, seed=4)
    s = op_samples(run, "write")
    assert s.hist is not None
    rng = np.random.default_rng(0)
    weights = rng.integers(0, 3, size=(20, s.n))
    merged = weights @ s.hist.matrix
    for p in (50.0, 95.0, 99.0, 99.9):
        got = s.hist.percentile_ms(merged, p, "ns")
        for row, value in zip(merged, got, strict=True):
            assert value == s.hist.stats_ms(row, "ns")[
                {50.0: "latency_p50_ms", 95.0: "latency_p95_ms", 99.0: "latency_p99_ms",
                 99.9: "latency_p999_ms"}[p]]
    dense_full = hdr.decode_counts(run.histograms["encoded"].iloc[0]).counts
    assert s.hist.stats_ms(s.hist.matrix[0], "ns") == hdr.stats_ms(s.hist.layout, dense_full, "ns")


def test_an_unstable_run_is_flagged_and_never_significant() -> None:
    a = shaped_run([700, 1300] * 30)                          # throughput CV 30%
    b = shaped_run([2000] * 60)
    c = whole(a, b, "rate_ops_s")
    assert c.unstable_a and not c.unstable_b and c.cv_a == pytest.approx(0.3, abs=0.01)
    assert not c.significant
    assert c.verdict.endswith("not a finding: unstable A (throughput CV 30.3% >= 10%)")
    p99 = whole(a, b, "latency_p99_ms")
    assert p99.unstable_a and not p99.significant and "unstable A" in p99.verdict


def test_percentiles_of_runs_without_histograms_get_no_interval() -> None:
    a, _ = make_run({"write": lognormal(1.0)}, 10, histograms=False)
    b, _ = make_run({"write": lognormal(2.0)}, 10, seed=3)
    c = whole(a, b, "latency_p99_ms")
    assert not c.significant and math.isnan(c.ci_low_pct)
    assert "no HDR histograms (A): no confidence interval for a percentile" in c.verdict


def test_compare_runs_uses_each_runs_steady_window() -> None:
    warm_a = [200, 400, 600, 800, 900] + counts(31, 1000, 55)
    warm_b = [200, 400, 600, 800, 900] + counts(32, 1000, 55)
    a, b = shaped_run(warm_a), shaped_run(warm_b)
    steady = compare_runs(a, b, "write", "rate_ops_s")
    # the last interval (cool-down) and MSER-5's warm-up (at least the 5-interval ramp) are dropped
    drop_a, drop_b = mser5_truncation(np.array(warm_a[:59])), mser5_truncation(np.array(warm_b[:59]))
    assert drop_a >= 5 and drop_b >= 5
    assert (steady.n_a, steady.n_b) == (59 - drop_a, 59 - drop_b) and not steady.significant
    assert compare_runs(a, b, "write", "rate_ops_s", steady=False).n_a == 60


def test_two_windows_of_one_run() -> None:
    run = shaped_run([1000] * 60, [1.0] * 30 + [1.5] * 30)
    c = compare_windows(run, Window(0, 30), run, Window(30, 60), "write", "latency_p95_ms", reps=200)
    assert c.change_pct == pytest.approx(50.0, abs=0.2) and c.significant


def test_group_comparison_over_repeated_runs() -> None:
    group_a = [shaped_run(counts(s, 1000)) for s in (1, 2, 3)]
    group_b = [shaped_run(counts(s, 1100)) for s in (4, 5, 6)]
    c = compare_groups(group_a, group_b, "write", "rate_ops_s")
    assert c.n_a == c.n_b == 3 and c.change_pct == pytest.approx(10.0, abs=1.0)
    assert c.significant and c.method == "Welch t-test over runs (one figure per run)"
    one = compare_groups(group_a[:1], group_b, "write", "rate_ops_s")
    assert not one.significant and "too few runs (1 < 2 a side)" in one.verdict


def test_an_unknown_metric_is_one_clear_error() -> None:
    run = shaped_run([1000] * 10)
    with pytest.raises(AnalysisError, match="metric must be one of .*got 'latency_p42_ms'"):
        whole(run, run, "latency_p42_ms")


def test_bucket_values_follow_the_hdr_package() -> None:
    from hdrh.histogram import HdrHistogram
    run, _ = make_run({"write": lognormal(3.0, 2.0, 400)}, 3, seed=8)     # buckets from us to seconds
    s = op_samples(run, "write")
    assert s.hist is not None
    tmpl = HdrHistogram(s.hist.layout.lowest, s.hist.layout.highest, s.hist.layout.significant_figures)
    high, mid = s.hist._values
    for j, idx in enumerate(s.hist.index.tolist()):
        value = tmpl.get_value_from_index(idx)
        lo, hi = tmpl.get_lowest_equivalent_value(value), tmpl.get_highest_equivalent_value(value)
        assert (high[j], mid[j]) == (hi, lo + ((hi - lo + 1) >> 1))


def test_a_runs_rate_ci_is_students_t_over_its_batch_means() -> None:
    from scipy import stats as sps

    from cassperf.analysis.compare import rate_ci

    values = counts(21, 1000)                              # 60 independent 1 s intervals: batches of one
    half, problem = rate_ci(op_samples(shaped_run(values), "write"))
    expected = sps.t.ppf(0.975, 59) * np.std(values, ddof=1) / math.sqrt(60)
    assert problem == "" and half == pytest.approx(expected, rel=1e-9)
    few, why = rate_ci(op_samples(shaped_run(values[:4]), "write"))
    assert math.isnan(few) and why == "too few intervals (4 < 5)"
    trend, why = rate_ci(op_samples(shaped_run(list(range(100, 1300, 20))), "write"))
    assert math.isnan(trend) and why.startswith("intervals too autocorrelated for a test")
