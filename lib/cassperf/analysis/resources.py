"""What each resource did during a run, which one limited an arm, and which runs' clients were
saturated: the resource evidence behind a verdict (USE: utilization, saturation, errors).

    run_resources(run, start_s, end_s) -> {column: value}       one run over a window (RESOURCE_COLUMNS)
    node_resources(run, start_s, end_s) -> DataFrame            the same per node (NODE_COLUMNS)
    run_resource_frame(figures, runs) -> DataFrame              one row per counted run, over its steady
                                                                window, with its client flag
    node_resource_frame(figures, runs) -> DataFrame             one row per counted run and node
    arm_resources(frame) -> DataFrame                           one row per arm: the means over its runs
    limit_of(row) -> Limit                                      the resource that limited, by LIMIT_RULE
    limit_sentence({arm: row}) -> str                           "both arms: host CPU 97%, client 31% of a
                                                                core, disk 2%, GC 1%: CPU-bound"
    client_flag(row, manifest) -> str | None                    why a run's client may have set its pace

Inputs are the sampler's metrics (cassperf.sampler.names) on the run's time axis (seconds since
its start, as the run figures' window_start_s / window_end_s). Three kinds of series:

- since-previous gauges (host_cpu_*_pct, process_cpu_pct): a sample at t_i holds the level over
  (t_{i-1}, t_i]; the window's figure is the mean weighted by each span's overlap with the window;
- counters (gc_time_ms, client_cpu_s, disk_*, process_*_bytes, dropped_messages, *_timeouts,
  local_writes:ks.t, local_reads:ks.t): the increase over (t_{i-1}, t_i] is taken as even over
  the span (a counter that fell, a restarted process, gives nothing for that span), so the
  window holds the overlapping share of each span's increase; rates divide by the covered time;
- levels (node_page_cache_bytes, node_anon_bytes, node_memory_limit_bytes, compactions_pending):
  linear between samples; the window's mean is the time-weighted mean of that line, its maximum
  the largest value on it.

A figure whose samples cover less than half of the window (MIN_COVERAGE) is NaN, as is one the
run has no samples for: NaN means not measured, never 0.

Units: % (of all the host's cores for host CPU; of one core for a process), MB/s and MB (10^6
bytes) for disk and storage traffic, MiB (2^20 bytes) for memory (the page-cache bound is set in
MiB), counts for messages and timeouts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from cassperf.analysis.select import in_window, interval_bounds, run_name
from cassperf.analysis.series import metric_series
from cassperf.results.model import Run

#: below this share of the window covered by samples, a figure is unknown (NaN)
MIN_COVERAGE = 0.5
MB = 1e6
MIB = float(1 << 20)
HOST, DISK, CLIENT = "host:", "disk:", "client:"

#: run_resources' columns, in order (units in the names)
RESOURCE_COLUMNS = (
    "host_cpu_pct", "host_cpu_user_pct", "host_cpu_system_pct", "host_cpu_iowait_pct", "host_cpu_steal_pct",
    "node_cpu_pct", "node_cpu_max_pct", "client_cpu_pct", "client_cpu_max_pct",
    "disk_busy_pct", "disk_throttle_pct", "disk_read_mb_s", "disk_write_mb_s", "disk_reads_s", "disk_writes_s",
    "node_read_mb", "node_write_mb", "node_read_kb_per_op", "node_write_kb_per_op",
    "page_cache_mb", "page_cache_max_mb", "anon_mb", "memory_limit_mb",
    "gc_pause_pct", "gc_pause_max_pct", "compactions_pending_max", "dropped_messages", "timeouts",
    "local_writes", "local_reads", "local_writes_per_write", "local_reads_per_read", "ops",
)
#: node_resources' columns after `node`
NODE_COLUMNS = ("cpu_pct", "read_mb", "write_mb", "page_cache_mb", "anon_mb", "memory_limit_mb", "gc_pause_pct",
                "compactions_pending_max", "dropped_messages", "timeouts", "local_writes", "local_reads")

# -- the limit rule, fixed before any data ----------------------------------------------------------
#: host CPU busy (all cores) at or above which the host's CPU is the limit, %
HOST_CPU_SATURATED_PCT = 90.0
#: the busiest client process's CPU (one core) at or above which the client is the limit, %
CLIENT_SATURATED_PCT = 90.0
#: the busiest data device's utilization (time with I/O in flight) at or above which the disk is the limit, %
DISK_SATURATED_PCT = 80.0
#: the busiest node's share of wall time in GC at or above which GC is the limit, %
GC_SATURATED_PCT = 10.0
#: a node's reads of a throttled disk at or above this share of its reads-per-second throttle: the disk limits, %
THROTTLE_SATURATED_PCT = 90.0
LIMIT_RULE = (f"limit rule (fixed before any data): host CPU >= {HOST_CPU_SATURATED_PCT:g}% of all cores -> host "
              f"CPU; the busiest client process >= {CLIENT_SATURATED_PCT:g}% of one core -> client; the busiest data "
              f"device busy >= {DISK_SATURATED_PCT:g}% of the time, or a node's reads at >= "
              f"{THROTTLE_SATURATED_PCT:g}% of its disk's read throttle -> disk; the busiest node in GC >= "
              f"{GC_SATURATED_PCT:g}% of the time -> GC; else no resource saturated")
LIMIT_NOTE = """Why these thresholds (USE method, B. Gregg, "Thinking Methodically about Performance", 2012:
utilization of each resource, read against the level where it saturates):
- host CPU, 90%: /proc/stat's busy share averaged over 2 s samples and the run's window hides
  bursts at 100%; at 90% averaged, runnable threads wait for a core for most of the window, so
  the host's cores, shared by nodes and client, are what sets the pace.
