"""ClusterSampler: cluster and host metrics every few seconds, beside any workload.

    with RunWriter(tool="cassandra-stress") as run, \\
            ClusterSampler(cluster, tables=[("keyspace1", "standard1")], interval_s=2, writer=run) as sampler:
        ...                                              # the workload
        with sampler.phase("garbagecollect", "nodetool garbagecollect keyspace1 standard1"):
            cluster.nodetool("node1", "garbagecollect", "keyspace1", "standard1")

A background thread takes one sample per interval (the first at start, one more at stop) and
writes each source's rows through `writer.append_metrics` as soon as that source has answered
(long format: time UTC, node, metric, value; names in `cassperf.sampler.names`). Without a writer
the rows are kept in memory (`frame()`).

Sources, chosen by `jmx="auto"` (see each module for what it reads and from where):
  virtual_tables  CQL system_views (4.0+): thread pools, running SSTable tasks
  jolokia         JMX over HTTP: a cluster whose nodes have a known agent (`jolokia_endpoint()`:
                  a LocalCluster started with jolokia=True), or `jolokia_url`
  nodetool        the fallback: nodetool commands parsed with cassperf's nodetool parsers
  host            psutil: this machine, local nodes' JVM processes, their cgroups and data devices
  client          psutil: the load generator's processes (`clients`, registered by whoever
                  starts them: the engine its workers, run_spec a tool's process tree)
Each source also writes `sampler_<source>_ms` per node: the wall time it took (its own cost).

A sample slower than the interval delays the next one (no catching up: missed ticks are
skipped, counted in `overruns`, and warned about once). A node that cannot be read is warned
about once per (source, node, message) and sampling goes on; the warnings go to the writer
and to `warnings`. A bug inside a source stops the thread, and `stop()` raises it.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal

import pandas as pd

from cassperf.cluster.jolokia import JolokiaEndpoint
from cassperf.constraints import Real
from cassperf.errors import ClusterError, ConfigError
from cassperf.results.model import EVENT_COLUMNS, METRIC_COLUMNS, conform, empty_frame
from cassperf.results.store import phase_events
from cassperf.sampler.base import NodeRef, Reading, Source, cluster_nodes, utc_now
from cassperf.sampler.client import ClientProcesses, ClientSource
from cassperf.sampler.host import HostSource
from cassperf.sampler.jolokia_source import JolokiaSource
from cassperf.sampler.names import SAMPLER_COST_PREFIX
from cassperf.sampler.nodetool_source import NodetoolSource
from cassperf.sampler.virtual_tables import NEEDED_TABLES, VirtualTablesSource

JmxMode = Literal["auto", "jolokia", "nodetool", "none"]
# keyspace1, standard1, ks_2 -- unquoted CQL names (they go into MBean names and nodetool args)
_NAME_RE = re.compile(r"[A-Za-z0-9_]+")
_MAX_WARNING_CHARS = 1000


def _check_tables(tables: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    out = []
    for item in tables:
        if not (isinstance(item, tuple) and len(item) == 2 and all(isinstance(x, str) and _NAME_RE.fullmatch(x)
                                                                  for x in item)):
            raise ConfigError(f"tables: each item must be (keyspace, table) of letters, digits and _, got {item!r}")
        out.append(item)
    return out


#: what only JMX (Jolokia or nodetool) gives the sampler
JMX_METRICS = "node metrics (JVM GC, compactions, table and SSTable counters)"


def reach_line(jmx_problem: str | None, virtual_tables: Sequence[str]) -> str:
    """What the sampler reads of a cluster, one line: without JMX, that node metrics are not
    sampled and why; the CQL virtual tables it reads (or that it reads none)."""
    read = f"CQL virtual tables read: {', '.join(virtual_tables)}" if virtual_tables else \
        "no CQL virtual tables read (Cassandra before 4.0, or CQL unreachable)"
    if jmx_problem is None:
        return f"{JMX_METRICS} read over JMX; {read}"
    return f"no JMX/Jolokia ({jmx_problem}): {JMX_METRICS} not sampled; {read}"


class ClusterSampler:
    """Samples `cluster` (a LocalCluster or RemoteCluster) every `interval_s` seconds.

    tables        [(keyspace, table)] whose SSTables are watched
    writer        a RunWriter (open); None keeps rows in memory
    jmx           "auto" (Jolokia where the cluster has it, else nodetool), "jolokia",
                  "nodetool", or "none"
    virtual_tables  read system_views where the cluster has them
    host          sample this machine and local nodes' processes
    sources       give the sources yourself (then jmx, virtual_tables and host are ignored)
    jolokia_url   for jmx="jolokia" on a remote cluster: e.g. "http://{address}:8778/jolokia"
    final_sample  take one more sample at stop()
    clients       the load generator's processes (ClientProcesses; with host, their CPU is
                  sampled); None: an empty registry, `sampler.clients`, to add them to
    """

    def __init__(self, cluster: Any, tables: Sequence[tuple[str, str]] = (), interval_s: float = 5.0,
                 writer: Any = None, *, jmx: JmxMode = "auto", virtual_tables: bool = True, host: bool = True,
                 sources: Sequence[Source] | None = None, nodes: Sequence[NodeRef] | None = None,
                 jolokia_url: str | None = None, final_sample: bool = True,
                 nodetool_timeout_s: float = 60.0, clients: ClientProcesses | None = None) -> None:
        if not Real(0, low_open=True).accepts(interval_s):
            raise ConfigError(f"interval_s must be a number of seconds > 0, got {interval_s!r}")
        if jmx not in ("auto", "jolokia", "nodetool", "none"):
            raise ConfigError(f"jmx must be one of auto, jolokia, nodetool, none; got {jmx!r}")
        self.cluster = cluster
        self.tables = _check_tables(tables)
        self.interval_s = float(interval_s)
        self.writer = writer
        self.final_sample = final_sample
        self.nodes: list[NodeRef] = list(nodes) if nodes is not None else cluster_nodes(cluster)
        self.warnings: list[str] = []
        self.samples = 0
        self.overruns = 0
        self._repeats: dict[tuple[str, str, str], int] = {}
        self._rows: list[dict[str, Any]] = []
        self._events: list[dict[str, Any]] = []
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._t0 = time.monotonic()
        self._closed = False
        self.clients = clients if clients is not None else ClientProcesses()
        if sources is not None:
            self.sources = list(sources)
        else:
            self.sources = self._auto_sources(jmx, virtual_tables, host, jolokia_url, nodetool_timeout_s)
        if writer is not None:
            writer.manifest.setdefault("sampler", {
                "interval_s": self.interval_s, "sources": [s.name for s in self.sources],
                "tables": [f"{ks}.{t}" for ks, t in self.tables], "nodes": [n.name for n in self.nodes]})

    # -- choosing sources --------------------------------------------------------------------
    def _auto_sources(self, jmx: JmxMode, virtual_tables: bool, host: bool, jolokia_url: str | None,
                      nodetool_timeout_s: float) -> list[Source]:
        sources: list[Source] = []
        has_vt = False
        if virtual_tables:
            vt = VirtualTablesSource(self.cluster)
            if vt.available():
                sources.append(vt)
                has_vt = True
            else:
                vt.close()
                self._warn("sampler: no usable system_views virtual tables (Cassandra before 4.0, or CQL "
                           "unreachable): thread pools come from JMX")
        if jmx == "auto":
            jmx = "jolokia" if self._has_agents() or jolokia_url else "nodetool"
            problem = self.cluster.jmx_problem() if jmx == "nodetool" and self.cluster is not None else None
            if problem is not None:               # said once, instead of a failed nodetool per node and sample
                jmx = "none"
                self._warn("sampler: " + reach_line(problem, [f"system_views.{t}" for t in NEEDED_TABLES]
                                                    if has_vt else []))
        if jmx == "jolokia":
            sources.append(JolokiaSource(self._jolokia_endpoint_for(jolokia_url), self.tables, pools=not has_vt))
        elif jmx == "nodetool":
            sources.append(NodetoolSource(self.cluster, self.tables, pools=not has_vt, tasks=not has_vt,
                                          timeout_s=nodetool_timeout_s))
        if host:
            sources += [HostSource(), ClientSource(self.clients)]
        return sources

    def _has_agents(self) -> bool:
        """Whether the cluster handle knows a Jolokia agent on its nodes."""
        return self.cluster is not None and bool(self.nodes) and \
            self.cluster.jolokia_endpoint(self.nodes[0].handle) is not None

    def _jolokia_endpoint_for(self, template: str | None) -> Any:
        if template is not None:
            return lambda node: JolokiaEndpoint(template.format(address=node.address, name=node.name))
        if self._has_agents():
            return lambda node: self.cluster.jolokia_endpoint(node.handle)
        raise ConfigError("jmx='jolokia' needs a cluster whose nodes have a Jolokia agent (a LocalCluster started "
                          "with jolokia=True), or jolokia_url (e.g. 'http://{address}:8778/jolokia') for the "
                          "nodes' agents")

    # -- sampling ----------------------------------------------------------------------------
    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        if self.writer is not None:
            self.writer.warn(text)

    def _note_error(self, source: str, node: str, error: str) -> None:
        key = (source, node, error[:200])
        seen = self._repeats.get(key, 0)
        self._repeats[key] = seen + 1
        if seen == 0:
            self._warn(f"sampler: {source} on {node}: {error[:_MAX_WARNING_CHARS]}")

    def _emit(self, batch: list[Reading]) -> None:
        rows = [r.row() for r in batch]
        if self.writer is not None:
            self.writer.append_metrics(rows)
        else:
            self._rows.extend(rows)

    def sample_once(self) -> list[Reading]:
        """Take one sample from every source now; returns the readings (also written)."""
        with self._lock:
            taken: list[Reading] = []
            for source in self.sources:
                asked = utc_now()
                batch: list[Reading] = []
                for outcome in source.sample(self.nodes):
                    batch += outcome.readings
                    batch.append(Reading(asked, outcome.node, f"{SAMPLER_COST_PREFIX}{source.name}_ms",
                                         outcome.cost_ms))
                    if outcome.error:
                        self._note_error(source.name, outcome.node, outcome.error)
                self._emit(batch)
                taken += batch
            self.samples += 1
            return taken

    def _loop(self) -> None:
        next_t = time.monotonic()
        try:
            while not self._stop.is_set():
                self.sample_once()
                next_t += self.interval_s
                now = time.monotonic()
                if now > next_t:
                    missed = math.ceil((now - next_t) / self.interval_s)
                    if self.overruns == 0:
                        self._warn(f"sampler: a sample took longer than interval_s={self.interval_s:g} s; "
                                   f"skipping missed ticks (sources: {', '.join(s.name for s in self.sources)})")
                    self.overruns += 1
                    next_t += missed * self.interval_s
                self._stop.wait(max(0.0, next_t - time.monotonic()))
        except BaseException as exc:  # noqa: BLE001 - kept and raised by stop() in the caller's thread
            self._failure = exc

    def start(self) -> ClusterSampler:
        """Start the background thread (the first sample is taken at once)."""
        if self._thread is not None or self._closed:
            raise ClusterError("this sampler was already started; make a new ClusterSampler")
        for source in self.sources:
            source.prime(self.nodes)
        self._thread = threading.Thread(target=self._loop, name="cassperf-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 120.0) -> None:
        """Stop the thread (waiting for a sample in progress), take the final sample, close the
        sources, note repeated errors; raise what stopped the thread, if anything did."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._thread is not None:
                self._stop.set()
                self._thread.join(timeout_s)
                if self._thread.is_alive():
                    raise ClusterError(f"the sampler's thread did not stop within {timeout_s:.0f} s")
            if self.final_sample and self._failure is None and self._thread is not None:
                self.sample_once()
            for (source, node, error), count in self._repeats.items():
                if count > 1:
                    self._warn(f"sampler: {source} on {node}: the error above repeated in {count} samples in all")
        finally:
            for source in self.sources:
                source.close()
        if self._failure is not None:
            raise ClusterError(f"the sampler stopped after {self.samples} samples: "
                               f"{type(self._failure).__name__}: {self._failure}") from self._failure

    def __enter__(self) -> ClusterSampler:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if exc_type is None:
            self.stop()
            return
        try:
            self.stop()
        except Exception:  # noqa: BLE001 - the block's own exception is the one to see
            pass

    # -- events ------------------------------------------------------------------------------
    def event(self, name: str, detail: str = "") -> None:
        """Mark a moment (to the writer's events, or kept in memory)."""
        if self.writer is not None:
            self.writer.event(name, detail)
        else:
            self._events.append({"time": utc_now(), "time_s": time.monotonic() - self._t0, "name": name,
                                 "detail": detail})

    def phase(self, name: str, detail: str = "") -> AbstractContextManager[None]:
        """Events '<name>:start' and '<name>:end' around the block (a failure is noted at the end;
        ``results.store.phase_events``), to the writer's events or kept in memory as ``event``."""
        return phase_events(self.event, name, detail)

    # -- results without a writer ------------------------------------------------------------
    def frame(self) -> pd.DataFrame:
        """Rows kept in memory (only without a writer), as METRIC_COLUMNS."""
        with self._lock:
            return conform(pd.DataFrame(self._rows), METRIC_COLUMNS) if self._rows else empty_frame(METRIC_COLUMNS)

    def events_frame(self) -> pd.DataFrame:
        """Events kept in memory (only without a writer), as EVENT_COLUMNS."""
        return conform(pd.DataFrame(self._events), EVENT_COLUMNS) if self._events else empty_frame(EVENT_COLUMNS)
