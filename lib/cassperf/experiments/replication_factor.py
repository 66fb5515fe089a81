"""The replication-factor study (../shared/studies/000_*: RF 1..6 in one DC, consistency
levels, 50/50 mixed) as a plan of runs.

Per RF a keyspace ``<keyspace_prefix><rf>`` (the study's ks410rf1..ks410rf6) with
``NetworkTopologyStrategy dc1=RF``:

- ``part=rf-write``   write ``rows`` keys (seq 1..rows, 5 x 818-byte columns) at ``cl``
- ``part=rf-read``    ``reads`` reads uniform over 1..rows at ``cl``: run "a" cold (caches
                      emptied first, see node_actions.make_cold), then run "b" warm
- ``part=cl-read``    on the ``cl_sweep_rf`` keyspace: reads at each of ``cl_sweep`` (warm)
- ``part=threads-write``  writes at each of ``thread_sweep`` for each of ``thread_sweep_rfs``
- ``part=mixed``      50/50 read/write over 1..rows for each of ``mixed_rfs``

Every run is labelled study=replication-factor, experiment, part, rf, op, threads, cl, run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cassperf.errors import ConfigError
from cassperf.experiments.node_actions import make_cold
from cassperf.experiments.sweep import Step
from cassperf.workload.spec import Ratio, Replication, WorkloadSpec

STUDY = "replication-factor"


@dataclass(frozen=True)
class RFStudy:
    """The study's parameters (the notebook's parameters cell, validated)."""

    rfs: Sequence[int] = (1, 2, 3, 4, 5, 6)
    rows: int = 10_000                      # keys written per RF (the study: 10,000,000)
    reads: int = 5_000                      # reads per read run (the study: 3,000,000)
    mixed_ops: int = 5_000                  # ops per mixed run (the study: 3,000,000)
    write_threads: int = 64                 # the study: 256
    read_threads: int = 64                  # the study: 128
    cl: str = "LOCAL_QUORUM"
    cl_sweep: Sequence[str] = ("ONE", "TWO", "THREE")
    cl_sweep_rf: int = 3
    thread_sweep: Sequence[int] = (16, 64, 256)
    thread_sweep_rfs: Sequence[int] = (1, 3)
    mixed_rfs: Sequence[int] = (1, 3, 5)
    dc: str = "dc1"
    keyspace_prefix: str = "ks410rf"
    column_size: int = 818
    column_count: int = 5
    connections_per_host: int | None = None  # the study: 128
    tool: str = "engine"
    cold_restart: bool = False              # run "a": restart the nodes too (embedded cluster)
    experiment: str = "local"
    nodes_in_dc: int | None = None          # for the check that RF fits
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("rfs", "thread_sweep_rfs", "mixed_rfs", "cl_sweep_rf"):
            value = getattr(self, name)
            values = [value] if isinstance(value, int) else list(value)
            if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
                raise ConfigError(f"{name}={values!r}: expected replication factors, whole numbers >= 1")
            if self.nodes_in_dc is not None and values and max(values) > self.nodes_in_dc:
                raise ConfigError(f"{name}={values!r}: RF {max(values)} needs {max(values)} nodes in {self.dc}, "
                                  f"the cluster has {self.nodes_in_dc}; lower the RFs or use a larger "
                                  f"cluster_topology")
        for name in ("rows", "reads", "mixed_ops", "write_threads", "read_threads"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name}={v!r}: expected a whole number >= 1")

    def keyspace(self, rf: int) -> str:
        return f"{self.keyspace_prefix}{rf}"


def _spec(study: RFStudy, rf: int, op: str, n: int, threads: int, cl: str, population: str) -> WorkloadSpec:
    return WorkloadSpec(op=op, ratio=Ratio(write=1, read=1) if op == "mixed" else None, n=n, warmup=False,
                        cl=cl, concurrency=threads, population=population, column_count=study.column_count,
                        column_size=study.column_size, keyspace=study.keyspace(rf),
                        replication=Replication.network_topology({study.dc: rf}), local_dc=study.dc,
                        connections_per_host=study.connections_per_host)


def plan(study: RFStudy) -> list[Step]:
    """The runs, in the order they must happen (writes before the reads of their keyspace)."""
    base = {"study": STUDY, "experiment": study.experiment}
    written = f"seq=1..{study.rows}"
    uniform = f"uniform(1..{study.rows})"
    steps: list[Step] = []

    def add(part: str, rf: int, op: str, n: int, threads: int, cl: str, run: str, pop: str,
            before: Any = None) -> None:
        labels = {**base, "part": part, "rf": str(rf), "op": op, "threads": str(threads), "cl": cl, "run": run}
        steps.append(Step(labels, _spec(study, rf, op, n, threads, cl, pop), study.tool, before))

    cold = (lambda cluster: make_cold(cluster, restart=study.cold_restart))
    every_rf = sorted(set(study.rfs) | set(study.thread_sweep_rfs) | set(study.mixed_rfs)
                      | ({study.cl_sweep_rf} if study.cl_sweep else set()))
    for rf in every_rf:
        add("rf-write", rf, "write", study.rows, study.write_threads, study.cl, "a", written)
        if rf in study.rfs:
            add("rf-read", rf, "read", study.reads, study.read_threads, study.cl, "a", uniform, cold)
            add("rf-read", rf, "read", study.reads, study.read_threads, study.cl, "b", uniform)
    for cl in study.cl_sweep:
        add("cl-read", study.cl_sweep_rf, "read", study.reads, study.read_threads, cl, "b", uniform)
    for rf in study.thread_sweep_rfs:
        for threads in study.thread_sweep:
            add("threads-write", rf, "write", study.rows, threads, study.cl, "a", written)
    for rf in study.mixed_rfs:
        add("mixed", rf, "mixed", study.mixed_ops, study.read_threads, study.cl, "b", uniform)
    return steps