- client, 90% of one core (its busiest process): each engine worker is one Python event loop
  (and cassandra-stress / latte have a busiest thread too); a process near a full core cannot
  send faster, so the measured rate is the client's, not the cluster's.
- disk, 80% busy: io_ticks counts the time with at least one I/O in flight; queueing delay grows
  steeply past 70-80% utilization for a single queue (M/M/1: waiting = service x U / (1 - U),
  4x the service time at 80%), and a virtual disk that serves several I/Os at once may hide more.
- a throttled disk, 90% of its reads per second: a node whose reads run at the throttle's rate
  waits for the throttle, whatever the device underneath could do (the device's own busy share
  stays low: the cgroup holds the reads back before they reach it).
- GC, 10% of wall time: G1's own throughput goal (-XX:GCTimeRatio=12, about 8% of the time in
  GC) is exceeded; beyond it the collector, not the workload, takes the node's time.
GC time is the JVM's CollectionTime, which for G1's young and old collectors (Java 11/17) is
stop-the-world pause time."""


# -- series over a window -------------------------------------------------------------------------
def _spans(t: np.ndarray, start: float, end: float) -> np.ndarray:
    """Overlap of each span (t[i-1], t[i]] with [start, end), for i >= 1."""
    return np.clip(np.minimum(t[1:], end) - np.maximum(t[:-1], start), 0.0, None)


def span_mean(t: np.ndarray, v: np.ndarray, start: float, end: float) -> tuple[float, float]:
    """(mean, covered seconds) of a since-previous gauge over [start, end): each sample's value
    weighted by its span's overlap (the first sample covers an unknown span and is not used)."""
    if len(t) < 2:
        return math.nan, 0.0
    overlap = _spans(t, start, end)
    ok = np.isfinite(v[1:]) & (overlap > 0)
    covered = float(overlap[ok].sum())
    if covered <= 0:
        return math.nan, 0.0
    return float(np.dot(v[1:][ok], overlap[ok]) / covered), covered


def counter_increase(t: np.ndarray, c: np.ndarray, start: float, end: float) -> tuple[float, float]:
    """(increase, covered seconds) of a counter over [start, end): each span's increase spread evenly
    over it; a span where the counter fell (a restart) or a value is missing gives nothing."""
    if len(t) < 2:
        return math.nan, 0.0
    dt = np.diff(t)
    dc = np.diff(c)
    overlap = _spans(t, start, end)
    ok = np.isfinite(dc) & (dc >= 0) & (dt > 0) & (overlap > 0)
    covered = float(overlap[ok].sum())
    if covered <= 0:
        return math.nan, 0.0
    return float(np.sum(dc[ok] * overlap[ok] / dt[ok])), covered


