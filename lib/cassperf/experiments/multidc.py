"""The multi-DC study (the published study: two DCs ~27 ms apart, a client in each) on the
Study contract.

Keyspaces: per DC an independent ``<prefix><dc>rf1`` (``{dc: 1}``) and a replicated
``<prefix><dc><other>rf<rf>`` (``{dc1: rf, dc2: rf}``, the study's ks410dc1dc2rf3 and
ks410dc2dc1rf3); the replicated ones are loaded with ``rows`` keys before the first block. The
arms, each a closed-loop run of ``run_s`` seconds over uniform(1..rows):

- ``independent write``        each DC's client writes its own RF 1 keyspace, both at once
- ``replicated write``         each DC's client writes its replicated keyspace, both at once
- ``replicated mixed``         50/50 read/write on the replicated keyspaces, both DCs at once
- ``write <CL>`` / ``read <CL>``  from ``cl_dc``'s client alone, on its replicated keyspace, at
                               each of ``cl_levels`` (LOCAL_QUORUM, EACH_QUORUM)
- ``QUORUM read threads=T``    reads at QUORUM from ``cl_dc``'s client at each of the thread sweep

Concurrency 0 (the local default) is calibrated on replicated writes at ``cl`` from ``cl_dc``.
The arms with a client in each DC measure throughput, as the study's did at 256 threads: together
they run below the knee (half the knee in flight, split between the two clients, as every node
shares this machine's cores). The arms from one DC are about the round trip (EACH_QUORUM waits for
the other DC, QUORUM reads need a replica there): a closed-loop client adds queueing to every
operation as the cluster nears its best, which would hide the round trip, so they run light: at
the smallest concurrency that calibration saw reach half the best throughput (``LIGHT_SHARE``),
and the QUORUM sweep at x1 and x4 of it. Given thread counts are per client, as the study's.

Clients are placed by the study's runner (cassperf.experiments.dc_runner: Dask, one worker per
client location, per-report mutual TLS); every client's run is labelled part, op, threads, cl, rf
and by the placement dc and client. The network baseline (ping, iperf3)
is the study's baseline hook, kept in its record (cassperf.experiments.network).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from cassperf.constraints import Items, Real, Whole
from cassperf.errors import ConfigError
from cassperf.experiments.study import LOCAL_RUN_S, Arm, Calibrated, Preparation, Study
from cassperf.workload.spec import Ratio, Replication, WorkloadSpec

STUDY = "multi-dc"
#: the published study, by its title and what it was
SOURCE = ('"Measuring impact of multi-DC cross-region replication"'
          " (a write-up of cassandra-stress runs on six nodes in each of two Azure regions about 27 ms apart, "
          "with a ping and iperf3 baseline)")
#: what the published study ran that a local run may leave out (said in the report)
PUBLISHED = {"quorum_threads": (16, 32, 64, 128, 256), "rf": 3, "write_threads": 256, "read_threads": 128}
#: requests in flight when calibration is not there to say (analysis of a plan without one)
UNCALIBRATED = 8
#: the arms from one DC run at the smallest concurrency whose throughput reached this share of the best
LIGHT_SHARE = 0.5


@dataclass(frozen=True)
class MultiDCStudy(Study):
    """The study's parameters (the notebook's parameters cell, validated)."""

    name: ClassVar[str] = STUDY
    title: ClassVar[str] = "Two data centers with distance between them"
    source: ClassVar[str] = SOURCE
    ANALYSIS: ClassVar[str] = "cassperf.experiments.multidc_analysis:MultiDCAnalysis"

    dcs: Sequence[str] = ("dc1", "dc2")
    rows: int = 2_500                      # keys loaded per replicated keyspace (the study: 10,000,000); two of 5,000
                                           # took 74 s to load on a fresh 2+2 cluster; no claim rests on the key space
    write_threads: int = 0                  # per client of the both-DC writes; 0: calibrated (the study: 256)
    read_threads: int = 0                   # per client of the both-DC mix; 0: calibrated (the study: 128)
    cl_threads: int = 0                     # the one-DC arms (consistency levels); 0: calibrated, light
    rf: int = 2                             # replicas per DC of the replicated keyspaces (the study: 3 of 6)
    cl: str = "LOCAL_QUORUM"
    cl_levels: Sequence[str] = ("LOCAL_QUORUM", "EACH_QUORUM")
    cl_dc: str = "dc1"
    quorum_threads: Sequence[int] = ()      # empty: x1 and x4 of cl_threads
    keyspace_prefix: str = "ks410"
    column_size: int = 818
    column_count: int = 5
    connections_per_host: int = 0           # 0: the driver's default
    inter_dc_rtt_ms: float = 27.0           # the embedded cluster's round trip between the DCs (0: none)
    client_hosts: str = ""                  # real cluster: client machines per DC (clients.parse_client_hosts)
    clients_per_dc: int = 1
    scheduler_host: str = "127.0.0.1"
    run_s: int = LOCAL_RUN_S
    warm_max_steps: int = 12                # a fresh 2+2 cluster is not warm after 5 steps: block 1 ran far below
                                            # the arms' mean (docs/measurements.md)
    iperf3_s: int = 3

    CONSTRAINTS: ClassVar[dict[str, Any]] = {
        **{name: Whole(1) for name in ("rows", "rf", "clients_per_dc", "iperf3_s")},
        **{name: Whole(0, note="0: calibrated") for name in ("write_threads", "read_threads", "cl_threads")},
        "connections_per_host": Whole(0, note="0: the driver's default"),
        "quorum_threads": Items(Whole(1), "client thread counts", note="empty: x1 and x4 of cl_threads"),
        "inter_dc_rtt_ms": Real(0, unit="milliseconds", note="0: no distance")}

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.dcs) != 2 or len(set(self.dcs)) != 2:
            raise ConfigError(f"dcs={list(self.dcs)!r}: the study needs exactly two data centers, e.g. dc1,dc2")
        if self.cl_dc not in self.dcs:
            raise ConfigError(f"cl_dc={self.cl_dc!r}: expected one of the study's DCs ({', '.join(self.dcs)})")
        if not self.cl_levels:
            raise ConfigError("cl_levels=[]: expected consistency levels to compare, e.g. [LOCAL_QUORUM, EACH_QUORUM]")
        from cassperf.experiments.clients import parse_client_hosts

        unknown = [dc for dc in parse_client_hosts(self.client_hosts) if dc not in self.dcs]
        if unknown:
            raise ConfigError(f"client_hosts names DC {unknown[0]!r}, which the study does not use; DCs: "
                              f"{', '.join(self.dcs)}")

    # -- the cluster it needs ------------------------------------------------------------------
    def check_parameters(self, parameters: Mapping[str, Any]) -> None:
        from cassperf.experiments.study import check_embedded_scale

        contact = str(parameters.get("contact_points", ""))
        check_embedded_scale(contact, rows=self.rows)
        if contact.strip() or not parameters.get("cluster_topology"):
            return
        from cassperf.cluster.topology import parse_topology

        topology = str(parameters["cluster_topology"])
        self._check_nodes({dc.name: dc.nodes for dc in parse_topology(topology).datacenters},
                          f"cluster_topology={topology!r}", "give a larger cluster_topology")

    def check_cluster(self, cluster: Any) -> None:
        nodes: dict[str, int] = {}
        for node in getattr(cluster, "nodes", []) or []:
            dc = getattr(getattr(node, "spec", None), "dc", None)
            if dc:
                nodes[dc] = nodes.get(dc, 0) + 1
        if nodes:
            self._check_nodes(nodes, f"cluster {getattr(cluster, 'name', '')}", "give a larger cluster")

    def _check_nodes(self, nodes: Mapping[str, int], where: str, fix: str) -> None:
        for dc in self.dcs:
            if dc not in nodes:
                raise ConfigError(f"{where} has no data center {dc!r} (it has {', '.join(nodes) or 'none'}): the "
                                  f"study runs in dcs={list(self.dcs)!r}; name the cluster's DCs in dcs")
            if self.rf > nodes[dc]:
                raise ConfigError(f"rf={self.rf} needs {self.rf} nodes in {dc}; {where} has {nodes[dc]}: lower rf "
                                  f"or {fix}")

    # -- names ---------------------------------------------------------------------------------
    def other(self, dc: str) -> str:
        return next(d for d in self.dcs if d != dc)

    def independent_keyspace(self, dc: str) -> str:
        return f"{self.keyspace_prefix}{dc}rf1"

    def replicated_keyspace(self, dc: str) -> str:
        return f"{self.keyspace_prefix}{dc}{self.other(dc)}rf{self.rf}"

    @property
    def rf_note(self) -> str:
        keyspaces = ", ".join(f"{dc}={self.rf}" for dc in self.dcs)
        if self.rf == PUBLISHED["rf"]:
            return f"replicated keyspaces {keyspaces}, as the study"
        return f"replicated keyspaces {keyspaces} (the study: 3 of 6 nodes per DC)"

    # -- the plan ------------------------------------------------------------------------------
    def _spec(self, op: str, dc: str, keyspace: str, factors: Mapping[str, int], threads: int,
              cl: str | None = None, *, n: int | None = None, warmup: bool = True) -> WorkloadSpec:
        return WorkloadSpec(op=op, ratio=Ratio(write=1, read=1) if op == "mixed" else None, n=n,
                            duration=None if n else self.run_s, warmup=warmup, cl=cl or self.cl, concurrency=threads,
                            population=f"seq=1..{self.rows}" if n else f"uniform(1..{self.rows})",
                            column_count=self.column_count, column_size=self.column_size, keyspace=keyspace,
                            replication=Replication.network_topology(dict(factors)), local_dc=dc,
                            connections_per_host=self.connections_per_host or None, interval_s=self.interval_s)

    def _replicated(self, op: str, dc: str, threads: int, cl: str | None = None, **kw: Any) -> WorkloadSpec:
        return self._spec(op, dc, self.replicated_keyspace(dc), {d: self.rf for d in self.dcs}, threads, cl, **kw)

    def preparations(self) -> list[Preparation]:
        """The rows the reads and the mix read, in each DC's replicated keyspace (from its own DC)."""
        threads = max(64, self.write_threads)
        return [Preparation(self.replicated_keyspace(dc), self._replicated("write", dc, threads, n=self.rows,
                                                                           warmup=False)) for dc in self.dcs]

    def warm_spec(self) -> WorkloadSpec:
        return self._replicated("mixed", self.cl_dc, 16)

    def calibration_spec(self) -> WorkloadSpec | None:
        needed = not (self.write_threads and self.read_threads and self.cl_threads and self.quorum_threads)
        return self._replicated("write", self.cl_dc, 1) if needed else None

    def threads(self, calibrated: Calibrated | None) -> tuple[int, int, int, list[int]]:
        """(write threads and read threads per client of the both-DC arms, threads of the one-DC
        arms, the QUORUM sweep), calibrated where 0 / empty (module doc)."""
        below = calibrated.below_knee if calibrated is not None else UNCALIBRATED
        light = UNCALIBRATED
        if calibrated is not None:
            light = min(c for c, rate in calibrated.points if rate >= LIGHT_SHARE * calibrated.best_ops_s)
        split = max(1, below // len(self.dcs))
        one = self.cl_threads or light
        return (self.write_threads or split, self.read_threads or split, one,
                sorted(set(self.quorum_threads)) or [one, one * 4])

    def arms(self, calibrated: Calibrated | None) -> list[Arm]:
        both_writes, both_reads, one, sweep = self.threads(calibrated)
        rf, cl, home = self.rf, self.cl, self.cl_dc

        def labels(part: str, op: str, threads: int, cl: str, rf: int) -> dict[str, str]:
            return {"part": part, "op": op, "concurrency": str(threads), "cl": cl, "rf": str(rf)}

        out = [Arm("independent write", labels("independent", "write", both_writes, cl, 1),
                   clients=tuple((dc, self._spec("write", dc, self.independent_keyspace(dc), {dc: 1}, both_writes))
                                 for dc in self.dcs)),
               Arm("replicated write", labels("replicated", "write", both_writes, cl, rf),
                   clients=tuple((dc, self._replicated("write", dc, both_writes)) for dc in self.dcs)),
               Arm("replicated mixed", labels("mixed", "mixed", both_reads, cl, rf),
                   clients=tuple((dc, self._replicated("mixed", dc, both_reads)) for dc in self.dcs))]
        for level in self.cl_levels:
            out.append(Arm(f"write {level}", labels("cl-write", "write", one, level, rf),
                           clients=((home, self._replicated("write", home, one, level)),)))
        for level in self.cl_levels:
            out.append(Arm(f"read {level}", labels("cl-read", "read", one, level, rf),
                           clients=((home, self._replicated("read", home, one, level)),)))
        for t in sweep:
            out.append(Arm(f"QUORUM read threads={t}", labels("quorum-read", "read", t, "QUORUM", rf),
                           clients=((home, self._replicated("read", home, t, "QUORUM")),)))
        return out

    def aa_arm(self, arms: Sequence[Arm]) -> str:
        return "replicated write"

    def dropped(self, calibrated: Calibrated | None) -> str:
        """What the published study ran that this plan leaves out or scales down (one sentence)."""
        writes, reads, one, sweep = self.threads(calibrated)
        parts = []
        gone = [t for t in PUBLISHED["quorum_threads"] if t not in sweep]
        if gone:
            parts.append(f"QUORUM reads at {', '.join(map(str, gone))} threads (here {', '.join(map(str, sweep))})")
        if writes != PUBLISHED["write_threads"] or reads != PUBLISHED["read_threads"]:
            parts.append(f"{PUBLISHED['write_threads']} write and {PUBLISHED['read_threads']} mixed threads per client "
                         f"from both DCs (here {writes} and {reads})")
        if self.rf != PUBLISHED["rf"]:
            parts.append(f"RF {PUBLISHED['rf']} per DC on 6 nodes each (here RF {self.rf})")
        return ("The published study ran " + "; ".join(parts) + ": scaled to this machine, where every node and "
                "client share its cores.") if parts else ""

    # -- the hooks -----------------------------------------------------------------------------
    @contextmanager
    def runner(self, contexts: Mapping[str, Any]) -> Iterator[Any]:
        """One client location per DC (or ``clients_per_dc``, or the ``client_hosts`` machines) on
        Dask with per-report mutual TLS; the arms' clients run through it together."""
        from cassperf.experiments.clients import ClientPlacement, locations
        from cassperf.experiments.dc_runner import PlacedRunner

        places = locations(list(self.dcs), self.clients_per_dc, self.client_hosts)
        with ClientPlacement(contexts[""], places, scheduler_host=self.scheduler_host) as place:
            yield PlacedRunner(place)

    def baseline(self, contexts: Mapping[str, Any], runner: Any) -> Mapping[str, Any] | None:
        """The network between the DCs from the client locations: ping each way, iperf3 with 1 and
        16 streams; and the distance this cluster has (configured, or why none)."""
        from cassperf.experiments import network

        return network.study_baseline(runner.place, list(self.dcs), self.inter_dc_rtt_ms, self.iperf3_s)

    # -- the analysis --------------------------------------------------------------------------
