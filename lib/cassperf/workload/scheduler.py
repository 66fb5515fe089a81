"""Rate schedules: when each op is meant to start (nanoseconds on the monotonic clock).

``fixed=X/s``: op k of the whole run is meant to start at ``t0 + k / X``. The engine's P
processes share the run's schedule by interleaving: process i takes ops i, i + P, i + 2P, ...
(so each runs at X / P ops/s and together they are evenly spaced). Latency is then measured
from the *intended* start (response time) as well as from the actual send (service time):
when the cluster stalls, ops queue behind the schedule and their response time grows with the
wait, so coordinated omission is visible and corrected (HdrHistogram's and wrk2's approach;
cassandra-stress ``-rate fixed=``).

``throttle=X/s``: at most X ops/s, no promise kept: the same spacing, but when the sender falls
behind by more than ``max_lag_s`` the schedule restarts from now instead of catching up in a
burst. Latency is service time only.

``unlimited``: no schedule; ``intended()`` returns None.

The clock is ``time.monotonic_ns()`` (CLOCK_MONOTONIC), which is one clock for every process
on a Linux machine, so a start time chosen by the parent means the same instant in each worker.
"""

from __future__ import annotations

from dataclasses import dataclass

from cassperf.workload.spec import Rate

NS_PER_S = 1_000_000_000


@dataclass
class Schedule:
    """Intended start times for one process.

    rate_ops_s: the run's rate (all processes together); process/processes: this process's
    slot in the interleaving; t0_ns: the run's start (monotonic ns); throttle: restart instead
    of catching up when behind by more than max_lag_s.
    """

    rate_ops_s: float
    t0_ns: int
    process: int = 0
    processes: int = 1
    throttle: bool = False
    max_lag_s: float = 0.05

    def __post_init__(self) -> None:
        if not self.rate_ops_s > 0:
            raise ValueError(f"rate must be > 0 ops/s, got {self.rate_ops_s!r}")
        if not 0 <= self.process < self.processes:
            raise ValueError(f"process {self.process} is not in 0..{self.processes - 1}")
        self._k = 0                       # this process's next op, counted in its own ops
        self._base_ns = self.t0_ns + round(self.process * NS_PER_S / self.rate_ops_s)
        self._step_ns = self.processes * NS_PER_S / self.rate_ops_s   # float: no drift from rounding
        self._max_lag_ns = int(self.max_lag_s * NS_PER_S)
        self.restarts = 0                 # throttle: how often the schedule gave up catching up

    def intended(self, now_ns: int) -> int:
        """The intended start of this process's next op (and advance). For throttle, a schedule
        more than max_lag_s behind ``now_ns`` restarts at ``now_ns``."""
        t = self._base_ns + int(self._k * self._step_ns)
        if self.throttle and now_ns - t > self._max_lag_ns:
            self._base_ns, self._k = now_ns, 0
            self.restarts += 1
            t = now_ns
        self._k += 1
        return t

    def op_count_until(self, end_ns: int) -> int:
        """How many ops of this process are due to start before ``end_ns`` (for a fixed rate)."""
        if end_ns <= self._base_ns:
            return 0
        return int((end_ns - self._base_ns - 1) // self._step_ns) + 1


def schedule_for(rate: Rate, t0_ns: int, process: int = 0, processes: int = 1) -> Schedule | None:
    """The schedule a spec's Rate asks for, or None for an unlimited rate."""
    if rate.kind == "unlimited" or rate.ops_per_s is None:
        return None
    return Schedule(float(rate.ops_per_s), t0_ns, process, processes, throttle=rate.kind == "throttle")


def split_count(total: int, parts: int) -> list[int]:
    """``total`` ops over ``parts`` processes, as even as possible, larger shares first."""
    if parts <= 0:
        raise ValueError(f"parts must be > 0, got {parts}")
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def interval_bounds(t0_ns: int, interval_s: float, index: int) -> tuple[int, int]:
    """Start and end (monotonic ns) of interval ``index`` (0-based) of length ``interval_s``."""
    step = round(interval_s * NS_PER_S)
    return t0_ns + index * step, t0_ns + (index + 1) * step
