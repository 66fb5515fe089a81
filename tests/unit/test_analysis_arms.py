"""Comparisons across runs: paired per block or Welch on log run figures, percentiles from the
runs' merged HDR histograms with a bootstrap over runs, the MDE, and the runs that left."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from tests.unit.analysis_runs import shaped_run

from cassperf.results import hdr
from cassperf.analysis import AnalysisError
from cassperf.analysis.arms import compare_arms, resamples
from cassperf.analysis.power import mde_pct
from cassperf.analysis.repeats import run_figures
from cassperf.analysis.samples import HistCounts


def figures(rows: list[tuple[str, str, int | None, float]], excluded: dict[str, str] | None = None,
            op: str = "write") -> pd.DataFrame:
    """A run-figures frame of (run_id, arm, block, rate_ops_s) rows; `excluded`: run_id -> reason."""
    excluded = excluded or {}
    return pd.DataFrame({
        "run_id": [r[0] for r in rows], "arm": [r[1] for r in rows],
        "block": pd.array([r[2] for r in rows], dtype="Int64"), "op": op,
        "status": ["excluded" if r[0] in excluded else "ok" for r in rows],
        "reason": [excluded.get(r[0], "") for r in rows], "rate_ops_s": [r[3] for r in rows],
        "latency_p99_ms": [10.0 for _ in rows], "histogram": None})


A = [100.0, 110.0, 120.0]
B = [150.0, 160.0, 200.0]


def test_paired_per_block_t_test_on_log_ratios() -> None:
    frame = figures([(f"a{k}", "a", k, v) for k, v in enumerate(A, 1)]
                    + [(f"b{k}", "b", k, v) for k, v in enumerate(B, 1)])
    c = compare_arms(frame, "a", "b", "write")
    d = np.log(B) - np.log(A)
    se = d.std(ddof=1) / math.sqrt(3)
    half = sps.t.ppf(0.975, 2) * se
    assert c.paired and (c.n_a, c.n_b, c.df) == (3, 3, 2.0)
    assert c.log_change == pytest.approx(d.mean()) and c.se_log == pytest.approx(se)
    assert c.change_pct == pytest.approx(100 * math.expm1(d.mean()))
    assert (c.ci_low_pct, c.ci_high_pct) == pytest.approx((100 * math.expm1(d.mean() - half),
                                                           100 * math.expm1(d.mean() + half)))
    assert c.p_value == pytest.approx(sps.ttest_rel(np.log(B), np.log(A)).pvalue)
    assert c.a == pytest.approx(sps.gmean(A)) and c.b == pytest.approx(sps.gmean(B))
    assert c.b / c.a - 1 == pytest.approx(c.change_pct / 100)
    assert c.mde_pct == pytest.approx(mde_pct(se, 2.0))
    assert c.significant and c.left_out == () and c.problem == ""
    assert c.method == "paired t-test on per-block log ratios (paired per block (3 blocks))"
    assert c.text == (f"+{c.change_pct:.1f}% [+{c.ci_low_pct:.1f}%, +{c.ci_high_pct:.1f}%], p = {c.p_value:.3f}, "
                      f"3 blocks paired; MDE ±{c.mde_pct:.0f}%")
    low, high = c.ci_pct(0.999)
    assert low < c.ci_low_pct and high > c.ci_high_pct


def test_welch_on_log_run_figures_without_blocks() -> None:
    frame = figures([(f"a{k}", "a", None, v) for k, v in enumerate(A)]
                    + [(f"b{k}", "b", None, v) for k, v in enumerate(B)])
    c = compare_arms(frame, "a", "b", "write")
    assert not c.paired
    assert c.p_value == pytest.approx(sps.ttest_ind(np.log(B), np.log(A), equal_var=False).pvalue)
    va, vb = np.var(np.log(A), ddof=1) / 3, np.var(np.log(B), ddof=1) / 3
    assert c.df == pytest.approx((va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 2))
    assert c.method == "Welch's t-test on log run figures (unpaired (3 and 3 runs))"
    assert c.text.endswith(f"3 and 3 runs; MDE ±{c.mde_pct:.0f}%")


def test_runs_that_leave_are_listed_and_unpartnered_runs_leave_a_paired_comparison() -> None:
    frame = figures([("a1", "a", 1, 100.0), ("a2", "a", 2, 110.0), ("a3", "a", 3, 120.0), ("a4", "a", 4, 90.0),
                     ("b1", "b", 1, 150.0), ("b2", "b", 2, 160.0), ("b3", "b", 3, 200.0), ("b4", "b", 4, 1.0)],
                    excluded={"a3": "failed: timeouts", "b4": "incomplete: the run was killed or cut short"})
    c = compare_arms(frame, "a", "b", "write")
    assert c.paired and (c.n_a, c.n_b) == (2, 2)
    assert c.left_out == ("a3: failed: timeouts", "b4: incomplete: the run was killed or cut short",
                          "a4: no partner in block 4", "b3: no partner in block 3")
    assert c.log_change == pytest.approx(np.mean(np.log([150 / 100, 160 / 110])))


def test_a_block_with_two_counted_runs_of_an_arm_is_not_a_pair() -> None:
    frame = figures([("a1", "a", 1, 100.0), ("a1b", "a", 1, 104.0), ("a2", "a", 2, 110.0),
                     ("b1", "b", 1, 150.0), ("b2", "b", 2, 160.0)])
    c = compare_arms(frame, "a", "b", "write")
    assert not c.paired and (c.n_a, c.n_b) == (3, 2)         # one shared block is too few to pair


def test_too_few_runs_give_no_test_and_say_why() -> None:
    frame = figures([("a1", "a", 1, 100.0), ("a2", "a", 2, 110.0), ("b1", "b", 1, 150.0),
                     ("b2", "b", 2, 160.0)], excluded={"b2": "no ops in the steady window"})
    c = compare_arms(frame, "a", "b", "write")
    assert c.p_value is None and not c.significant and math.isnan(c.mde_pct) and math.isnan(c.ci_low_pct)
    assert c.problem == "too few runs counted (2 of a, 1 of b; 2 a side needed)"
    assert c.text == f"+{c.change_pct:.1f}%: too few runs counted (2 of a, 1 of b; 2 a side needed)"
    assert c.left_out == ("b2: no ops in the steady window",)
    assert c.ci_pct(0.9) == (pytest.approx(math.nan, nan_ok=True), pytest.approx(math.nan, nan_ok=True))


def test_identical_figures_have_no_spread() -> None:
    same = figures([("a1", "a", 1, 1000.0), ("a2", "a", 2, 1000.0), ("b1", "b", 1, 2000.0), ("b2", "b", 2, 2000.0)])
    c = compare_arms(same, "a", "b", "write")
    assert (c.change_pct, c.p_value, c.significant, c.mde_pct) == (pytest.approx(100.0), 0.0, True, 0.0)


def test_bad_metric_arm_and_figures_are_one_clear_error_or_problem() -> None:
    frame = figures([("a1", "a", 1, 100.0), ("a2", "a", 2, 110.0), ("b1", "b", 1, 150.0), ("b2", "b", 2, 0.0)])
    with pytest.raises(AnalysisError, match=r"compare_arms: metric must be one of \['rate_ops_s', "):
        compare_arms(frame, "a", "b", "write", "ops")
    with pytest.raises(AnalysisError, match=r"no runs of arm 'c' with op 'write'; the arms are \['a', 'b'\]"):
        compare_arms(frame, "a", "c", "write")
    assert compare_arms(frame, "a", "b", "write").problem == "a run's rate_ops_s is not positive, so no ratio"


def test_bootstrap_resamples_are_enumerated_with_their_probabilities() -> None:
    w, p = resamples(2)
    assert w.tolist() == [[2, 0], [1, 1], [0, 2]] and p.tolist() == pytest.approx([0.25, 0.5, 0.25])
    w3, p3 = resamples(3)
    assert len(w3) == 10 and p3.sum() == pytest.approx(1.0) and (p3 @ w3).tolist() == pytest.approx([1, 1, 1])
    w8, p8 = resamples(8)
    assert w8.shape == (2000, 8) and (w8.sum(axis=1) == 8).all() and p8.sum() == pytest.approx(1.0)
    assert not w3.flags.writeable


def percentile_runs() -> list:
    rng = np.random.default_rng(3)
    runs = []
    for block in (1, 2):
        for arm, scale in (("a", 1.0), ("b", 1.5)):
            counts = rng.normal(1000, 20, 30).round().astype(int).tolist()
            runs.append(shaped_run(counts, list(rng.normal(scale, 0.03 * scale, 30)), run_id=f"{arm}{block}",
                                   labels={"arm": arm, "block": str(block)}))
    return runs


def test_a_percentile_is_read_from_the_arms_merged_histograms_with_a_bootstrap_over_blocks() -> None:
    runs = percentile_runs()
    frame = run_figures(runs)
    c = compare_arms(frame, "a", "b", "write", "latency_p99_ms")
    merged = {}
    for arm in ("a", "b"):
        rows = frame[frame["arm"] == arm]
        own = [x for x in runs if x.labels["arm"] == arm]
        parts = [hdr.merge(r.histograms, start_s=s, end_s=e)["WRITE-rt"] for r, s, e in
                 zip(own, rows["window_start_s"], rows["window_end_s"], strict=True)]
        total = parts[0]
        total.add(parts[1])
        merged[arm] = hdr.percentile_ms(total, 99.0, "ns")
    assert (c.a, c.b) == (merged["a"], merged["b"])
    assert c.change_pct == pytest.approx(100 * (merged["b"] / merged["a"] - 1))
    # two blocks: the resamples of the blocks are {1,1}, {1,2}, {2,2} with 1/4, 1/2, 1/4
    h = {r.run_id: r.histogram.counts for r in frame.itertuples()}
    def p99(names: list[str]) -> float:
        hists = [h[n] for n in names]
        index = np.unique(np.concatenate([x.index for x in hists]))
        total = np.zeros(len(index))
        for x in hists:
            total[np.searchsorted(index, x.index)] += x.matrix[0]
        return float(HistCounts(hists[0].layout, index, total[None, :].astype(np.int64))
                     .percentile_ms(total[None, :], 99.0, "ns")[0])
    reps = [math.log(p99(["b1", "b1"]) / p99(["a1", "a1"])), math.log(p99(["b1", "b2"]) / p99(["a1", "a2"])),
            math.log(p99(["b2", "b2"]) / p99(["a2", "a2"]))]
    mean = 0.25 * reps[0] + 0.5 * reps[1] + 0.25 * reps[2]
    var = 0.25 * (reps[0] - mean) ** 2 + 0.5 * (reps[1] - mean) ** 2 + 0.25 * (reps[2] - mean) ** 2
    assert c.se_log == pytest.approx(math.sqrt(var * 2)) and c.df == 1.0 and c.paired
    assert c.method == ("p99 of each arm's merged HDR histograms; bootstrap over blocks for the standard error, "
                        "Student's t; paired per block (2 blocks)")


def test_percentiles_without_histograms_use_the_t_test_and_say_so() -> None:
    frame = figures([("a1", "a", 1, 100.0), ("a2", "a", 2, 110.0), ("b1", "b", 1, 150.0), ("b2", "b", 2, 160.0)])
    frame["latency_p99_ms"] = [10.0, 11.0, 20.0, 21.0]
    c = compare_arms(frame, "a", "b", "write", "latency_p99_ms")
    assert c.method == ("paired t-test on per-block log ratios (paired per block (2 blocks)); no HDR histograms: "
                        "per-run percentiles, not merged")
    assert c.change_pct == pytest.approx(100 * math.expm1(np.mean(np.log([20 / 10, 21 / 11]))))


# -- pooled over the arms of a randomized complete block design (RCBD) ---------------------------
POOLED = {"a": [100.0, 110.0, 120.0], "b": [150.0, 160.0, 200.0], "c": [80.0, 95.0, 90.0], "d": [300.0, 280.0, 330.0]}


def pooled_frame(pools: dict[str, str], values: dict[str, list[float]] = POOLED) -> pd.DataFrame:
    rows = [(f"{arm}{k}", arm, k, v) for arm, vs in values.items() for k, v in enumerate(vs, 1)]
    frame = figures(rows)
    return frame.assign(pool=[pools.get(arm, "") for arm in frame["arm"]])


def test_the_spread_is_pooled_over_the_arms_that_share_a_pool_and_their_blocks() -> None:
    c = compare_arms(pooled_frame({"a": "p", "b": "p", "c": "p", "d": "p"}), "a", "b", "write")
    y = np.log(np.array(list(POOLED.values())))                      # 4 arms x 3 blocks
    total = ((y - y.mean()) ** 2).sum()
    arms = 3 * ((y.mean(axis=1) - y.mean()) ** 2).sum()
    blocks = 4 * ((y.mean(axis=0) - y.mean()) ** 2).sum()
    s2 = (total - arms - blocks) / 6                                  # (4 - 1)(3 - 1) degrees of freedom
    d = np.log(POOLED["b"]) - np.log(POOLED["a"])
    se = math.sqrt(2 * s2 / 3)
    assert c.paired and (c.df, c.pooled_arms) == (6.0, 4)
    assert c.log_change == pytest.approx(d.mean()) and c.se_log == pytest.approx(se)
    assert c.p_value == pytest.approx(2 * sps.t.sf(abs(d.mean()) / se, 6))
    assert c.mde_pct == pytest.approx(mde_pct(se, 6.0))
    assert c.method == ("per-block log ratio, its standard error from the run-to-run spread pooled over 4 arms in 3 "
                        "blocks (RCBD, 6 df); paired per block (3 blocks)")
    assert ", 3 blocks paired, spread of 4 arms (6 df); MDE" in c.text


def test_without_a_shared_pool_of_three_arms_the_comparison_is_paired_alone() -> None:
    paired = compare_arms(figures([(f"a{k}", "a", k, v) for k, v in enumerate(POOLED["a"], 1)]
                                  + [(f"b{k}", "b", k, v) for k, v in enumerate(POOLED["b"], 1)]), "a", "b", "write")
    for pools in ({"a": "p", "b": "p"},                               # two arms: the paired test itself
                  {"a": "p", "b": "q", "c": "p", "d": "q"},           # A and B in different pools
                  {"a": "", "b": "", "c": "", "d": ""},               # each arm its own (pool "")
                  {"a": "p", "b": "p", "c": "", "d": ""}):            # the others keep their own
        c = compare_arms(pooled_frame(pools), "a", "b", "write")
        assert (c.df, c.se_log, c.pooled_arms) == (paired.df, pytest.approx(paired.se_log), 0), pools


def test_an_arm_of_the_pool_missing_from_a_block_of_the_pair_leaves_the_pool() -> None:
    values = {**POOLED, "e": [50.0, 55.0]}                            # e ran in blocks 1 and 2 only
    c = compare_arms(pooled_frame({k: "p" for k in values}, values), "a", "b", "write")
    assert (c.df, c.pooled_arms) == (6.0, 4)
    same = compare_arms(pooled_frame({k: "p" for k in POOLED}), "a", "b", "write")
    assert c.se_log == pytest.approx(same.se_log)


def test_an_arm_of_the_pool_without_the_figure_leaves_the_pool_and_the_others_still_pool() -> None:
    values = {**POOLED, "e": [50.0, float("nan"), 55.0]}             # e has no figure in block 2
    c = compare_arms(pooled_frame({k: "p" for k in values}, values), "a", "b", "write")
    same = compare_arms(pooled_frame({k: "p" for k in POOLED}), "a", "b", "write")
    assert (c.df, c.pooled_arms) == (6.0, 4) and c.se_log == pytest.approx(same.se_log)
