"""The order of a study's runs, and the warm-up and calibration rules (pure functions)."""

from __future__ import annotations

import collections
import itertools

import pytest

from cassperf.errors import ConfigError
from cassperf.experiments.calibrate import StepFailed, find_knee, knee, ladder_done, warm_up, warm_up_done
from cassperf.experiments.schedule import Slot, block_order, schedule, units
from cassperf.experiments.study import Arm, Calibrated, StudyParameters
from cassperf.workload.spec import WorkloadSpec

ARMS = ["w1", "w2", "w3", "ra", "rb", "m"]
FOLLOWS = {"rb": "ra"}


def test_every_block_holds_every_arm_once_and_run_b_follows_run_a():
    order = schedule(ARMS, FOLLOWS, repeats=3, seed=7)
    assert len(order) == 18
    for block in (1, 2, 3):
        names = [s.arm for s in order if s.block == block]
        assert sorted(names) == sorted(ARMS)
        assert names.index("rb") == names.index("ra") + 1
        assert [s.position for s in order if s.block == block] == list(range(1, 7))


def test_the_order_is_the_seeds_and_a_block_is_the_same_whatever_the_repeats():
    a = schedule(ARMS, FOLLOWS, repeats=3, seed=7)
    assert a == schedule(ARMS, FOLLOWS, repeats=3, seed=7)
    assert schedule(ARMS, FOLLOWS, repeats=5, seed=7)[:18] == a
    assert a != schedule(ARMS, FOLLOWS, repeats=3, seed=8)
    # the draw for seed 7 block 1, pinned: numpy's default_rng([7, 1]) permutation of the 5 units
    assert block_order(units(ARMS, FOLLOWS), 7, 1) == [s.arm for s in a if s.block == 1]


def test_blocks_are_shuffled_not_fixed():
    orders = {tuple(s.arm for s in schedule(ARMS, FOLLOWS, repeats=1, seed=seed)) for seed in range(20)}
    assert len(orders) > 10


def test_bad_plans_get_one_line():
    with pytest.raises(ConfigError, match=r"arm 'rb' follows 'nope', which is not an arm of this plan"):
        schedule(["ra", "rb"], {"rb": "nope"}, 2, 1)
    with pytest.raises(ConfigError, match=r"named twice: \['a'\]"):
        schedule(["a", "a"], {}, 2, 1)
    with pytest.raises(ConfigError, match="cycle"):
        schedule(["a", "b"], {"a": "b", "b": "a"}, 2, 1)


@pytest.mark.parametrize("seed", [1, 2, 3, 2026])
def test_all_orders_put_every_arm_right_after_every_other_alike_across_the_blocks_too(seed):
    arms = ["garbagecollect", "placebo", "placebo (A/A)"]
    order = schedule(arms, {}, repeats=6, seed=seed, every_order=True)
    blocks = [tuple(s.arm for s in order if s.block == b) for b in range(1, 7)]
    assert sorted(blocks) == sorted(itertools.permutations(arms))          # the six orders, once each
    runs = [s.arm for s in order]
    after = collections.Counter(zip(runs, runs[1:], strict=False))
    assert {pair: n for pair, n in after.items() if pair[0] != pair[1]} == {
        (x, y): 2 for x in arms for y in arms if x != y}                     # (k - 1)! each, boundaries included
    assert all(b[0] == a[-1] for a, b in zip(blocks, blocks[1:], strict=False))
    assert schedule(arms, {}, repeats=8, seed=seed, every_order=True)[:18] == order
    assert [s.arm for s in schedule(arms, {}, repeats=8, seed=seed, every_order=True)][18:] == runs[:6]


def test_all_orders_keep_chains_and_refuse_more_than_three_units():
    order = [s.arm for s in schedule(["x", "ra", "rb"], {"rb": "ra"}, repeats=2, seed=1, every_order=True)]
    assert sorted(order) == ["ra", "ra", "rb", "rb", "x", "x"] and order.index("rb") == order.index("ra") + 1
    with pytest.raises(ConfigError, match=r"^all orders of 4 arms take 24 blocks; the design suits at most 3"):
        schedule(["a", "b", "c", "d"], {}, repeats=6, seed=1, every_order=True)


def test_warm_up_stops_when_throughput_stops_rising():
    assert not warm_up_done([100, 200])
    assert not warm_up_done([100, 300, 305, 301])      # fewer than 6 steps: a cold JVM rises in bursts
    assert not warm_up_done([218, 434, 358, 336])      # 01 at f81db58 stopped here, then rose for minutes
    assert warm_up_done([100, 300, 305, 301, 303, 299])     # the best of the last three within 3% of 305
    assert not warm_up_done([100, 300, 305, 301, 303, 320])  # 320 > 305 * 1.03: still rising
    assert not warm_up_done([218, 434, 358, 336, 520, 610])  # one early burst is not a plateau
    rates = iter([100.0, 300.0, 305.0, 301.0, 303.0, 299.0, 999.0])
    got, why = warm_up(lambda: next(rates), max_steps=8)
    assert got == [100.0, 300.0, 305.0, 301.0, 303.0, 299.0]
    assert why == "throughput stopped rising after 6 steps (the best of the last 3 within 3% of the best before them)"
    rising = iter(range(100, 10000, 100))
    got, why = warm_up(lambda: float(next(rising)), max_steps=5)
    assert len(got) == 5 and why == ("stopped at the 5 steps allowed (warm_max_steps), too few to tell whether "
                                     "throughput had stopped rising (the rule needs 6)")
    rising = iter(range(100, 10000, 100))
    got, why = warm_up(lambda: float(next(rising)), max_steps=8)
    assert len(got) == 8 and why == "still rising after the 8 steps allowed (warm_max_steps)"
    # 04's three steps at 2569bc4 fell (1,371, 967, 433 ops/s) and were said to be "still rising"
    falling = iter([1371.0, 967.0, 433.0])
    got, why = warm_up(lambda: next(falling), max_steps=3)
    assert why == "stopped at the 3 steps allowed (warm_max_steps), too few to tell whether throughput had " \
                  "stopped rising (the rule needs 6)"


