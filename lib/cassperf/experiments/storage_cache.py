"""The storage-and-cache study (../shared/studies/004_*: reads of 3M out of 150M 4 KiB rows per
mdadm RAID 0 chunk size 4k/64k/128k/256k, ops/s and p50/p95/p99 against client threads, host
cache full vs empty, run A vs run B) as a plan of runs per storage configuration.

A storage configuration is where the node's data lives (``storage``: the device and filesystem,
measured) and the table's compression ``chunk_length_in_kb`` (``chunk_kb``, as Cassandra reports
it in system_schema.tables). This machine has no md or device-mapper driver, so the chunk that
varies by default is the table's compression chunk, and the second storage is an ext4
filesystem on a loop device (cassperf.storage.loopfs); where the data sits on an md array,
``mdadm --detail`` is parsed into the labels (md_level, md_chunk_kb, md_devices).

Per configuration, keyspace ``<keyspace_prefix><chunk_kb>`` with one table of ``column_count``
x ``column_size``-byte columns (4 KiB rows by default):

- ``part=write``  ``rows`` keys written (seq 1..rows)
- ``part=read cache=full run=a``   a read sweep over ``threads`` right after the writes (the
  study's ReadOnly-Full: what was just written is in the host's cache)
- for chunk sizes in ``empty_chunk_kbs``: the caches emptied (memtables flushed, key and row
  caches invalidated, the nodes restarted with ``cold_restart``, the OS page cache dropped:
  node_actions.make_cold, which says what it did), then ``cache=empty run=a``, the same sweep, and
  at once ``cache=empty run=b``, the sweep again (the study's RunA and RunB of ReadOnly-Empty)

Every read run reads ``reads`` keys (or for ``read_s`` seconds: on a small machine a fixed count
gives a 256-thread run too few intervals for the statistics) uniformly over 1..rows, with no
unrecorded warm-up (the runs of a sweep follow one another, as the study's did). Every figure and
comparison of this study is over the **whole run**, not a steady window: the slow start of a read
from an emptied cache is what the empty-cache runs measure, and a steady-state rule would cut it
off as warm-up.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassperf.errors import ConfigError
from cassperf.experiments.node_actions import make_cold
from cassperf.experiments.sweep import Step
from cassperf.workload.spec import Compression, Replication, WorkloadSpec

STUDY = "storage-and-cache"
SOURCE = "../shared/studies/004_25c0599bb358c682.txt"
#: the labels that name a point of the study (analyse_only groups stored or imported runs by them)
POINT_LABELS = ("storage", "chunk_kb", "part", "cache", "run", "threads")


@dataclass(frozen=True)
class StorageStudy:
    """The study's parameters (the notebook's parameters cell, validated)."""

    rows: int = 10_000                        # keys written per configuration (the study: 150,000,000)
    reads: int = 3_000                        # reads per read run (the study: 3,000,000)
    read_s: int = 0                           # seconds per read run instead of a count (0: `reads` reads)
    threads: Sequence[int] = (4, 32, 256)     # client threads of a sweep (the study: 4..512)
    chunk_kbs: Sequence[int] = (4, 64, 256)   # chunk sizes on the data folder's disk (the study: 4/64/128/256)
    loop_chunk_kbs: Sequence[int] = (64,)     # chunk sizes on the loop-device filesystem ([]: none)
    empty_chunk_kbs: Sequence[int] = (64,)    # chunk sizes that also get the empty-cache run a and b
    write_threads: int = 64
    rf: int = 1
    cl: str = "LOCAL_ONE"
    dc: str = "dc1"
    keyspace_prefix: str = "storage_c"
    compressor: str = "LZ4"
    column_count: int = 1
    column_size: int = 4096                   # bytes: one 4 KiB column per row, the study's 4k documents
    interval_s: float = 0.5
    cold_restart: bool = True                 # empty cache: restart the nodes too (embedded cluster)
    tool: str = "engine"
    experiment: str = "local"

    def __post_init__(self) -> None:
        if isinstance(self.read_s, bool) or not isinstance(self.read_s, int) or self.read_s < 0:
            raise ConfigError(f"read_s={self.read_s!r}: expected whole seconds >= 0 (0: each read run reads `reads`)")
        for name in ("rows", "reads", "write_threads", "rf", "column_count", "column_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name}={v!r}: expected a whole number >= 1")
        threads = list(self.threads)
        if not threads or any(isinstance(t, bool) or not isinstance(t, int) or t < 1 for t in threads):
            raise ConfigError(f"threads={threads!r}: expected client thread counts, whole numbers >= 1 "
                              f"(the study: [4, 8, 16, 32, 64, 128, 256, 512])")
        if len(set(threads)) != len(threads):
            raise ConfigError(f"threads={threads!r}: a thread count is named twice")
        for name in ("chunk_kbs", "loop_chunk_kbs", "empty_chunk_kbs"):
            values = list(getattr(self, name))
            bad = [c for c in values if isinstance(c, bool) or not isinstance(c, int) or c < 1 or c & (c - 1)]
            if bad:
                raise ConfigError(f"{name}={values!r}: chunk_length_in_kb must be a power of two (4, 16, 64...)")
        if not list(self.chunk_kbs) and not list(self.loop_chunk_kbs):
            raise ConfigError("chunk_kbs and loop_chunk_kbs are both empty: no storage configuration to run")
        Compression(self.compressor)    # an unknown compressor: one line from the spec's check

    def keyspace(self, chunk_kb: int) -> str:
        return f"{self.keyspace_prefix}{chunk_kb}"

    def _spec(self, chunk_kb: int, op: str, n: int | None, threads: int, duration: int | None = None) -> WorkloadSpec:
        population = f"seq=1..{self.rows}" if op == "write" else f"uniform(1..{self.rows})"
        return WorkloadSpec(op=op, n=n, duration=duration, warmup=False, cl=self.cl, concurrency=threads, population=population,
                            column_count=self.column_count, column_size=self.column_size,
                            keyspace=self.keyspace(chunk_kb), replication=Replication.network_topology({self.dc: self.rf}),
                            compression=Compression(self.compressor, chunk_kb), local_dc=self.dc,
                            interval_s=self.interval_s)

    def write_spec(self, chunk_kb: int) -> WorkloadSpec:
        return self._spec(chunk_kb, "write", self.rows, self.write_threads)

    def read_spec(self, chunk_kb: int, threads: int) -> WorkloadSpec:
        if self.read_s:
            return self._spec(chunk_kb, "read", None, threads, self.read_s)
        return self._spec(chunk_kb, "read", self.reads, threads)


# -- measuring what a configuration is --------------------------------------------------------

def table_options(cluster: Any, keyspace: str, table: str = "standard1") -> dict[str, str]:
    """The table's compression options as Cassandra reports them (system_schema.tables), e.g.
    {'chunk_length_in_kb': '64', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}."""
    row = cluster.session().execute("SELECT compression FROM system_schema.tables WHERE keyspace_name = %s "
                                    "AND table_name = %s", (keyspace, table)).one()
    if row is None:
        raise ConfigError(f"{keyspace}.{table} does not exist on the cluster: it is created by prepare()")
    return {str(k): str(v) for k, v in dict(row[0]).items()}


def storage_name(storage: Any) -> str:
    """A configuration's storage as a stable label, from what was measured (loopfs.Storage):
    'ext4 on /dev/vda', 'ext4 on a loop device' (its number changes per attach),
    'xfs on /dev/md0 (raid0, 64 KiB chunk)'."""
    device = storage.device or "no block device"
    if device.startswith("/dev/loop"):
        device = "a loop device"
    name = f"{storage.fstype} on {device}"
    if storage.md_level is not None:
        name += f" ({storage.md_level}, {storage.md_chunk_kb} KiB chunk)"
    return name


def measure_storage(cluster: Any, storage_label: str = "") -> dict[str, str]:
    """The labels saying where the cluster's data lives: for an embedded cluster measured on its
    first node's data folder (loopfs.storage_of, mdadm --detail parsed for an array); for a named
    cluster the user's ``storage_label`` (the workbook cannot see its disks), else 'unknown'."""
    nodes = getattr(cluster, "nodes", None)
    if nodes and hasattr(nodes[0], "layout"):
        from cassperf.storage.loopfs import storage_of

        data = nodes[0].layout.data
        data.mkdir(parents=True, exist_ok=True)
        found = storage_of(data)
        return {"storage": storage_label or storage_name(found), **found.labels()}
    return {"storage": storage_label or "unknown (a named cluster: say what it is with storage_label)"}


