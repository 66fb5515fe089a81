"""Is B different from A? Change %, a 95% confidence interval and a verdict that respect the
autocorrelation between intervals, and never present an unstable run as a finding.

The old method: within one run per side (the spread of a run's intervals decides). Comparisons
across repeated runs, where the run-to-run noise decides, are analysis.arms.compare_arms; the
studies move to it with the executor of repeats. On simulated studies (analysis.calibration)
this method's 10% CV rule vetoes every comparison at this machine's interval noise, and without
the veto two identical runs differ "significantly" in 16% of studies where a 5% test allows 5%
(figures in docs/reference/statistics.md).

Stability: the coefficient of variation (sample stdev / mean) of the op's per-interval
throughput in the window; CV >= 10% marks a side unstable (pyperf's and asv's rule of thumb).
A comparison with an unstable side is never significant and its verdict says why.

Throughput (rate_ops_s) and mean latency (latency_mean_ms): Welch's t-test on batch means, as
latte does. Consecutive intervals are correlated (a compaction or a GC pause spans several), so
intervals are grouped into batches of b consecutive intervals, each batch giving one mean
(rate: its ops / its seconds; latency: its latency sum / its ops). Batch size rule: the
smallest b in 1, 2, 4, 8, ... whose batch means have a lag-1 autocorrelation <= 0.2 while at
least 5 batches remain; each side is batched on its own. Fewer than 5 intervals: "too few
intervals"; no b meeting the rule: "too autocorrelated"; neither is ever significant. The CI is
Welch's interval for the difference of the batch means (Welch-Satterthwaite degrees of freedom)
divided by A's mean of batch means, around the change of the window figures.

Percentiles (latency_p50/p95/p99/p999_ms): a circular block bootstrap over intervals (Politis
& Romano 1992). Each side's intervals are resampled in blocks of L = round(n^(1/3)) consecutive
intervals (wrapping around), the resampled intervals' HDR histograms are re-merged (each
interval decoded once; a replicate is a weighted sum of rows, vectorised) and the percentile
read from the merge; the CI is the 2.5 and 97.5 percentiles of the replicates' ratio B/A
(B = 1000 by default, seeded: the same inputs give the same interval). Significant when the CI
excludes 0%. No p-value (None). A run without histograms gets no CI for a percentile.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from cassperf.analysis.samples import OpSamples, op_samples
from cassperf.analysis.select import AnalysisError
from cassperf.analysis.steady import steady_state
from cassperf.analysis.windows import Window, run_window, stats_of
from cassperf.results.model import Run

UNSTABLE_CV = 0.10
MIN_BATCHES = 5
MAX_LAG1 = 0.2
CONFIDENCE = 0.95
WELCH_METRICS = ("rate_ops_s", "latency_mean_ms")
BOOTSTRAP_METRICS = {"latency_p50_ms": 50.0, "latency_p95_ms": 95.0, "latency_p99_ms": 99.0,
                     "latency_p999_ms": 99.9}


@dataclass(frozen=True)
class Comparison:
    """B against A for one op and metric. change_pct = (b / a - 1) x 100; ci_*_pct the 95%
    interval of that change; p_value None for bootstrap metrics; n_a/n_b intervals (runs for
    group comparisons)."""

    a: float
    b: float
    change_pct: float
    ci_low_pct: float
    ci_high_pct: float
    p_value: float | None
    significant: bool
    verdict: str
    method: str
    unstable_a: bool
    unstable_b: bool
    n_a: int
    n_b: int
    metric: str = ""
    op: str = ""
    cv_a: float = math.nan
    cv_b: float = math.nan


def stability(values: Sequence[float] | np.ndarray) -> tuple[float, bool]:
    """(cv, unstable): sample stdev / mean of the finite values, unstable when cv >= 10%.
    Fewer than 2 values or a zero mean: (nan, False)."""
    v = np.asarray(values, dtype="float64")
    v = v[np.isfinite(v)]
    if len(v) < 2 or v.mean() == 0:
        return math.nan, False
    cv = float(v.std(ddof=1) / abs(v.mean()))
    return cv, cv >= UNSTABLE_CV


def lag1(values: np.ndarray) -> float:
    """Lag-1 autocorrelation (0 for constant or too short series)."""
    x = np.asarray(values, dtype="float64") - np.mean(values)
    den = float((x * x).sum())
    return float((x[:-1] * x[1:]).sum() / den) if len(x) > 2 and den > 0 else 0.0


def batch_means(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray | None, int, str]:
    """(batch means, batch size, problem) of the ratio series num/den by the rule above;
    batch means None and the problem stated when there is no valid batching."""
    ok = np.isfinite(num) & np.isfinite(den)
    num, den = num[ok], den[ok]
    n = len(num)
    if n < MIN_BATCHES:
        return None, 0, f"too few intervals ({n} < {MIN_BATCHES})"
    b, r = 1, math.nan
    while n // b >= MIN_BATCHES:
        m = n // b
        with np.errstate(divide="ignore", invalid="ignore"):
            means = num[: m * b].reshape(m, b).sum(axis=1) / den[: m * b].reshape(m, b).sum(axis=1)
        means = means[np.isfinite(means)]
        r = lag1(means)
        if len(means) >= MIN_BATCHES and r <= MAX_LAG1:
            return means, b, ""
        b *= 2
    return None, 0, f"intervals too autocorrelated for a test (lag-1 r = {r:.2f} at the largest batching)"


def _fmt_change(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:+.1f}%"


def _verdict(change: float, low: float, high: float, significant: bool, problem: str, symmetric: bool) -> str:
    if problem:
        return f"{_fmt_change(change)}: {problem}"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{_fmt_change(change)}: no confidence interval"
    ci = f"± {(high - low) / 2:.1f}%" if symmetric else f"[{_fmt_change(low)}, {_fmt_change(high)}]"
    return f"{_fmt_change(change)} {ci}, {'significant' if significant else 'no significant difference'}"


def _instability(cv_a: float, un_a: bool, cv_b: float, un_b: bool) -> str:
    bad = [f"{side} (throughput CV {cv:.1%} >= {UNSTABLE_CV:.0%})" for side, cv, un in
           (("A", cv_a, un_a), ("B", cv_b, un_b)) if un]
    return f"not a finding: unstable {' and '.join(bad)}" if bad else ""


def welch(va: np.ndarray, vb: np.ndarray) -> tuple[float, float]:
    """(p-value, CI half width of mean(vb) - mean(va)) by Welch's t-test (2+ values a side)."""
    sa, sb = va.var(ddof=1) / len(va), vb.var(ddof=1) / len(vb)
    se = math.sqrt(sa + sb)
    diff = float(vb.mean() - va.mean())
    if se == 0:
        return (1.0 if diff == 0 else 0.0), 0.0
    df = (sa + sb) ** 2 / (sa ** 2 / (len(va) - 1) + sb ** 2 / (len(vb) - 1))
    return float(2 * sps.t.sf(abs(diff) / se, df)), float(sps.t.ppf(0.5 + CONFIDENCE / 2, df) * se)


