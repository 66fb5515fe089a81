"""Rate schedules: intended start times of a fixed rate, the throttle's restart, op splits."""

from __future__ import annotations

import pytest

from cassperf.workload.scheduler import NS_PER_S, Schedule, interval_bounds, schedule_for, split_count
from cassperf.workload.spec import Rate

T0 = 5 * NS_PER_S


def test_fixed_rate_intended_starts_are_evenly_spaced_from_t0():
    s = Schedule(200.0, T0)
    times = [s.intended(T0) for _ in range(5)]
    assert times == [T0, T0 + 5_000_000, T0 + 10_000_000, T0 + 15_000_000, T0 + 20_000_000]


def test_fixed_rate_keeps_its_schedule_when_the_sender_falls_behind():
    """Coordinated omission correction rests on this: a late sender does not move the schedule."""
    s = Schedule(1000.0, T0)
    late = T0 + 3 * NS_PER_S
    times = [s.intended(late) for _ in range(3)]
    assert times == [T0, T0 + 1_000_000, T0 + 2_000_000]
    assert s.restarts == 0


def test_processes_interleave_into_one_evenly_spaced_schedule():
    rate, procs = 3000.0, 3
    scheds = [Schedule(rate, T0, i, procs) for i in range(procs)]
    merged = sorted(t for s in scheds for t in (s.intended(T0) for _ in range(1000)))
    gaps = {b - a for a, b in zip(merged, merged[1:], strict=False)}
    assert merged[0] == T0 and len(merged) == 3000
    assert gaps <= {333_333, 333_334}          # 1/3000 s, rounded to whole ns
    assert abs(merged[-1] - (T0 + 2999 * NS_PER_S / rate)) <= 1


def test_fractional_step_does_not_drift():
    s = Schedule(3.0, T0)                       # 333,333,333.33 ns apart
    times = [s.intended(T0) for _ in range(3001)]
    assert times[-1] == T0 + 1000 * NS_PER_S


def test_throttle_restarts_from_now_instead_of_bursting():
    s = Schedule(1000.0, T0, throttle=True, max_lag_s=0.05)
    assert s.intended(T0) == T0
    late = T0 + 2 * NS_PER_S
    assert s.intended(late) == late             # 2 s behind: restart, no catch-up burst
    assert s.intended(late) == late + 1_000_000
    assert s.restarts == 1
    within = Schedule(1000.0, T0, throttle=True, max_lag_s=0.05)
    assert within.intended(T0 + 40_000_000) == T0   # 40 ms behind: still on schedule
    assert within.restarts == 0


def test_op_count_until_counts_the_intended_starts_before_the_end():
    for procs in (1, 2, 3):
        for i in range(procs):
            s = Schedule(200.0, T0, i, procs)
            probe = Schedule(200.0, T0, i, procs)
            end = T0 + 10 * NS_PER_S
            expected = 0
            while probe.intended(T0) < end:
                expected += 1
            assert s.op_count_until(end) == expected
    assert sum(Schedule(200.0, T0, i, 3).op_count_until(T0 + 10 * NS_PER_S) for i in range(3)) == 2000
    assert Schedule(200.0, T0).op_count_until(T0) == 0


def test_schedule_for_follows_the_rate_mode():
    assert schedule_for(Rate(), T0) is None
    fixed = schedule_for(Rate("fixed", 500), T0, 1, 2)
    assert fixed is not None and not fixed.throttle and fixed.intended(T0) == T0 + 2_000_000
    throttle = schedule_for(Rate.parse("throttle=500/s"), T0)
    assert throttle is not None and throttle.throttle


def test_bad_schedules_are_refused():
    with pytest.raises(ValueError, match="rate must be > 0"):
        Schedule(0.0, T0)
    with pytest.raises(ValueError, match="process 2 is not in 0..1"):
        Schedule(10.0, T0, 2, 2)


def test_split_count_is_even_and_exact():
    assert split_count(2000, 3) == [667, 667, 666]
    assert split_count(2, 4) == [1, 1, 0, 0]
    assert sum(split_count(12345, 7)) == 12345
    with pytest.raises(ValueError):
        split_count(10, 0)


def test_interval_bounds():
    assert interval_bounds(T0, 1.0, 0) == (T0, T0 + NS_PER_S)
    assert interval_bounds(T0, 0.25, 3) == (T0 + 750_000_000, T0 + NS_PER_S)
