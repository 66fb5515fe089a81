"""The proof of the comparisons across runs, on simulated studies with known effects.

2,000 simulated studies per set (analysis.calibration, seeded: deterministic), each of two arms
in 3 randomized blocks of runs with AR(1) interval noise, pauses, a warm-up ramp, run and block
effects, a trend across the study, and HDR histograms per interval; the run figures come from
the code path real runs take (checked here against stored-Run form). Tolerances: a share p over
2,000 studies has a standard error of sqrt(p (1 - p) / 2000): 0.5% at 5%, 0.9% at 80%.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from cassperf.analysis.calibration import Calibration, method_rates
from cassperf.analysis.power import MDE_FACTORS, expected_power, mde_factor, mde_pct, mde_pct_at, solve_mde_factor
from cassperf.analysis.repeats import run_figures
from cassperf.analysis.simulate import Noise, SimArm, sim_figures, simulate, to_runs


pytestmark = pytest.mark.long        # its simulation fixture takes about 40 s: make test starts it first

@pytest.fixture(scope="module")
def cal() -> Calibration:
    return method_rates(repeats=3, studies=2000, seed=2026, margin_pct=30.0)


def test_an_aa_comparison_is_significant_in_5_percent_of_studies(cal: Calibration) -> None:
    assert cal.studies == 2000 and cal.repeats == 3
    assert 0.035 <= cal.aa_rate <= 0.065
    assert 0.035 <= cal.aa_mean <= 0.065


def test_the_p99_comparison_is_valid_and_slightly_conservative(cal: Calibration) -> None:
    # the bootstrap-over-blocks standard error runs a little wide for a pooled percentile:
    # 4.0% of 8,000 simulated A/A studies (seeds 100-103) were significant, never more than 5%
    assert 0.025 <= cal.aa_p99 <= 0.065


def test_power_at_the_mde_a_study_states_is_80_percent(cal: Calibration) -> None:
    assert 0.75 <= cal.power_rate <= 0.85
    assert 0.75 <= cal.power_p99 <= 0.85
    # what the stated MDEs are at this noise and 3 blocks (paired, 2 degrees of freedom)
    assert 60 < cal.mde_rate_pct < 150 and cal.mde_p99_pct > cal.mde_rate_pct


def test_the_ratio_ci_from_the_log_scale_holds_its_coverage_at_large_changes(cal: Calibration) -> None:
    # the power studies' true changes are the stated MDEs, about +100%
    assert 0.935 <= cal.coverage <= 0.965
    assert cal.coverage_linear < cal.coverage


def test_tost_declares_equivalence_at_the_margin_in_at_most_5_percent(cal: Calibration) -> None:
    assert cal.margin_pct == 30.0
    assert cal.tost_at_margin <= 0.065
    assert cal.tost_at_zero > 0.3          # and it does declare it when there is no difference


def test_the_drift_bound_drops_almost_no_stationary_run(cal: Calibration) -> None:
    assert cal.excluded <= 0.005


def test_the_old_within_run_method_on_the_same_runs(cal: Calibration) -> None:
    # the 10% CV veto vetoes every comparison at this interval noise: nothing is ever decided
    assert cal.old_aa == 0.0 and cal.old_power == 0.0
    # without the veto, one run a side mistakes run-to-run noise for a difference
    assert cal.old_aa_no_veto > 0.10
    # and a plain percentile bootstrap over 3 runs a side is anti-conservative
    assert cal.plain_bootstrap_aa_p99 > 0.10


def test_simulated_runs_give_the_same_figures_as_stored_runs() -> None:
    study = simulate([SimArm("a"), SimArm("b", rate=1.3)], 2, Noise(intervals=24), seed=4)[0]
    samples_path = sim_figures(study)
    run_path = run_figures(to_runs(study))
    columns = [c for c in samples_path.columns if c != "histogram"]
    pd.testing.assert_frame_equal(samples_path[columns], run_path[columns])
    for ha, hb in zip(samples_path["histogram"], run_path["histogram"], strict=True):
        assert (ha.counts.index == hb.counts.index).all() and (ha.counts.matrix == hb.counts.matrix).all()
    assert list(samples_path["arm"]) == ["a", "a", "b", "b"] and list(samples_path["block"]) == [1, 2, 1, 2]


def test_the_same_seed_gives_the_same_study() -> None:
    one = sim_figures(simulate([SimArm("a")], 2, seed=9)[0])
    two = sim_figures(simulate([SimArm("a")], 2, seed=9)[0])
    pd.testing.assert_frame_equal(one.drop(columns="histogram"), two.drop(columns="histogram"))


@pytest.mark.parametrize("df", [2.0, 4.0])
def test_the_tabulated_mde_factor_is_the_solved_one(df: float) -> None:
    k = solve_mde_factor(df, points=1000)
    assert mde_factor(df) == pytest.approx(k, rel=2e-3)
    assert dict(MDE_FACTORS)[df] == pytest.approx(k, rel=2e-3)
    assert expected_power(mde_factor(df), df, points=1000) == pytest.approx(0.80, abs=0.002)


def test_the_mde_at_a_corrected_level_is_larger_and_its_power_is_80_percent_there() -> None:
    k = solve_mde_factor(10.0, points=1000, alpha=0.05 / 3)
    assert k == pytest.approx(4.166, rel=1e-3)                         # 3.388 at 5%
    assert expected_power(k, 10.0, points=1000, alpha=0.05 / 3) == pytest.approx(0.80, abs=0.002)
    assert mde_pct_at(0.08, 10.0, 0.05 / 3) == pytest.approx(100 * math.expm1(k * 0.08), rel=1e-3)
    assert mde_pct_at(0.08, 10.0, 0.05) == mde_pct(0.08, 10.0)


def test_mde_factor_between_table_points_and_at_the_limits() -> None:
    assert mde_factor(3.25) == pytest.approx(5.37, rel=0.01)         # solve_mde_factor(3.25): 5.357
    assert mde_factor(0.5) == mde_factor(1.0) == pytest.approx(30.98, rel=1e-4)
    assert mde_factor(math.inf) == pytest.approx(2.8016, rel=1e-4)   # z(0.975) + z(0.8)
    assert math.isnan(mde_factor(math.nan)) and math.isnan(mde_pct(math.nan, 2))
    assert mde_pct(0.1, 2.0) == pytest.approx(100 * math.expm1(8.7057 * 0.1), rel=1e-4)

