"""Your question, A against B, on the Study contract: arms that differ in table options (and node
options), the same workloads on every arm, and claims in plain English.

Three parameters say the question (the notebook's parameters cell; everything else is every
study's: repeats, run_s, warm-up, calibration):

- ``arm_options``: one per arm, ``NAME: OPTION VALUE, ...`` (NAME: letters, digits, ``_ . + -``;
  the commas may be left out), OPTION VALUE one of
      compaction STRATEGY[(key=value,...)]     LCS, STCS, UCS, TWCS (or a class) and sub-options
      compression COMPRESSOR[(chunk_length_in_kb=N)]   LZ4, SNAPPY, DEFLATE, ZSTD
      cassandra VERSION                        the node's Cassandra version  } node options: a
      jvm -OPTION                              a JVM option (no comma in it), } cluster of its own
                                               repeatable
  e.g. ``LCS: compaction LCS(sstable_size_in_mb=160), compression LZ4``; ``default:`` takes the
  server's default compaction. Without ``compression`` a table is made as cassandra-stress makes
  it, ``compression = {}``: uncompressed (Cassandra 5.0 reports ``enabled=false``). Each arm
  writes and reads a keyspace of its own, ``<keyspace_prefix><name>_<6 hex digits of its table
  options>``, loaded with ``rows`` keys before the first block and flushed to SSTables, so reads go
  through its compaction's files.
- ``workloads``: one per workload, ``[NAME:] COMMAND``: a cassandra-stress command line (``write``,
  ``read`` or ``mixed`` and its options, e.g. ``heavy: read cl=ONE -rate threads=64``); NAME
  defaults to the op word. What the line leaves out the study fills in: ``-rate threads=``:
  ``threads`` (0: below the knee calibration finds for writes, as the published studies);
  ``-pop``: uniform(1..rows); ``cl=``: ``cl``; ``-col``: ``column_count`` x ``column_size``;
  ``-schema replication(...)``: ``rf`` in ``local_dc``. Every run lasts ``run_s`` (a line's
  ``n=`` or ``duration=`` is replaced) at the study's ``interval_s``. The table options are the
  arms' (``-schema keyspace=``, ``compaction(...)``, ``compression=`` are refused), and ``-node``
  too (the cluster is the study's).
- ``claims``: sentences of cassperf.analysis.claim_text ("LCS writes at least 10% slower than
  STCS"); a mixed workload is judged on its reads.

The arms are every (arm, workload) pair, named ``"<arm> <workload>"`` ("LCS write"); the A/A
control is the first of them run twice. Node options: arms without any run on the given cluster;
each distinct node setting gets an embedded cluster of the given one's shape beside it, on the
next loopback addresses, up for the whole study (the ``contexts`` hook, as 04's deployments and
05's loop filesystem), so every arm's runs interleave in the same blocks. On your cluster
(``contact_points``) node options are refused in one line: the workbook does not change your nodes.

Before the blocks (the ``baseline`` hook) every context is flushed and each arm's table read back
from ``system_schema.tables`` (and its node's release and command line): the claims rest on that
check, "not tested here" where an arm's table or node is not what it asked.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from cassperf.analysis.claim_text import ClaimRule, parse_claims
from cassperf.constraints import Whole
from cassperf.errors import ConfigError
from cassperf.experiments.question_arms import Setting, Workload, parse_setting, parse_workload
from cassperf.experiments.study import LOCAL_RUN_S, Arm, Calibrated, Preparation, Study
from cassperf.workload.spec import WorkloadSpec

STUDY = "your-question"


@dataclass(frozen=True)
class QuestionStudy(Study):
    """Your question (module doc): the notebook's parameters, validated, its claims parsed."""

    name: ClassVar[str] = STUDY
    title: ClassVar[str] = "Your question: A against B"
    source: ClassVar[str] = "your question"
    ANALYSIS: ClassVar[str] = "cassperf.experiments.question_analysis:QuestionAnalysis"
    CLAIM_HEADING: ClassVar[str] = "Your claim"
    ARM_LABELS_HINT: ClassVar[str] = " (the arm and the workload, e.g. --label arm='LCS write')"
    #: the claims decide nothing about what runs: other claims on the same runs are the same plan
    NOT_IN_PLAN: ClassVar[tuple[str, ...]] = ("experiment", "repeats", "claims")

    arm_options: Sequence[str] = ("STCS: compaction STCS", "LCS: compaction LCS", "UCS: compaction UCS")
    workloads: Sequence[str] = ("write", "read")
    claims: Sequence[str] = ("LCS writes slower than STCS", "LCS reads faster than STCS",
                             "LCS's read p99 lower than STCS's", "UCS within ±10% of STCS for writes")
    rows: int = 8_000               # keys loaded per arm before the blocks, then flushed
    threads: int = 0                # requests in flight of a workload without -rate threads=; 0: calibrated
    cl: str = "LOCAL_ONE"
    rf: int = 1
    local_dc: str = "dc1"
    column_size: int = 818
    column_count: int = 5
    keyspace_prefix: str = "q_"
    run_s: int = LOCAL_RUN_S
    repeats: int = 5                # 5 blocks keep make report within its 40 minutes (6: MDE about 0.85x)
    warm_max_steps: int = 6

    CONSTRAINTS: ClassVar[dict[str, Any]] = {"rows": Whole(1), "threads": Whole(0, note="0: calibrated"),
                                             "rf": Whole(1), "column_size": Whole(1), "column_count": Whole(1)}

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.arm_options) < 2:
            raise ConfigError(f"arm_options={list(self.arm_options)!r}: a question compares at least 2 arms, e.g. "
                              f"['STCS: compaction STCS', 'LCS: compaction LCS']")
        if not self.workloads:
            raise ConfigError("workloads is empty: give at least one, e.g. ['write', 'read']")
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,15}", self.keyspace_prefix):
            raise ConfigError(f"keyspace_prefix={self.keyspace_prefix!r}: lowercase letters, digits and _, starting "
                              f"with a letter, at most 16 characters")
        for kind, names in (("arm_options", [s.name for s in self.parsed_arms]),
                            ("workloads", [w.name for w in self.parsed_workloads])):
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ConfigError(f"{kind}: {twice[0]!r} names two of them; give each its own name")
        tables = [(s.context, self.keyspace(s)) for s in self.parsed_arms]
        shared = [s.name for s, t in zip(self.parsed_arms, tables, strict=True) if tables.count(t) > 1]
        if shared:
            raise ConfigError(f"arm_options: arms {' and '.join(shared)} would write one keyspace "
                              f"({self.keyspace(self.setting(shared[0]))}); give them names that differ in letters "
                              f"or digits")
        self.claim_rules  # noqa: B018 - parsed now: bad text is one line before any cluster starts

    # -- the question, parsed ------------------------------------------------------------------
    @cached_property
    def parsed_arms(self) -> list[Setting]:
        return [parse_setting(a) for a in self.arm_options]

    @cached_property
    def parsed_workloads(self) -> list[Workload]:
        """The workloads, parsed (the parameter ``workloads`` holds their text)."""
        return [parse_workload(w, self) for w in self.workloads]

    @cached_property
    def claim_rules(self) -> list[ClaimRule]:
        return parse_claims(self.claims, [s.name for s in self.parsed_arms],
                            [w.name for w in self.parsed_workloads])

    def setting(self, name: str) -> Setting:
        return next(s for s in self.parsed_arms if s.name == name)

    def workload(self, name: str) -> Workload:
        return next(w for w in self.parsed_workloads if w.name == name)

    @staticmethod
    def arm_name(setting: str, workload: str) -> str:
        return f"{setting} {workload}"

    def keyspace(self, s: Setting) -> str:
        slug = re.sub(r"[^a-z0-9]+", "_", s.name.lower()).strip("_")[:20] or "arm"
        return f"{self.keyspace_prefix}{slug}_{s.table_key}"

    def check_parameters(self, parameters: Mapping[str, Any]) -> None:
        from cassperf.experiments.study import check_embedded_scale

        check_embedded_scale(str(parameters.get("contact_points", "")), rows=self.rows)
        nodal = [s.name for s in self.parsed_arms if s.context]
        if nodal and str(parameters.get("contact_points", "")).strip():
            raise ConfigError(f"arms {', '.join(nodal)} set node options (cassandra, jvm): they need a cluster of "
                              f"their own, which the workbook makes only embedded; on your cluster give table options "
                              f"only (compaction, compression)")

    # -- the plan ------------------------------------------------------------------------------
    def _table(self, spec: WorkloadSpec, s: Setting) -> WorkloadSpec:
        return dataclasses.replace(spec, keyspace=self.keyspace(s), compaction=s.compaction, compression=s.compression)

    def preparations(self) -> list[Preparation]:
        base = self.parsed_workloads[0].spec
        load = dataclasses.replace(base, op="write", ratio=None, n=self.rows, duration=None, warmup=False,
                                   concurrency=32, rate="unlimited", population=f"seq=1..{self.rows}", cl=self.cl)
        return [Preparation(s.name, self._table(load, s), context=s.context, tool=self.tool) for s in self.parsed_arms]

    def warm_spec(self) -> WorkloadSpec:
        """Reads and writes at 32 in flight on a table of the server's defaults (no arm's)."""
        from cassperf.workload.spec import Ratio

        return dataclasses.replace(self.parsed_workloads[0].spec, op="mixed", ratio=Ratio(write=1, read=1),
                                   concurrency=32, rate="unlimited", keyspace=f"{self.keyspace_prefix}warm")

    def calibration_spec(self) -> WorkloadSpec | None:
        """Writes on the warm-up's table (no arm's), when a workload's concurrency is calibrated."""
        if self.threads or not any(w.calibrated for w in self.parsed_workloads):
            return None
        return dataclasses.replace(self.warm_spec(), op="write", ratio=None, concurrency=1)

    def arms(self, calibrated: Calibrated | None) -> list[Arm]:
        concurrency = self.threads or (calibrated.below_knee if calibrated is not None else 16)
        out = []
        for s in self.parsed_arms:
            for w in self.parsed_workloads:
                spec = self._table(dataclasses.replace(w.spec, concurrency=concurrency) if w.calibrated else w.spec, s)
                out.append(Arm(self.arm_name(s.name, w.name), {**s.labels(), "workload": w.name, "op": spec.op,
                                                               "concurrency": str(spec.concurrency)},
                               spec=spec, tool=self.tool, context=s.context))
        return out

    def aa_arm(self, arms: Sequence[Arm]) -> str:
        return self.arm_name(self.parsed_arms[0].name, self.parsed_workloads[0].name)

    def arm_labels(self, labels: Mapping[str, str]) -> dict[str, str]:
        """An imported run's labels: its ``arm`` ("LCS write") gets the plan's labels of that arm."""
        out = dict(labels)
        planned = {a.name: a.labels for a in self.arms(None)}
        return {**planned.get(str(labels.get("arm", "")), {}), **out}

    # -- the hooks -----------------------------------------------------------------------------
    @contextmanager
    def contexts(self, cluster: Any) -> Iterator[dict[str, Any]]:
        """The given cluster for the arms without node options; one cluster beside it per node
        setting (module doc), started in turn, all stopped on exit (also on failure)."""
        used = list(dict.fromkeys(s.context for s in self.parsed_arms))
        if used == [""]:
            yield {"": cluster}
            return
        if not hasattr(cluster, "nodes") or not hasattr(cluster, "java_home"):
            raise ConfigError("node options (cassandra, jvm) need an embedded cluster; on your cluster give table "
                              "options only")
        with ExitStack() as stack:
            out: dict[str, Any] = {}
            after = ipaddress.IPv4Address(cluster.nodes[-1].address) + 1
            for ctx in used:
                if not ctx:
                    out[ctx] = cluster
                    continue
                s = next(x for x in self.parsed_arms if x.context == ctx)
                other = cluster_beside(cluster, s, str(after))
                stack.callback(other.stop)
                other.start()
                after = ipaddress.IPv4Address(other.nodes[-1].address) + 1
                out[ctx] = other
            yield out

    def baseline(self, contexts: Mapping[str, Any], runner: Any) -> Mapping[str, Any]:
        """Every context flushed (the loaded rows into SSTables), then each arm's table and node as
        Cassandra reports them (module doc)."""
        from cassperf.experiments.node_actions import on_every_node

        flushed = {ctx: on_every_node(c, "flush") for ctx, c in contexts.items()}
        found = []
        for s in self.parsed_arms:
            cluster = contexts[s.context]
            failed = "; ".join(f"{r.node}: {r.output}" for r in flushed[s.context] if not r.ok)
            found.append({"setting": s.name, "keyspace": self.keyspace(s), **measured(cluster, self.keyspace(s)),
                          "flushed": "no: " + failed if failed else "yes"})
        return {"settings": found}

    def setting_notes(self) -> list[str]:
        return [f"arm {s.name} ran on an embedded cluster of its own beside the given one ({s.context[5:]})"
                for s in self.parsed_arms if s.context]

    def describe_baseline(self, found: Mapping[str, Any]) -> str:
        return (f"Each arm's rows were flushed to SSTables and its table read back ({len(found.get('settings', []))} "
                f"arms: see 'What each arm was')." if found.get("settings") else "")