def level_stats(t: np.ndarray, v: np.ndarray, start: float, end: float) -> tuple[float, float, float]:
    """(time-weighted mean, maximum, covered seconds) of a level over [start, end), linear between
    samples; only the part of the window between the first and last sample is covered."""
    ok = np.isfinite(v)
    t, v = t[ok], v[ok]
    if len(t) == 0:
        return math.nan, math.nan, 0.0
    lo, hi = max(start, float(t[0])), min(end, float(t[-1]))
    if len(t) == 1 or hi <= lo:
        inside = v[(t >= start) & (t <= end)]
        if len(inside):
            return float(inside.mean()), float(inside.max()), 0.0
        return math.nan, math.nan, 0.0
    points = np.concatenate([[lo], t[(t > lo) & (t < hi)], [hi]])
    values = np.interp(points, t, v)
    area = float(np.sum((values[1:] + values[:-1]) / 2.0 * np.diff(points)))
    return area / (hi - lo), float(values.max()), hi - lo


def _enough(covered: float, start: float, end: float) -> bool:
    return covered >= MIN_COVERAGE * (end - start) and end > start


def _groups(series: pd.DataFrame) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """{(metric, node): (time_s, value)}, each sorted by time: slices of one sorted array, not a
    groupby (a run's windows cut hundreds of series, for every run of a study)."""
    if series.empty:
        return {}
    s = series.sort_values(["metric", "node", "time_s"], kind="stable")
    metric, node = s["metric"].astype(str).to_numpy(), s["node"].astype(str).to_numpy()
    t, v = s["time_s"].to_numpy(dtype="float64"), s["value"].to_numpy(dtype="float64")
    cuts = np.flatnonzero((metric[1:] != metric[:-1]) | (node[1:] != node[:-1])) + 1
    bounds = np.concatenate([[0], cuts, [len(s)]])
    return {(str(metric[a]), str(node[a])): (t[a:b], v[a:b]) for a, b in zip(bounds[:-1], bounds[1:])}


class _Window:
    """One run's sampler series over one window, by kind (module doc)."""

    def __init__(self, run: Run, start: float, end: float) -> None:
        self.start, self.end = float(start), float(end)
        self.length = self.end - self.start
        m = run.metrics
        self.series = _groups(metric_series(run, sorted(set(m["metric"].astype(str)))) if not m.empty
                              else pd.DataFrame(columns=["time_s", "node", "metric", "value"]))

    def nodes(self, metric: str, prefix: str | None = None, plain: bool = False) -> list[str]:
        """Nodes with `metric`: those whose name starts with `prefix`, or (plain) cluster nodes only."""
        found = [n for (m, n) in self.series if m == metric]
        if prefix is not None:
            return [n for n in found if n.startswith(prefix)]
        if plain:
            return [n for n in found if not n.startswith((HOST, DISK, CLIENT))]
        return found

    def metrics(self, base: str) -> list[str]:
        """Per-table metric names of `base` (base:ks.t) the run has."""
        return sorted({m for (m, _) in self.series if m.startswith(f"{base}:")})

    def gauge(self, metric: str, node: str) -> float:
        t, v = self.series.get((metric, node), (np.zeros(0), np.zeros(0)))
        mean, covered = span_mean(t, v, self.start, self.end)
        return mean if _enough(covered, self.start, self.end) else math.nan

    def increase(self, metric: str, node: str, whole_window: bool = True) -> float:
        """The counter's increase over the window (whole_window: scaled up from the covered part)."""
        t, c = self.series.get((metric, node), (np.zeros(0), np.zeros(0)))
        inc, covered = counter_increase(t, c, self.start, self.end)
        if not _enough(covered, self.start, self.end):
            return math.nan
        return inc * self.length / covered if whole_window else inc

    def raw_increase(self, metric: str, node: str) -> tuple[float, float]:
        """(increase, covered seconds) of the counter in the window, whatever the coverage."""
        t, c = self.series.get((metric, node), (np.zeros(0), np.zeros(0)))
        return counter_increase(t, c, self.start, self.end)

    def rate(self, metric: str, node: str) -> float:
        """The counter's increase per second over the covered part of the window."""
        t, c = self.series.get((metric, node), (np.zeros(0), np.zeros(0)))
        inc, covered = counter_increase(t, c, self.start, self.end)
        return inc / covered if _enough(covered, self.start, self.end) else math.nan

    def level(self, metric: str, node: str) -> tuple[float, float]:
        t, v = self.series.get((metric, node), (np.zeros(0), np.zeros(0)))
        mean, peak, covered = level_stats(t, v, self.start, self.end)
        if covered == 0.0 and math.isfinite(mean):       # one sample inside the window: that level
            return mean, peak
        return (mean, peak) if _enough(covered, self.start, self.end) else (math.nan, math.nan)


