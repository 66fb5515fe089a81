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
    rows: int = 3_000                       # keys written per RF (the study: 10,000,000)
    reads: int = 3_000                      # reads per read run (the study: 3,000,000)
    mixed_ops: int = 3_000                  # ops per mixed run (the study: 3,000,000)
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
    interval_s: float = 0.5                 # reporting interval: enough intervals for the statistics
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


def _spec(study: RFStudy, rf: int, op: str, n: int, threads: int, cl: str, population: str,
          warmup: bool = True) -> WorkloadSpec:
    return WorkloadSpec(op=op, ratio=Ratio(write=1, read=1) if op == "mixed" else None, n=n, warmup=warmup,
                        cl=cl, concurrency=threads, population=population, column_count=study.column_count,
                        column_size=study.column_size, keyspace=study.keyspace(rf),
                        replication=Replication.network_topology({study.dc: rf}), local_dc=study.dc,
                        connections_per_host=study.connections_per_host, interval_s=study.interval_s)


def plan(study: RFStudy) -> list[Step]:
    """The runs, in the order they must happen (writes before the reads of their keyspace)."""
    base = {"study": STUDY, "experiment": study.experiment}
    written = f"seq=1..{study.rows}"
    uniform = f"uniform(1..{study.rows})"
    steps: list[Step] = []

    def add(part: str, rf: int, op: str, n: int, threads: int, cl: str, run: str, pop: str,
            before: Any = None) -> None:
        labels = {**base, "part": part, "rf": str(rf), "op": op, "threads": str(threads), "cl": cl, "run": run}
        # a cold run "a" of reads has no warm-up (it would warm what the run measures cold)
        warm = not (part == "rf-read" and run == "a")
        steps.append(Step(labels, _spec(study, rf, op, n, threads, cl, pop, warm), study.tool, before))

    def cold(rf: int) -> Any:
        return lambda cluster: make_cold(cluster, restart=study.cold_restart, keyspace=study.keyspace(rf))
    every_rf = sorted(set(study.rfs) | set(study.thread_sweep_rfs) | set(study.mixed_rfs)
                      | ({study.cl_sweep_rf} if study.cl_sweep else set()))
    for rf in every_rf:
        add("rf-write", rf, "write", study.rows, study.write_threads, study.cl, "a", written)
        if rf in study.rfs:
            add("rf-read", rf, "read", study.reads, study.read_threads, study.cl, "a", uniform, cold(rf))
            add("rf-read", rf, "read", study.reads, study.read_threads, study.cl, "b", uniform)
    for cl in study.cl_sweep:
        add("cl-read", study.cl_sweep_rf, "read", study.reads, study.read_threads, cl, "b", uniform)
    for rf in study.thread_sweep_rfs:
        for threads in study.thread_sweep:
            if threads == study.write_threads and rf in study.rfs:
                continue        # the RF's own write run is this point (threads_frame takes it)
            add("threads-write", rf, "write", study.rows, threads, study.cl, "a", written)
    for rf in study.mixed_rfs:
        add("mixed", rf, "mixed", study.mixed_ops, study.read_threads, study.cl, "b", uniform)
    return steps


# -- analysis of stored runs (pure functions over Runs) --------------------------------------

SOURCE = "../shared/studies/000_3ef1c0e852c7379d.txt"
#: the labels that name a point of the sweep (analyse_only groups stored or imported runs by them)
POINT_LABELS = ("part", "rf", "op", "threads", "cl", "run")


def results(runs: Sequence[Any]) -> Any:
    """One row per run and op: its labels and HDR-merged figures over its steady window
    (cassperf.analysis.runs_frame), with rf and threads as numbers."""
    import pandas as pd

    from cassperf.analysis import runs_frame

    frame = runs_frame(runs)
    if frame.empty:
        return frame
    op_label = "label_op" if "label_op" in frame.columns else None
    if op_label is not None:    # a mixed run has read and write rows; keep both, named by the data
        frame = frame.drop(columns=[op_label])
    for col in ("rf", "threads"):
        if col in frame.columns:
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("Int64")
    return frame