def test_the_knee_is_the_smallest_concurrency_at_90_percent_of_the_best():
    points = [(1, 500.0), (2, 900.0), (4, 1500.0), (8, 1700.0), (16, 1750.0), (32, 1720.0)]
    assert knee(points) == 8                           # 1,548 = 90% of 1,720 (the second best); 1,500 falls short
    # 1,750 at 16 is above 110% of the best before it (1,500 at 4): not done; at 32 neither 16 nor 32 is
    assert ladder_done(points) and not ladder_done(points[:5])
    # one lucky step does not set the knee: 90% of the second best (1,026), not of 1,452
    noisy = [(1, 398.0), (2, 645.0), (4, 1026.0), (8, 913.0), (16, 1452.0)]
    assert knee(noisy) == 4
    rates = dict(points)
    cal = find_knee(lambda c: rates[c], "write")
    assert [c for c, _ in cal.points] == [1, 2, 4, 8, 16, 32]   # 16 and 32 under +10% of 8's stop the ladder
    assert (cal.knee, cal.best_ops_s, cal.below_knee, cal.rate(0.5)) == (8, 1750.0, 4, 875)
    assert Calibrated.from_json(cal.to_json()) == cal


def test_a_failed_step_ends_the_ladder_below_it_and_one_at_2_in_flight_fails_the_calibration():
    # 01's test study on a stalled machine: at 128 in flight 11% of the writes timed out
    rates = {1: 17.4, 2: 18.7, 4: 56.9, 8: 21.2, 16: 70.0, 32: 129.7, 64: 236.9}
    lines: list[str] = []

    def measure(c: int) -> float:
        if c not in rates:
            raise StepFailed(f"47 of 419 operations failed (11.2%, more than max_error_share=5%); run r{c}")
        return rates[c]

    cal = find_knee(measure, "write", log=lines.append)
    assert [c for c, _ in cal.points] == [1, 2, 4, 8, 16, 32, 64] and cal.knee == 32   # 90% of the second best
    assert lines[-1] == ("calibration write at 128 in flight failed: 47 of 419 operations failed (11.2%, more than "
                         "max_error_share=5%); run r128")
    assert cal.note.endswith("; at 128 in flight the step failed (47 of 419 operations failed (11.2%, more than "
                             "max_error_share=5%); run r128), so the ladder ended below it")
    rates = {1: 900.0}
    with pytest.raises(StepFailed, match="run r2"):
        find_knee(measure, "write")


def test_study_parameters_refuse_runs_too_short_for_20_intervals():
    with pytest.raises(ConfigError, match=r"run_s=4 at interval_s=0.25 gives 16 intervals: a run needs at least 20"):
        StudyParameters(run_s=4, interval_s=0.25)
    with pytest.raises(ConfigError, match=r"repeats=1: expected a whole number >= 2"):
        StudyParameters(repeats=1)


def test_an_arm_has_one_spec_or_clients_and_keeps_off_the_executor_labels():
    spec = WorkloadSpec(op="write", duration=5)
    with pytest.raises(ConfigError, match="give a spec, or clients"):
        Arm("x", {}, spec=spec, clients=(("dc1", spec),))
    with pytest.raises(ConfigError, match=r"labels \['block'\] are the executor's"):
        Arm("x", {"block": "1"}, spec=spec)
    twin = Arm("w", {"rf": "1"}, spec=spec, follows="v").twin()
    assert (twin.name, dict(twin.labels), twin.follows) == ("w (A/A)", {"rf": "1", "aa": "twin"}, None)


def test_plan_key_changes_with_the_plan_not_with_more_repeats():
    a = StudyParameters(repeats=3)
    assert a.plan_key() == StudyParameters(repeats=5).plan_key() == StudyParameters(repeats=3, experiment="x").plan_key()
    assert a.plan_key() != StudyParameters(seed=2).plan_key() != StudyParameters(run_s=10).plan_key()


def test_slots_name_block_position_and_arm():
    assert schedule(["a"], {}, 2, 1) == [Slot(1, 1, "a"), Slot(2, 1, "a")]


def test_a_knee_under_8_runs_at_4_in_flight_and_the_note_says_why():
    # 01 of make report at 9e04a30: flat from 2 in flight, so the knee was 2 and the runs went to 1
    rates = {1: 1773.0, 2: 2405.0, 4: 2402.0, 8: 2589.0}
    cal = find_knee(lambda c: rates[c], "write")
    assert (cal.knee, cal.below_knee) == (2, 4)
    assert cal.note == ("write: the knee is 2 in flight (90% of 2,405 ops/s, the second-best step; the best 2,589 "
                        "ops/s); closed-loop runs at 4 in flight (at least 4, so that a run measures more than one "
                        "round trip)")
    assert [Calibrated((), k, 1.0).below_knee for k in (1, 4, 8, 16, 64)] == [4, 4, 4, 8, 32]