def measured(cluster: Any, keyspace: str) -> dict[str, str]:
    """The table's compaction and compression as ``system_schema.tables`` says, the node's release
    (system.local) and, for an embedded node, the -X and -D options of its JVM's command line."""
    session = cluster.session()
    row = session.execute("SELECT compaction, compression FROM system_schema.tables WHERE keyspace_name = %s AND "
                          "table_name = 'standard1'", (keyspace,)).one()
    release = session.execute("SELECT release_version FROM system.local").one()
    out = {"measured_compaction": "" if row is None else _options(row[0]),
           "measured_compression": "" if row is None else _options(row[1]),
           "measured_cassandra": str(release[0]) if release else ""}
    nodes = getattr(cluster, "nodes", None)
    pid = nodes[0].pid() if nodes and hasattr(nodes[0], "pid") else None
    if pid:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                out["measured_jvm"] = " ".join(a for a in f.read().decode(errors="replace").split("\0")
                                               if a.startswith(("-X", "-D")))
        except OSError:
            pass
    return out


def _options(options: Any) -> str:
    """A schema options map as 'class=LeveledCompactionStrategy, sstable_size_in_mb=160' (class short)."""
    items = dict(options or {})
    cls = str(items.pop("class", "")).rsplit(".", 1)[-1]
    return ", ".join([f"class={cls}"] * bool(cls) + [f"{k}={v}" for k, v in sorted(items.items())])


