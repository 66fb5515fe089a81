"""What a study's plan costs, known before it runs: its arms, runs, load time and data size,
from the Study alone (its parameters: no cluster is asked, nothing starts).

Load time, in seconds, is what the executor (cassperf.experiments.executor) runs, in its order:

- preparations: their rows (op counts) at a write rate: ``EMBEDDED_LOAD_ROWS_S`` measured on
  the embedded cluster; on a named cluster the rate is not known before the run, so their time is
  given at a stated example rate and kept out of the total;
- warm-up: per context (cluster), from ``calibrate.steps_to_judge()`` (or ``warm_max_steps`` when lower)
  to ``warm_max_steps`` steps of ``warm_step_s``;
- calibration (when the study calibrates): from 4 to 9 steps (1 to ``MAX_CONCURRENCY`` in flight,
  doubling) of ``calibrate_s`` plus its unrecorded ``CALIBRATION_WARMUP_S``;
- the warm pass: every arm once for ``warm_arm_s``;
- the measured runs: (arms + the A/A twin) x ``repeats``, each its duration plus its unrecorded
  ``warmup_s`` (arms whose spec asks for it), and up to ``quiet_max_s`` waiting for idle nodes.

Every run but a preparation's (a warm-up or calibration step, a warm pass, a measured run) also
costs ``RUN_OVERHEAD_S``: starting the engine's workers and the sampler, storing the run, saving
the record.

Data size: per keyspace, rows (the highest key a preparation or a write reaches) x row bytes
(``column_count`` x ``column_size``) x replicas (all DCs), before compression and Cassandra's own
per-row overhead.

The arm count is ``study.arms(None)``. Where the study calibrates its concurrency (a local
default of 0), the arms' concurrency is known only at run time: it is said so, found by planning
the arms for two different knees and comparing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cassperf.experiments.calibrate import MAX_CONCURRENCY, steps_to_judge
from cassperf.experiments.executor import CALIBRATION_WARMUP_S
from cassperf.experiments.study import Arm, Calibrated, Study
from cassperf.workload.spec import WorkloadSpec

#: seconds a run takes beyond its load (its duration and unrecorded warm-up): the executor's time
#: after its preparations, less the load of every run it made, over those runs, in its record of 01
#: in a make report on the embedded cluster (bench/plan_overhead.py prints it from the records
#: under data/runs/.studies/, with the slots' own figure beside it)
RUN_OVERHEAD_S = 0.8
#: rows/s of the preparations' loads on the embedded cluster, creating the schema included (the
#: same record: their rows over the seconds its log gives them)
EMBEDDED_LOAD_ROWS_S = 366.0
#: the write rate a named cluster's preparation time is given at (an example: its own rate is not
#: known before the run)
EXAMPLE_LOAD_ROWS_S = 10_000.0
#: where RUN_OVERHEAD_S and EMBEDDED_LOAD_ROWS_S come from, said with them
MEASURED_BY = "measured by bench/plan_overhead.py on the executor's records of a make report of 01 (embedded cluster)"

_PROBES = (Calibrated(((1, 100.0), (64, 1000.0)), 64, 1000.0), Calibrated(((1, 100.0), (8, 8000.0)), 8, 8000.0))


@dataclass(frozen=True)
class Span:
    """A time that lies between ``low`` and ``high`` seconds (equal when it is known)."""

    low: float
    high: float

    def __add__(self, other: "Span") -> "Span":
        return Span(self.low + other.low, self.high + other.high)


@dataclass(frozen=True)
class KeyspaceSize:
    """One keyspace the plan writes, on one context (cluster) of the study."""

    context: str
    keyspace: str
    rows: int
    row_bytes: int          # column_count x column_size, bytes
    factors: tuple[int, ...]    # replication factor per DC (one for SimpleStrategy)

    @property
    def replicas(self) -> int:
        """Copies of each row over every DC."""
        return sum(self.factors)

    @property
    def bytes(self) -> int:
        return self.rows * self.row_bytes * self.replicas


@dataclass(frozen=True)
class StudyCost:
    """What a plan runs (see the module doc); seconds."""

    study: str
    arms: int
    aa_arm: str | None          # the arm the A/A control repeats; None: no A/A control
    repeats: int
    contexts: int
    run_durations: tuple[int, ...]      # distinct durations of the measured runs, s
    run_warmups: tuple[float, ...]      # distinct unrecorded warm-ups before them, s
    measured_s: float           # load of every measured run (duration + warm-up), s
    count_runs: int             # measured runs given by op count (their time is not known)
    quiet_max_s: float          # the most a run waits for idle nodes, s
    warm_pass_runs: int         # arms run once each before block 1 (0: no warm pass)
    warm_arm_s: int
    warmup_steps: tuple[int, int]       # per context (cluster)
    warm_step_s: int
    calibration_steps: tuple[int, int]      # (0, 0): the study does not calibrate
    calibration_step_s: float
    preparations: int
    preparation_rows: int
    calibrated: bool            # the arms' concurrency is found at run time
    concurrencies: tuple[str, ...]          # the arms' loads when not calibrated ("16", "fixed=300/s")
    keyspaces: tuple[KeyspaceSize, ...]

    @property
    def runs(self) -> int:
        return (self.arms + (self.aa_arm is not None)) * self.repeats

    def measured(self, per_run_s: float = RUN_OVERHEAD_S) -> Span:
        """The measured runs, each with its overhead, and up to quiet_max_s waiting before it."""
        low = self.measured_s + self.runs * per_run_s
        return Span(low, low + self.runs * self.quiet_max_s)

    def warm_pass(self, per_run_s: float = RUN_OVERHEAD_S) -> Span:
        s = self.warm_pass_runs * (self.warm_arm_s + per_run_s)
        return Span(s, s)

    def warmup(self, per_run_s: float = RUN_OVERHEAD_S) -> Span:
        return Span(*(self.contexts * n * (self.warm_step_s + per_run_s) for n in self.warmup_steps))

    def calibration(self, per_run_s: float = RUN_OVERHEAD_S) -> Span:
        return Span(*(n * (self.calibration_step_s + per_run_s) for n in self.calibration_steps))

    def preparation_s(self, rows_per_s: float) -> float:
        return self.preparation_rows / rows_per_s

    def load(self, rows_per_s: float | None, per_run_s: float = RUN_OVERHEAD_S) -> Span:
        """The load time, every run with ``per_run_s`` of overhead; the preparations' only at a
        known rate (None: left out)."""
        prepared = self.preparation_s(rows_per_s) if rows_per_s else 0.0
        return (Span(prepared, prepared) + self.measured(per_run_s) + self.warm_pass(per_run_s)
                + self.warmup(per_run_s) + self.calibration(per_run_s))

    @property
    def data_bytes(self) -> int:
        return sum(k.bytes for k in self.keyspaces)


def _factors(spec: WorkloadSpec) -> tuple[int, ...]:
    r = spec.replication
    if r is None:
        return (1,)                     # cassandra-stress's default: SimpleStrategy, factor 1
    return (r.factor,) if r.factor is not None else tuple(f for _, f in r.dc_factors)


def _load(spec: WorkloadSpec) -> str:
    rate = f" {spec.rate.kind}={spec.rate.ops_per_s:g}/s" if spec.rate.ops_per_s else ""
    return f"{spec.concurrency}{rate}"


def _arm_loads(arms: Sequence[Arm]) -> dict[str, tuple[str, ...]]:
    return {a.name: tuple(_load(s) for s in a.specs) for a in arms}


def _calibrated(study: Study) -> bool:
    """The arms' concurrency or rate follows the calibration: planned for two knees, they differ."""
    if study.calibration_spec() is None:
        return False
    first, second = (_arm_loads(study.arms(probe)) for probe in _PROBES)
    return any(first[name] != second[name] for name in first.keys() & second.keys()) or first.keys() != second.keys()