def part(frame: Any, name: str, **where: Any) -> Any:
    """The rows of one part of the study (and label values), sorted by rf, threads, run, cl."""
    if frame.empty or "part" not in frame.columns:
        return frame.iloc[0:0]
    keep = frame["part"] == name
    for key, value in where.items():
        keep &= frame[key].astype(str) == str(value)
    out = frame[keep.fillna(False)]
    order = [c for c in ("rf", "threads", "run", "cl") if c in out.columns]
    return out.sort_values(order).reset_index(drop=True)


def threads_frame(frame: Any, study: RFStudy) -> Any:
    """The write thread sweep: its own runs plus each swept RF's write run at write_threads."""
    import pandas as pd

    sweep = part(frame, "threads-write")
    own = part(frame, "rf-write")
    if not own.empty:
        own = own[own["rf"].isin(list(study.thread_sweep_rfs)) & own["threads"].isin(list(study.thread_sweep))]
    out = pd.concat([sweep, own], ignore_index=True)
    return out.sort_values(["rf", "threads"]).reset_index(drop=True) if not out.empty else out


def _run(runs: Sequence[Any], **labels: Any) -> Any:
    found = [r for r in runs if all(str(r.labels.get(k)) == str(v) for k, v in labels.items())]
    return found[-1] if found else None