def rate_ci(samples: OpSamples) -> tuple[float, str]:
    """(95% CI half width in ops/s, problem) of one op's mean throughput over its intervals,
    from batch means (the batching rule above) and Student's t; NaN with the problem stated
    when the intervals allow no batching (too few, or too autocorrelated)."""
    means, _, problem = batch_means(samples.count, samples.end_s - samples.start_s)
    if means is None:
        return math.nan, problem
    m = len(means)
    return float(sps.t.ppf(0.5 + CONFIDENCE / 2, m - 1) * means.std(ddof=1) / math.sqrt(m)), ""


def _welch_batches(num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray) \
        -> tuple[float, float | None, str, str]:
    """(CI half width in % of A, p, problem, method) of Welch's test on batch means."""
    ma, ba, pa = batch_means(num_a, den_a)
    mb, bb, pb = batch_means(num_b, den_b)
    if ma is None or mb is None:
        problem = "; ".join(f"{side}: {p}" for side, p in (("A", pa), ("B", pb)) if p)
        return math.nan, None, problem, "Welch t-test on batch means"
    p, half = welch(ma, mb)
    method = f"Welch t-test on batch means (A: {len(ma)} x {ba}, B: {len(mb)} x {bb} intervals)"
    return half / float(ma.mean()) * 100, p, "", method