def _keyspaces(study: Study, arms: Sequence[Arm]) -> tuple[KeyspaceSize, ...]:
    specs: list[tuple[str, WorkloadSpec]] = [(p.context, p.spec) for p in study.preparations()]
    specs += [(a.context, s) for a in arms for s in a.specs if s.op in ("write", "mixed")]
    found: dict[tuple[str, str], KeyspaceSize] = {}
    for context, spec in specs:
        rows = spec.population.high if spec.population is not None else (spec.n or 0)
        key = (context, spec.keyspace)
        old = found.get(key)            # the first load made the keyspace: its replication holds
        found[key] = KeyspaceSize(context, spec.keyspace, max(rows, old.rows if old else 0),
                                  spec.column_count * spec.column_size, old.factors if old else _factors(spec))
    return tuple(found.values())


def study_cost(study: Study) -> StudyCost:
    """The cost of ``study``'s plan (module doc)."""
    arms = study.arms(None)
    aa_arm = study.aa_arm(arms) if study.aa and arms else None
    measured = [*arms, *([next(a for a in arms if a.name == aa_arm)] if aa_arm else [])]
    durations, warmups, load_s, count_runs = set(), set(), 0.0, 0
    for arm in measured:
        timed = [s.duration for s in arm.specs if s.duration is not None]
        warm = study.warmup_s if any(s.warmup for s in arm.specs) else 0.0
        if not timed:
            count_runs += study.repeats
            continue
        durations.add(max(timed))
        warmups.add(warm)
        load_s += (max(timed) + warm) * study.repeats
    contexts = len({a.context for a in arms} | {p.context for p in study.preparations()}) or 1
    warms = study.warm_spec() is not None and study.warm_max_steps > 0
    low_steps = min(steps_to_judge(), study.warm_max_steps)
    calibrates = study.calibration_spec() is not None
    preparations = study.preparations()
    return StudyCost(
        study=study.name, arms=len(arms), aa_arm=aa_arm, repeats=study.repeats, contexts=contexts,
        run_durations=tuple(sorted(durations)), run_warmups=tuple(sorted(warmups)), measured_s=load_s,
        count_runs=count_runs, quiet_max_s=float(study.quiet_max_s),
        warm_pass_runs=len(arms) if study.warm_arm_s > 0 else 0, warm_arm_s=study.warm_arm_s,
        warmup_steps=(low_steps, study.warm_max_steps) if warms else (0, 0), warm_step_s=study.warm_step_s,
        calibration_steps=(4, int(math.log2(MAX_CONCURRENCY)) + 1) if calibrates else (0, 0),
        calibration_step_s=study.calibrate_s + min(study.warmup_s, CALIBRATION_WARMUP_S),
        preparations=len(preparations), preparation_rows=sum(p.spec.n or 0 for p in preparations),
        calibrated=_calibrated(study),
        concurrencies=tuple(sorted({load for loads in _arm_loads(arms).values() for load in loads},
                                   key=lambda load: (int(load.split()[0]), load))),
        keyspaces=_keyspaces(study, arms))