def _mean(values: Iterable[float]) -> float:
    vals = [v for v in values if math.isfinite(v)]
    return float(np.mean(vals)) if vals else math.nan


def _max(values: Iterable[float]) -> float:
    vals = [v for v in values if math.isfinite(v)]
    return float(max(vals)) if vals else math.nan


def _sum(values: Iterable[float]) -> float:
    vals = [v for v in values if math.isfinite(v)]
    return float(sum(vals)) if vals else math.nan


def _ratio(a: float, b: float) -> float:
    return a / b if math.isfinite(a) and math.isfinite(b) and b > 0 else math.nan


def window_ops(run: Run, start: float, end: float, op: str | None = None) -> float:
    """Operations the client completed in intervals whose midpoint lies in [start, end) (all ops,
    or `op`'s); NaN without interval rows."""
    iv = run.intervals
    if iv.empty or "count" not in iv.columns:
        return math.nan
    if op is not None:
        iv = iv[iv["op"].astype("string").str.lower().fillna("").to_numpy() == op]
        if iv.empty:
            return math.nan
    s, e = interval_bounds(iv)
    keep = in_window(s, e, start, end)
    return float(pd.to_numeric(iv["count"], errors="coerce").to_numpy(dtype="float64")[keep].sum())


# -- one run ----------------------------------------------------------------------------------------
def node_resources(run: Run, start_s: float, end_s: float) -> pd.DataFrame:
    """One row per cluster node (``node`` then NODE_COLUMNS) over [start_s, end_s): CPU % of one
    core, MB it read from and wrote to storage, page cache, anonymous memory and memory limit
    (MiB, means), % of the time in GC, the most compactions pending, dropped messages and
    timeouts (counts), local writes applied and reads served (counts, every sampled table)."""
    return _node_rows(_Window(run, start_s, end_s))


def _node_rows(w: _Window) -> pd.DataFrame:
    names = sorted({n for (m, n) in w.series if not n.startswith((HOST, DISK, CLIENT))})
    rows = []
    for node in names:
        gc = w.rate("gc_time_ms", node)
        rows.append({
            "node": node,
            "cpu_pct": w.gauge("process_cpu_pct", node),
            "read_mb": w.increase("process_read_bytes", node) / MB,
            "write_mb": w.increase("process_write_bytes", node) / MB,
            "page_cache_mb": w.level("node_page_cache_bytes", node)[0] / MIB,
            "anon_mb": w.level("node_anon_bytes", node)[0] / MIB,
            "memory_limit_mb": w.level("node_memory_limit_bytes", node)[0] / MIB,
            "gc_pause_pct": gc / 10.0,                     # ms per s -> % of the time
            "compactions_pending_max": w.level("compactions_pending", node)[1],
            "dropped_messages": w.increase("dropped_messages", node, whole_window=False),
            "timeouts": _sum([w.increase("read_timeouts", node, whole_window=False),
                              w.increase("write_timeouts", node, whole_window=False)]),
            "local_writes": _sum(w.increase(m, node, whole_window=False) for m in w.metrics("local_writes")),
            "local_reads": _sum(w.increase(m, node, whole_window=False) for m in w.metrics("local_reads")),
        })
    return pd.DataFrame(rows, columns=["node", *NODE_COLUMNS]).astype({c: "float64" for c in NODE_COLUMNS})


def client_processes(run: Run, start_s: float, end_s: float) -> pd.DataFrame:
    """One row per client process (``process`` without "client:"; ``cpu_pct``: % of one core over
    the part of the window its samples cover, NaN under MIN_COVERAGE; ``cpu_s``: its CPU seconds
    in the window; ``covered_s``: the seconds of the window its samples cover: a process that
    started in the window covers it from its start, the sampler's zero row), busiest first."""
    return _client_rows(_Window(run, start_s, end_s))


