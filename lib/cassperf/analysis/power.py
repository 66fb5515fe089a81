"""The minimum detectable effect (MDE) a comparison states, calibrated so the statement holds.

A comparison across runs estimates a change on the log scale with a standard error `se` and `df`
degrees of freedom (Student's t). The effect it could detect with 80% power in a two-sided test
at the 5% level, were the run-to-run spread known, is lambda x se, lambda the noncentrality at
which the noncentral t reaches 80% power (about t(0.975, df) + t(0.8, df), the textbook
formula). But the spread is *estimated* from the same few runs: with 2 or 3 runs a side the
estimate is often well below the truth, and a study stating lambda x se would have only 60-70%
power at the MDE it states (E[power] at df = 2 is 61%; see `expected_power`).

So the factor here is k(df) such that the power at the stated MDE, averaged over what the
spread estimate could have been (s^2 ~ sigma^2 chi2(df) / df), is 80%:

    E_s[ power_t(df, k(df) x s / sigma) ] = 0.80

For a paired t-test (df = pairs - 1) this is exact under normal run figures: the stated MDE is
calibrated, not decorative (tests/unit/test_analysis_calibration.py checks it on simulated
studies). k(2) = 8.71, k(4) = 4.68, k(10) = 3.39, k(inf) = 2.80. The integral is slow (scipy's
noncentral t), so the factors are tabulated (`MDE_FACTORS`, computed by `solve_mde_factor`; the
tests recompute entries) and interpolated linearly in (1 / df, log k).

    mde_factor(df) -> k           mde_pct(se_log, df) -> MDE in % (100 x (exp(k x se) - 1))
    mde_pct_at(se_log, df, alpha) the same at another level (solved)
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize
from scipy import stats as sps

POWER = 0.80
ALPHA = 0.05

#: (df, k(df)) by solve_mde_factor(df) at 2,000 quadrature points; df 1000 stands for infinity's
#: neighbourhood (the limit is z(0.975) + z(0.8) = 2.8016).
MDE_FACTORS: tuple[tuple[float, float], ...] = (
    (1, 30.9802), (1.25, 18.3362), (1.5, 13.4907), (1.75, 10.4870), (2, 8.7057), (2.5, 6.7305),
    (3, 5.7001), (3.5, 5.0835), (4, 4.6777), (5, 4.1802), (6, 3.8888), (7, 3.6981), (8, 3.5640),
    (10, 3.3879), (12, 3.2777), (15, 3.1728), (20, 3.0731), (30, 2.9781), (50, 2.9054),
    (100, 2.8527), (1000, 2.8066),
)
_LIMIT = float(sps.norm.ppf(1 - ALPHA / 2) + sps.norm.ppf(POWER))
_X = np.array([0.0] + [1 / df for df, _ in reversed(MDE_FACTORS)])
_Y = np.log(np.array([_LIMIT] + [k for _, k in reversed(MDE_FACTORS)]))


def t_power(noncentrality: np.ndarray | float, df: float, alpha: float = ALPHA) -> np.ndarray:
    """Power of a two-sided t-test at level `alpha` with `df` degrees of freedom when the true
    effect is `noncentrality` standard errors."""
    crit = sps.t.ppf(1 - alpha / 2, df)
    lam = np.asarray(noncentrality, dtype="float64")
    p = sps.nct.sf(crit, df, lam) + sps.nct.cdf(-crit, df, lam)
    return np.where(np.isfinite(p), p, 1.0)


def expected_power(k: float, df: float, points: int = 2000, alpha: float = ALPHA) -> float:
    """Power at the stated MDE k x s, averaged over the spread estimate s (s^2 / sigma^2 ~
    chi2(df) / df, at `points` equally likely quantiles), of a test at level `alpha`."""
    u = (np.arange(points) + 0.5) / points
    s = np.sqrt(sps.chi2.ppf(u, df) / df)
    return float(t_power(k * s, df, alpha).mean())


def solve_mde_factor(df: float, points: int = 2000, alpha: float = ALPHA) -> float:
    """k(df) with expected_power(k, df) = 80% at level `alpha` (about 0.5 s of scipy per call)."""
    return float(optimize.brentq(lambda k: expected_power(k, df, points, alpha) - POWER, 1.0, 5000.0, xtol=1e-5))


def mde_factor(df: float) -> float:
    """k(df) interpolated from MDE_FACTORS (df below 1 counts as 1; NaN df gives NaN)."""
    if not math.isfinite(df):
        return _LIMIT if df == math.inf else math.nan
    return float(np.exp(np.interp(1 / max(df, 1.0), _X, _Y)))


def mde_pct(se_log: float, df: float) -> float:
    """The MDE in % of the baseline for a log-scale standard error `se_log` with `df` degrees of
    freedom: 100 x (exp(k(df) x se_log) - 1). Stated as "±MDE": a fall of the same log size is
    -MDE / (1 + MDE), smaller in %, so a fall of MDE% is at least as detectable."""
    if not (math.isfinite(se_log) and math.isfinite(df)):
        return math.nan
    return 100 * math.expm1(mde_factor(df) * se_log)


def mde_pct_at(se_log: float, df: float, alpha: float) -> float:
    """mde_pct for a test at level `alpha` (a corrected level, e.g. 5% / 3 for a pair picked
    from three): solved, not tabulated, so about 0.5 s."""
    if alpha == ALPHA:
        return mde_pct(se_log, df)
    if not (math.isfinite(se_log) and math.isfinite(df)):
        return math.nan
    return 100 * math.expm1(solve_mde_factor(max(df, 1.0), points=1000, alpha=alpha) * se_log)
