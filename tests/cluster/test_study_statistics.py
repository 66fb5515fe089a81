"""The method on real nodes (issue 22 item 6): a study of three arms run by the one executor on a
one-node cluster, in 3 randomized blocks: writes at a fixed 1,000 ops/s, the same arm's A/A twin,
and writes at a fixed 2,000 ops/s. The twin agrees with its arm (asserted at a level that does not
flake: the 99.9% CI of the change contains 0), and 2,000 against 1,000 ops/s differs by about
+100%, significantly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from cassperf.analysis.arms import compare_arms
from cassperf.experiments.analysis import Analysis
from cassperf.experiments.executor import execute
from cassperf.experiments.outcome import load_outcome
from cassperf.experiments.study import Arm, Study
from cassperf.workload.spec import WorkloadSpec

# alone: asserts A/A agreement and a significant doubling on measured rates; make test runs it with no other test beside
# it
pytestmark = [pytest.mark.cluster, pytest.mark.alone]


@dataclass(frozen=True)
class FixedRates(Study):
    name: ClassVar[str] = "fixed-rates"
    title: ClassVar[str] = "Fixed rates"
    source: ClassVar[str] = "tests"
    ANALYSIS: ClassVar[Any] = Analysis  # figures only: the test compares the arms itself

    def _spec(self, rate: int) -> WorkloadSpec:
        return WorkloadSpec(op="write", duration=self.run_s, concurrency=32, rate=f"fixed={rate}/s",
                            population="uniform(1..5000)", keyspace="stats_rates", interval_s=self.interval_s)

    def warm_spec(self) -> WorkloadSpec:
        return self._spec(1000)

    def arms(self, calibrated: Any) -> list[Arm]:
        return [Arm(f"fixed {r}", {"rate": str(r)}, spec=self._spec(r)) for r in (1000, 2000)]


def test_identical_arms_agree_and_a_doubled_rate_is_a_significant_doubling(make_cluster, tmp_path):
    cluster = make_cluster("stats", "dc1:1", "127.0.31.1").start()
    study = FixedRates(experiment="test", repeats=3, run_s=4, interval_s=0.2, warm_step_s=2, warm_max_steps=3)
    done = execute(study, cluster, root=tmp_path)
    assert (done.ran, done.failed) == (9, 0)
    outcome = load_outcome(study, root=tmp_path)
    figs = outcome.study.analysis().figures(outcome)
    assert (figs["status"] == "ok").all(), figs[["arm", "block", "reason"]]
    aa = compare_arms(figs, "fixed 1000", "fixed 1000 (A/A)", "write")
    low, high = aa.ci_pct(0.999)
    # at a fixed rate the twins' figures may agree to the last digit: a CI of [0, 0] agrees too
    assert aa.paired and aa.n_a == 3 and low <= 0 <= high, aa.text
    double = compare_arms(figs, "fixed 1000", "fixed 2000", "write")
    assert double.significant and 80 < double.change_pct < 120, double.text
    assert double.ci_low_pct > 50, double.text