def _client_rows(w: _Window) -> pd.DataFrame:
    rows = []
    for node in w.nodes("client_cpu_s", CLIENT):
        cpu_s, covered = w.raw_increase("client_cpu_s", node)
        rows.append({"process": node.removeprefix(CLIENT), "cpu_pct": 100.0 * w.rate("client_cpu_s", node),
                     "cpu_s": cpu_s, "covered_s": covered})
    frame = pd.DataFrame(rows, columns=["process", "cpu_pct", "cpu_s", "covered_s"])
    return frame.sort_values("cpu_pct", ascending=False, na_position="last").reset_index(drop=True)


def run_resources(run: Run, start_s: float, end_s: float) -> dict[str, float]:
    """One run's resource figures over [start_s, end_s) on its time axis (RESOURCE_COLUMNS; NaN
    where not measured):

    host_cpu_pct (+ _user, _system, _iowait, _steal)   % of all the host's cores
    node_cpu_pct, node_cpu_max_pct      a node's CPU, % of one core: mean over nodes, busiest node
    client_cpu_pct, client_cpu_max_pct  the load generator's CPU, % of one core: all its processes
                                        together (their CPU seconds in the window over its length;
                                        known when one process covers MIN_COVERAGE of it), its
                                        busiest process (over the time its samples cover; one
                                        covering under MIN_COVERAGE of the window is left out)
    disk_busy_pct                       the busiest data device's utilization (time with I/O in flight)
    disk_read_mb_s, disk_write_mb_s, disk_reads_s, disk_writes_s   the data devices together
    node_read_mb, node_write_mb         what the nodes' processes read from / wrote to storage, MB,
                                        summed over nodes; node_read_kb_per_op, node_write_kb_per_op
                                        the same per client operation in the window, KB
    page_cache_mb, anon_mb, memory_limit_mb   per node (memory cgroup), mean over nodes, MiB;
                                        page_cache_max_mb the largest any node held
    gc_pause_pct, gc_pause_max_pct      % of wall time in GC: mean over nodes, busiest node
    compactions_pending_max             the most compactions any node had pending
    dropped_messages, timeouts          counts in the window, summed over nodes
    local_writes, local_reads           writes applied / reads served by the nodes as replicas
                                        (sampled tables), summed over nodes; local_writes_per_write
                                        and local_reads_per_read per client write / read: the
                                        replicas each op reached
    ops                                 client operations in the window (intervals, midpoint rule)
    """
    w = _Window(run, start_s, end_s)
    out: dict[str, float] = dict.fromkeys(RESOURCE_COLUMNS, math.nan)
    host = w.nodes("host_cpu_pct", HOST)
    for col in ("host_cpu_pct", "host_cpu_user_pct", "host_cpu_system_pct", "host_cpu_iowait_pct", "host_cpu_steal_pct"):
        out[col] = _mean(w.gauge(col, n) for n in host)
    per_node = _node_rows(w)
    out["node_cpu_pct"] = _mean(per_node["cpu_pct"])
    out["node_cpu_max_pct"] = _max(per_node["cpu_pct"])
    clients = _client_rows(w)
    known = not clients.empty and _enough(float(clients["covered_s"].max()), w.start, w.end)
    out["client_cpu_pct"] = 100.0 * _sum(clients["cpu_s"]) / w.length if known else math.nan
    out["client_cpu_max_pct"] = _max(clients["cpu_pct"])
    disks = w.nodes("disk_busy_ms", DISK)
    out["disk_busy_pct"] = _max(w.rate("disk_busy_ms", d) / 10.0 for d in disks)   # ms per s -> %
    throttled = w.nodes("node_read_iops_limit", plain=True)
    out["disk_throttle_pct"] = _max(100.0 * w.rate("node_disk_reads", n) / w.level("node_read_iops_limit", n)[0]
                                    for n in throttled if w.level("node_read_iops_limit", n)[0] > 0)
    out["disk_read_mb_s"] = _sum(w.rate("disk_read_bytes", d) for d in w.nodes("disk_read_bytes", DISK)) / MB
    out["disk_write_mb_s"] = _sum(w.rate("disk_write_bytes", d) for d in w.nodes("disk_write_bytes", DISK)) / MB
    out["disk_reads_s"] = _sum(w.rate("disk_reads", d) for d in w.nodes("disk_reads", DISK))
    out["disk_writes_s"] = _sum(w.rate("disk_writes", d) for d in w.nodes("disk_writes", DISK))
    ops = window_ops(run, start_s, end_s)
    out["ops"] = ops
    out["node_read_mb"] = _sum(per_node["read_mb"])
    out["node_write_mb"] = _sum(per_node["write_mb"])
    out["node_read_kb_per_op"] = _ratio(out["node_read_mb"] * 1e3, ops)
    out["node_write_kb_per_op"] = _ratio(out["node_write_mb"] * 1e3, ops)
    out["page_cache_mb"] = _mean(per_node["page_cache_mb"])
    out["page_cache_max_mb"] = _max(w.level("node_page_cache_bytes", n)[1] / MIB
                                    for n in w.nodes("node_page_cache_bytes", plain=True))
    out["anon_mb"] = _mean(per_node["anon_mb"])
    out["memory_limit_mb"] = _mean(per_node["memory_limit_mb"])
    out["gc_pause_pct"] = _mean(per_node["gc_pause_pct"])
    out["gc_pause_max_pct"] = _max(per_node["gc_pause_pct"])
    out["compactions_pending_max"] = _max(per_node["compactions_pending_max"])
    out["dropped_messages"] = _sum(per_node["dropped_messages"])
    out["timeouts"] = _sum(per_node["timeouts"])
    out["local_writes"] = _sum(per_node["local_writes"])
    out["local_reads"] = _sum(per_node["local_reads"])
    out["local_writes_per_write"] = _ratio(out["local_writes"], window_ops(run, start_s, end_s, "write"))
    out["local_reads_per_read"] = _ratio(out["local_reads"], window_ops(run, start_s, end_s, "read"))
    return out


