"""The replication-factor study (the published study: RF 1..6 in one DC, consistency levels,
50/50 mixed) on the Study contract.

Per RF a keyspace ``<keyspace_prefix><rf>`` (the study's ks410rf1..ks410rf6) with
``NetworkTopologyStrategy dc1=RF``, loaded with ``rows`` keys before the first block. The arms,
each a closed-loop run of ``run_s`` seconds at ``cl`` unless named otherwise:

- ``write rf=R``                writes over the loaded keys, for each of ``rfs``
- ``read rf=R run=a`` / ``b``   reads after emptying what caches reads (run "a", cold), then at
                                once again (run "b", warm), for each of ``read_rfs``; run "a"
                                only for ``cold_read_rfs`` (the other RFs read warm, run "b")
- ``read rf=3 cl=C``            reads at each of ``cl_sweep`` on the ``cl_sweep_rf`` keyspace
- ``write rf=R threads=T``      writes at each of the thread sweep, for each of ``thread_sweep_rfs``
- ``mixed rf=R``                50/50 read/write, for each of ``mixed_rfs``

Concurrency 0 (the local default) is calibrated: writes and reads run below the knee that
calibration found for writes at ``cl`` on the ``cl_sweep_rf`` keyspace, and the thread sweep
spans the knee (x1, x4, x16 of the concurrency below it). Every run is labelled part, rf, op,
concurrency (requests in flight), cl, run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from cassperf.constraints import Items, Whole
from cassperf.errors import ConfigError
from cassperf.experiments.study import LOCAL_RUN_S, Arm, Calibrated, Preparation, Study
from cassperf.workload.spec import Ratio, Replication, WorkloadSpec

STUDY = "replication-factor"
#: the published study, by its title and what it was
SOURCE = ('"Comparing relative performance of various replication factors"'
          " (a write-up of cassandra-stress runs on six Azure VMs in one data center: RF 1 to 6, reads at CL "
          "ONE, TWO and THREE, 50/50 mixed, 10,000,000 rows of 4 KiB)")
#: what the published study ran that the local defaults drop (said in the report)
PUBLISHED = {"rfs": (1, 2, 3, 4, 5, 6), "read_rfs": (1, 2, 3, 4, 5, 6), "cold_read_rfs": (1, 2, 3, 4, 5, 6),
             "cl_sweep": ("ONE", "TWO", "THREE"), "mixed_rfs": (1, 3, 5), "thread_sweep": (16, 32, 64, 128, 256, 512),
             "thread_sweep_rfs": (1, 3)}


#: a list of replication factors
RFS = Items(Whole(1), "replication factors")


@dataclass(frozen=True)
class RFStudy(Study):
    """The study's parameters (the notebook's parameters cell, validated)."""

    name: ClassVar[str] = STUDY
    title: ClassVar[str] = "Replication factor and consistency levels"
    source: ClassVar[str] = SOURCE
    ANALYSIS: ClassVar[str] = "cassperf.experiments.replication_factor_analysis:RFAnalysis"

    rfs: Sequence[int] = (1, 2, 3)
    read_rfs: Sequence[int] = (1, 3)
    cold_read_rfs: Sequence[int] = (3,)     # RFs of read_rfs that also get the cold run a
    rows: int = 5_000                      # keys loaded per RF before the blocks (the study: 10,000,000)
    write_threads: int = 0                  # 0: calibrated, below the knee (the study: 256)
    read_threads: int = 0                   # 0: calibrated, as writes (the study: 128)
    cl: str = "LOCAL_QUORUM"
    cl_sweep: Sequence[str] = ("ONE",)
    cl_sweep_rf: int = 3
    thread_sweep: Sequence[int] = ()        # empty: x1, x4, x16 of the calibrated write concurrency
    thread_sweep_rfs: Sequence[int] = ()
    mixed_rfs: Sequence[int] = (1, 3)
    local_dc: str = "dc1"
    keyspace_prefix: str = "ks410rf"
    column_size: int = 818
    column_count: int = 5
    connections_per_host: int = 0           # 0: the driver's default
    cold_restart: bool = False
    run_s: int = LOCAL_RUN_S
    repeats: int = 6                        # blocks: at this machine's run-to-run spread (8-12%) 3 blocks left an
                                            # MDE of ±29-51%; 6 give about 0.63x of it (docs/measurements.md)
    warm_max_steps: int = 20                # a fresh 3-node cluster still rises after 12 steps of 3 s: the warm-up
                                            # stops itself when flat (docs/measurements.md)

    CONSTRAINTS: ClassVar[dict[str, Any]] = {
        **{name: RFS for name in ("rfs", "read_rfs", "cold_read_rfs", "thread_sweep_rfs", "mixed_rfs")},
        "cl_sweep_rf": Whole(1), "rows": Whole(1), "write_threads": Whole(0, note="0: calibrated"),
        "read_threads": Whole(0, note="0: calibrated"), "connections_per_host": Whole(0, note="0: the driver's default"),
        "thread_sweep": Items(Whole(1), "client thread counts", note="empty: around the calibrated knee")}

    def __post_init__(self) -> None:
        super().__post_init__()
        stray = [rf for rf in self.cold_read_rfs if rf not in self.read_rfs]
        if stray:
            raise ConfigError(f"cold_read_rfs={list(self.cold_read_rfs)!r}: RF {stray[0]} is not in "
                              f"read_rfs={list(self.read_rfs)!r}; a cold run a reads what the RF's reads read")
        missing = [rf for rf in self.read_rfs if rf not in self.rfs]
        if missing:
            raise ConfigError(f"read_rfs={list(self.read_rfs)!r}: RF {missing[0]} is not in rfs={list(self.rfs)!r}; "
                              f"the reads read what the RF's load wrote")

    # -- the cluster it needs ------------------------------------------------------------------
    def every_rf(self) -> list[int]:
        return sorted({*self.rfs, *self.thread_sweep_rfs, *self.mixed_rfs, self.cl_sweep_rf})

    def check_parameters(self, parameters: Mapping[str, Any]) -> None:
        from cassperf.experiments.study import check_embedded_scale

        check_embedded_scale(str(parameters.get("contact_points", "")), rows=self.rows)
        if str(parameters.get("contact_points", "")).strip() or not parameters.get("cluster_topology"):
            return
        from cassperf.cluster.topology import parse_topology

        nodes = {dc.name: dc.nodes for dc in parse_topology(str(parameters["cluster_topology"])).datacenters}
        need = max(self.every_rf())
        if need > nodes.get(self.local_dc, 0):
            raise ConfigError(f"RF {need} (of rfs, read_rfs, thread_sweep_rfs, mixed_rfs or cl_sweep_rf) needs {need} "
                              f"nodes in {self.local_dc}; cluster_topology={parameters['cluster_topology']!r} has "
                              f"{nodes.get(self.local_dc, 0)}: lower the RFs or give a larger cluster_topology")

    def keyspace(self, rf: int) -> str:
        return f"{self.keyspace_prefix}{rf}"

    # -- the plan ------------------------------------------------------------------------------
    def _spec(self, rf: int, op: str, threads: int, cl: str | None = None, *, n: int | None = None,
              population: str | None = None, warmup: bool = True) -> WorkloadSpec:
        return WorkloadSpec(op=op, ratio=Ratio(write=1, read=1) if op == "mixed" else None, n=n,
                            duration=None if n else self.run_s, warmup=warmup, cl=cl or self.cl, concurrency=threads,
                            population=population or f"uniform(1..{self.rows})", column_count=self.column_count,
                            column_size=self.column_size, keyspace=self.keyspace(rf),
                            replication=Replication.network_topology({self.local_dc: rf}), local_dc=self.local_dc,
                            connections_per_host=self.connections_per_host or None, interval_s=self.interval_s)

    def preparations(self) -> list[Preparation]:
        return [Preparation(f"rf={rf}", self._spec(rf, "write", 32, n=self.rows, population=f"seq=1..{self.rows}",
                                                   warmup=False)) for rf in self.every_rf()]

    def warm_spec(self) -> WorkloadSpec:
        return self._spec(max(self.every_rf()), "mixed", 32)

    def calibration_spec(self) -> WorkloadSpec | None:
        needed = not (self.write_threads and self.read_threads and self.thread_sweep)
        return self._spec(self.cl_sweep_rf, "write", 1) if needed else None

    def threads(self, calibrated: Calibrated | None) -> tuple[int, int, list[int]]:
        """(write threads, read threads, thread sweep) with calibrated values where 0 / empty."""
        below = calibrated.below_knee if calibrated is not None else 16
        writes = self.write_threads or below
        reads = self.read_threads or below
        sweep = list(self.thread_sweep) or sorted({writes, writes * 4, min(writes * 16, 512)})
        return writes, reads, sweep

    def arms(self, calibrated: Calibrated | None) -> list[Arm]:
        writes, reads, sweep = self.threads(calibrated)
        out: list[Arm] = []

        def arm(name: str, part: str, rf: int, op: str, threads: int, cl: str, run: str, **kw: Any) -> Arm:
            labels = {"part": part, "rf": str(rf), "op": op, "concurrency": str(threads), "cl": cl, "run": run}
            return Arm(name, labels, spec=self._spec(rf, op, threads, cl), tool=self.tool, **kw)

        for rf in self.rfs:
            out.append(arm(f"write rf={rf}", "rf-write", rf, "write", writes, self.cl, "b"))
        for rf in self.read_rfs:
            cold = rf in self.cold_read_rfs
            if cold:       # pools with the warm reads at its load (analysis.arms, 5.: why)
                out.append(arm(f"read rf={rf} run=a", "rf-read", rf, "read", reads, self.cl, "a",
                               before=self._cold(rf)))
            out.append(arm(f"read rf={rf} run=b", "rf-read", rf, "read", reads, self.cl, "b",
                           follows=f"read rf={rf} run=a" if cold else None))
        for cl in self.cl_sweep:
            out.append(arm(f"read rf={self.cl_sweep_rf} cl={cl}", "cl-read", self.cl_sweep_rf, "read", reads, cl, "b"))
        for rf in self.thread_sweep_rfs:
            for t in sweep:
                if t == writes and rf in self.rfs:
                    continue       # the RF's own write arm is this point
                out.append(arm(f"write rf={rf} threads={t}", "threads-write", rf, "write", t, self.cl, "b"))
        for rf in self.mixed_rfs:
            out.append(arm(f"mixed rf={rf}", "mixed", rf, "mixed", reads, self.cl, "b"))
        return out

    def aa_arm(self, arms: Sequence[Arm]) -> str:
        return f"write rf={min(self.rfs)}"

    ARM_LABELS_HINT: ClassVar[str] = ", or --label rf=R --label op=write|read|mixed [--label run=a|b] [--label cl=CL]"

    def arm_labels(self, labels: Mapping[str, str]) -> dict[str, str]:
        """An imported run's arm from its labels: ``arm``, else rf and op (a read's run a or b,
        default b, or its cl where that is not the study's; a write's thread sweep point with
        part=threads-write and its concurrency, or threads as cassandra-stress names it), and the labels the analysis reads (part, cl, run)."""
        out = dict(labels)
        rf, op = str(labels.get("rf", "")).strip(), str(labels.get("op", "")).strip().lower()
        if str(labels.get("arm", "")).strip() or not rf.isdigit() or op not in ("write", "read", "mixed"):
            return out
        cl, run = str(labels.get("cl", self.cl)).upper(), str(labels.get("run", "b"))
        threads = labels.get("concurrency", labels.get("threads"))      # cassandra-stress names it threads
        if op == "mixed":
            name, part = f"mixed rf={rf}", "mixed"
        elif op == "write" and labels.get("part") == "threads-write" and threads:
            name, part = f"write rf={rf} threads={threads}", "threads-write"
        elif op == "write":
            name, part = f"write rf={rf}", "rf-write"
        elif cl != self.cl:
            name, part = f"read rf={rf} cl={cl}", "cl-read"
        else:
            name, part = f"read rf={rf} run={run}", "rf-read"
        return {**out, "arm": name, "part": part, "cl": cl, "run": run, **({"concurrency": str(threads)} if threads else {})}

    def _cold(self, rf: int) -> Callable[[Any], str]:
        from cassperf.experiments.node_actions import make_cold

        restart, keyspace = self.cold_restart, self.keyspace(rf)
        return lambda cluster: make_cold(cluster, restart=restart, keyspace=keyspace)

    def dropped(self) -> str:
        """What the published study ran that these parameters leave out (one sentence, or '')."""
        gone = []
        for name, published in PUBLISHED.items():
            mine = set(getattr(self, name)) if name != "thread_sweep" or self.thread_sweep else None
            if mine is None:
                continue
            left = [v for v in published if v not in mine]
            if left:
                gone.append(f"{name} {', '.join(map(str, left))}")
        return ("The published study also ran " + "; ".join(gone) + ": left out here to keep the local run within "
                "minutes on one machine.") if gone else ""

    # -- the analysis --------------------------------------------------------------------------