@dataclass(frozen=True)
class Configuration:
    """One storage configuration as measured on the cluster: its chunk size, the labels of its
    runs, and whether its keyspace existed before (only then may stored runs stand for it)."""

    chunk_kb: int
    labels: Mapping[str, str]
    existed: bool


def prepare(cluster: Any, study: StorageStudy, chunk_kbs: Sequence[int], storage_label: str = "") \
        -> list[Configuration]:
    """Create each configuration's table, then read back what Cassandra made of it and where the
    data lives: per chunk size the labels of its runs (storage, storage_device, storage_fs,
    chunk_kb and compression as system_schema reports them). A table that exists with another
    chunk length than asked (left by an earlier run) is refused with the fix."""
    from cassperf.experiments.sweep import _keyspaces
    from cassperf.workload.engine import create_schema

    where = measure_storage(cluster, storage_label)
    present = _keyspaces(cluster)
    out: list[Configuration] = []
    for chunk in chunk_kbs:
        spec = study.write_spec(chunk)
        create_schema(spec, cluster)
        options = table_options(cluster, spec.keyspace)
        measured = options.get("chunk_length_in_kb")
        if measured != str(chunk):
            raise ConfigError(f"{spec.keyspace}.standard1 exists with chunk_length_in_kb={measured}, the study asks "
                              f"for {chunk}: drop it (DROP KEYSPACE {spec.keyspace}) or use another keyspace_prefix")
        compressor = options.get("class", "").rsplit(".", 1)[-1]
        out.append(Configuration(chunk, {**where, "chunk_kb": measured,
                                         "compression": f"{compressor}, chunk_length_in_kb={measured}"},
                                 spec.keyspace in present))
    return out