# -- the limit --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Limit:
    """What limited an arm (LIMIT_RULE): the saturated resources in the rule's order ("host CPU",
    "client", "disk", "GC"; none: no resource saturated), and whether anything was measured."""

    resources: tuple[str, ...]
    measured: bool = True

    @property
    def resource(self) -> str:
        """The first saturated resource, "no resource saturated", or "not measured"."""
        if not self.measured:
            return "not measured"
        return self.resources[0] if self.resources else "no resource saturated"

    @property
    def label(self) -> str:
        """CPU-bound, client-bound, disk-bound, GC-bound (joined by "and"), "no resource saturated",
        or "resources not measured"."""
        if not self.measured:
            return "resources not measured"
        if not self.resources:
            return "no resource saturated"
        words = {"host CPU": "CPU", "client": "client", "disk": "disk", "GC": "GC"}
        return " and ".join(f"{words[r]}-bound" for r in self.resources)


#: (resource, column, threshold) in the rule's order
_LIMITS = (("host CPU", "host_cpu_pct", HOST_CPU_SATURATED_PCT),
           ("client", "client_cpu_max_pct", CLIENT_SATURATED_PCT),
           ("disk", "disk_busy_pct", DISK_SATURATED_PCT),
           ("disk", "disk_throttle_pct", THROTTLE_SATURATED_PCT),
           ("GC", "gc_pause_max_pct", GC_SATURATED_PCT))


def _value(row: Mapping[str, Any], col: str) -> float:
    v = row.get(col, math.nan)
    try:
        v = float(v)
    except (TypeError, ValueError):
        return math.nan
    return v


def limit_of(row: Mapping[str, Any]) -> Limit:
    """The limit of one run or arm (a run_resources row, or an arm_resources row), by LIMIT_RULE."""
    values = [(name, _value(row, col), threshold) for name, col, threshold in _LIMITS]
    measured = any(math.isfinite(v) for _, v, _ in values)
    return Limit(tuple(dict.fromkeys(name for name, v, threshold in values if math.isfinite(v) and v >= threshold)),
                 measured)


def _pct_text(values: Sequence[float]) -> str:
    """'97%', or '95-97%' for a range over arms (rounded to whole %); 'not measured' when none is."""
    vals = [v for v in values if math.isfinite(v)]
    if not vals:
        return "not measured"
    lo, hi = round(min(vals)), round(max(vals))
    return f"{lo}%" if lo == hi else f"{lo}-{hi}%"


