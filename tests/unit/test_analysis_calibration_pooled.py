"""The proof of the pooled comparison (five arms in blocks share one pool), on simulated studies
with known effects (analysis.calibration.method_rates_pooled; seeded: deterministic). A file of its
own: its 2,000 studies take about 90 s, and make test runs files two at a time, so apart from the
pair's proof (test_analysis_calibration) the two run side by side. Tolerances as there: a share p
over 2,000 studies has a standard error of sqrt(p (1 - p) / 2000): 0.5% at 5%, 0.9% at 80%.
"""

from __future__ import annotations

import pytest

from cassperf.analysis.calibration import PooledCalibration, method_rates_pooled


pytestmark = pytest.mark.long        # its simulation fixture takes about 90 s: make test starts it first

@pytest.fixture(scope="module")
def pooled() -> PooledCalibration:
    return method_rates_pooled(arms=5, repeats=3, studies=2000, seed=2026, margin_pct=30.0)


def test_the_pooled_comparison_holds_its_error_rate_and_its_stated_power(pooled: PooledCalibration) -> None:
    # 5 arms in 3 blocks share one pool: (5 - 1)(3 - 1) = 8 degrees of freedom where the pair alone has 2
    assert (pooled.studies, pooled.arms, pooled.df) == (2000, 5, 8.0)
    assert 0.035 <= pooled.aa_rate <= 0.065
    assert 0.035 <= pooled.aa_mean <= 0.065
    assert 0.035 <= pooled.aa_p99 <= 0.065
    assert 0.75 <= pooled.power_rate <= 0.85
    assert 0.75 <= pooled.power_p99 <= 0.85
    assert pooled.tost_at_margin <= 0.065
    # what pooling buys: the same studies state an MDE less than half the pair's alone
    assert pooled.mde_rate_pct < 0.5 * pooled.mde_rate_paired_pct
