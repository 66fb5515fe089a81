"""The Python load engine: runs a WorkloadSpec against a cluster and writes a Run as it goes.

    from cassperf.workload.engine import run_workload
    run = run_workload(WorkloadSpec(op="write", n=100_000, rate="fixed=5000/s"), cluster)

Workers are forked from a forkserver (``spawn`` where the client sits in another network
namespace), and either way a *script* calling run_workload must guard its entry point with
``if __name__ == "__main__":``: each worker imports the script's main module again, at every
run. Keep that module's own imports light (import inside ``main()``): a script importing
cassperf.cluster at its top paid 1.3-2.5 s per run before its workers began to connect, one
importing it inside ``main()`` 0.1 s. Notebooks and imported modules need nothing.

Layout. The parent process (this module) creates the schema through cassandra-driver (control
plane), starts P worker processes (``worker``; forked from the forkserver, one asyncio loop and
one backend session each, ``concurrency`` requests in flight split among them), publishes the
start time, then merges the workers' interval histograms (``cassperf.results.hdr``: summed bucket by
bucket, never averaged) and writes each interval to the run folder as soon as every worker has
reported it:

    intervals.jsonl   one row per (interval, op), fsynced: INTERVAL_COLUMNS plus the extra
                      columns below
    histograms.jsonl  one merged histogram per (interval, tag), tags WRITE-st / WRITE-rt / ...
    raw/engine.hdr    the same histograms as a standard HdrHistogram interval log (ns values,
                      Interval_Max in ms; readable by cassperf.parsers.hdr_log and HdrHistogram
                      tools)
    events.jsonl      warmup:start, load:start, load:end, interrupted, worker failures

Latency. Under ``fixed=X/s`` the latency_* columns are response time (from each op's intended
start, coordinated omission corrected; manifest latency_type "response"), and the same
percentiles of service time (from the actual send) are in ``latency_service_*_ms``. Otherwise
latency_* is service time (latency_type "service") and latency_service_* repeats it.

Extra interval/summary columns: start_s (interval start, s since the run's t0), interval_s,
client_rss_mb (intervals: the workers' resident memory together, MiB, at the interval's end),
engine_rss_mb (intervals: this parent process's resident memory, MiB, as it writes the row),
latency_service_{mean,p50,p95,p99,p999,max}_ms, errors_{write_timeout,read_timeout,
unavailable,other} (``errors`` is their sum). Failed ops carry no latency. ``rows`` (and
row_rate_s): rows written, or for reads the rows found: a read of a key never written or
deleted finds none, so row_rate_s falls below rate_ops_s (cassandra-stress's row rate does the
same), the manifest's engine.reads_without_row counts them and the run warns.

Crashes and stops. Every interval row is durable when written; a SIGKILLed engine leaves a
folder that ``load_run`` reads with every closed interval (complete=False), and its workers die
with it (PR_SET_PDEATHSIG). Ctrl-C (SIGINT) stops the workers, waits for their in-flight ops
(at most worker.DRAIN_TIMEOUT_S), writes the last partial interval and the summary, closes the
run as incomplete ("interrupted") and re-raises KeyboardInterrupt. A second Ctrl-C, or
STOP_WAIT_S after the first, stops waiting: workers not done by then are killed and named in a
warning; a third raises at once. While the engine collects, SIGINT only counts (_CtrlC): it is
never raised between a queue read and the collector's update, where it would lose a worker's
interval. A worker that dies is reported as a warning and the run carries on without it; when
a node dies, its errors are counted and the run carries on.
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing as mp
import os
import queue as queue_mod
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

import cassperf
from cassperf.constraints import Whole, check
from cassperf.errors import CassperfError, ConfigError
from cassperf.parsers.hdr_log import write_hdr_log
from cassperf.results import hdr
from cassperf.results.manifest import build_manifest
from cassperf.results.model import Run
from cassperf.results.store import RunWriter, load_run
from cassperf.workload.backends.base import ERROR_KINDS, Target, load, resolve
from cassperf.workload.during import DuringAction
from cassperf.workload.recorder import LAYOUT
from cassperf.workload.runners.stress_cmdline import schema_cql, to_stress_command
from cassperf.workload.scheduler import NS_PER_S, split_count
from cassperf.workload.spec import WorkloadSpec
from cassperf.workload.schema_check import check_schema
from cassperf.workload.worker import DRAIN_TIMEOUT_S, WorkerPlan, op_weights, tags_for, worker_main

TOOL = "cassperf-engine"
HDR_LOG = "engine.hdr"
READY_TIMEOUT_S = 120.0
#: least time from fixing t0 to t0, for the workers to be let go: a run with a warm-up of at
#: least this long starts its measurement warmup_s after t0 is fixed (the warm-up covers it)
START_MARGIN_S = 0.3
SERVICE_STATS = ("mean", "p50", "p95", "p99", "p999", "max")
_LAYOUT = hdr.Layout(LAYOUT.lowest, LAYOUT.highest, LAYOUT.significant_figures)


class EngineError(CassperfError):
    """The engine could not start its workers or they failed before the load began."""


def default_processes(spec: WorkloadSpec, paced_ops_s_per_process: int = 10_000) -> int:
    """One worker per core for an unlimited rate; for a paced rate one per
    ``paced_ops_s_per_process`` ops/s (the backend's Backend.paced_ops_s_per_process: each
    worker adds wake-ups per op, so at moderate rates one process costs less client CPU than
    two), at most one per core; never more than the requests in flight (or the ops) allow."""
    cores = os.cpu_count() or 1
    cap = spec.concurrency if spec.n is None else min(spec.concurrency, spec.n)
    if spec.rate.ops_per_s is not None:
        cores = min(cores, math.ceil(spec.rate.ops_per_s / paced_ops_s_per_process))
    return max(1, min(cores, cap))


def create_schema(spec: WorkloadSpec, cluster: Any) -> None:
    """CREATE KEYSPACE / TABLE IF NOT EXISTS as cassandra-stress would (cassandra-driver;
    the driver waits for schema agreement after each statement), then refuse a keyspace that
    already existed with another schema (schema_check), once every node has the schema
    (SCHEMA_AGREEMENT_WAIT_S)."""
    session = cluster.session()
    for cql in schema_cql(spec):
        _execute_once_up(session, cql)
    agreed = session.cluster.control_connection.wait_for_schema_agreement(wait_time=SCHEMA_AGREEMENT_WAIT_S)
    try:
        check_schema(spec, session)
    except ConfigError as exc:
        if agreed:
            raise
        raise ConfigError(f"{exc} (the nodes had not agreed on the schema after {SCHEMA_AGREEMENT_WAIT_S:g} s: "
                          "a node without the new table answers with none of its columns)") from None


#: how long a schema statement waits for the driver to see a node of its local DC up
SCHEMA_HOST_WAIT_S = 30.0
#: how long the schema check waits for every node to have the keyspace and table. The driver waits
#: 10 s after each statement, then goes on; beside another node test in CI a 3-node cluster's node
#: had the new keyspace and not yet its table, and the check read "missing columns" there.
SCHEMA_AGREEMENT_WAIT_S = 60.0


def _execute_once_up(session: Any, cql: str) -> None:
    """``session.execute(cql)``; while the driver has no host of its local DC up (a
    NoHostAvailable that tried none: right after a cluster started, its pool to a node may be
    down until the driver's reconnection, 1 s, 2 s, 4 s ... later), again each second, up to
    SCHEMA_HOST_WAIT_S. A host that was tried and failed raises at once."""
    from cassandra.cluster import NoHostAvailable

    deadline = time.monotonic() + SCHEMA_HOST_WAIT_S
    while True:
        try:
            session.execute(cql, timeout=60)
            return
        except NoHostAvailable as exc:
            if exc.errors or time.monotonic() >= deadline:
                raise
            time.sleep(1.0)


def _command(spec: WorkloadSpec) -> str:
    try:
        return f"{TOOL} (spec as cassandra-stress: {to_stress_command(spec)})"
    except ConfigError:
        return f"{TOOL} {spec!r}"


class _Collector:
    """Merges the workers' reports per interval and writes rows, histograms and the HDR log."""

    def __init__(self, writer: RunWriter, spec: WorkloadSpec, workers: int, t0_ns: int, epoch0: float,
                 progress: Any) -> None:
        self.writer, self.spec, self.t0 = writer, spec, t0_ns
        self.ops = [name for name, _ in op_weights(spec)]
        self.fixed = spec.rate.kind == "fixed"
        self.tags = tags_for(self.ops, self.fixed)
        self.pending: dict[int, dict[int, tuple]] = {}
        self.done_at: dict[int, int] = {}
        self.next_k = 0
        self.workers = workers
        self.totals = {t: np.zeros(0, dtype=np.int64) for t in self.tags}
        self.counts = dict.fromkeys(self.ops, 0)
        self.errors = {op: dict.fromkeys(ERROR_KINDS, 0) for op in self.ops}
        self.empty = dict.fromkeys(self.ops, 0)          # reads that found no row
        self.seen_examples: set[str] = set()
        self.last_end_s = 0.0
        self.clamped = 0
        self.progress = progress
        self.stats: dict[int, dict[str, Any]] = {}     # worker -> its 'done' figures
        self.hdr_log = writer.raw_stream(HDR_LOG)
        self.hdr_log.write(write_hdr_log([], start_epoch_s=epoch0,
                                         comment="cassperf engine op latencies (values in ns)"))

    def add(self, msg: tuple) -> None:
        _, w, k, *_ = msg
        self.pending.setdefault(k, {})[w] = msg

    def worker_done(self, w: int, last_k: int) -> None:
        self.done_at[w] = last_k

    def last_reported(self, w: int) -> int:
        """The last interval worker ``w`` reported (written, or waiting for the other workers')."""
        return max((k for k, got in self.pending.items() if w in got), default=self.next_k - 1)

    def finished(self) -> bool:
        """Every worker is done and every interval up to the last one reported is written."""
        return len(self.done_at) == self.workers and self.next_k > max(self.done_at.values(), default=-1)

    def flush_ready(self) -> None:
        """Write, in order, every interval that each worker has reported (or is past)."""
        while not self.finished():
            k = self.next_k
            got = self.pending.get(k, {})
            if any(w not in got and not (w in self.done_at and self.done_at[w] < k) for w in range(self.workers)):
                return
            if got:
                self._write(k, list(self.pending.pop(k).values()))
            self.next_k += 1

    def _write(self, k: int, msgs: list[tuple]) -> None:
        start_ns = min(m[3] for m in msgs)
        end_ns = max(m[4] for m in msgs)
        start_s, end_s = (start_ns - self.t0) / NS_PER_S, (end_ns - self.t0) / NS_PER_S
        length = end_s - start_s
        stats: dict[str, dict[str, float | int]] = {}
        hist_rows, log_lines = [], []
        for tag in self.tags:
            payloads = [m[5][tag][1] for m in msgs if tag in m[5]]
            self.clamped += sum(m[5][tag][3] for m in msgs if tag in m[5])
            merged = hdr.merge_encoded(payloads)
            if merged is None:
                continue
            encoded = hdr.encode(merged)
            counts = hdr.decode_counts(encoded).counts
            acc = self.totals[tag]
            if acc.size < counts.size:
                acc = self.totals[tag] = np.concatenate([acc, np.zeros(counts.size - acc.size, np.int64)])
            acc[:counts.size] += counts
            if merged.get_total_count():     # an interval without ops has no latency (NaN), not 0 ms
                stats[tag] = hdr.summary_ms(merged, "ns")
            hist_rows.append({"tag": tag, "start_s": start_s, "end_s": end_s, "encoded": encoded})
            log_lines.append(f"Tag={tag},{start_s:.3f},{length:.3f},{merged.get_max_value() / 1e6:.3f},{encoded}\n")
        rss_mb = sum(m[8] for m in msgs) / 2**20
        engine_rss_mb = _own_rss_bytes() / 2**20
        rows = []
        for i, op in enumerate(self.ops):
            errs = {kind: sum(m[6][op][kind] for m in msgs) for kind in ERROR_KINDS}
            empty = sum(m[9][i] for m in msgs)
            self.empty[op] += empty
            for kind, n in errs.items():
                self.errors[op][kind] += n
            st = stats.get(f"{op.upper()}-st", {})
            main = stats.get(f"{op.upper()}-rt", {}) if self.fixed else st
            count = int(st.get("count", 0))
            self.counts[op] += count
            rows.append(_row(op, count, length, main, st, errs, count - empty) | {"time_s": end_s, "start_s": start_s,
                                                                   "client_rss_mb": rss_mb,
                                                                   "engine_rss_mb": engine_rss_mb})
        for m in msgs:
            for name, text in m[7].items():
                if name not in self.seen_examples:
                    self.seen_examples.add(name)
                    self.writer.warn(f"first {name} at {end_s:.1f} s: {text}")
        self.writer.append_histograms(hist_rows)
        self.writer.append_intervals(rows)
        self.hdr_log.write("".join(log_lines))
        self.hdr_log.flush()
        os.fsync(self.hdr_log.fileno())
        self.last_end_s = end_s
        self._show(rows, stats, length)

    def _show(self, rows: list[dict[str, Any]], stats: dict[str, Any], length: float) -> None:
        if self.progress is None:
            return
        total = sum(r["count"] for r in rows)
        kind = "rt" if self.fixed else "st"
        p99 = max((s["latency_p99_ms"] for t, s in stats.items() if t.endswith(kind)), default=math.nan)
        errors = sum(r["errors"] for r in rows)
        step = total if self.spec.n is not None else length
        self.progress.update(max(0.0, min(step, self.progress.total - self.progress.n)))
        self.progress.set_postfix({"ops/s": f"{total / length:,.0f}" if length > 0 else "-",
                                   "p99 ms": f"{p99:.2f}", "errors": errors}, refresh=False)

    def summary(self) -> list[dict[str, Any]]:
        out = []
        duration = self.last_end_s
        for op in self.ops:
            main_tag = f"{op.upper()}-{'rt' if self.fixed else 'st'}"
            main = _stats_of(self.totals.get(main_tag))
            st = _stats_of(self.totals.get(f"{op.upper()}-st"))
            found = self.counts[op] - self.empty[op]
            row = _row(op, self.counts[op], duration, main, st, self.errors[op], found)
            row.update({"duration_s": duration, "partitions": self.counts[op]})
            out.append(row)
        return out


def _own_rss_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


#: Environment of the worker processes: numpy's OpenBLAS would otherwise start a thread per
#: core in each worker that spins after use (seen in perf at fixed rate); workers never do
#: linear algebra.
WORKER_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


@contextmanager
def _worker_env() -> Iterator[None]:
    """os.environ with WORKER_ENV (keys the user set keep their value) while workers spawn."""
    added = {k: v for k, v in WORKER_ENV.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


#: the network namespace of the forkserver, fixed when the first workers start (None: not yet)
_FORKSERVER_NETNS: list[str] = []


def _thread_netns() -> str:
    try:
        return os.readlink("/proc/thread-self/ns/net")
    except OSError:
        return ""


def _worker_context(backend_name: str) -> Any:
    """How workers start: forked from this process's forkserver (started once, with the worker
    modules imported: a worker is ready about 0.3 s sooner than a spawned one, at every run), or
    spawned where the calling thread is in another network namespace than the forkserver (a
    client placed in a DC's namespace starts there). Each worker takes this process's environment
    as it is at its start (the forkserver's is the one it started with)."""
    here = _thread_netns()
    if not here:
        return mp.get_context("spawn")
    if not _FORKSERVER_NETNS:
        _FORKSERVER_NETNS.append(here)
        from cassperf.workload.backends.base import BACKENDS  # noqa: PLC0415

        mp.get_context("forkserver").set_forkserver_preload(["cassperf.workload.worker", BACKENDS[backend_name]])
    return mp.get_context("forkserver" if here == _FORKSERVER_NETNS[0] else "spawn")


@contextmanager
def client_placement(cluster: Any, dc: str | None) -> Iterator[None]:
    """Where the workers start: on a cluster whose DCs live in network namespaces
    (LocalCluster(inter_dc_rtt_ms=...)), inside the namespace of the client's local DC `dc`,
    unless the calling thread is in one of the cluster's DC namespaces already (the caller
    placed the client: ``with cluster.in_dc("dc2"): run_workload(...)``). Elsewhere nothing
    changes."""
    network = getattr(cluster, "network", None)
    if network is None or dc is None:
        yield
        return
    from cassperf.cluster import netns

    if netns.current([link.namespace for link in network.links]) is not None:
        yield
        return
    with cluster.in_dc(dc):
        yield


def _stats_of(counts: np.ndarray | None) -> dict[str, float | int]:
    if counts is None or not counts.size or not counts.any():
        return {}
    return hdr.stats_ms(_LAYOUT, counts, "ns")


def _row(op: str, count: int, length_s: float, main: Mapping[str, Any], st: Mapping[str, Any],
         errs: Mapping[str, int], rows: int) -> dict[str, Any]:
    """rows: rows written, or for reads the rows found (a read of a key never written, or
    deleted, finds none: row_rate_s then falls below rate_ops_s, as cassandra-stress's does)."""
    nan = math.nan
    rate = count / length_s if length_s > 0 else nan
    row: dict[str, Any] = {"op": op, "count": count, "rate_ops_s": rate, "partition_rate_s": rate,
                           "rows": rows, "row_rate_s": rows / length_s if length_s > 0 else nan,
                           "interval_s": length_s}
    for name in ("mean", "p50", "p95", "p99", "p999", "max"):
        row[f"latency_{name}_ms"] = main.get(f"latency_{name}_ms", nan)
    for name in SERVICE_STATS:
        row[f"latency_service_{name}_ms"] = st.get(f"latency_{name}_ms", nan)
    row["errors"] = sum(errs.values())
    for kind in ERROR_KINDS:
        row[f"errors_{kind}"] = errs[kind]
    return row


def _progress_bar(spec: WorkloadSpec, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm
    if spec.n is not None:
        return tqdm(total=spec.n, unit="op", desc=f"{spec.op}", dynamic_ncols=True)
    return tqdm(total=spec.duration, unit="s", desc=f"{spec.op}", dynamic_ncols=True,
                bar_format="{l_bar}{bar}| {n:.0f}/{total_fmt} s [{elapsed}<{remaining}{postfix}]")


def run_workload(spec: WorkloadSpec, cluster: Any, *, root: str | Path | None = None,
                 labels: Mapping[str, Any] | None = None, run_id: str | None = None,
                 processes: int | None = None, backend: str = "auto", progress: bool = True,
                 schema: bool = True, warmup_s: float = 2.0, rng_seed: int = 0,
                 sampler: Mapping[str, Any] | None = None,
                 during: Callable[[RunWriter], Any] | None = None, stress_values: bool = False,
                 ready: Callable[[], Any] | None = None, profile: Any = None, retries: int = 0) -> Run:
    """Run ``spec`` against ``cluster`` (a ClusterHandle) and return the stored Run.

    sampler: ClusterSampler keyword arguments (``tables``, ``interval_s``, ``jmx``, ``host``...)
    to record what the cluster did into this run, from the workers' start (a baseline during
    warm-up) to the end of the load. during: called in a thread with the run's writer when
    measurement starts, while the load goes on: the garbagecollect experiment's
    ``lambda run: (time.sleep(120), run.phase(...))``; use ``with run.phase(name):`` to mark its
    window. The engine waits for it after the load; if it raised, the run is stored and
    complete, its phase event notes the failure, and EngineError is raised naming the run.
    Every time_s of the run (intervals, histograms, events) counts from the start of
    measurement (``started_utc``); warm-up events are negative.

    root: runs folder (default cassperf.config.runs_dir()); processes: worker processes
    (default one per core, see default_processes); backend: "auto" (acsylla, else driver),
    "acsylla" or "driver"; schema: create keyspace1.standard1 first (IF NOT EXISTS);
    warmup_s: seconds of unrecorded load before t0 when spec.warmup (0 disables it).
    ready: called once every worker is connected and ready and the sampler started, before the
    warm-up and t0 are fixed (clients started together meet there: cassperf.experiments.clients).
    stress_values: write cassandra-stress's column values, so that cassandra-stress (which
    checks what it reads) validates these rows; they cost client CPU and stall the event loop
    for milliseconds per batch (keys module doc): load with it, measure without it. Keys are
    cassandra-stress's either way.
    profile: a cassperf.cluster.profiler.Profiler: each node records a CPU profile from the start
    of the warm-up to the load's end, into raw/profiles/<node>.jfr, its samples on the run's time
    axis (manifest ``profile``; where it cannot, one warning line says why and the run goes on).
    None: no profile.
    retries: times a failed op is sent again before it counts as an error (0: never; a
    preparation load's idempotent writes, see worker module doc); the manifest's engine
    ``retries`` and ``retried_ops``, and a warning when any op was retried.
    """
    check("retries", retries, Whole(0))
    target = Target.of(cluster, spec.local_dc)
    backend_name = resolve(backend)
    backend_cls = load(backend_name)
    backend_version = backend_cls.version()
    nproc = processes or default_processes(spec, backend_cls.paced_ops_s_per_process)
    if spec.n is not None and nproc > spec.n:
        nproc = spec.n
    conc = split_count(spec.concurrency, nproc)
    if min(conc) < 1:
        raise ConfigError(f"concurrency {spec.concurrency} cannot be split over {nproc} processes")
    counts: list[int | None] = list(split_count(spec.n, nproc)) if spec.n is not None else [None] * nproc
    warm = warmup_s if spec.warmup else 0.0
    if schema:
        create_schema(spec, cluster)
    engine_info = {"backend": backend_name, "backend_version": backend_version, "processes": nproc,
                   "values": "cassandra-stress" if stress_values else "pool",
                   "concurrency_per_process": conc, "warmup_s": warm, "rng_seed": rng_seed, "retries": retries}
    manifest = build_manifest(run_id=run_id, tool=TOOL, tool_version=f"{cassperf.__version__} ({backend_version})",
                              command=_command(spec), parameters=dataclasses.asdict(spec) | {"engine": engine_info},
                              labels=dict(labels or {}), latency_type="response" if spec.rate.is_fixed else "service",
                              cluster=getattr(cluster, "description", None))
    manifest.update({"histogram_unit": "ns", "hdr_log": f"raw/{HDR_LOG}", "engine": engine_info,
                     "interval_s": spec.interval_s})
    writer = RunWriter(manifest, root=root).open()
    recording = profile.recording(cluster, writer.raw_folder("profiles"), f"cassperf-{writer.run_id}") \
        if profile is not None else None
    cluster_sampler = None
    action = DuringAction(during, writer) if during is not None else None
    with _worker_env(), client_placement(cluster, target.local_dc):
        ctx = _worker_context(backend_name)
        reports: Any = ctx.Queue()
        go, stop = ctx.Event(), ctx.Event()
        t0_value = ctx.Value("q", 0)
        env = dict(os.environ)
        procs = []
        for i in range(nproc):
            plan = WorkerPlan(i, nproc, spec, target, backend_name, conc[i], counts[i], warm, rng_seed, stress_values,
                              retries)
            p = ctx.Process(target=worker_main, args=(plan, reports, go, t0_value, stop, env, os.getpid()),
                            name=f"cassperf-engine-{i}", daemon=True)
            p.start()
            procs.append(p)
    writer.manifest["engine"]["start_method"] = ctx.get_start_method()
    bar = None
    error: str | None = None
    interrupted = False
    try:
        _await_ready(reports, procs, writer)
        # The sampler starts before `ready` and t0: its sources connect and take a first sample, which
        # took 2 s beside another study in CI. After t0 it let the workers go after t0 + duration (a run
        # with no operation); after `ready` (where 02's clients meet) its client started 1.6 s after the
        # other.
        if sampler is not None:
            from cassperf.sampler import ClusterSampler  # noqa: PLC0415 - only when asked for

            cluster_sampler = ClusterSampler(cluster, writer=writer, **dict(sampler))
            cluster_sampler.clients.add("engine", os.getpid())       # the client's CPU: this process ...
            for i, p in enumerate(procs):                            # ... and every worker
                cluster_sampler.clients.add(f"worker-{i}", p.pid)
            cluster_sampler.start()
        if ready is not None:
            ready()
        t0 = time.monotonic_ns() + int(max(warm, START_MARGIN_S) * NS_PER_S)
        epoch0 = time.time() + (t0 - time.monotonic_ns()) / NS_PER_S
        t0_value.value = t0
        writer.manifest["t0_epoch_s"] = epoch0
        writer.set_clock(t0 / NS_PER_S)       # time_s of events and intervals: since t0
        if recording is not None:             # now, with the warm-up: JFR.start's own cost stays out of the
            recording.start_at(time.monotonic_ns(), origin_ns=t0)      # measured load (cluster.profiler)
        bar = _progress_bar(spec, progress)
        collector = _Collector(writer, spec, nproc, t0, epoch0, bar)
        go.set()
        late_s = (time.monotonic_ns() - t0) / NS_PER_S
        if late_s > 0:            # workers load from t0 to t0 + duration whenever they are let go
            writer.warn(f"the workers were let go {late_s:.2f} s after the run's start (t0): its first "
                        f"{late_s:.2f} s carry no load")
        if warm:
            writer.event("warmup:start", f"{warm:g} s of unrecorded load")
        if action is not None:
            action.start_at(t0)
        interrupted = _collect(reports, procs, collector, writer, stop, t0)
        writer.event("load:end", "interrupted" if interrupted else "")
        if recording is not None:
            recording.stop_into(writer)
        if action is not None:
            action.join()
        writer.append_summary(collector.summary())
        _finish_manifest(writer, collector)
        if interrupted:
            error = "interrupted (SIGINT): the last interval is partial"
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        stop.set()
        go.set()
        if bar is not None:
            bar.close()
        _reap(procs)
        if cluster_sampler is not None:      # its last sample follows the load's end
            cluster_sampler.stop()
        if recording is not None and not recording.stopped:
            recording.stop_into(writer)      # the load failed: keep what was recorded, say so
        writer.close(error=error)
    if interrupted:
        raise KeyboardInterrupt
    if action is not None and action.error is not None:
        raise EngineError(f"the during action failed: {type(action.error).__name__}: {action.error} "
                          f"(the run is stored, complete, at {writer.path})") from action.error
    return load_run(writer.path)


def _await_ready(reports: Any, procs: list[Any], writer: RunWriter) -> None:
    ready: set[int] = set()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while len(ready) < len(procs):
        try:
            msg = reports.get(timeout=0.5)
        except queue_mod.Empty:
            dead = [i for i, p in enumerate(procs) if p.exitcode is not None and i not in ready]
            if dead:
                raise EngineError(f"worker {dead[0]} exited with code {procs[dead[0]].exitcode} before it was ready")
            if time.monotonic() > deadline:
                raise EngineError(f"workers not ready after {READY_TIMEOUT_S:.0f} s") from None
            continue
        if msg[0] == "fatal":
            raise EngineError(f"worker {msg[1]} failed while connecting:\n{msg[2]}")
        if msg[0] == "ready":
            ready.add(msg[1])
            writer.manifest.setdefault("engine_worker_pids", []).append(msg[3])
            writer.manifest["engine"]["event_loop"] = msg[4]   # uvloop, or asyncio (CASSPERF_EVENT_LOOP=asyncio)


#: after a Ctrl-C, how long the engine waits for its workers to drain their in-flight ops
#: (worker.DRAIN_TIMEOUT_S) and close their sessions before it kills them
STOP_WAIT_S = DRAIN_TIMEOUT_S + 10.0


class _CtrlC:
    """Counts SIGINTs while the engine collects, in place of raising KeyboardInterrupt there.
    Raised between a queue read and the collector's update, it lost that worker's interval (the
    engine then waited for it forever), or left the queue's pipe mid-message. A third Ctrl-C
    raises (a wait that no check in the loop reaches, e.g. a worker that died mid-message).
    Installed only in the main thread (the only one Python signals), and only over a Python
    handler: an ignored SIGINT stays ignored."""

    def __init__(self) -> None:
        self.count = 0
        self.first_at: float | None = None
        self._old: Any = None

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread():
            old = signal.getsignal(signal.SIGINT)
            if old is not None and old is not signal.SIG_IGN:
                self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.count += 1
        if self.first_at is None:
            self.first_at = time.monotonic()
        if self.count >= 3:
            raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)

    def waited_enough(self) -> bool:
        """A second Ctrl-C, or STOP_WAIT_S since the first."""
        return self.count > 1 or (self.first_at is not None and time.monotonic() - self.first_at > STOP_WAIT_S)


def _collect(reports: Any, procs: list[Any], col: _Collector, writer: RunWriter, stop: Any, t0: int) -> bool:
    """Receive reports until every worker is done; True when interrupted by Ctrl-C."""
    load_started = stopping = False
    with _CtrlC() as ctrl_c:
        while not col.finished():
            if ctrl_c.count and not stopping:
                stopping = True
                stop.set()
                writer.event("interrupted", "SIGINT: stopping the workers")
            if ctrl_c.waited_enough():
                _stop_waiting(procs, col, writer, ctrl_c.count)
                break
            if not load_started and time.monotonic_ns() >= t0:
                writer.event("load:start", "")
                load_started = True
            try:
                msg = reports.get(timeout=0.2)
            except queue_mod.Empty:
                _close_exited(reports, procs, col, writer)
                col.flush_ready()
                continue
            _take(msg, col, writer)
            col.flush_ready()
    return ctrl_c.count > 0


def _take(msg: tuple, col: _Collector, writer: RunWriter) -> None:
    """One worker report into the collector."""
    kind = msg[0]
    if kind == "interval":
        col.add(msg)
    elif kind == "done":
        col.worker_done(msg[1], msg[2])
        col.stats[msg[1]] = msg[3]
    elif kind == "fatal":
        writer.warn(f"worker {msg[1]} failed:\n{msg[2]}")
        writer.event("worker-died", f"worker {msg[1]}: {msg[2].strip().splitlines()[-1]}")


def _close_exited(reports: Any, procs: list[Any], col: _Collector, writer: RunWriter) -> None:
    """Close every worker that exited without a 'done' read yet. A worker flushes its reports into
    the queue before it exits, so what it sent is read first: a parent that woke late (no queue
    read for 2 s, seen in CI) found worker 0 gone with its whole run still in the pipe, and closed
    it at interval -1."""
    exited = [i for i, p in enumerate(procs) if p.exitcode is not None and i not in col.done_at]
    if not exited:
        return
    while True:
        try:
            _take(reports.get(timeout=0.0), col, writer)
        except queue_mod.Empty:
            break
    for i in exited:
        if i not in col.done_at:
            _worker_died(col, writer, i, procs[i].exitcode)


def _worker_died(col: _Collector, writer: RunWriter, i: int, exitcode: int) -> None:
    """Worker ``i`` exited without saying it was done: close it at the last interval it reported."""
    last = col.last_reported(i)
    col.worker_done(i, last)
    writer.warn(f"worker {i} exited with code {exitcode} after interval {last}; the run carries on without it")
    writer.event("worker-died", f"worker {i} exit code {exitcode}")


def _stop_waiting(procs: list[Any], col: _Collector, writer: RunWriter, ctrl_c_count: int) -> None:
    """Kill the workers still running (each had its drain and more; SIGKILL also ends one stopped
    or stuck in C), close every worker not done at the last interval it reported, and write what
    the others reported: a worker's last partial interval comes before its session closes."""
    why = "a second Ctrl-C" if ctrl_c_count > 1 else f"{STOP_WAIT_S:g} s after Ctrl-C"
    for i, p in enumerate(procs):
        if i in col.done_at:
            continue
        if p.exitcode is not None:
            _worker_died(col, writer, i, p.exitcode)
            continue
        p.kill()
        last = col.last_reported(i)
        col.worker_done(i, last)
        writer.warn(f"worker {i} had not finished at {why}: killed; its intervals after {last} are not in the run")
    col.flush_ready()


def _finish_manifest(writer: RunWriter, col: _Collector) -> None:
    stats = col.stats
    cpu = sum(s.get("cpu_s", 0.0) for s in stats.values())
    main = sum(s.get("main_thread_cpu_s", 0.0) for s in stats.values())
    switches = sum(s.get("voluntary_switches", 0) for s in stats.values())
    failed = sum(sum(e.values()) for e in col.errors.values())
    ops = sum(col.counts.values()) + failed
    retried = sum(s.get("retried", 0) for s in stats.values())
    if retried:
        writer.warn(f"{retried:,} sends failed and were sent again (up to {writer.manifest['engine'].get('retries')} "
                    f"times per op); {failed:,} op(s) failed every time")

    def per_op(x: float, scale: float = 1e6) -> float | None:
        return x / ops * scale if ops else None

    writer.manifest["engine"] = {**writer.manifest.get("engine", {}),
                                 "client_cpu_s": cpu,
                                 "client_cpu_us_per_op": per_op(cpu),
                                 # where it went: the workers' event-loop threads (pacing, recording,
                                 # completions) and the rest (the driver's I/O threads)
                                 "client_cpu_event_loop_us_per_op": per_op(main),
                                 "client_cpu_driver_threads_us_per_op": per_op(cpu - main),
                                 # threads put to sleep and woken again, per op: on these VMs a
                                 # wake-up costs tens of us of CPU (bench/wakeup_cost.py)
                                 "client_voluntary_switches_per_op": per_op(switches, 1.0),
                                 "client_involuntary_switches": sum(s.get("involuntary_switches", 0)
                                                                    for s in stats.values()),
                                 "worker_rss_start_bytes": [s.get("rss_start_bytes") for _, s in sorted(stats.items())],
                                 "worker_rss_bytes": [s.get("rss_bytes") for _, s in sorted(stats.items())],
                                 "abandoned_ops": sum(s.get("abandoned", 0) for s in stats.values()),
                                 "retried_ops": retried,
                                 "clamped_samples": col.clamped,
                                 "reads_without_row": col.empty.get("read", 0)}
    _check_rate_kept(writer, col.spec.rate, ops, col.last_end_s)
    found_none, reads = col.empty.get("read", 0), col.counts.get("read", 0)
    if found_none:
        why = ("deleted keys, or keys never written" if col.spec.ratio is not None and col.spec.ratio.delete
               else "keys never written: does the population cover only keys that were loaded?")
        writer.warn(f"{found_none:,} of {reads:,} reads ({found_none / reads:.1%}) found no row ({why}); "
                    f"row_rate_s counts the rows found, rate_ops_s every read")


#: a fixed or throttled run is called short of its rate when it did under this share of it ...
KEPT_RATE_SHARE = 0.95
#: ... and is behind by more than this many seconds' worth of ops (a short run's drain is not a shortfall)
KEPT_RATE_SLACK_S = 0.5


def fell_behind(target_ops_s: float, ops: int, elapsed_s: float) -> bool:
    """Whether a paced client fell behind its schedule: it did under KEPT_RATE_SHARE of the rate
    asked and is more than KEPT_RATE_SLACK_S seconds' worth of ops behind."""
    achieved, behind = ops / elapsed_s, target_ops_s * elapsed_s - ops
    return achieved < KEPT_RATE_SHARE * target_ops_s and behind > target_ops_s * KEPT_RATE_SLACK_S


def _check_rate_kept(writer: RunWriter, rate: Any, ops: int, elapsed_s: float) -> None:
    """Record the asked and achieved rate of a fixed or throttled run and whether it fell behind its
    schedule (manifest engine.fell_behind, a flag of the stored run), and warn when it did: a
    fixed=50000/s run on a node that does 20,000 would otherwise look like a chosen rate in a
    report (its response times do show the queue behind the schedule, its throughput does not say so)."""
    if rate.kind == "unlimited" or not rate.ops_per_s or elapsed_s <= 0:
        return
    target, achieved = float(rate.ops_per_s), ops / elapsed_s
    behind = fell_behind(target, ops, elapsed_s)
    writer.manifest["engine"].update(target_rate_ops_s=target, achieved_rate_ops_s=achieved, fell_behind=behind)
    if not behind:
        return
    why = ("response times include the wait behind the schedule (coordinated omission corrected); "
           "service times do not" if rate.kind == "fixed" else
           "throttle is a ceiling: the sender restarted its schedule instead of catching up")
    writer.warn(f"{rate.kind}={rate.ops_per_s}/s asked, {achieved:,.0f} ops/s achieved ({achieved / target:.0%}) "
                f"over {elapsed_s:.1f} s: the cluster or this client did not keep up "
                f"(more concurrency, more client cores, or a lower rate); {why}")


def _reap(procs: list[Any], timeout_s: float = 10.0) -> None:
    """Join our workers; terminate (then kill) any that do not exit in time."""
    deadline = time.monotonic() + timeout_s
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.exitcode is None:
            p.terminate()
            p.join(2.0)
        if p.exitcode is None:
            p.kill()
            p.join(1.0)