def run_configurations(study: StorageStudy, cluster: Any, chunk_kbs: Sequence[int], storage_label: str = "",
                       log: Callable[[str], None] = print) -> list[Any]:
    """prepare() then execute() each configuration's plan on ``cluster``; a configuration whose
    keyspace existed before resumes (its stored runs are skipped), a new one runs in full."""
    from cassperf.experiments.sweep import execute

    outcomes: list[Any] = []
    for conf in prepare(cluster, study, chunk_kbs, storage_label):
        outcomes += execute(plan(study, [conf]), cluster, resume=conf.existed, progress=False, log=log)
    return outcomes


# -- the plan ---------------------------------------------------------------------------------

def empty_caches(study: StorageStudy) -> Callable[[Any], str]:
    """The before-action of an empty-cache run "a": make_cold, restarting the nodes with
    cold_restart; for a named cluster the servers' own page cache is beyond the workbook (said)."""
    def before(cluster: Any) -> str:
        note = make_cold(cluster, restart=study.cold_restart)
        if not hasattr(cluster, "stop"):
            note += ("; the page cache dropped is this machine's: the servers' page cache was NOT dropped "
                     "(drop it on each server: sync; echo 3 > /proc/sys/vm/drop_caches)")
        return note
    return before


def plan(study: StorageStudy, configurations: Sequence[Configuration]) -> list[Step]:
    """The runs of configurations ``prepare`` measured on one cluster, in order: per chunk size
    its write, the full-cache sweep, then (empty_chunk_kbs) the empty-cache sweeps a and b."""
    steps: list[Step] = []
    for conf in configurations:
        chunk = conf.chunk_kb
        base = {"study": STUDY, "experiment": study.experiment, **conf.labels}
        steps.append(Step({**base, "part": "write", "op": "write", "cache": "", "run": "a",
                           "threads": str(study.write_threads)}, study.write_spec(chunk), study.tool))
        sweeps = [("full", "a")] + ([("empty", "a"), ("empty", "b")] if chunk in study.empty_chunk_kbs else [])
        for cache, run in sweeps:
            for i, threads in enumerate(study.threads):
                before = empty_caches(study) if (cache, run, i) == ("empty", "a", 0) else None
                steps.append(Step({**base, "part": "read", "op": "read", "cache": cache, "run": run,
                                   "threads": str(threads)}, study.read_spec(chunk, threads), study.tool, before))
    return steps


