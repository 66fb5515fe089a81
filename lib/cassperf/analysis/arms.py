"""Is arm B different from arm A? Comparisons across runs, where the run-to-run noise decides.

    compare_arms(figures, arm_a, arm_b, op, metric="rate_ops_s") -> ArmComparison
        figures: repeats.run_figures(runs); metric: rate_ops_s, row_rate_s, latency_mean_ms,
        latency_p50_ms, latency_p95_ms, latency_p99_ms, latency_p999_ms
    ArmComparison.text            "+63.0% [+38.2%, +92.3%], p = 0.004, 3 blocks paired; MDE ±31%"
    ArmComparison.ci_pct(0.90)    the interval at another confidence (TOST uses 90%)

The method, fixed before any data (tests/unit/test_analysis_calibration.py proves it on
simulated studies):

1. Each run counts once, with its figure over its steady window (repeats.run_figures). Runs with
   status "excluded" leave, listed in `left_out` with their reason.
2. Paired per block when at least 2 blocks hold one counted run of each arm (the executor's
   layout: each block runs every arm once, in a seeded random order). The comparison then uses
   those blocks; a counted run with no partner in its block leaves it ("no partner in block k").
   Otherwise unpaired. Why paired: a block's runs share the machine's state at that time (other
   load, data grown, caches), and the paired test is exact whatever that shared part is. Welch's
   test ignoring the blocks is conservative (normal run figures, no block effect: an A/A
   comparison significant in 2.4% of studies at 2 runs a side, 3.6% at 3) and more so as block
   effects grow, and its power falls with them. On simulated studies at 3 repeats
   (analysis.calibration; 1,000 studies each) the median stated MDE of throughput is, paired
   against Welch: 106% / 72% with a block sd of 5%, 111% / 90% at 10%, 107% / 147% at 20%,
   A/A rates 3-4% paired against 0.5-1.7% Welch; at 5 repeats 37% / 34%. Welch would win only
   where the blocks barely differ, which a machine shared with other work does not promise.
3. Throughput, row rate, mean latency: Student's t on the log of the run figures: per-block log
   ratios (df = pairs - 1), or Welch's test (Welch-Satterthwaite df). The change is the ratio of
   the geometric means: exp(mean log difference) - 1, its 95% CI exp(± t x se) around it, so a
   ratio CI never crosses -100% and holds its coverage at large changes (a CI of the difference
   divided by A's mean ignores A's own uncertainty: on the simulated studies it holds a true
   change of about +100% in 94% of them, the log-scale CI in 95-96%; about 90% at 4x).
4. Percentiles: an arm's figure is the percentile of the HDR merge of its counted runs' window
   histograms (never an average of percentiles). The standard error of the log ratio comes from
   a bootstrap over runs (paired: over blocks) of those merges, every resample enumerated up to 7
   runs (else 2,000 seeded draws), its variance scaled by n / (n - 1); the interval and p-value
   from Student's t with df pairs - 1 (or Welch-Satterthwaite from the two arms' variances). A
   plain percentile bootstrap interval is not used: it finds a difference in 29% of simulated
   A/A studies at 2 runs a side, 15% at 3, 9% at 5; this one in 3-4% (p99, slightly careful).
   Runs without histograms: the t-test of 3. on their per-run percentiles, and the method says so.
5. Pooled over the arms of a randomized complete block design (RCBD): where the figures carry a
   `pool` column (the executor labels every run with its arm's pool) and A and B share a pool of
   three or more arms, the run-to-run variance is the residual of the additive model
   log figure = arm + block + error over every arm of the pool in the blocks A and B share (arms
   of the pool missing from one of those blocks leave the pool), with (k - 1)(n - 1) degrees of
   freedom for k arms in n blocks (Fisher's RCBD analysis of variance). The change is still
   the paired estimate of A and B; only its standard error, sqrt(2 s^2 / n), borrows the other
   arms' run-to-run spread. Why: at 3 blocks a pair alone has 2 df, t(0.975, 2) = 4.30 and an MDE
   factor of 8.7 standard errors; 10 arms in the same 3 blocks give 18 df, 2.10 and 3.1.
   The price is an assumption: the arms of a pool vary alike from run to run on the log scale
   (the same op, load and cluster), so a study pools only such arms; an arm whose spread may be
   its own is left out (pool ""; 03's garbagecollect arm). Runs from an emptied cache (05's runs
   a and b, 01's cold reads) pool with the warm reads at their load: measured in their own pools,
   their RCBD residual spread (log, per arm) matched the warm arms' (docs/measurements.md). A cold
   arm's spread 1.4 times the pool's in variance would narrow its CI by about 6%. For percentiles
   the residuals are those of each run's own percentile (log), the estimate still the merged
   histograms'. On simulated studies of 8 arms
   in 3 blocks (analysis.calibration.method_rates_pooled; 2,000 studies) the A/A rate and the power
   at the stated MDE hold (tests/unit/test_analysis_calibration.py).
6. The minimum detectable effect: power.mde_pct(se, df), calibrated so that the power at the
   stated MDE is 80% (two-sided, 5% level).
Significant when p < 0.05. Fewer than 2 counted runs of an arm (or pairs and runs): no test,
`problem` says why.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special as spf

from cassperf.analysis.format import fmt_p, fmt_pct
from cassperf.analysis.power import mde_pct
from cassperf.analysis.repeats import ARM, BLOCK, OK, WindowHistogram
from cassperf.analysis.samples import HistCounts, stack
from cassperf.analysis.select import AnalysisError

ALPHA = 0.05
POOL = "pool"
T_METRICS = ("rate_ops_s", "row_rate_s", "latency_mean_ms")
PERCENTILES = {"latency_p50_ms": 50.0, "latency_p95_ms": 95.0, "latency_p99_ms": 99.0, "latency_p999_ms": 99.9}
EXACT_UP_TO = 7
DRAWS = 2000


@dataclass(frozen=True)
class ArmComparison:
    """B against A for one op and metric, across runs. a, b: the arms' figures (geometric mean
    of the run figures; for percentiles the percentile of the merged histograms), in the
    metric's unit; change_pct = (b / a - 1) x 100 with its 95% CI; p_value None without a test;
    n_a, n_b: runs counted a side (pairs when paired); mde_pct: the minimum detectable effect
    (80% power, 5% level); log_change, se_log, df: the log-scale estimate behind them;
    left_out: "run_id: reason" of every run of either arm that did not count."""

    op: str
    metric: str
    arm_a: str
    arm_b: str
    a: float
    b: float
    change_pct: float
    ci_low_pct: float
    ci_high_pct: float
    p_value: float | None
    significant: bool
    n_a: int
    n_b: int
    paired: bool
    mde_pct: float
    log_change: float
    se_log: float
    df: float
    method: str
    left_out: tuple[str, ...] = field(default=())
    problem: str = ""
    pooled_arms: int = 0            # > 0: the spread was pooled over this many arms (RCBD)

    def ci_pct(self, confidence: float = 0.95) -> tuple[float, float]:
        """The (low, high) % interval of the change at another confidence (NaN without a test)."""
        if not (math.isfinite(self.se_log) and math.isfinite(self.df)):
            return math.nan, math.nan
        half = float(spf.stdtrit(self.df, 0.5 + confidence / 2)) * self.se_log
        return 100 * math.expm1(self.log_change - half), 100 * math.expm1(self.log_change + half)

    @property
    def text(self) -> str:
        """One line: change, CI, p, n and MDE (or the problem)."""
        if self.problem:
            return f"{fmt_pct(self.change_pct)}: {self.problem}"
        runs = f"{self.n_a} blocks paired" if self.paired else f"{self.n_a} and {self.n_b} runs"
        if self.pooled_arms:
            runs += f", spread of {self.pooled_arms} arms ({self.df:.0f} df)"
        ci = f"[{fmt_pct(self.ci_low_pct)}, {fmt_pct(self.ci_high_pct)}]"
        return f"{fmt_pct(self.change_pct)} {ci}, {fmt_p(self.p_value)}, {runs}; MDE ±{self.mde_pct:.0f}%"


def _of_arm(figures: pd.DataFrame, arm: str, op: str) -> np.ndarray:
    """Row positions of the arm's runs of the op (and of its runs with no op at all)."""
    arms = figures[ARM].to_numpy(dtype=object, na_value=None)
    ops = figures["op"].to_numpy(dtype=object, na_value=None)
    return np.flatnonzero((arms == arm) & ((ops == op) | pd.isna(ops)))