def figures_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """"host CPU 97%, client 31% of a core, disk 2%, GC 1%" over one or more rows (ranges); a node's
    reads of a throttled disk, where measured: "disk reads at 98% of the throttle"."""
    parts = []
    for name, col, _ in _LIMITS:
        text = _pct_text([_value(r, col) for r in rows])
        if col == "disk_throttle_pct":
            if text != "not measured":
                parts.append(f"disk reads at {text} of the throttle")
            continue
        if name == "client" and text != "not measured":
            text += " of a core"
        parts.append(f"{name} {text}")
    return ", ".join(parts)


def limit_sentence(arms: Mapping[str, Mapping[str, Any]]) -> str:
    """The limit of a claim's arms in one sentence. Arms with the same limit share one clause:
    "both arms: host CPU 95-97%, client 31% of a core, disk 2%, GC 1%: CPU-bound"; otherwise one
    clause per arm: "rf1: ...: no resource saturated; rf3: ...: CPU-bound"."""
    if not arms:
        return "no arm"
    limits = {name: limit_of(row) for name, row in arms.items()}
    labels = {lim.label for lim in limits.values()}
    if len(labels) == 1:
        who = {1: f"arm {next(iter(arms))}", 2: "both arms"}.get(len(arms), f"all {len(arms)} arms")
        return f"{who}: {figures_text(list(arms.values()))}: {labels.pop()}"
    return "; ".join(f"{name}: {figures_text([row])}: {limits[name].label}" for name, row in arms.items())


# -- the client flag ----------------------------------------------------------------------------------
def client_flag(row: Mapping[str, Any], manifest: Mapping[str, Any]) -> str | None:
    """Why the client may have set a run's pace, or None: its busiest process used at least
    CLIENT_SATURATED_PCT of a core ("client at 95% of a core"), or a paced run fell behind its
    schedule (the engine's manifest engine.fell_behind: "client fell behind its schedule: 4,100
    of 5,000 ops/s")."""
    notes = []
    cpu = _value(row, "client_cpu_max_pct")
    if math.isfinite(cpu) and cpu >= CLIENT_SATURATED_PCT:
        notes.append(f"client at {cpu:.0f}% of a core")
    engine = manifest.get("engine") or {}
    if engine.get("fell_behind"):
        achieved, target = engine.get("achieved_rate_ops_s"), engine.get("target_rate_ops_s")
        rate = f": {achieved:,.0f} of {target:,.0f} ops/s" if achieved is not None and target else ""
        notes.append(f"client fell behind its schedule{rate}")
    return "; ".join(notes) or None


# -- runs and arms ------------------------------------------------------------------------------------
def _by_id(runs: Mapping[str, Run] | Iterable[Run]) -> dict[str, Run]:
    if isinstance(runs, Mapping):
        return dict(runs)
    return {run_name(r): r for r in runs}


def run_resource_frame(figures: pd.DataFrame, runs: Mapping[str, Run] | Iterable[Run]) -> pd.DataFrame:
    """One row per counted run (figures' rows with status "ok"; analysis.repeats.run_figures) over
    its steady window (window_start_s, window_end_s): run_id, arm, block, window_start_s,
    window_end_s, RESOURCE_COLUMNS, client_flag (None, or why its client may have set the pace),
    limit (the run's Limit.label). `runs`: the Runs, by run_id or as an iterable."""
    by_id = _by_id(runs)
    ok = figures[figures["status"] == "ok"] if "status" in figures.columns else figures
    rows = []
    for run_id, group in ok.groupby("run_id", sort=False):
        first = group.iloc[0]
        run = by_id.get(str(run_id))
        if run is None:
            continue
        start, end = float(first["window_start_s"]), float(first["window_end_s"])
        res = run_resources(run, start, end)
        rows.append({"run_id": str(run_id), "arm": first.get("arm"), "block": first.get("block"),
                     "window_start_s": start, "window_end_s": end, **res,
                     "client_flag": client_flag(res, run.manifest), "limit": limit_of(res).label})
    columns = ["run_id", "arm", "block", "window_start_s", "window_end_s", *RESOURCE_COLUMNS, "client_flag", "limit"]
    return pd.DataFrame(rows, columns=columns)