@contextlib.contextmanager
def loop_cluster(cluster: Any, folder: Path, size_mb: int, **cluster_parameters: Any) -> Iterator[Any]:
    """An embedded cluster of the same shape whose working folder (data, commitlog, logs) lies
    on a fresh loop-device filesystem: ``cluster`` (the data-folder cluster) is stopped first to
    free its addresses, the loop cluster (named ``<cluster_name>-loop``) is started, and on exit
    stopped, then the filesystem unmounted and its loop device and backing file removed (also on
    failure). ``cluster_parameters``: study_cluster's (cluster_name, first_address, ...)."""
    from cassperf.cluster.study import study_cluster
    from cassperf.storage.loopfs import loop_filesystem

    with loop_filesystem(folder, size_mb) as fs:
        cluster.stop()
        params = {**cluster_parameters, "cluster_name": f"{cluster_parameters.get('cluster_name', 'cassperf')}-loop"}
        loop = study_cluster(**params, root=fs.mount_point / "clusters", start=False)
        try:
            yield loop.start()
        finally:
            loop.stop()


# -- analysis of stored runs (pure functions over Runs) --------------------------------------

def results(runs: Sequence[Any]) -> Any:
    """One row per read or write run: its labels and HDR-merged figures over its steady window
    (cassperf.analysis.runs_frame), threads and chunk_kb as numbers, and ``config`` naming the
    storage configuration ('64 KiB chunks, ext4 on /dev/vda')."""
    import pandas as pd

    from cassperf.analysis import runs_frame

    frame = runs_frame(runs, steady=False)
    if frame.empty:
        return frame
    if "label_op" in frame.columns:
        frame = frame.drop(columns=["label_op"])
    for col in (*POINT_LABELS, "compression"):      # an imported run may lack a label: "" then
        if col not in frame.columns:
            frame[col] = pd.Series("", index=frame.index, dtype="string")
        frame[col] = frame[col].fillna("")
    for col in ("threads", "chunk_kb"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("Int64")
    frame["config"] = frame["chunk_kb"].astype(str) + " KiB chunks, " + frame["storage"].astype(str)
    return frame.sort_values(["storage", "chunk_kb", "part", "cache", "run", "threads"]).reset_index(drop=True)


def sweep(frame: Any, cache: str, run: str | None = None, chunk_kbs: Sequence[int] | None = None) -> Any:
    """The read sweep rows of one cache state (and run, and chunk sizes), with ``line``: the
    configuration, plus the cache and run where the selection mixes them."""
    if frame.empty:
        return frame
    keep = (frame["part"] == "read") & (frame["cache"] == cache)
    if run is not None:
        keep &= frame["run"] == run
    if chunk_kbs is not None:
        keep &= frame["chunk_kb"].isin(list(chunk_kbs))
    return frame[keep.fillna(False)].reset_index(drop=True)


def with_line(frame: Any, *parts: str) -> Any:
    """``frame`` with a ``line`` column naming each chart line: config plus the given labels."""
    line = frame["config"].astype(str)
    for p in parts:
        line = line + f", {p} " + frame[p].astype(str)
    return frame.assign(line=line)


def _runs_by_point(runs: Sequence[Any]) -> dict[tuple[str, ...], Any]:
    return {tuple(str(r.labels.get(k, "")) for k in POINT_LABELS): r for r in runs}


def run_ab(runs: Sequence[Any], reps: int = 1000) -> Any:
    """Run b against run a of the empty-cache sweep, per configuration and thread count, with the
    analysis layer's test (compare_runs: Welch on batch means for ops/s, block bootstrap of the
    merged HDR histograms for p99): change, 95% CI, verdict."""
    import pandas as pd

    from cassperf.analysis.compare import compare_runs

    by_point = _runs_by_point(runs)
    rows = []
    for key, a in sorted(by_point.items()):
        storage, chunk, part, cache, run, threads = key
        if (part, cache, run) != ("read", "empty", "a"):
            continue
        b = by_point.get((storage, chunk, part, cache, "b", threads))
        if b is None:
            continue
        for metric in ("rate_ops_s", "latency_p99_ms"):
            c = compare_runs(a, b, "read", metric, steady=False, reps=reps)
            rows.append({"storage": storage, "chunk_kb": int(chunk), "threads": int(threads), "metric": metric,
                         "run_a": c.a, "run_b": c.b, "change_pct": c.change_pct, "ci_low_pct": c.ci_low_pct,
                         "ci_high_pct": c.ci_high_pct, "significant": c.significant, "verdict": c.verdict,
                         "run_a_id": a.run_id, "run_b_id": b.run_id})
    frame = pd.DataFrame(rows)
    return frame.sort_values(["storage", "chunk_kb", "metric", "threads"]).reset_index(drop=True) if rows else frame


def _combine(verdicts: Sequence[str]) -> str:
    """Several comparisons of one claim: does not hold when any contradicts it, holds when every
    one supports it, not shown otherwise (or with none)."""
    from cassperf.analysis.claims import FAILS, HOLDS, NOT_SHOWN

    if not verdicts:
        return NOT_SHOWN
    if FAILS in verdicts:
        return FAILS
    return HOLDS if all(v == HOLDS for v in verdicts) else NOT_SHOWN


def claims(runs: Sequence[Any], reps: int = 1000) -> Any:
    """The published findings checked on these runs (cassperf.analysis.claims)."""
    from cassperf.analysis.claims import HOLDS, NOT_SHOWN, Claim, alike, claims_frame, decidable, higher, lower
    from cassperf.analysis.compare import compare_runs

    by_point = _runs_by_point(runs)

    def reads(storage: str, chunk: int, cache: str, run: str) -> dict[int, Any]:
        return {int(k[5]): r for k, r in by_point.items()
                if k[:5] == (storage, str(chunk), "read", cache, run)}

    storages = sorted({k[0] for k in by_point})
    chunks = {s: sorted({int(k[1]) for k in by_point if k[0] == s and k[2] == "read"}) for s in storages}
    rows: list[Claim] = []
    one_host = ("here the stripe chunk cannot be varied (no md driver): the chunk varied is the table's compression "
                "chunk, which sets how much Cassandra reads and decompresses per row, not how the disk stripes it")

    def pairs(chunk_a: int, chunk_b: int, rule: Callable[[Any], str], metric: str = "rate_ops_s",
              caches: Sequence[tuple[str, str]] = (("full", "a"), ("empty", "a"))) -> tuple[list[str], list[str]]:
        verdicts, shown = [], []
        for s in storages:
            if chunk_a not in chunks[s] or chunk_b not in chunks[s]:
                continue
            for cache, run in caches:
                ra, rb = reads(s, chunk_a, cache, run), reads(s, chunk_b, cache, run)
                for t in sorted(set(ra) & set(rb)):
                    c = compare_runs(ra[t], rb[t], "read", metric, steady=False, reps=reps)
                    v = rule(c)
                    verdicts.append(v)
                    shown.append(f"{s}, {cache} cache, {t} thr: {chunk_b} vs {chunk_a} KiB {c.change_pct:+.1f}% "
                                 f"({v})")
        return verdicts, shown

    def summary(shown: list[str], verdicts: list[str], need: str) -> str:
        if not shown:
            return f"needs {need}"
        counts = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
        return f"{len(shown)} comparisons ({counts}): " + "; ".join(shown)

    large = [(64, 128), (64, 256), (128, 256)]
    verdicts, shown = [], []
    for a, b in large:
        v, s = pairs(a, b, lambda c: alike(c, 10.0))
        verdicts += v
        shown += s
    rows.append(Claim("Chunk sizes of 64, 128 and 256 KiB read at about the same rate, with a full or an empty cache",
                      SOURCE, summary(shown, verdicts, "two of 64/128/256 KiB on one storage"), _combine(verdicts),
                      "per storage, cache state and thread count the 95% CI of the ops/s change lies within +-10%; "
                      "does not hold if any CI lies wholly outside, holds if all lie inside", one_host))
    verdicts, shown = [], []
    for b in (64, 128, 256):
        v, s = pairs(b, 4, lower)
        verdicts += v
        shown += s
    rows.append(Claim("A 4 KiB chunk reads slower than 64 KiB and larger chunks, even with a full cache", SOURCE,
                      summary(shown, verdicts, "4 KiB and a larger chunk on one storage"), _combine(verdicts),
                      "4 KiB's ops/s significantly below the larger chunk's at every thread count and cache state",
                      one_host + "; a 4 KiB compression chunk means less to decompress per 4 KiB row, so here it "
                                 "may well read faster"))
    verdicts, shown = [], []
    for other in (64, 256):
        v, s = pairs(other, 128, higher, caches=(("full", "a"),))
        verdicts += v
        shown += s
    rows.append(Claim("128 KiB chunks may read slightly faster than 64 and 256 KiB", SOURCE,
                      summary(shown, verdicts, "128 KiB and 64 or 256 KiB on one storage"), _combine(verdicts),
                      "128 KiB's ops/s significantly above the other's at every thread count (full cache)", one_host))
    tapers, shown = [], []
    for s in storages:
        for chunk in chunks[s]:
            sweep_runs = sorted(reads(s, chunk, "full", "a").items())
            if len(sweep_runs) >= 2:
                (t1, r1), (t2, r2) = sweep_runs[-2], sweep_runs[-1]
                c = compare_runs(r1, r2, "read", "rate_ops_s", steady=False, reps=reps)
                v = NOT_SHOWN if not decidable(c) else "does not hold" if c.significant and c.change_pct > 10 \
                    else HOLDS
                tapers.append(v)
                shown.append(f"{chunk} KiB, {s}: {t2} vs {t1} thr {c.change_pct:+.1f}% ({v})")
    rows.append(Claim("With a full cache, ops/s taper off as client threads rise", SOURCE,
                      summary(shown, tapers, "a full-cache sweep of two thread counts or more"), _combine(tapers),
                      "from the second-highest to the highest thread count ops/s rise by no more than 10% "
                      "(or not significantly)",
                      "the study's taper came from the VMs' disk throughput limit; on 2 shared cores the client "
                      "and the node run out of CPU first"))
    def cold_first(cache_a: tuple[str, str], cache_b: tuple[str, str], what: str) -> tuple[str, str]:
        """b faster than a: decided at each sweep's first thread count (the only run that starts from
        the emptied cache; later runs follow runs that filled it), contradicted by any significant fall."""
        verdicts, shown = [], []
        for s in storages:
            for chunk in chunks[s]:
                a, b = reads(s, chunk, *cache_a), reads(s, chunk, *cache_b)
                common = sorted(set(a) & set(b))
                for i, t in enumerate(common):
                    c = compare_runs(a[t], b[t], "read", "rate_ops_s", steady=False, reps=reps)
                    v = higher(c)
                    if i > 0 and v != "does not hold":
                        v = f"{v}, not decisive"
                    else:
                        verdicts.append(v)
                    shown.append(f"{chunk} KiB, {s}, {t} thr: {what} {c.change_pct:+.1f}% ({v})")
        return summary(shown, verdicts, "a configuration with both sweeps"), _combine(verdicts)

    cold_note = ("the data of a local run is small and fits in memory: an emptied page cache fills again within "
                 "seconds, and a restarted node also starts with a cold JIT")
    measured, verdict = cold_first(("empty", "a"), ("full", "a"), "full vs empty")
    rows.append(Claim("Reads with a full cache are faster than with an empty one (run a)", SOURCE, measured, verdict,
                      "full-cache ops/s significantly above the empty-cache run a's at the sweep's first thread count "
                      "(the run that starts from the emptied cache); does not hold if any thread count shows them "
                      "significantly below", cold_note))
    measured, verdict = cold_first(("empty", "a"), ("empty", "b"), "run b vs a")
    rows.append(Claim("Run B, right after run A from an empty cache, reads faster (run A filled the cache)", SOURCE,
                      measured, verdict,
                      "run b's ops/s significantly above run a's at the sweep's first thread count (run a's only "
                      "point that starts from the emptied cache); does not hold if any thread count shows run b "
                      "significantly slower", cold_note))
    return claims_frame(rows)
