"""The proof of the method: error rates and power of the comparisons on simulated studies.

    method_rates(repeats=3, studies=2000, noise=Noise(), seed=0, margin_pct=30.0, old_p99=False)
        -> Calibration                 every figure below, from four sets of simulated studies

Each set is `studies` simulated studies of two arms (analysis.simulate), run figures by the
path real runs take from the samples on (simulate.sim_figures), compared by arms.compare_arms:

1. A/A (two identical arms): the share of studies whose comparison is significant, for
   throughput, mean latency and p99 (a calibrated 5% test: 5%); the MDE each study states.
2. Power: new studies whose arm B is faster by exactly the MDE that study i of set 1 stated
   (throughput), or slower by it (p99 latency): the share significant (calibrated: 80%). On the
   throughput studies (true changes of about +100%), the share whose 95% CI holds the true
   change: the method's ratio CI from the log scale (`coverage`), and for contrast the interval
   of the difference of the means divided by A's mean (`coverage_linear`).
3. TOST at the margin: B faster by exactly `margin_pct`: the share where equivalence within
   ±margin_pct "holds" (at most 5%); and on set 1, the share where it holds with no difference.
4. Paired or not: sets 1 and 2 again with the block labels dropped, so that compare_arms uses
   Welch's test (`aa_rate_welch`, `power_rate_welch`: its power at the paired test's MDE).
5. For contrast, on the same runs: the old within-run method (compare.compare_samples on one
   run a side, block 1's) with and without its 10% CV veto, and a plain percentile bootstrap
   over runs for p99 (the 2.5 and 97.5 percentiles of the bootstrap ratio, every resample
   enumerated), which the method does not use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import special as spf

from cassperf.analysis.arms import POOL, ArmComparison, compare_arms, resamples
from cassperf.analysis.claims import HOLDS
from cassperf.analysis.compare import compare_samples
from cassperf.analysis.repeats import OK
from cassperf.analysis.samples import OpSamples, stack, window_samples
from cassperf.analysis.simulate import Noise, SimArm, sim_figures, simulate
from cassperf.analysis.steady import mser5_steady
from cassperf.analysis.verdicts import equivalent


@dataclass(frozen=True)
class Calibration:
    """Shares of simulated studies (0..1) and median MDEs (%); see the module docstring."""

    repeats: int
    studies: int
    aa_rate: float
    aa_mean: float
    aa_p99: float
    mde_rate_pct: float
    mde_p99_pct: float
    power_rate: float
    power_p99: float
    aa_rate_welch: float
    power_rate_welch: float
    coverage: float
    coverage_linear: float
    margin_pct: float
    tost_at_margin: float
    tost_at_zero: float
    excluded: float
    old_aa: float
    old_aa_no_veto: float
    old_power: float
    old_power_no_veto: float
    old_aa_p99: float
    plain_bootstrap_aa_p99: float


CHUNK = 250      # studies simulated at once: their per-interval histograms are dropped after each chunk


def _set(arms: Sequence[SimArm], repeats: int, noise: Noise, seed: int, studies: int, histograms: bool,
         metrics: Sequence[str], keep_hist: bool = False, pool: bool = False, firsts_too: bool = False) \
        -> tuple[list[tuple[OpSamples, OpSamples]], pd.DataFrame, dict[str, list[ArmComparison]]]:
    """(block 1's steady-window samples of arms a and b per study when `firsts_too` (the within-run
    method's input; else none), the run figures of every study, the comparisons per metric),
    simulated CHUNK studies at a time (chunk c seeded seed x 1000 + c)."""
    firsts: list[tuple[OpSamples, OpSamples]] = []
    frames = []
    for lo in range(0, studies, CHUNK):
        hi = min(studies, lo + CHUNK)
        part = [replace(a, rate=_slice(a.rate, lo, hi), latency=_slice(a.latency, lo, hi)) for a in arms]
        sims = simulate(part, repeats, noise, seed * 1000 + lo // CHUNK, hi - lo, histograms)
        frame = sim_figures([r for s in sims for r in s])
        frame = frame.assign(study=(frame["study"].astype(int) + lo).astype(str))
        frames.append(frame.assign(**{POOL: "all"}) if pool else frame)
        for study in sims if firsts_too else ():
            first = {r.labels["arm"]: r.samples for r in study if r.labels["block"] == "1"}
            firsts.append((_steady(first["a"], keep_hist), _steady(first["b"], keep_hist)))
    frame = pd.concat(frames, ignore_index=True)
    per_study = [f for _, f in frame.groupby("study", sort=False)]
    return firsts, frame, {m: [compare_arms(f, "a", "b", "write", m) for f in per_study] for m in metrics}


def _slice(factor: float | Sequence[float], lo: int, hi: int) -> float | Sequence[float]:
    return factor if np.ndim(factor) == 0 else np.asarray(factor)[lo:hi]


def _steady(samples: OpSamples, keep_hist: bool) -> OpSamples:
    st = mser5_steady(samples.start_s, samples.end_s, samples.rate_ops_s)
    window = window_samples(samples, st.window.start_s, st.window.end_s)
    return window if keep_hist else replace(window, hist=None)


def _unpaired(frame: pd.DataFrame, metric: str) -> list[bool]:
    """Significant per study when the comparison ignores the blocks (Welch's test)."""
    blind = frame.assign(block=pd.array([None] * len(frame), dtype="Int64"))
    return [compare_arms(f, "a", "b", "write", metric).significant for _, f in blind.groupby("study", sort=False)]


def _share(flags: Sequence[bool]) -> float:
    return float(np.mean(flags)) if len(flags) else math.nan


def _old(firsts: list[tuple[OpSamples, OpSamples]], metric: str) -> tuple[list[bool], list[bool]]:
    """(significant with the CV veto, significant without it) of the within-run method on block
    1's run of each arm."""
    veto, plain = [], []
    for sa, sb in firsts:
        c = compare_samples(sa, sb, metric, reps=400)
        veto.append(c.significant)
        if c.p_value is not None:
            plain.append(c.p_value < 0.05)
        else:
            plain.append(bool(math.isfinite(c.ci_low_pct) and (c.ci_low_pct > 0 or c.ci_high_pct < 0)))
    return veto, plain


def _linear_coverage(frame: pd.DataFrame, truth: np.ndarray, repeats: int) -> list[bool]:
    """Per study: does (mean_b - mean_a ± t se) / mean_a (paired per block) hold the true change?"""
    grid = np.full((2, len(truth), repeats), np.nan)
    ok = (frame["status"] == OK).to_numpy()
    arm = (frame["arm"].to_numpy(dtype=object) == "b").astype(int)
    study = frame["study"].astype(int).to_numpy()
    block = frame["block"].to_numpy(dtype="float64").astype(int) - 1
    grid[arm[ok], study[ok], block[ok]] = frame["rate_ops_s"].to_numpy()[ok]
    out = []
    for a, b, change in zip(grid[0], grid[1], truth, strict=True):
        both = np.isfinite(a) & np.isfinite(b)
        d = (b - a)[both]
        if len(d) < 2:
            continue
        half = float(spf.stdtrit(len(d) - 1, 0.975)) * d.std(ddof=1) / math.sqrt(len(d))
        mean_a = float(a[both].mean())
        out.append(abs(d.mean() / mean_a - change) <= half / mean_a)
    return out


def plain_bootstrap_significant(figures: pd.DataFrame, percentile: float = 99.0) -> bool:
    """A plain percentile bootstrap over runs of B's / A's merged percentile (each arm's runs
    resampled, every resample enumerated): significant when its 95% interval excludes 1."""
    logs, weights = [], []
    arms = figures["arm"].to_numpy(dtype=object)
    ok = figures["status"].to_numpy(dtype=object) == OK
    every = figures["histogram"].to_numpy()
    for arm in ("a", "b"):
        hists = every[(arms == arm) & ok].tolist()
        m = stack([h.counts for h in hists], "plain bootstrap")
        w, p = resamples(len(hists))
        logs.append(np.log(m.percentile_ms(w @ m.matrix.astype(np.float64), percentile, hists[0].unit)))
        weights.append(p)
    ratio = (logs[1][None, :] - logs[0][:, None]).ravel()
    prob = (weights[0][:, None] * weights[1][None, :]).ravel()
    order = np.argsort(ratio)
    cum = np.cumsum(prob[order])
    low = ratio[order][np.searchsorted(cum, 0.025)]
    high = ratio[order][min(np.searchsorted(cum, 0.975), len(cum) - 1)]
    return bool(low > 0 or high < 0)


def method_rates(repeats: int = 3, studies: int = 2000, noise: Noise = Noise(), seed: int = 0,
              margin_pct: float = 30.0, old_p99: bool = False) -> Calibration:
    """The figures of the module docstring (seeded: the same arguments give the same figures)."""
    same = [SimArm("a"), SimArm("b")]
    firsts, frame, aa = _set(same, repeats, noise, seed, studies, True,
                             ("rate_ops_s", "latency_mean_ms", "latency_p99_ms"), keep_hist=old_p99, firsts_too=True)
    mde_rate = np.array([c.mde_pct for c in aa["rate_ops_s"]])
    mde_p99 = np.array([c.mde_pct for c in aa["latency_p99_ms"]])
    faster = SimArm("b", rate=1 + np.nan_to_num(mde_rate) / 100)
    fast, fast_frame, power_rate = _set([SimArm("a"), faster], repeats, noise, seed + 1, studies, False,
                                        ("rate_ops_s",), firsts_too=True)
    _, _, power_p99 = _set([SimArm("a"), SimArm("b", latency=1 + np.nan_to_num(mde_p99) / 100)], repeats, noise,
                           seed + 2, studies, True, ("latency_p99_ms",))
    _, _, tost = _set([SimArm("a"), SimArm("b", rate=1 + margin_pct / 100)], repeats, noise, seed + 3, studies,
                      False, ("rate_ops_s",))
    old_aa, old_aa_plain = _old(firsts, "rate_ops_s")
    old_pw, old_pw_plain = _old(fast, "rate_ops_s")
    per_study = [f for _, f in frame.groupby("study", sort=False)]
    truth = np.nan_to_num(mde_rate) / 100          # the true change of the power studies, as a fraction
    coverage = [c.ci_low_pct <= 100 * t <= c.ci_high_pct for c, t in zip(power_rate["rate_ops_s"], truth, strict=True)]
    return Calibration(
        repeats=repeats, studies=studies,
        aa_rate=_share([c.significant for c in aa["rate_ops_s"]]),
        aa_mean=_share([c.significant for c in aa["latency_mean_ms"]]),
        aa_p99=_share([c.significant for c in aa["latency_p99_ms"]]),
        mde_rate_pct=float(np.nanmedian(mde_rate)), mde_p99_pct=float(np.nanmedian(mde_p99)),
        power_rate=_share([c.significant for c in power_rate["rate_ops_s"]]),
        power_p99=_share([c.significant for c in power_p99["latency_p99_ms"]]),
        aa_rate_welch=_share(_unpaired(frame, "rate_ops_s")),
        power_rate_welch=_share(_unpaired(fast_frame, "rate_ops_s")),
        coverage=_share(coverage), coverage_linear=_share(_linear_coverage(fast_frame, truth, repeats)),
        margin_pct=margin_pct,
        tost_at_margin=_share([equivalent(c, margin_pct).verdict == HOLDS for c in tost["rate_ops_s"]]),
        tost_at_zero=_share([equivalent(c, margin_pct).verdict == HOLDS for c in aa["rate_ops_s"]]),
        excluded=float((frame["status"] != OK).mean()),
        old_aa=_share(old_aa), old_aa_no_veto=_share(old_aa_plain),
        old_power=_share(old_pw), old_power_no_veto=_share(old_pw_plain),
        old_aa_p99=_share(_old(firsts, "latency_p99_ms")[1]) if old_p99 else math.nan,
        plain_bootstrap_aa_p99=_share([plain_bootstrap_significant(f) for f in per_study]),
    )


@dataclass(frozen=True)
class PooledCalibration:
    """Figures of `method_rates_pooled`: shares of simulated studies (0..1) and median MDEs (%)."""

    arms: int
    repeats: int
    studies: int
    df: float
    aa_rate: float
    aa_mean: float
    aa_p99: float
    mde_rate_pct: float
    mde_rate_paired_pct: float
    mde_p99_pct: float
    power_rate: float
    power_p99: float
    tost_at_margin: float
    margin_pct: float


def method_rates_pooled(arms: int = 8, repeats: int = 3, studies: int = 2000, noise: Noise = Noise(), seed: int = 0,
                     margin_pct: float = 30.0) -> PooledCalibration:
    """The pooled (RCBD) comparison proven as `method_rates` proves the paired one: studies of `arms`
    arms in `repeats` blocks, every run labelled with one pool; A against B, the other arms
    identical to A. A/A: the share significant (throughput, mean latency, p99); power: B faster
    (throughput) or slower (p99) by exactly the MDE its A/A study stated; TOST: B faster by
    `margin_pct`, the share where equivalence within ±margin_pct holds (at most 5%). For
    contrast, `mde_rate_paired_pct`: the median MDE the same A/A studies state paired alone."""
    others = [SimArm(f"x{i}") for i in range(arms - 2)]
    _, frame, aa = _set([SimArm("a"), SimArm("b"), *others], repeats, noise, seed, studies, True,
                        ("rate_ops_s", "latency_mean_ms", "latency_p99_ms"), pool=True)
    mde_rate = np.array([c.mde_pct for c in aa["rate_ops_s"]])
    mde_p99 = np.array([c.mde_pct for c in aa["latency_p99_ms"]])
    paired = [compare_arms(f.drop(columns=[POOL]), "a", "b", "write").mde_pct for _, f in frame.groupby("study")]
    _, _, power_rate = _set([SimArm("a"), SimArm("b", rate=1 + np.nan_to_num(mde_rate) / 100), *others], repeats,
                            noise, seed + 1, studies, False, ("rate_ops_s",), pool=True)
    _, _, power_p99 = _set([SimArm("a"), SimArm("b", latency=1 + np.nan_to_num(mde_p99) / 100), *others], repeats,
                           noise, seed + 2, studies, True, ("latency_p99_ms",), pool=True)
    _, _, tost = _set([SimArm("a"), SimArm("b", rate=1 + margin_pct / 100), *others], repeats, noise, seed + 3,
                      studies, False, ("rate_ops_s",), pool=True)
    return PooledCalibration(
        arms=arms, repeats=repeats, studies=studies, df=float(np.nanmedian([c.df for c in aa["rate_ops_s"]])),
        aa_rate=_share([c.significant for c in aa["rate_ops_s"]]),
        aa_mean=_share([c.significant for c in aa["latency_mean_ms"]]),
        aa_p99=_share([c.significant for c in aa["latency_p99_ms"]]),
        mde_rate_pct=float(np.nanmedian(mde_rate)), mde_rate_paired_pct=float(np.nanmedian(paired)),
        mde_p99_pct=float(np.nanmedian(mde_p99)),
        power_rate=_share([c.significant for c in power_rate["rate_ops_s"]]),
        power_p99=_share([c.significant for c in power_p99["latency_p99_ms"]]),
        tost_at_margin=_share([equivalent(c, margin_pct).verdict == HOLDS for c in tost["rate_ops_s"]]),
        margin_pct=margin_pct)
