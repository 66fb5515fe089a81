"""Before the first measured run: warm the cluster, then find the knee of throughput against
concurrency (in the spirit of cassandra-stress ``-rate auto``).

Warm-up. A fresh JVM runs interpreted code, empty caches and unsized memtables: the first
minute of load on a new node is slower than the rest, and a study whose first arm ran then
would carry that into its comparison. The cluster is loaded in steps of ``step_s`` seconds until
throughput stops rising: :func:`warm_up_done` is true once the best of the last ``LAST`` steps is
no more than ``RISE_PCT`` above the best step before them (at least ``MIN_STEPS`` steps; at most
``max_steps``). The steps are stored runs (role=warmup); the report draws their curve. Why 3 of
at least 6: the first steps of a cold JVM rise in bursts as the JIT compiles, and a rule on the
last two of at least 3 stopped 01's warm-up after a dip at 4 steps where the same study otherwise
rose for 12 (docs/measurements.md).

Calibration. Closed-loop steps at 1, 2, 4, ... requests in flight, each ``calibrate_s``
seconds; the ladder stops when neither of the last two doublings got ``FLAT_GAIN_PCT`` above the
best step before them, or at ``MAX_CONCURRENCY``. The knee is the smallest concurrency whose
throughput reaches ``KNEE_SHARE`` of the second-best step's (:func:`knee`, :func:`reference`). Studies take their local concurrencies from it
(closed-loop runs below the knee, at half of it but at least ``MIN_IN_FLIGHT``; thread sweeps around it) and fixed rates as a stated share of
the best throughput, so that the local runs measure the cluster rather than a queue.
A step whose operations failed (timeouts past the run's error share: :class:`StepFailed`) is past
saturation: the ladder ends below it, and the note says so. One that fails at 1 or 2 in flight
leaves nothing to calibrate on, and the study fails with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from cassperf.experiments.study import MIN_IN_FLIGHT, Calibrated

RISE_PCT = 3.0
MIN_STEPS = 6
LAST = 3
FLAT_GAIN_PCT = 10.0
KNEE_SHARE = 0.9
MAX_CONCURRENCY = 256


def steps_to_judge(min_steps: int = MIN_STEPS) -> int:
    """The fewest warm-up steps :func:`warm_up_done` judges: ``min_steps``, and more than ``LAST``."""
    return max(min_steps, LAST + 1)


def warm_up_done(rates: Sequence[float], rise_pct: float = RISE_PCT, min_steps: int = MIN_STEPS) -> bool:
    """True when throughput stopped rising over ``rates`` (ops/s per warm-up step, in order)."""
    if len(rates) < steps_to_judge(min_steps):
        return False
    before, last = max(rates[:-LAST]), max(rates[-LAST:])
    return last <= before * (1 + rise_pct / 100)


def warm_up(measure: Callable[[], float], max_steps: int, log: Callable[[str], None] = lambda s: None) \
        -> tuple[list[float], str]:
    """Call ``measure()`` (one warm-up step; returns its ops/s) until :func:`warm_up_done` or
    ``max_steps``; returns the rates and why it stopped."""
    rates: list[float] = []
    for _ in range(max_steps):
        rates.append(float(measure()))
        log(f"warm-up step {len(rates)}: {rates[-1]:,.0f} ops/s")
        if warm_up_done(rates):
            return rates, (f"throughput stopped rising after {len(rates)} steps (the best of the last {LAST} "
                           f"within {RISE_PCT:g}% of the best before them)")
    if not rates:
        return rates, "no warm-up"
    judged = steps_to_judge()
    if len(rates) < judged:          # the rule never applied: the rates may as well have fallen
        return rates, (f"stopped at the {max_steps} steps allowed (warm_max_steps), too few to tell whether throughput "
                       f"had stopped rising (the rule needs {judged})")
    return rates, f"still rising after the {max_steps} steps allowed (warm_max_steps)"


def ladder_done(points: Sequence[tuple[int, float]], flat_gain_pct: float = FLAT_GAIN_PCT) -> bool:
    """True when neither of the last two doublings reached ``flat_gain_pct`` above the best step
    before them (at least 4 steps). Judged against the best so far rather than step to step: on
    2 s steps of a noisy 2-DC cluster a dip then a recovery kept the ladder climbing to 256."""
    if len(points) < 4:
        return False
    rates = [rate for _, rate in points]
    return max(rates[-2:]) < max(rates[:-2]) * (1 + flat_gain_pct / 100)


def reference(points: Sequence[tuple[int, float]]) -> float:
    """The throughput the knee is measured against: the second-best step from 4 steps on (one
    lucky step of a noisy cluster set 02's knee at 128 in flight where 16 reached 86% of it),
    else the best."""
    rates = sorted((rate for _, rate in points), reverse=True)
    return rates[1] if len(rates) >= 4 else rates[0]


def knee(points: Sequence[tuple[int, float]], share: float = KNEE_SHARE) -> int:
    """The smallest concurrency whose throughput reaches ``share`` of the reference (above)."""
    best = reference(points)
    return min(c for c, rate in points if rate >= share * best)


class StepFailed(Exception):
    """A calibration step whose operations failed (its message says how many); raised by the
    ladder's ``measure``."""


#: a ladder ended by a failed step needs this many good steps below it
MIN_STEPS_BEFORE_FAILURE = 2


def find_knee(measure: Callable[[int], float], op: str, max_concurrency: int = MAX_CONCURRENCY,
              log: Callable[[str], None] = lambda s: None) -> Calibrated:
    """Run the ladder (``measure(concurrency)`` returns ops/s, or raises StepFailed) and return
    what it found."""
    points: list[tuple[int, float]] = []
    failed = ""
    c = 1
    while c <= max_concurrency:
        try:
            rate = float(measure(c))
        except StepFailed as exc:
            if len(points) < MIN_STEPS_BEFORE_FAILURE:
                raise
            failed = f"; at {c} in flight the step failed ({exc}), so the ladder ended below it"
            log(f"calibration {op} at {c} in flight failed: {exc}")
            break
        points.append((c, rate))
        log(f"calibration {op} at {c} in flight: {points[-1][1]:,.0f} ops/s")
        if ladder_done(points):
            break
        c *= 2
    k = knee(points)
    best = max(rate for _, rate in points)
    against = (f"{reference(points):,.0f} ops/s, the second-best step; the best {best:,.0f} ops/s"
               if len(points) >= 4 else f"the best, {best:,.0f} ops/s")
    found = Calibrated(tuple(points), k, best, op)
    runs = found.below_knee
    where = "below the knee" if runs < k else f"at least {MIN_IN_FLIGHT}, so that a run measures more than one round trip"
    note = (f"{op}: the knee is {k} in flight ({KNEE_SHARE:.0%} of {against}); closed-loop runs at {runs} in flight "
            f"({where}){failed}")
    return replace(found, note=note)