def _select(figures: pd.DataFrame, arm_a: str, arm_b: str, op: str) -> tuple[np.ndarray, np.ndarray, list[str], bool]:
    """(counted row positions of A, of B, left out, paired), A and B in matched block order when
    paired."""
    status = figures["status"].to_numpy(dtype=object, na_value=None)
    run_id = figures["run_id"].to_numpy(dtype=object, na_value=None)
    reason = figures["reason"].to_numpy(dtype=object, na_value=None)
    block = figures[BLOCK].to_numpy(dtype="float64", na_value=np.nan)
    left: list[str] = []
    counted = []
    for arm in (arm_a, arm_b):
        rows = _of_arm(figures, arm, op)
        ok = status[rows] == OK
        left += [f"{run_id[i]}: {reason[i]}" for i in rows[~ok]]
        counted.append(rows[ok])
    once = []
    for rows in counted:
        values, n = np.unique(block[rows][np.isfinite(block[rows])], return_counts=True)
        once.append(set(values[n == 1].tolist()))
    shared = sorted(once[0] & once[1])
    if len(shared) < 2:
        return counted[0], counted[1], left, False
    pairs = []
    for rows in counted:
        inside = np.isin(block[rows], shared)
        left += [f"{run_id[i]}: no partner in block {int(block[i]) if np.isfinite(block[i]) else '(none)'}"
                 for i in rows[~inside]]
        pairs.append(rows[inside][np.argsort(block[rows][inside], kind="stable")])
    return pairs[0], pairs[1], left, True