def cluster_beside(cluster: Any, s: Setting, address: str) -> Any:
    """An embedded cluster of ``cluster``'s shape and settings but ``s``'s node options, not
    started, named ``<cluster>-<arm>``, its folder beside the given one's, from ``address`` on."""
    from cassperf.cluster.local import LocalCluster

    version = s.cassandra or cluster.version
    java_home, jolokia = cluster.java_home, cluster.use_jolokia
    if version != cluster.version:
        java_home, jolokia = _java_for(cluster, version)
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", s.name).strip("-") or "arm"
    return LocalCluster(f"{cluster.name}-{slug}", cluster.topology, version=version, heap_mb=cluster.heap_mb,
                        yaml_overrides=cluster.yaml_overrides, jvm_options=[*cluster.jvm_options, *s.jvm],
                        first_address=address, jolokia=jolokia, root=cluster.root.parent, java_home=java_home)


def _java_for(cluster: Any, version: str) -> tuple[Any, bool]:
    """(java_home, Jolokia possible) of a Java that runs Cassandra ``version``: the given
    cluster's where it can, else one found on this machine (cassperf.cluster.java)."""
    from cassperf.cluster.java import SUPPORTED_JAVA, cassandra_line, java_home_for, java_modules

    supported = SUPPORTED_JAVA[cassandra_line(version)]
    if cluster.java().major in supported:
        return cluster.java_home, cluster.use_jolokia
    for major in reversed(supported):
        found = java_home_for(major)
        if found is not None:
            return found[0], "jdk.httpserver" in java_modules(found[0])
    raise ConfigError(f"cassandra {version} runs on Java {' or '.join(map(str, supported))}, and none is on this "
                      f"machine: set CASSPERF_JAVA{supported[-1]}_HOME to one")
