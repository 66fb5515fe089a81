"""The storage-and-cache study (the published study: reads of 3M out of 150M 4 KiB rows per
mdadm RAID 0 chunk size 4k/64k/128k/256k, ops/s and p50/p95/p99 against client threads, host
cache full vs empty, run A vs run B) on the Study contract.

A storage configuration is where the node's data lives and the table's compression
``chunk_length_in_kb``. This machine has no md or device-mapper driver, so the chunk varied by
default is the table's compression chunk (``chunk_kbs``, on the data folder's disk: context
""), and the second storage is an ext4 filesystem on a loop device (``loop_chunk_kbs``: context
"loop", root only): a cluster of the same shape, beside the first on the next addresses, whose
working folder lies on that filesystem. Both clusters are open for the whole study, so the arms
of every configuration interleave in the randomized blocks; on exit (also on failure or Ctrl-C)
the loop cluster stops, then its filesystem is unmounted and its loop device and backing file go.

Per configuration, keyspace ``<keyspace_prefix><chunk_kb>`` holds ``rows`` keys of one
``column_size``-byte column (loaded before the first block, flushed to SSTables by the
baseline, which also measures each configuration: cassperf.storage.facts). The arms, each a
closed-loop read run of ``run_s`` seconds uniformly over the keys:

- ``<storage> <chunk> KiB, full, <T> threads``  for each T of the sweep: the study's
  ReadOnly-Full, the keyspace's files read into the page cache first (node_actions.make_warm)
- ``<storage> <chunk> KiB, empty, run a``  for chunk sizes in ``empty_chunk_kbs``, at
  ``empty_threads``: memtables flushed, key and row caches invalidated, the OS page cache
  dropped (node_actions.make_cold; the study's host cache), then a run with no unrecorded
  warm-up (the cold start is what it measures). Cassandra 5.0 keeps no other data cache by
  default (its chunk cache is off: file_cache_enabled), so the nodes are not restarted unless
  ``cold_restart``: a restart leaves the JVM cold, and on 2 shared cores the arms that follow
  in the block ran at a third of their throughput for about a minute (measured here).
- ``<storage> <chunk> KiB, empty, run b``  right after its run a in every block

``threads`` empty (the local default) spans the knee that calibration found for reads on the
data folder's disk (a quarter of it, it, four times it); ``empty_threads`` 0 is the knee. Every
run is labelled storage, chunk_kb, cache, run, concurrency (requests in flight).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from cassperf.constraints import Items, PowerOfTwo, Whole
from cassperf.errors import ConfigError
from cassperf.experiments.runner import LocalRunner
from cassperf.experiments.study import Arm, Calibrated, Preparation, Study
from cassperf.workload.spec import Compression, Replication, WorkloadSpec

STUDY = "storage-and-cache"
#: the published study, by its title and what it was
SOURCE = ('"Measuring impact of mdadm chunk sizes on Cassandra performance"'
          " (a write-up of reads of 3M of 150M 4 KiB rows on six Azure VMs with a RAID 0 of four disks, per "
          "chunk size (4 to 256 KiB) and host cache state)")
#: the storages and their executor contexts
DISK, LOOP = "disk", "loop"
CONTEXTS = {DISK: "", LOOP: "loop"}
#: what the published study ran (said in the report where the local run drops it)
PUBLISHED_CHUNKS = (4, 64, 128, 256)
PUBLISHED_THREADS = (4, 8, 16, 32, 64, 128, 256, 512)
#: requests in flight of the warm-up and of the knee when nothing was calibrated
WARM_THREADS = 16
#: the runbook's parameters (printed, run only with allow_destructive): not part of the plan
RUNBOOK = ("raid_md_device", "raid_devices", "raid_chunk_kbs", "raid_run_chunk_kb", "raid_mount_point",
           "allow_destructive")


#: chunk_length_in_kb values: powers of two, none named twice
CHUNKS = Items(PowerOfTwo(1), "chunk sizes in KiB", unique=True)


@dataclass(frozen=True)
class Configuration:
    """One storage configuration: the storage (disk or loop), the chunk size, the executor
    context its cluster is, and whether it also gets the empty-cache runs a and b."""

    storage: str
    chunk_kb: int
    empty: bool

    @property
    def context(self) -> str:
        return CONTEXTS[self.storage]

    @property
    def name(self) -> str:
        return f"{self.storage} {self.chunk_kb} KiB"


@dataclass(frozen=True)
class StorageStudy(Study):
    """The study's parameters (the notebook's parameters cell, validated)."""

    name: ClassVar[str] = STUDY
    title: ClassVar[str] = "Storage layout and cache state"
    source: ClassVar[str] = SOURCE
    ANALYSIS: ClassVar[str] = "cassperf.experiments.storage_cache_analysis:StorageAnalysis"
    #: where the study runs and the runbook's settings: not what it measures
    NOT_IN_PLAN: ClassVar[tuple[str, ...]] = ("experiment", "repeats", "contact_points", "storage_label",
                                              "loop_size_mb", *RUNBOOK)

    rows: int = 65_536                        # keys loaded per configuration (the study: 150,000,000)
    read_rows: int = 512                      # the reads' working set, keys 1..read_rows (the study: 3M of its 150M);
                                              # 0: every loaded key
    threads: Sequence[int] = ()               # read sweep; empty: around the calibrated knee (the study: 4..512)
    empty_threads: int = 0                    # threads of the empty-cache runs a and b; 0: the knee
    chunk_kbs: Sequence[int] = (64,)          # compression chunk sizes on the data folder's disk (the study varied a
                                              # RAID stripe, 4/64/128/256 KiB, which no compression chunk stands for)
    loop_chunk_kbs: Sequence[int] = ()       # chunk sizes on the loop-device filesystem (root; () for none)
    empty_chunk_kbs: Sequence[int] = (64,)    # chunk sizes that also get the empty-cache runs a and b
    sweep_chunk_kbs: Sequence[int] = (64,)    # chunk sizes read at every thread count, the others at the knee only ((): all)
    loop_size_mb: int = 1024                  # the loop filesystem, MiB (a sparse file)
    storage_label: str = ""                   # a named cluster: what its data disks are
    write_threads: int = 64                   # requests in flight of the loads
    rf: int = 1
    cl: str = "LOCAL_ONE"
    local_dc: str = "dc1"
    keyspace_prefix: str = "storage_c"
    compressor: str = "LZ4"
    column_size: int = 4096                   # bytes: one 4 KiB column per row, the study's 4k documents
    cold_restart: bool = False                # empty cache: restart the nodes too (module doc: why not by default)
    repeats: int = 6                          # blocks: 3 left an MDE of about ±18% at a 7% run-to-run spread; 6 give
                                              # about 0.68x of it (docs/measurements.md)
    warm_max_steps: int = 20                  # reads still rise after 12 steps of 3 s, and a block 1 run before the
                                              # cluster is warm drifts out of the analysis (docs/measurements.md)
    contact_points: str = ""                  # your cluster: no loop-device configurations then
    raid_md_device: str = "/dev/md0"          # the mdadm runbook (cassperf.storage.runbook_report)
    raid_devices: Sequence[str] = ()
    raid_chunk_kbs: Sequence[int] = PUBLISHED_CHUNKS
    raid_run_chunk_kb: int = 64
    raid_mount_point: str = ""
    allow_destructive: bool = False

    CONSTRAINTS: ClassVar[dict[str, Any]] = {
        "rows": Whole(1), "read_rows": Whole(0, note="0: every loaded key"), "write_threads": Whole(1), "rf": Whole(1),
        "column_size": Whole(1),
        "loop_size_mb": Whole(64, unit="MiB"),
        "threads": Items(Whole(1), "client thread counts", unique=True,
                         note=f"empty: around the calibrated knee; the study: {list(PUBLISHED_THREADS)}"),
        "empty_threads": Whole(0, note="0: the calibrated knee"),
        "chunk_kbs": Items(CHUNKS.each, CHUNKS.what, unique=True, nonempty=True,
                           note="e.g. [64]: the calibration and the A/A control run on the data folder's disk"),
        **{name: CHUNKS for name in ("loop_chunk_kbs", "empty_chunk_kbs", "sweep_chunk_kbs")}}

    def __post_init__(self) -> None:
        super().__post_init__()
        threads, e = list(self.threads), self.empty_threads
        if e and threads and e not in threads:
            raise ConfigError(f"empty_threads={e} is not in threads={threads}: the empty-cache runs are compared "
                              f"with the full-cache run at the same thread count; pick one of threads")
        stray = [c for c in self.empty_chunk_kbs if c not in self.chunk_kbs and c not in self.loop_chunk_kbs]
        if stray:
            raise ConfigError(f"empty_chunk_kbs={list(self.empty_chunk_kbs)!r}: {stray[0]} is in neither chunk_kbs nor "
                              f"loop_chunk_kbs")
        Compression(self.compressor)    # an unknown compressor: one line from the spec's check

    # -- the configurations ----------------------------------------------------------------------
    @cached_property
    def loop_problem(self) -> str | None:
        """Why the loop-device configurations cannot run here (one line), or None."""
        if not self.loop_chunk_kbs:
            return None
        if self.contact_points.strip():
            return "a loop-device filesystem is made on this machine for the embedded cluster, not on your cluster's"
        from cassperf.storage.loopfs import LoopUnavailable, check_loop_support

        try:
            check_loop_support()
        except LoopUnavailable as exc:
            return str(exc)
        return None

    def configurations(self) -> list[Configuration]:
        """The configurations this machine can make: the data folder's, and the loop device's
        unless ``loop_problem`` (said in setting_notes)."""
        loop = () if self.loop_problem else self.loop_chunk_kbs
        return [Configuration(storage, c, c in self.empty_chunk_kbs)
                for storage, chunks in ((DISK, self.chunk_kbs), (LOOP, loop)) for c in chunks]

    def setting_notes(self) -> list[str]:
        if not self.loop_problem:
            return []
        return [f"the loop-device configurations ({', '.join(f'{c} KiB' for c in self.loop_chunk_kbs)}) were left "
                f"out: {self.loop_problem}"]

    @property
    def reference_chunk(self) -> int:
        """The chunk size of the calibration and the A/A control: 64 KiB where it runs, else the first."""
        return 64 if 64 in self.chunk_kbs else self.chunk_kbs[0]

    def keyspace(self, chunk_kb: int) -> str:
        return f"{self.keyspace_prefix}{chunk_kb}"

    def _spec(self, keyspace: str, op: str, threads: int, *, population: str, n: int | None = None,
              compression: Compression | None = None) -> WorkloadSpec:
        return WorkloadSpec(op=op, n=n,
                            duration=None if n else self.run_s, warmup=False, cl=self.cl, concurrency=threads,
                            population=population, column_count=1, column_size=self.column_size, keyspace=keyspace,
                            replication=Replication.network_topology({self.local_dc: self.rf}),
                            compression=compression, local_dc=self.local_dc, interval_s=self.interval_s)

    def write_spec(self, chunk_kb: int) -> WorkloadSpec:
        return self._spec(self.keyspace(chunk_kb), "write", self.write_threads, population=f"seq=1..{self.rows}",
                          n=self.rows, compression=Compression(self.compressor, chunk_kb))

    @property
    def working_set(self) -> int:
        """The keys the reads read: 1..read_rows (every loaded key with read_rows 0)."""
        return min(self.read_rows, self.rows) if self.read_rows else self.rows

    def read_spec(self, chunk_kb: int, threads: int) -> WorkloadSpec:
        return self._spec(self.keyspace(chunk_kb), "read", threads, population=f"uniform(1..{self.working_set})",
                          compression=Compression(self.compressor, chunk_kb))

    # -- the plan ----------------------------------------------------------------------------------
    def preparations(self) -> list[Preparation]:
        """Each configuration's rows; and on the loop cluster the reference chunk's too, when it is
        not a loop configuration (the warm-up reads it on every cluster)."""
        confs = self.configurations()
        out = [Preparation(c.name, self.write_spec(c.chunk_kb), context=c.context) for c in confs]
        ref = self.reference_chunk
        if any(c.storage == LOOP for c in confs) and ref not in self.loop_chunk_kbs:
            out.append(Preparation(f"{LOOP} {ref} KiB (warm-up)", self.write_spec(ref), context=CONTEXTS[LOOP]))
        return out

    def warm_spec(self) -> WorkloadSpec:
        """Reads of the reference chunk's rows, the load the arms put on the cluster."""
        return self.read_spec(self.reference_chunk, WARM_THREADS)

    def calibration_spec(self) -> WorkloadSpec | None:
        return None if self.threads else self.read_spec(self.reference_chunk, 1)

    def sweep(self, calibrated: Calibrated | None) -> tuple[list[int], int]:
        """(the read sweep's thread counts, the empty-cache runs' thread count): the parameters,
        else around the calibrated knee (a quarter of it, it, four times it; three points at
        least)."""
        if self.threads:
            points = sorted(self.threads)
            return points, self.empty_threads or points[len(points) // 2]
        knee = calibrated.knee if calibrated is not None else WARM_THREADS
        points = sorted({max(1, knee // 4), knee, knee * 4})
        if len(points) < 3:
            points = sorted({knee, knee * 4, knee * 16})
        return points, self.empty_threads if self.empty_threads in points else knee

    def arms(self, calibrated: Calibrated | None) -> list[Arm]:
        points, empty_at = self.sweep(calibrated)
        out: list[Arm] = []
        for conf in self.configurations():
            keyspace = self.keyspace(conf.chunk_kb)

            def arm(name: str, cache: str, run: str, threads: int, **kw: Any) -> Arm:
                labels = {"storage": conf.storage, "chunk_kb": str(conf.chunk_kb), "cache": cache, "run": run,
                          "concurrency": str(threads)}
                return Arm(f"{conf.name}, {name}", labels, spec=self.read_spec(conf.chunk_kb, threads),
                           tool=self.tool, context=conf.context, **kw)

            swept = not self.sweep_chunk_kbs or conf.chunk_kb in self.sweep_chunk_kbs
            for t in (points if swept else [empty_at]):
                out.append(arm(f"full, {t} threads", "full", "a", t, before=_warm(keyspace, self.working_set,
                                                                                  self.read_rows > 0)))
            if conf.empty:
                # runs a and b pool with the full-cache reads at their load (analysis.arms, 5.: their
                # run-to-run spread matched the full-cache arms' in four make report runs)
                a = arm("empty, run a", "empty", "a", empty_at, before=_cold(keyspace, self.cold_restart))
                out += [a, arm("empty, run b", "empty", "b", empty_at, follows=a.name)]
        return out

    def aa_arm(self, arms: Sequence[Arm]) -> str:
        full = [a for a in arms if a.labels["cache"] == "full" and a.labels["storage"] == DISK
                and a.labels["chunk_kb"] == str(self.reference_chunk)]
        if not full:
            return arms[0].name
        empties = {a.labels["concurrency"] for a in arms if a.labels["cache"] == "empty"}
        return next((a.name for a in full if a.labels["concurrency"] in empties), full[len(full) // 2].name)

    ARM_LABELS_HINT: ClassVar[str] = (", or --label chunk_kb=K --label cache=full|empty [--label storage=disk] "
                                      "[--label run=a|b]; a full-cache run's requests in flight are its concurrency label, or cassandra-stress's threads")

    def arm_labels(self, labels: Mapping[str, str]) -> dict[str, str]:
        """An imported run's arm from its labels: ``arm``, else storage (default disk), chunk_kb,
        cache and, for a full cache, threads (cassandra-stress's autorate runs carry their own),
        for an empty one run (a or b); with the labels the analysis reads filled in."""
        out = dict(labels)
        chunk, cache = str(labels.get("chunk_kb", "")), str(labels.get("cache", ""))
        threads = labels.get("concurrency", labels.get("threads", ""))      # cassandra-stress's word for it
        if str(labels.get("arm", "")).strip() or not chunk.isdigit() or cache not in ("full", "empty"):
            return out
        storage, run = str(labels.get("storage", DISK)), str(labels.get("run", "a"))
        if cache == "full" and not str(threads).isdigit():
            return out
        name = f"{storage} {chunk} KiB, " + (f"full, {threads} threads" if cache == "full" else f"empty, run {run}")
        return {**out, "arm": name, "storage": storage, "run": run, "concurrency": str(threads or "0")}

    def dropped(self, calibrated: Calibrated | None) -> str:
        """What the published study ran that this plan leaves out (sentences)."""
        points, empty_at = self.sweep(calibrated)
        chunks = sorted({*self.chunk_kbs, *self.loop_chunk_kbs})
        gone = [c for c in PUBLISHED_CHUNKS if c not in chunks]
        said = ["The published study rebuilt an mdadm RAID 0 per chunk size; without an md driver here no RAID stripe "
                "can be varied, so its chunk claims are not tested here (chunk_kbs varies the table's compression "
                "chunk, measured for what it is)."]
        if gone:
            said.append(f"It also ran chunk sizes {', '.join(f'{c} KiB' for c in gone)}: left out here.")
        missing = [t for t in PUBLISHED_THREADS if t not in points]
        swept = [c for c in chunks if not self.sweep_chunk_kbs or c in self.sweep_chunk_kbs]
        if missing:
            said.append(f"It swept {', '.join(map(str, PUBLISHED_THREADS))} client threads for every chunk size; here "
                        f"{', '.join(map(str, points))} ({'around the calibrated knee' if not self.threads else 'the threads parameter'})"
                        + (f" for {', '.join(f'{c} KiB' for c in swept)}, and the other chunk sizes at {empty_at} only"
                           if len(swept) < len(chunks) else "") + ".")
        said.append(f"It ran the empty-cache sweep over every thread count; here run a and run b at {empty_at} threads "
                    f"only, for {', '.join(f'{c} KiB' for c in self.empty_chunk_kbs) or 'no chunk size'} (each run a "
                    f"needs its own cold restart).")
        return " ".join(said)

    # -- the hooks -------------------------------------------------------------------------------
    def check_parameters(self, parameters: Mapping[str, Any]) -> None:
        from cassperf.experiments.study import check_embedded_scale

        check_embedded_scale(str(parameters.get("contact_points", "")), rows=self.rows)

    def check_cluster(self, cluster: Any) -> None:
        loop = any(c.storage == LOOP for c in self.configurations())
        if loop and (not hasattr(cluster, "topology") or getattr(cluster, "network", None)):
            raise ConfigError(f"loop_chunk_kbs={list(self.loop_chunk_kbs)!r}: the loop-device configurations run "
                              f"beside an embedded cluster on loopback (no inter_dc_rtt_ms); set loop_chunk_kbs to []")

    @contextmanager
    def contexts(self, cluster: Any) -> Iterator[dict[str, Any]]:
        """The data folder's cluster ("") and, with loop configurations, the loop cluster
        ("loop", module doc), both for the whole study."""
        if not any(c.storage == LOOP for c in self.configurations()):
            yield {"": cluster}
            return
        from cassperf import config
        from cassperf.storage.loopfs import loop_filesystem

        with ExitStack() as stack:
            fs = stack.enter_context(loop_filesystem(config.data_dir() / "loopfs" / cluster.name, self.loop_size_mb))
            loop = cluster_beside(cluster, f"{cluster.name}-loop", fs.mount_point / "clusters")
            stack.callback(loop.stop)
            yield {"": cluster, "loop": loop.start()}

    @contextmanager
    def runner(self, contexts: Mapping[str, Any]) -> Iterator[Any]:
        yield ColdStartRunner()

    def baseline(self, contexts: Mapping[str, Any], runner: Any) -> Mapping[str, Any]:
        """The loaded rows flushed to SSTables on every context (so reads go through the
        compression chunks), then each configuration measured: its storage (device, filesystem)
        and its table's compression as Cassandra reports it."""
        from cassperf.experiments.node_actions import on_every_node
        from cassperf.storage.facts import measure_storage, table_chunk

        found = []
        for ctx, cluster in contexts.items():
            flushed = on_every_node(cluster, "flush")
            storage = measure_storage(cluster, self.storage_label if ctx == "" else "")
            for conf in (c for c in self.configurations() if c.context == ctx):
                found.append({"configuration": conf.name, "storage": conf.storage, "context": ctx,
                              "measured_storage": storage["storage"],
                              **{k: v for k, v in storage.items() if k != "storage"},
                              **table_chunk(cluster, self.keyspace(conf.chunk_kb), conf.chunk_kb),
                              "flushed": "yes" if all(r.ok for r in flushed) else
                              "; ".join(f"{r.node}: {r.output}" for r in flushed if not r.ok)})
        return {"configurations": found}

    # -- the analysis ------------------------------------------------------------------------------


def _warm(keyspace: str, keys: int, by_key: bool) -> Callable[[Any], str]:
    """The before-action of a full-cache run: its working set read once through CQL (``by_key``:
    a working set smaller than the page cache stays in it; reading the keyspace's files through a
    bounded page cache would leave only their last pages), else the keyspace's files read."""
    from cassperf.experiments.node_actions import make_warm, read_keys

    if by_key:
        return lambda cluster: read_keys(cluster, keyspace, keys)
    return lambda cluster: make_warm(cluster, keyspace)


def _cold(keyspace: str, restart: bool) -> Callable[[Any], str]:
    """The before-action of an empty-cache run "a": make_cold; for a named cluster the servers'
    own page cache is beyond the workbook (said)."""
    from cassperf.experiments.node_actions import make_cold

    def before(cluster: Any) -> str:
        note = make_cold(cluster, restart=restart, keyspace=keyspace)
        if not hasattr(cluster, "stop"):
            note += ("; the page cache dropped is this machine's: the servers' page cache was NOT dropped "
                     "(drop it on each server: sync; echo 3 > /proc/sys/vm/drop_caches)")
        return note
    return before


class ColdStartRunner(LocalRunner):
    """LocalRunner, but an empty-cache run "a" records from its first request (no unrecorded
    warm-up): its cold start is what it measures."""

    def run(self, arm: Arm, cluster: Any, labels: Mapping[str, str], *, root: Path, warmup_s: float,
            **options: Any) -> list[str]:
        cold = arm.labels.get("cache") == "empty" and arm.labels.get("run") == "a"
        return super().run(arm, cluster, labels, root=root, warmup_s=0.0 if cold else warmup_s, **options)


def cluster_beside(cluster: Any, name: str, root: Path) -> Any:
    """An embedded cluster like ``cluster`` (topology, version, heap, options), not started,
    named ``name`` with its working folder under ``root``, on the addresses after ``cluster``'s
    last node (its own ports and JMX ports, so both run at once)."""
    from cassperf.cluster.local import LocalCluster

    after = ipaddress.IPv4Address(cluster.nodes[-1].address) + 1
    return LocalCluster(name, cluster.topology, version=cluster.version, heap_mb=cluster.heap_mb,
                        yaml_overrides=cluster.yaml_overrides, jvm_options=cluster.jvm_options,
                        first_address=str(after), jolokia=cluster.use_jolokia, root=root,
                        java_home=cluster.java_home)