def claims(runs: Sequence[Any], study: RFStudy, reps: int = 1000) -> Any:
    """The published findings checked on these runs (cassperf.analysis.claims)."""
    from cassperf.analysis.claims import (FAILS, HOLDS, NOT_SHOWN, Claim, alike, claims_frame, decidable, describe,
                                          higher, lower)
    from cassperf.analysis.compare import compare_runs

    def cmp(a: Any, b: Any, op: str, metric: str = "rate_ops_s") -> Any:
        return compare_runs(a, b, op, metric, reps=reps) if a is not None and b is not None else None

    shared = ("all nodes and the client share this machine's 2 cores: a replica costs CPU here, "
              "not a network hop or another server's disk")
    rows: list[Claim] = []
    writes = {rf: _run(runs, part="rf-write", rf=rf) for rf in study.rfs}
    rf1, others = writes.get(1), [rf for rf in study.rfs if rf > 1 and writes.get(rf) is not None]
    if rf1 is not None and others:
        comps = {rf: cmp(writes[rf], rf1, "write") for rf in others}
        verdicts = [higher(c) for c in comps.values()]
        verdict = NOT_SHOWN if NOT_SHOWN in verdicts else HOLDS if all(v == HOLDS for v in verdicts) else FAILS
        rows.append(Claim("Writes at RF 1 are much faster than at any higher RF (LOCAL_QUORUM)", SOURCE,
                          "; ".join(describe(c, f"RF 1 vs RF {rf}") for rf, c in comps.items()), verdict,
                          "RF 1's write ops/s significantly above every higher RF's", shared))
    else:
        rows.append(Claim("Writes at RF 1 are much faster than at any higher RF (LOCAL_QUORUM)", SOURCE,
                          "needs RF 1 and a higher RF", NOT_SHOWN, "", ""))
    c23 = cmp(writes.get(2), writes.get(3), "write")
    rows.append(Claim("RF 2 and RF 3 write at about the same rate at LOCAL_QUORUM (both wait for 2 replicas)",
                      SOURCE, describe(c23, "RF 3 vs RF 2 write ops/s"), alike(c23, 15.0),
                      "the 95% CI of the difference lies within +-15%", shared))
    reads = {(rf, r): _run(runs, part="rf-read", rf=rf, run=r) for rf in study.rfs for r in ("a", "b")}
    top = max((rf for rf in study.rfs if rf > 1), default=None)
    if 1 in study.rfs and top is not None and all(reads.get((rf, r)) for rf in (1, top) for r in ("a", "b")):
        ca, cb = cmp(reads[(1, "a")], reads[(top, "a")], "read"), cmp(reads[(1, "b")], reads[(top, "b")], "read")
        gap_a, gap_b = -ca.change_pct, -cb.change_pct
        usable = decidable(ca) and decidable(cb)
        verdict = (HOLDS if gap_b > gap_a else FAILS) if usable else NOT_SHOWN
        rows.append(Claim("The RF cost on reads is larger on the warm run b than on the cold run a", SOURCE,
                          f"RF {top} below RF 1: run a {gap_a:+.1f}% ({ca.verdict}); run b {gap_b:+.1f}% ({cb.verdict})",
                          verdict, "the drop from RF 1 to the highest RF is larger in run b (one run each: the "
                                   "gap's own difference is not tested)",
                          "run a is cold by flushed memtables, invalidated key/row caches and a dropped page cache; "
                          "without a node restart Cassandra's chunk cache stays warm, and the data of this small "
                          "run fits in memory, so run a is only partly cold"))
    rf_cl = study.cl_sweep_rf
    lq_b = reads.get((rf_cl, "b"))
    one = _run(runs, part="cl-read", rf=rf_cl, cl="ONE")
    two = _run(runs, part="cl-read", rf=rf_cl, cl="TWO")
    c1 = cmp(reads.get((1, "b")), one, "read")
    rows.append(Claim(f"Reads at CL ONE on RF {rf_cl} run about as fast as RF 1 reads (run b)", SOURCE,
                      describe(c1, f"CL ONE on RF {rf_cl} vs RF 1 LOCAL_QUORUM"), alike(c1, 15.0),
                      "the 95% CI of the difference lies within +-15%", shared))
    c2 = cmp(lq_b, two, "read")
    rows.append(Claim(f"Reads at CL TWO on RF {rf_cl} run about as fast as LOCAL_QUORUM reads on RF {rf_cl} "
                      f"(both read 2 replicas)", SOURCE,
                      describe(c2, f"CL TWO vs LOCAL_QUORUM on RF {rf_cl}"), alike(c2, 15.0),
                      "the 95% CI of the difference lies within +-15%", shared))
    mixed = [(rf, _run(runs, part="mixed", rf=rf)) for rf in sorted(study.mixed_rfs)]
    steps = [(a, b, cmp(ra, rb, "read")) for (a, ra), (b, rb) in zip(mixed, mixed[1:], strict=False)]
    if steps:
        verdicts = [lower(c) for _, _, c in steps]
        verdict = NOT_SHOWN if NOT_SHOWN in verdicts else HOLDS if all(v == HOLDS for v in verdicts) else FAILS
        rows.append(Claim("50/50 mixed throughput falls as RF rises", SOURCE,
                          "; ".join(describe(c, f"RF {b} vs RF {a} (reads of the mix)") for a, b, c in steps),
                          verdict, "each higher RF's ops/s significantly below the one before", shared))
    sweep = {rf: sorted(((int(r.labels["threads"]), r) for r in runs
                         if str(r.labels.get("rf")) == str(rf) and (r.labels.get("part") == "threads-write" or (
                             r.labels.get("part") == "rf-write" and int(r.labels["threads"]) in study.thread_sweep))),
                        key=lambda x: x[0]) for rf in study.thread_sweep_rfs}
    shapes = []
    for rf, points in sweep.items():
        if len(points) >= 2:
            c = cmp(points[-2][1], points[-1][1], "write")
            shapes.append((rf, points[-2][0], points[-1][0], c))
    if shapes:
        verdicts = [NOT_SHOWN if not decidable(c) else FAILS if c.significant and c.change_pct > 10 else HOLDS
                    for *_, c in shapes]
        verdict = NOT_SHOWN if NOT_SHOWN in verdicts else HOLDS if all(v == HOLDS for v in verdicts) else FAILS
        rows.append(Claim("Write ops/s stop growing at high client thread counts, alike for RF 1 and RF 3", SOURCE,
                          "; ".join(describe(c, f"RF {rf}: {t2} vs {t1} threads") for rf, t1, t2, c in shapes),
                          verdict,
                          "from the second-highest to the highest thread count ops/s rise by no more than 10% "
                          "(or not significantly)",
                          "the study saw the taper above ~256 threads on 6 servers; on 2 shared cores it comes "
                          "far sooner"))
    return claims_frame(rows)