def node_resource_frame(figures: pd.DataFrame, runs: Mapping[str, Run] | Iterable[Run]) -> pd.DataFrame:
    """One row per counted run and cluster node over the run's steady window: run_id, arm, block,
    node, NODE_COLUMNS (node_resources): e.g. the writes each node applied in each arm."""
    by_id = _by_id(runs)
    ok = figures[figures["status"] == "ok"] if "status" in figures.columns else figures
    parts = []
    for run_id, group in ok.groupby("run_id", sort=False):
        first = group.iloc[0]
        run = by_id.get(str(run_id))
        if run is None:
            continue
        nodes = node_resources(run, float(first["window_start_s"]), float(first["window_end_s"]))
        parts.append(nodes.assign(run_id=str(run_id), arm=first.get("arm"), block=first.get("block")))
    columns = ["run_id", "arm", "block", "node", *NODE_COLUMNS]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


#: arm_resources' columns after arm and runs (the means; the method section's table)
ARM_COLUMNS = RESOURCE_COLUMNS


def arm_resources(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per arm (in the order arms first appear): ``arm``, ``runs`` (its counted runs),
    ``flagged_runs`` (runs with a client flag), the mean of each RESOURCE_COLUMNS over its runs
    (NaN only where no run measured it), and ``limit`` (limit_of the means)."""
    rows = []
    for arm, group in frame.groupby("arm", sort=False):
        means = {col: _mean(group[col].to_numpy(dtype="float64")) for col in ARM_COLUMNS}
        rows.append({"arm": arm, "runs": len(group), "flagged_runs": int(group["client_flag"].notna().sum()),
                     **means, "limit": limit_of(means).label})
    return pd.DataFrame(rows, columns=["arm", "runs", "flagged_runs", *ARM_COLUMNS, "limit"])


def arm_rows(table: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """arm_resources' rows as {arm: row}, the input of limit_sentence."""
    return {str(r["arm"]): dict(r) for _, r in table.iterrows()}



# -- the evidence under the verdicts --------------------------------------------------------------------
def resource_rows(figures: pd.DataFrame) -> pd.DataFrame:
    """One row per counted run from a figures frame that carries the resource columns (the study
    contract's figures: cassperf.experiments.analysis.Analysis.figures): run_id, arm, block,
    RESOURCE_COLUMNS, client_flag; the input of arm_resources and claim_limits."""
    cols = ["run_id", "arm", "block", *RESOURCE_COLUMNS, "client_flag"]
    if figures.empty or "host_cpu_pct" not in figures.columns:
        return pd.DataFrame(columns=cols)
    ok = figures[figures["status"] == "ok"] if "status" in figures.columns else figures
    return ok.drop_duplicates("run_id")[cols].reset_index(drop=True)


#: the verdicts a limit is named under: the decided ones
DECIDED = ("holds", "does not hold")


def claim_limits(claims: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``claims`` with a ``limit`` column: under every decided claim the limit of the arms it
    compares (limit_sentence over their arm_resources rows), and the runs of those arms whose
    client may have set the pace, named ("client flagged: 2 runs of arm b (client at 95% of a
    core)"). Empty where the claim compares no arms or is not decided."""
    out = claims.copy()
    table = arm_resources(rows) if not rows.empty else pd.DataFrame(columns=["arm"])
    by_arm = arm_rows(table)
    limits = []
    for r in out.to_dict("records"):
        arms = [a for a in (r.get("arm_a"), r.get("arm_b")) if isinstance(a, str) and a in by_arm]
        if r.get("verdict") not in DECIDED or not arms:
            limits.append("")
            continue
        said = limit_sentence({a: by_arm[a] for a in dict.fromkeys(arms)})
        flagged = rows[rows["arm"].isin(arms) & rows["client_flag"].notna()]
        if not flagged.empty:
            notes = "; ".join(f"{n} run{'s' if n > 1 else ''} of {a} ({flag})" for (a, flag), n in
                              flagged.groupby(["arm", "client_flag"], sort=False).size().items())
            said += f"; client flagged: {notes}"
        limits.append(said)
    out["limit"] = limits
    return out