# -- the words ---------------------------------------------------------------------------------
def fmt_seconds(seconds: float) -> str:
    """9 s, 22.5 s, 7 min 24 s, 7 h 50 min (minutes rounded from 1 h on)."""
    if seconds < 60:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    if seconds < 3600:
        m, s = divmod(math.floor(seconds + 0.5), 60)
        return f"{m} min {s} s" if s else f"{m} min"
    h, m = divmod(math.floor(seconds / 60 + 0.5), 60)
    return f"{h} h {m} min" if m else f"{h} h"


def fmt_span(span: Span) -> str:
    return fmt_seconds(span.low) if fmt_seconds(span.low) == fmt_seconds(span.high) else \
        f"{fmt_seconds(span.low)} to {fmt_seconds(span.high)}"


def fmt_bytes(n: float) -> str:
    """Decimal units: 20.4 MB, 40.9 GB, 1.2 TB."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def _steps(steps: tuple[int, int]) -> str:
    return f"{steps[0]} steps" if steps[0] == steps[1] else f"{steps[0]} to {steps[1]} steps"


def _s(values: Sequence[float]) -> str:
    return " or ".join(fmt_seconds(v) for v in values)


def cost_lines(cost: StudyCost, embedded: bool, per_run_s: float = RUN_OVERHEAD_S,
               embedded_rows_s: float = EMBEDDED_LOAD_ROWS_S, example_rows_s: float = EXAMPLE_LOAD_ROWS_S) -> list[str]:
    """The plan's cost in words, one line per part (indented under the notebook's heading)."""
    twin = f" + the A/A twin of {cost.aa_arm}" if cost.aa_arm else ""
    unrecorded = [w for w in cost.run_warmups if w]
    out = [f"arms: {cost.arms}{twin}; {cost.repeats} repeats: {cost.runs} runs"
           + (f" of {_s(cost.run_durations)}" if cost.run_durations else "")
           + (f" after {_s(unrecorded)} unrecorded" + (" where the arm asks for it" if 0 in cost.run_warmups else "")
              if unrecorded else "")
           + (f" ({cost.count_runs} by op count: their time is not known before)" if cost.count_runs else "")]
    out.append("concurrency: calibrated at run time (the knee found on the cluster)" if cost.calibrated
               else f"concurrency: {', '.join(cost.concurrencies)} in flight")
    rate = embedded_rows_s if embedded else None
    out.append(f"load time: {fmt_span(cost.load(rate, per_run_s))}"
               + ("" if embedded or not cost.preparation_rows else " and the preparations"))
    per_run = _s(cost.run_durations) if len(cost.run_durations) == 1 else "its duration"
    warm = (f" + {_s(cost.run_warmups)}" if len(cost.run_warmups) == 1 else " + its warm-up") if unrecorded else ""
    quiet = f" + up to {fmt_seconds(cost.quiet_max_s)} for idle nodes" if cost.quiet_max_s else ""
    over = f" + {fmt_seconds(per_run_s)}"
    parts = [("measured runs", f"{cost.runs} x ({per_run}{warm}{over} overhead{quiet})", cost.measured(per_run_s))]
    if cost.warm_pass_runs:
        parts.append(("warm pass", f"{cost.warm_pass_runs} arms x ({fmt_seconds(cost.warm_arm_s)}{over})",
                      cost.warm_pass(per_run_s)))
    if cost.warmup_steps != (0, 0):
        where = f" on each of {cost.contexts} clusters" if cost.contexts > 1 else ""
        parts.append(("warm-up", f"{_steps(cost.warmup_steps)} x ({fmt_seconds(cost.warm_step_s)}{over}){where}",
                      cost.warmup(per_run_s)))
    if cost.calibration_steps != (0, 0):
        parts.append(("calibration", f"{_steps(cost.calibration_steps)} x ({fmt_seconds(cost.calibration_step_s)}"
                                     f"{over})", cost.calibration(per_run_s)))
    for name, how, span in parts:
        out.append(f"  {name + ':':15}{how} = {fmt_span(span)}")
    if cost.preparations:
        loads = f"{cost.preparations} load{'s' if cost.preparations != 1 else ''}, {cost.preparation_rows:,} rows"
        if embedded:
            s = cost.preparation_s(embedded_rows_s)
            out.append(f"  {'preparations:':15}{loads} at {embedded_rows_s:,.0f} rows/s = {fmt_seconds(s)}")
        else:
            s = cost.preparation_s(example_rows_s)
            out.append(f"  {'preparations:':15}{loads}, at your cluster's write rate (at {example_rows_s:,.0f} "
                       f"rows/s: {fmt_seconds(s)}; not in the load time above)")
    sizes = "; ".join(f"{k.keyspace}{' on ' + k.context if k.context else ''} {k.rows:,} rows x {k.row_bytes:,} B x "
                      f"RF {'+'.join(map(str, k.factors))} = {fmt_bytes(k.bytes)}" for k in cost.keyspaces)
    out.append(f"data: {len(cost.keyspaces)} keyspace{'s' if len(cost.keyspaces) != 1 else ''}, "
               f"{fmt_bytes(cost.data_bytes)} before compression ({sizes})")
    return out


def plan_lines(heading: str, study: Study, embedded: bool) -> list[str]:
    """A notebook's plan: ``heading``, then its cost lines (cost_lines) indented."""
    return [heading, *(f"  {line}" for line in cost_lines(study_cost(study), embedded))]


def overhead_note(per_run_s: float = RUN_OVERHEAD_S, embedded_rows_s: float = EMBEDDED_LOAD_ROWS_S) -> str:
    return (f"per-run overhead {fmt_seconds(per_run_s)} and the embedded cluster's preparation rate "
            f"{embedded_rows_s:,.0f} rows/s: {MEASURED_BY}")


__all__ = ["EMBEDDED_LOAD_ROWS_S", "EXAMPLE_LOAD_ROWS_S", "KeyspaceSize", "RUN_OVERHEAD_S", "Span",
           "StudyCost", "cost_lines", "fmt_bytes", "fmt_seconds", "fmt_span", "overhead_note", "plan_lines",
           "study_cost"]
