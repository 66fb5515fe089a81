"""The one Study contract every study implements, and the arms it plans.

A study is parameters -> a plan of arms -> the one executor (``cassperf.experiments.executor``)
-> a tidy runs frame -> claims -> report sections. A study module holds only what is particular
to it (scikit-learn's estimator contract, driven by one machine):

- :class:`StudyParameters`: the parameters every study shares (``experiment``, ``repeats``,
  ``seed``, ``run_s``, ``interval_s``, ``tool``, warm-up and calibration settings), validated
  on construction; a study's dataclass adds its own.
- :class:`Study`: ``preparations()`` (unmeasured loads the arms need, e.g. a keyspace's rows),
  ``warm_spec()`` (the load that warms the cluster), ``calibration_spec()`` (the load whose
  throughput knee is found, or None), ``arms(calibrated)`` (the configurations), ``aa_arm(arms)``
  (the arm run a second time, identically, as the A/A control), and the hooks: ``contexts``
  (cluster life cycle: one cluster per deployment, a loop filesystem) and ``runner`` (client
  placement: clients per DC on Dask).
- :class:`Arm`: one configuration; one run of it per block.

The executor interleaves the arms in randomized blocks (each block holds every arm once, in a
seeded random order), resumes at the next run, and re-runs an arm whose run was cut short.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from cassperf.constraints import Flag, Real, Text, Whole, validate
from cassperf.errors import ConfigError
from cassperf.experiments.analysis import Analysis
from cassperf.experiments.runner import LocalRunner
from cassperf.workload.spec import WorkloadSpec

#: Labels the executor gives every run (a study's own labels must not use them).
EXECUTOR_LABELS = ("study", "experiment", "plan", "role", "arm", "block", "position", "seed", "tool", "spec_key",
                   "pool")
#: role label values: measured arm runs, unmeasured preparation loads, warm-up and calibration steps
ROLES = ("measure", "load", "warmup", "calibration")
#: the A/A twin's arm name is its original's with this suffix
AA_SUFFIX = " (A/A)"


@dataclass(frozen=True)
class Arm:
    """One configuration of a study. ``name`` is its stable id (unique in the study);
    ``labels`` its point labels (rf, op, threads, ...); one run of it is ``spec`` run by
    ``tool`` on the cluster of ``context`` (or, with ``clients``, one spec per client location
    started together by the study's runner). ``before(cluster) -> note`` runs first (e.g. empty
    the caches); ``during(writer, cluster)`` runs in a thread when measurement starts (run_spec's
    during action, given the arm's cluster too). ``follows``: the arm this one runs right after
    in every block (run "b" after its cold run "a"); such a chain is placed as one unit.
    ``pool``: the arms whose run-to-run spread a comparison may share (analysis.arms, RCBD); None
    (the default) pools the arm with the others of its kind (the same op at the same load, see
    ``pool_label``), "" pools it with none (an arm made different on purpose, e.g. run from an
    emptied cache)."""

    name: str
    labels: Mapping[str, str]
    spec: WorkloadSpec | None = None
    clients: tuple[tuple[str, WorkloadSpec], ...] = ()
    tool: str = "engine"
    before: Callable[[Any], str | None] | None = None
    during: Callable[[Any, Any], Any] | None = None
    context: str = ""
    follows: str | None = None
    sampler_tables: tuple[tuple[str, str], ...] = ()
    pool: str | None = None

    def __post_init__(self) -> None:
        if (self.spec is None) == (not self.clients):
            raise ConfigError(f"arm {self.name!r}: give a spec, or clients (dc, spec) pairs, not both or neither")
        clash = sorted(set(self.labels) & set(EXECUTOR_LABELS))
        if clash:
            raise ConfigError(f"arm {self.name!r}: labels {clash} are the executor's; name them otherwise")

    @property
    def pool_label(self) -> str:
        """The run label ``pool``: ``pool``, or by default the arm's kind from its (first) spec: the
        op and the load, "read x128" (requests in flight), "mixed x64 fixed=1400/s" or "write x16
        2 clients" (an arm with a client per DC). The load is
        part of the kind because the run-to-run spread grows with it: 05's make report runs
        varied 2-5% from run to run at 8 in flight, 10-17% at 128 (past the knee)."""
        if self.pool is not None:
            return self.pool
        spec = self.specs[0]
        rate = spec.rate
        clients = f" {len(self.specs)} clients" if len(self.specs) > 1 else ""
        return f"{spec.op} x{spec.concurrency}" + (f" {rate.kind}={rate.ops_per_s}/s" if rate.ops_per_s else "") + clients

    @property
    def specs(self) -> list[WorkloadSpec]:
        return [self.spec] if self.spec is not None else [s for _, s in self.clients]

    @property
    def tables(self) -> list[tuple[str, str]]:
        return list(self.sampler_tables) or list(dict.fromkeys((s.keyspace, "standard1") for s in self.specs))

    def twin(self) -> "Arm":
        """The A/A control: this arm again, identical but for its name and ``aa=twin``."""
        return dataclasses.replace(self, name=self.name + AA_SUFFIX, labels={**self.labels, "aa": "twin"},
                                   follows=None)


@dataclass(frozen=True)
class Preparation:
    """An unmeasured load the arms need before the first block (e.g. the rows a keyspace's reads
    read), run once per plan and stored with role=load; skipped on resume while its run is stored
    and its keyspace exists."""

    name: str
    spec: WorkloadSpec
    context: str = ""
    tool: str = "engine"


#: the fewest requests in flight of a calibrated closed-loop run: with 1 or 2, a run measures one
#: request's round trip and this machine's wake-ups rather than what the cluster serves, and its
#: run-to-run spread grows (docs/measurements.md)
MIN_IN_FLIGHT = 4

#: seconds of measured load per run of the published studies' local defaults (05 keeps 4: its run
#: a's disk reads are its cache claims' manipulation figure): a run's own intervals explain a sixth
#: to a quarter of the run-to-run variance, so a 4th second hardly narrows a verdict (docs/measurements.md)
LOCAL_RUN_S = 3


@dataclass(frozen=True)
class Calibrated:
    """What calibration found on this cluster: the throughput at each concurrency tried, the
    knee (the smallest concurrency reaching ``KNEE_SHARE`` of the best throughput), and the
    settings the local defaults take from it. Units: ops/s."""

    points: tuple[tuple[int, float], ...]        # (requests in flight, ops/s)
    knee: int                                    # requests in flight at the knee
    best_ops_s: float
    op: str = ""
    note: str = ""

    @property
    def below_knee(self) -> int:
        """The closed-loop concurrency below the knee: half the knee, at least MIN_IN_FLIGHT."""
        return max(MIN_IN_FLIGHT, self.knee // 2)

    def rate(self, share: float) -> int:
        """A fixed rate at ``share`` of the best throughput, whole ops/s (at least 1)."""
        return max(1, int(round(self.best_ops_s * share)))

    def to_json(self) -> dict[str, Any]:
        return {"points": [list(p) for p in self.points], "knee": self.knee, "best_ops_s": self.best_ops_s,
                "op": self.op, "note": self.note}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Calibrated":
        return cls(tuple((int(c), float(r)) for c, r in data["points"]), int(data["knee"]),
                   float(data["best_ops_s"]), str(data.get("op", "")), str(data.get("note", "")))


@dataclass(frozen=True)
class StudyParameters:
    """What every study takes (the notebooks' shared parameters), validated on construction.

    repeats: runs per arm, one per block; seed: the blocks' random order; run_s: seconds of
    measured load per run (after ``warmup_s`` unrecorded), interval_s: reporting interval (a run
    holds run_s / interval_s intervals, at least ``MIN_INTERVALS``); warm_step_s / warm_max_steps:
    the warm-up's steps; calibrate_s: seconds per calibration point; warm_arm_s: seconds of the
    warm pass, every arm once right before block 1, unmeasured (0: none); aa: run the A/A control;
    quiet_max_s: before each measured run, wait up to this many seconds for the study's local nodes
    to go idle (cassperf.experiments.quiet; 0: no wait); profile: each measured run records a CPU
    profile of the nodes (Java Flight Recorder, cassperf.cluster.profiler; False: none)."""

    MIN_INTERVALS: ClassVar[int] = 20
    #: parameters that say where a study runs, not what it measures: left out of the plan key (a
    #: profile only watches: a plan measured with profiles goes on without them, and the other way)
    NOT_IN_PLAN: ClassVar[tuple[str, ...]] = ("experiment", "repeats", "profile")
    #: ClusterSampler options of the measured runs (beside tables and interval_s)
    SAMPLER: ClassVar[dict[str, Any]] = {}

    experiment: str = "local"
    repeats: int = 3
    seed: int = 1
    run_s: int = 4
    interval_s: float = 0.1
    warmup_s: float = 1.0
    tool: str = "engine"
    warm_step_s: int = 3
    warm_max_steps: int = 5
    calibrate_s: int = 2
    warm_arm_s: int = 1
    aa: bool = True
    quiet_max_s: float = 0.0
    profile: bool = True

    #: what each parameter must be (cassperf.constraints; a study's class adds its own)
    CONSTRAINTS: ClassVar[dict[str, Any]] = {
        "experiment": Text("e.g. 'local'"), "repeats": Whole(2), "seed": Whole(0), "run_s": Whole(1),
        "interval_s": Real(0, low_open=True, unit="seconds", note="e.g. 0.25"), "warmup_s": Real(0, unit="seconds"),
        "warm_step_s": Whole(1), "warm_max_steps": Whole(0), "calibrate_s": Whole(1), "warm_arm_s": Whole(0),
        "quiet_max_s": Real(0, 600, unit="seconds", note="0: no wait"),
        "profile": Flag("True: a CPU profile of the nodes per measured run")}

    def __post_init__(self) -> None:
        validate(self)
        if self.run_s / self.interval_s < self.MIN_INTERVALS:
            raise ConfigError(f"run_s={self.run_s} at interval_s={self.interval_s:g} gives "
                              f"{self.run_s / self.interval_s:.0f} intervals: a run needs at least "
                              f"{self.MIN_INTERVALS}; raise run_s or lower interval_s")

    @classmethod
    def from_parameters(cls, namespace: Mapping[str, Any], **overrides: Any) -> Any:
        """The study from a notebook's parameters (pass ``globals()``): every field whose name is
        a key of ``namespace`` takes its value (lists become tuples), then ``overrides``."""
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in namespace.items() if k in names}
        return cls(**{**values, **overrides})

    def plan_key(self) -> str:
        """12 hex digits naming the plan: every parameter but ``experiment`` and ``repeats`` (more
        repeats extend a plan; the seed, run length and every study parameter make another)."""
        data = {k: v for k, v in dataclasses.asdict(self).items() if k not in self.NOT_IN_PLAN}
        text = json.dumps({"study": type(self).__name__, **data}, sort_keys=True, default=repr)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


class Study(StudyParameters):
    """The contract (module doc). Subclasses are frozen dataclasses of their parameters and set
    ``name`` (the ``study`` label), ``title`` and ``source`` (the published study: its title and what it was)."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    source: ClassVar[str] = ""
    #: the claims column's heading: a published study's findings in our words, or a user's own claims
    CLAIM_HEADING: ClassVar[str] = "Published finding (our words)"

    # -- the plan ------------------------------------------------------------------------------
    def preparations(self) -> list[Preparation]:
        return []

    def warm_spec(self) -> WorkloadSpec | None:
        """The load that warms the cluster before the first measured run (None: no warm-up)."""
        return None

    def calibration_spec(self) -> WorkloadSpec | None:
        """The closed-loop load whose throughput knee sets the local defaults (None: the study's
        parameters give every concurrency and rate, nothing to calibrate)."""
        return None

    def arms(self, calibrated: Calibrated | None) -> list[Arm]:
        raise NotImplementedError

    def aa_arm(self, arms: Sequence[Arm]) -> str:
        """The arm run a second time, identically, as the A/A control (default: the first)."""
        return arms[0].name

    def arm_labels(self, labels: Mapping[str, str]) -> dict[str, str]:
        """An imported run's labels as the plan's arm would carry them: by default as they are (its
        ``arm`` label names the arm); a study may name the arm from labels such as rf and op and
        fill in the labels its analysis reads (an ``arm`` of "" or none: not known)."""
        return dict(labels)

    # -- the hooks -----------------------------------------------------------------------------
    @contextmanager
    def contexts(self, cluster: Any) -> Iterator[dict[str, Any]]:
        """The clusters the arms run on, by context name ("" the given cluster), for the whole
        study: started on entry, stopped on exit (also on failure)."""
        yield {"": cluster}

    @contextmanager
    def runner(self, contexts: Mapping[str, Any]) -> Iterator[Any]:
        """What runs one arm (client placement); the default runs its spec in this process."""
        yield LocalRunner()

    def baseline(self, contexts: Mapping[str, Any], runner: Any) -> Mapping[str, Any] | None:
        """Measurements of the study's setting, once per execution before the blocks (e.g. the
        network between the DCs); the executor keeps them in the record under ``baseline``."""
        return None

    #: how an import may name an arm by labels instead of ``arm`` (said in the error of a run without one)
    ARM_LABELS_HINT: ClassVar[str] = ""
    #: True: the study starts its own clusters in ``contexts`` (one per deployment) unless the
    #: parameters name the user's cluster; no cluster is started for it beforehand
    OWN_CLUSTERS: ClassVar[bool] = False
    #: every block a different one of the arms' k! orders (cassperf.experiments.schedule: balanced
    #: for what a run leaves to the next), instead of a random order per block
    ALL_ORDERS: ClassVar[bool] = False

    def describe_setting(self) -> str:
        """Where the study runs when it starts its own clusters (one sentence for the report)."""
        return ""

    def describe_baseline(self, found: Mapping[str, Any]) -> str:
        """One sentence on a baseline entry of the record for the report's opening paragraph ("":
        the study's report shows its baselines itself)."""
        return ""

    def prepare_machine(self) -> list[str]:
        """What the study needs built on this machine once, before a report's first notebook, so
        that its own time is its study's (a container deployment's root filesystem); one line per
        thing built, [] when nothing was needed. Never raises for what cannot be built: the study
        then says so itself when it runs."""
        return []

    def setting_notes(self) -> list[str]:
        """What this machine could not make of the plan, one line each (a deployment without its
        Java, no root for a loop filesystem ...); kept in the record and said in the report."""
        return []

    def check_parameters(self, parameters: Mapping[str, Any]) -> None:
        """Refuse, before any cluster starts, parameters the named cluster cannot serve (e.g. RF 5
        on an embedded ``cluster_topology`` of 3 nodes): one ConfigError line with the fix."""

    def check_cluster(self, cluster: Any) -> None:
        """Refuse, before anything runs, a cluster this plan cannot run on."""

    # -- the analysis --------------------------------------------------------------------------
    #: the study's analysis (cassperf.experiments.analysis.Analysis): the class itself, or
    #: "module:Class", loaded when a report needs it, so that a plan's module never imports its
    #: analysis (which imports the plan)
    ANALYSIS: ClassVar[Any] = None

    def analysis(self) -> Analysis:
        """The study's analysis for these parameters (ConfigError when the study names none)."""
        found = type(self).ANALYSIS
        if isinstance(found, str):
            module, _, name = found.partition(":")
            found = getattr(importlib.import_module(module), name)
        if not (isinstance(found, type) and issubclass(found, Analysis)):
            raise ConfigError(f"{type(self).__name__}.ANALYSIS={type(self).ANALYSIS!r}: expected a subclass of "
                              f"cassperf.experiments.analysis.Analysis (or 'module:Class' naming one)")
        return found(self)


def aa_twin(arms: Sequence[Arm], name: str) -> Arm:
    """The A/A twin of the arm called ``name`` (ConfigError naming the arms when absent)."""
    for arm in arms:
        if arm.name == name:
            return arm.twin()
    raise ConfigError(f"aa_arm {name!r} is not an arm of this plan; arms: {', '.join(a.name for a in arms)}")


#: Above this many operations in one run the embedded cluster (every node on this machine) would
#: take hours: such a parameter set is for a real cluster.
EMBEDDED_MAX_OPS = 2_000_000


def check_embedded_scale(contact_points: str, **sizes: int) -> None:
    """Refuse published-scale sizes (e.g. rows=10,000,000) on the embedded cluster, naming the
    parameter and the fix, instead of a run that would not finish."""
    if contact_points.strip():
        return
    for name, value in sizes.items():
        if value > EMBEDDED_MAX_OPS:
            raise ConfigError(f"{name}={value:,} is the published scale, for a real cluster: on the embedded "
                              f"cluster (every node on this machine) it would take hours. Give contact_points of "
                              f"your cluster (-p contact_points 10.0.0.4,...), or use the local parameter set")