def block_bootstrap(samples: OpSamples, percentile: float, reps: int, rng: np.random.Generator,
                    chunk: int = 250) -> np.ndarray:
    """`reps` circular-block-bootstrap replicates of the HDR-merged percentile (ms)."""
    hist = samples.hist
    assert hist is not None
    n = hist.matrix.shape[0]
    length = max(1, round(n ** (1 / 3)))
    blocks = -(-n // length)
    matrix = hist.matrix.astype(np.float64)
    out = np.empty(reps)
    for lo in range(0, reps, chunk):
        k = min(chunk, reps - lo)
        starts = rng.integers(0, n, size=(k, blocks))
        picks = ((starts[:, :, None] + np.arange(length)) % n).reshape(k, -1)[:, :n]
        weights = np.zeros((k, n))
        np.add.at(weights, (np.repeat(np.arange(k), n), picks.ravel()), 1.0)
        out[lo:lo + k] = hist.percentile_ms(weights @ matrix, percentile, samples.unit)
    return out


def compare_samples(sa: OpSamples, sb: OpSamples, metric: str, reps: int = 1000, seed: int = 0) -> Comparison:
    """Old method (within-run). Compare two sets of samples (see compare_windows)."""
    if metric not in WELCH_METRICS and metric not in BOOTSTRAP_METRICS:
        raise AnalysisError(f"compare: metric must be one of {[*WELCH_METRICS, *BOOTSTRAP_METRICS]}, got {metric!r}")
    a, b = float(stats_of(sa)[metric]), float(stats_of(sb)[metric])
    change = (b / a - 1) * 100 if a else math.nan
    cv_a, un_a = stability(sa.rate_ops_s)
    cv_b, un_b = stability(sb.rate_ops_s)
    unstable = _instability(cv_a, un_a, cv_b, un_b)
    low = high = math.nan
    p: float | None = None
    if metric in WELCH_METRICS:
        if metric == "rate_ops_s":
            args = (sa.count, sa.end_s - sa.start_s, sb.count, sb.end_s - sb.start_s)
        else:
            args = (sa.mean_ms * sa.count, sa.count, sb.mean_ms * sb.count, sb.count)
        half_pct, p, problem, method = _welch_batches(*args)
        low, high = change - half_pct, change + half_pct
        symmetric = True
        significant = not problem and p is not None and p < 1 - CONFIDENCE
    else:
        symmetric = False
        method = f"circular block bootstrap of HDR-merged p{BOOTSTRAP_METRICS[metric]:g}, B={reps}"
        if sa.hist is None or sb.hist is None:
            problem = f"no HDR histograms ({'A' if sa.hist is None else 'B'}): no confidence interval for a percentile"
        elif min(sa.n, sb.n) < MIN_BATCHES:
            problem = f"too few intervals ({min(sa.n, sb.n)} < {MIN_BATCHES})"
        else:
            problem = ""
            rng = np.random.default_rng(seed)
            pct = BOOTSTRAP_METRICS[metric]
            ra, rb = block_bootstrap(sa, pct, reps, rng), block_bootstrap(sb, pct, reps, rng)
            ratio = (rb / ra - 1) * 100
            low, high = (float(x) for x in np.nanpercentile(ratio, [50 * (1 - CONFIDENCE), 50 * (1 + CONFIDENCE)]))
        significant = not problem and (low > 0 or high < 0)
    if unstable:
        problem = f"{problem}; {unstable}" if problem else unstable
        significant = False
    return Comparison(a, b, change, low, high, p, bool(significant),
                      _verdict(change, low, high, bool(significant), problem, symmetric),
                      method, un_a, un_b, sa.n, sb.n, metric, sa.op, cv_a, cv_b)


def compare_windows(run_a: Run, win_a: Window, run_b: Run, win_b: Window, op: str, metric: str,
                    reps: int = 1000, seed: int = 0, latency_type: str | None = None) -> Comparison:
    """Old method (within-run; across repeats: analysis.arms.compare_arms).
    B (run_b in win_b) against A (run_a in win_a) for `op` and `metric` (rate_ops_s,
    latency_mean_ms, latency_p50/p95/p99/p999_ms); the same run twice compares two windows."""
    sa = op_samples(run_a, op, win_a.start_s, win_a.end_s, latency_type)
    sb = op_samples(run_b, op, win_b.start_s, win_b.end_s, latency_type)
    return compare_samples(sa, sb, metric, reps, seed)


def compare_runs(run_a: Run, run_b: Run, op: str, metric: str, steady: bool = True, rule: str = "mser5",
                 reps: int = 1000, seed: int = 0) -> Comparison:
    """Old method (within-run; across repeats: analysis.arms.compare_arms).
    compare_windows over each run's steady-state window (steady=True) or whole run."""
    wa = steady_state(run_a, rule).window if steady else run_window(run_a)
    wb = steady_state(run_b, rule).window if steady else run_window(run_b)
    return compare_windows(run_a, wa, run_b, wb, op, metric, reps, seed)


def compare_groups(runs_a: Sequence[Run], runs_b: Sequence[Run], op: str, metric: str,
                   steady: bool = True, rule: str = "mser5") -> Comparison:
    """Old method (its CV veto; across repeats with blocks, MDE and paired tests:
    analysis.arms.compare_arms). Several runs per side: each run gives one figure (over its steady window),
    Welch's t-test over those figures (any metric: each run's percentile is HDR-merged, the runs
    are independent). Needs 2 runs a side; a side with an unstable run is flagged."""
    def figures(runs: Sequence[Run]) -> tuple[np.ndarray, list[float]]:
        values, cvs = [], []
        for run in runs:
            win = steady_state(run, rule).window if steady else run_window(run)
            s = op_samples(run, op, win.start_s, win.end_s)
            values.append(float(stats_of(s)[metric]))
            cvs.append(stability(s.rate_ops_s)[0])
        return np.asarray(values), cvs
    if metric not in WELCH_METRICS and metric not in BOOTSTRAP_METRICS:
        raise AnalysisError(f"compare: metric must be one of {[*WELCH_METRICS, *BOOTSTRAP_METRICS]}, got {metric!r}")
    va, cvs_a = figures(runs_a)
    vb, cvs_b = figures(runs_b)
    a, b = float(np.mean(va)), float(np.mean(vb))
    change = (b / a - 1) * 100 if a else math.nan
    cv_a, cv_b = _worst(cvs_a), _worst(cvs_b)
    un_a, un_b = bool(cv_a >= UNSTABLE_CV), bool(cv_b >= UNSTABLE_CV)
    half_pct, p, problem = math.nan, None, ""
    if min(len(va), len(vb)) < 2:
        problem = f"too few runs ({min(len(va), len(vb))} < 2 a side)"
    else:
        p, half = welch(va, vb)
        half_pct = half / a * 100 if a else math.nan
    significant = not problem and p is not None and p < 1 - CONFIDENCE
    unstable = _instability(cv_a, un_a, cv_b, un_b)
    if unstable:
        problem, significant = (f"{problem}; {unstable}" if problem else unstable), False
    low, high = change - half_pct, change + half_pct
    return Comparison(a, b, change, low, high, p, bool(significant),
                      _verdict(change, low, high, bool(significant), problem, True),
                      "Welch t-test over runs (one figure per run)", un_a, un_b, len(va), len(vb),
                      metric, op, cv_a, cv_b)


def _worst(cvs: list[float]) -> float:
    finite = [c for c in cvs if math.isfinite(c)]
    return max(finite) if finite else math.nan