def _t(la: np.ndarray, lb: np.ndarray, paired: bool) -> tuple[float, float, float]:
    """(estimate, se, df) of mean(lb) - mean(la): paired differences or Welch."""
    if paired:
        d = lb - la
        return float(d.mean()), float(d.std(ddof=1) / math.sqrt(len(d))), float(len(d) - 1)
    va, vb = la.var(ddof=1) / len(la), lb.var(ddof=1) / len(lb)
    return float(lb.mean() - la.mean()), math.sqrt(va + vb), _satterthwaite(va, len(la), vb, len(lb))


def _satterthwaite(va: float, na: int, vb: float, nb: int) -> float:
    den = va ** 2 / (na - 1) + vb ** 2 / (nb - 1)
    return float((va + vb) ** 2 / den) if den > 0 else float(na + nb - 2)


@functools.lru_cache(maxsize=64)
def resamples(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(weights (R, n), probabilities (R,)) of the bootstrap resamples of n items: every multiset
    with its multinomial probability up to EXACT_UP_TO items, else DRAWS seeded draws."""
    if n <= EXACT_UP_TO:
        combos = np.array(list(itertools.combinations_with_replacement(range(n), n)))
        weights = np.stack([np.bincount(c, minlength=n) for c in combos]).astype(np.float64)
        logp = math.lgamma(n + 1) - spf.gammaln(weights + 1).sum(axis=1) - n * math.log(n)
        probs = np.exp(logp)
    else:
        weights = np.random.default_rng(seed).multinomial(n, np.full(n, 1 / n), size=DRAWS).astype(np.float64)
        probs = np.full(DRAWS, 1 / DRAWS)
    weights.setflags(write=False)
    probs.setflags(write=False)
    return weights, probs


def _var(x: np.ndarray, p: np.ndarray) -> float:
    m = float(np.dot(p, x))
    return float(np.dot(p, (x - m) ** 2))


def _hists(figures: pd.DataFrame, rows: np.ndarray) -> list[WindowHistogram] | None:
    if "histogram" not in figures.columns:
        return None
    hists = figures["histogram"].to_numpy()[rows].tolist()
    return hists if all(isinstance(h, WindowHistogram) for h in hists) else None


def _percentile(ha: list[WindowHistogram], hb: list[WindowHistogram], q: float, paired: bool, where: str) \
        -> tuple[float, float, float, float, float]:
    """(a, b, estimate, se, df) of the log ratio of merged percentiles, bootstrap over runs."""
    units = {h.unit for h in (*ha, *hb)}
    if len(units) > 1:
        raise AnalysisError(f"{where}: histograms recorded in different units {sorted(units)} cannot be merged")
    unit = units.pop()
    both = stack([h.counts for h in (*ha, *hb)], where)
    ma = HistCounts(both.layout, both.index, both.matrix[: len(ha)])
    mb = HistCounts(both.layout, both.index, both.matrix[len(ha):])

    def read(m: HistCounts, w: np.ndarray) -> np.ndarray:
        return np.log(m.percentile_ms(w @ m.matrix.astype(np.float64), q, unit))

    a = float(ma.percentile_ms(ma.matrix.sum(axis=0, keepdims=True), q, unit)[0])
    b = float(mb.percentile_ms(mb.matrix.sum(axis=0, keepdims=True), q, unit)[0])
    est = math.log(b / a)
    if paired:
        n = len(ha)
        w, p = resamples(n)
        v = _var(read(mb, w) - read(ma, w), p) * n / (n - 1)
        return a, b, est, math.sqrt(v), float(n - 1)
    wa, pa = resamples(len(ha))
    wb, pb = resamples(len(hb), seed=1)
    va = _var(read(ma, wa), pa) * len(ha) / (len(ha) - 1)
    vb = _var(read(mb, wb), pb) * len(hb) / (len(hb) - 1)
    return a, b, est, math.sqrt(va + vb), _satterthwaite(va, len(ha), vb, len(hb))


def _run_log_figure(figures: pd.DataFrame, rows: np.ndarray, metric: str, histograms: bool) -> np.ndarray:
    """log of each run's own figure: the metric column, or (`histograms`, for a percentile) the
    percentile of the run's window histogram."""
    if metric in PERCENTILES and histograms:
        hists = _hists(figures, rows)
        if hists is not None:
            return np.log(np.array([h.counts.percentile_ms(h.counts.matrix, PERCENTILES[metric], h.unit)[0]
                                    for h in hists], dtype="float64"))
    values = figures[metric].to_numpy(dtype="float64", na_value=np.nan)[rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(values > 0, np.log(np.where(values > 0, values, 1.0)), np.nan)


def pooled_variance(figures: pd.DataFrame, arm_a: str, arm_b: str, op: str, metric: str,
                    blocks: list[int]) -> tuple[float, float, int] | None:
    """(s^2, df, k) of the RCBD residual over the pool A and B share, in `blocks` (the blocks A and
    B are paired in); None when the frame has no pools, A and B are in no common pool, or fewer
    than 3 arms of the pool ran in every one of those blocks."""
    if POOL not in figures.columns or len(blocks) < 2:
        return None
    pools = figures[POOL].to_numpy(dtype=object, na_value=None)
    arms = figures[ARM].to_numpy(dtype=object, na_value=None)
    mine = {p for arm in (arm_a, arm_b) for p in pools[arms == arm] if p}
    if len(mine) != 1 or any(not p for arm in (arm_a, arm_b) for p in pools[arms == arm]):
        return None
    pool = mine.pop()
    status = figures["status"].to_numpy(dtype=object, na_value=None)
    block = figures[BLOCK].to_numpy(dtype="float64", na_value=np.nan)
    rows_of = []
    for arm in [arm_a, arm_b, *(a for a in dict.fromkeys(arms[pools == pool]) if a not in (arm_a, arm_b))]:
        rows = _of_arm(figures, arm, op)
        rows = rows[(status[rows] == OK) & (pools[rows] == pool)]
        values, counts = np.unique(block[rows][np.isfinite(block[rows])], return_counts=True)
        once = set(values[counts == 1].tolist())
        if not set(blocks) <= once:
            if arm in (arm_a, arm_b):
                return None
            continue
        inside = rows[np.isin(block[rows], blocks)]
        rows_of.append(inside[np.argsort(block[inside], kind="stable")])
    # one source for every arm: each run's own histogram where all have one, else the metric column
    histograms = metric in PERCENTILES and all(_hists(figures, rows) is not None for rows in rows_of)
    y = np.stack([_run_log_figure(figures, rows, metric, histograms) for rows in rows_of])    # k arms x n blocks
    finite = np.all(np.isfinite(y), axis=1)
    if not finite[:2].all():              # A and B come first: without their figures no pooling
        return None
    y = y[finite]                         # an arm of the pool without the figure leaves the pool
    if len(y) < 3:
        return None
    k, n = y.shape
    resid = y - y.mean(axis=1, keepdims=True) - y.mean(axis=0, keepdims=True) + y.mean()
    df = (k - 1) * (n - 1)
    return float((resid ** 2).sum() / df), float(df), k


def compare_arms(figures: pd.DataFrame, arm_a: str, arm_b: str, op: str, metric: str = "rate_ops_s") -> ArmComparison:
    """B against A for `op` and `metric` across their runs, as the module docstring says. A
    metric may also be any other numeric column a study added to the figures (e.g. the node
    CPU of each run): it is compared as throughput is, by Student's t on the log run figures.
    Raises AnalysisError for an unknown metric or an arm with no runs of the op."""
    if metric not in T_METRICS and metric not in PERCENTILES and metric not in figures.columns:
        raise AnalysisError(f"compare_arms: metric must be one of {[*T_METRICS, *PERCENTILES]} or a numeric column "
                            f"of the figures, got {metric!r}")
    for arm in (arm_a, arm_b):
        if not len(_of_arm(figures, arm, op)):
            have = sorted(set(figures[ARM].dropna().astype(str)))
            raise AnalysisError(f"compare_arms: no runs of arm {arm!r} with op {op!r}; the arms are {have}")
    ra, rb, left, paired = _select(figures, arm_a, arm_b, op)
    base = {"op": op, "metric": metric, "arm_a": arm_a, "arm_b": arm_b, "n_a": len(ra), "n_b": len(rb),
            "paired": paired, "left_out": tuple(left)}
    values = figures[metric].to_numpy(dtype="float64", na_value=np.nan)
    va, vb = values[ra], values[rb]
    if min(len(va), len(vb)) < 2 or not (np.all(va > 0) and np.all(vb > 0)):
        a, b = _gmean(va), _gmean(vb)
        problem = (f"too few runs counted ({len(va)} of {arm_a}, {len(vb)} of {arm_b}; 2 a side needed)"
                   if min(len(va), len(vb)) < 2 else f"a run's {metric} is not positive, so no ratio")
        return ArmComparison(a=a, b=b, change_pct=100 * (b / a - 1) if a > 0 else math.nan, ci_low_pct=math.nan,
                             ci_high_pct=math.nan, p_value=None, significant=False, mde_pct=math.nan,
                             log_change=math.nan, se_log=math.nan, df=math.nan, method="none", problem=problem,
                             **base)
    ha, hb = _hists(figures, ra), _hists(figures, rb)
    how = f"paired per block ({len(va)} blocks)" if paired else f"unpaired ({len(va)} and {len(vb)} runs)"
    blocks = [int(x) for x in figures[BLOCK].to_numpy(dtype="float64", na_value=np.nan)[ra]] if paired else []
    pooled = pooled_variance(figures, arm_a, arm_b, op, metric, blocks) if paired else None
    if metric in PERCENTILES and ha is not None and hb is not None:
        a, b, est, se, df = _percentile(ha, hb, PERCENTILES[metric], paired, f"compare_arms {arm_a} / {arm_b}")
        method = (f"p{PERCENTILES[metric]:g} of each arm's merged HDR histograms; bootstrap over "
                  f"{'blocks' if paired else 'runs'} for the standard error, Student's t; {how}")
        if pooled is not None:
            method = (f"p{PERCENTILES[metric]:g} of each arm's merged HDR histograms; standard error from the "
                      f"run-to-run spread of the runs' own p{PERCENTILES[metric]:g} pooled over {pooled[2]} arms "
                      f"in {len(blocks)} blocks (RCBD, {pooled[1]:.0f} df); {how}")
    else:
        la, lb = np.log(va), np.log(vb)
        est, se, df = _t(la, lb, paired)
        a, b = math.exp(la.mean()), math.exp(lb.mean())
        test = "paired t-test on per-block log ratios" if paired else "Welch's t-test on log run figures"
        method = f"{test} ({how})" + ("; no HDR histograms: per-run percentiles, not merged"
                                      if metric in PERCENTILES else "")
        if pooled is not None:
            method = (f"per-block log ratio, its standard error from the run-to-run spread pooled over "
                      f"{pooled[2]} arms in {len(blocks)} blocks (RCBD, {pooled[1]:.0f} df); {how}")
    if pooled is not None:
        se, df = math.sqrt(2 * pooled[0] / len(blocks)), pooled[1]
        base["pooled_arms"] = pooled[2]
    if se > 0:
        p = float(2 * spf.stdtr(df, -abs(est) / se))
    else:
        p = 0.0 if est != 0 else 1.0
    half = float(spf.stdtrit(df, 1 - ALPHA / 2)) * se
    return ArmComparison(a=a, b=b, change_pct=100 * math.expm1(est), ci_low_pct=100 * math.expm1(est - half),
                         ci_high_pct=100 * math.expm1(est + half), p_value=p, significant=p < ALPHA,
                         mde_pct=mde_pct(se, df), log_change=est, se_log=se, df=df, method=method, **base)


def compare(figures: pd.DataFrame, arm_a: str, arm_b: str, op: str, metric: str = "rate_ops_s") \
        -> ArmComparison:
    """compare_arms where either arm may have no stored run of the op (a study analysed from
    part of its runs, or an arm this machine could not make): then a comparison without a test
    whose ``problem`` says which arm has none, so its claim is "not shown" with that reason."""
    missing = [arm for arm in (arm_a, arm_b) if not len(_of_arm(figures, arm, op))] if len(figures) else [arm_a, arm_b]
    if not missing:
        return compare_arms(figures, arm_a, arm_b, op, metric)
    nan = math.nan
    return ArmComparison(op=op, metric=metric, arm_a=arm_a, arm_b=arm_b, a=nan, b=nan, change_pct=nan, ci_low_pct=nan,
                         ci_high_pct=nan, p_value=None, significant=False, n_a=0, n_b=0, paired=False, mde_pct=nan,
                         log_change=nan, se_log=nan, df=nan, method="none",
                         problem=f"no stored run of {' or '.join(repr(m) for m in missing)} with op {op!r}")


def _gmean(values: np.ndarray) -> float:
    v = values[np.isfinite(values) & (values > 0)]
    return float(np.exp(np.log(v).mean())) if len(v) else math.nan


__all__ = ["ArmComparison", "PERCENTILES", "T_METRICS", "compare", "compare_arms", "resamples"]
