"""The JMX fallback without an agent: nodetool, parsed with cassperf's nodetool parsers.

Each call starts a JVM (0.6-5 s here, depending on load), so this source runs its commands for
a node side by side (up to five: every command of a sample at once) and suits intervals of 10 s
and more. Per node and sample:

    nodetool tablestats ks.t ...   live_sstables:ks.t ("SSTable count"), sstables_level_N:ks.t
                                   ("SSTables in each level: [2, 0, ...]"; "10/4" reads as 10),
                                   local_writes:ks.t, local_reads:ks.t ("Local write count",
                                   "Local read count")
    nodetool compactionstats       compactions_pending ("pending tasks"), compactions_completed and
                                   bytes_compacted ("compactions completed", "data compacted":
                                   printed by 5.0 only), compactions_active (rows of active
                                   operations; only with tasks=True)
    nodetool sjk mxdump -q 'java.lang:type=GarbageCollector,*'
                                   gc_count, gc_time_ms: CollectionCount / CollectionTime summed,
                                   the same MBeans Jolokia reads (nodetool 4.0+ has sjk)
    nodetool sjk mxdump -q 'org.apache.cassandra.metrics:type=ClientRequest,name=Timeouts,*'
                                   read_timeouts, write_timeouts (scope=Read / scope=Write Count)
    nodetool tpstats               dropped_messages (the dropped section summed; dropped=True),
                                   pool_<p>_* (only with pools=True: nodes without virtual tables)

Where `sjk` is missing (nodetool before 4.0) GC comes from `nodetool gcstats` instead, which
reports only the collections since its previous call and resets GCInspector's counters for every
caller: gc_count and gc_time_ms are then running sums from the sampler's first call (a different
baseline from JMX's since-JVM-start), and read/write timeouts are not sampled. Both are said once
in the node's Outcome.error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pandas as pd

from cassperf.errors import CassperfError, ToolError
from cassperf.parsers import parse_text
from cassperf.sampler.base import NodeRef, Outcome, PartialRead, Reading, Source, each_node, utc_now
from cassperf.sampler.names import level_metric, pool_metric, table_metric

GC_QUERY = "java.lang:type=GarbageCollector,*"
TIMEOUTS_QUERY = "org.apache.cassandra.metrics:type=ClientRequest,name=Timeouts,*"
# 2, 0, 0 | 10/4, 0, 0   (the inside of "SSTables in each level: [10/4, 0, 0, ...]")
_LEVEL_RE = re.compile(r"^\s*(\d+)(?:/\d+)?\s*$")

Parsed = tuple[list[Reading], list[str]]


def parse_levels(text: str) -> list[int]:
    """'[2, 0, 0]' -> [2, 0, 0]; '[10/4, 0]' -> [10, 0] (count over the level's limit);
    ValueError on anything else."""
    inner = text.strip()
    if not (inner.startswith("[") and inner.endswith("]")):
        raise ValueError(f"not a level list: {text!r}")
    parts = inner[1:-1].split(",")
    levels = []
    for part in parts:
        m = _LEVEL_RE.match(part)
        if not m:
            raise ValueError(f"not a level count: {part!r} in {text!r}")
        levels.append(int(m.group(1)))
    return levels


def mxdump_beans(text: str) -> list[dict[str, Any]]:
    """The beans of `nodetool sjk mxdump` output (a JSON object {"beans": [...]})."""
    start = text.find("{")
    try:
        beans = json.loads(text[start:])["beans"] if start >= 0 else None
    except (json.JSONDecodeError, KeyError, TypeError):
        beans = None
    if not isinstance(beans, list):
        raise CassperfError(f"sjk mxdump printed no JSON beans: {text[:200]!r}")
    return beans


def _bean_prop(name: str, key: str) -> str | None:
    for part in name.split(":", 1)[-1].split(","):
        k, _, v = part.partition("=")
        if k == key:
            return v
    return None


class NodetoolSource(Source):
    """nodetool against each node (`cluster.nodetool_read(node.handle, ...)`: read-only JMX
    access where the cluster has it), parsed."""

    name = "nodetool"

    def __init__(self, cluster: Any, tables: Sequence[tuple[str, str]] = (), pools: bool = False,
                 tasks: bool = False, timeout_s: float = 60.0, max_parallel: int = 5, dropped: bool = True) -> None:
        self.cluster = cluster
        self.tables = list(tables)
        self.pools = pools
        self.dropped = dropped
        self.tasks = tasks
        self.timeout_s = timeout_s
        self.use_sjk = True
        self._gc_sums: dict[str, tuple[float, float]] = {}
        self._pool = ThreadPoolExecutor(max_workers=max_parallel, thread_name_prefix="cassperf-nodetool")

    def commands(self) -> dict[str, list[str]]:
        cmds: dict[str, list[str]] = {}
        if self.tables:
            cmds["tablestats"] = ["tablestats", *(f"{ks}.{t}" for ks, t in self.tables)]
        cmds["compactionstats"] = ["compactionstats"]
        if self.use_sjk:
            cmds["gc"] = ["sjk", "mxdump", "-q", GC_QUERY]
            cmds["timeouts"] = ["sjk", "mxdump", "-q", TIMEOUTS_QUERY]
        else:
            cmds["gc"] = ["gcstats"]
        if self.pools or self.dropped:
            cmds["tpstats"] = ["tpstats"]
        return cmds

    # -- parsing, one function per command (text in, readings and problems out) ------------
    def parse_tablestats(self, node: str, when: pd.Timestamp, text: str) -> Parsed:
        frame = parse_text(text, format="nodetool-tablestats").tables["tables"]
        out: list[Reading] = []
        problems = []
        for ks, t in self.tables:
            rows = frame[(frame["keyspace"] == ks) & (frame["table"] == t)]
            if rows.empty:
                problems.append(f"tablestats printed no table {ks}.{t}")
                continue
            row = rows.iloc[0]
            if pd.notna(row.get("sstable_count")):
                out.append(Reading(when, node, table_metric("live_sstables", ks, t), float(row["sstable_count"])))
            for metric, column in (("local_writes", "local_write_count"), ("local_reads", "local_read_count")):
                if pd.notna(row.get(column)):
                    out.append(Reading(when, node, table_metric(metric, ks, t), float(row[column])))
            levels = row.get("sstables_per_level")
            if isinstance(levels, str):
                for level, count in enumerate(parse_levels(levels)):
                    out.append(Reading(when, node, level_metric(level, ks, t), float(count)))
        return out, problems

    def parse_compactionstats(self, node: str, when: pd.Timestamp, text: str) -> Parsed:
        result = parse_text(text, format="nodetool-compactionstats")
        summary = result.tables["summary"].iloc[0]
        out = []
        for metric, column in (("compactions_pending", "pending_tasks"),
                               ("compactions_completed", "compactions_completed"),
                               ("bytes_compacted", "data_compacted_bytes")):
            if column in summary and pd.notna(summary[column]):
                out.append(Reading(when, node, metric, float(summary[column])))
        if self.tasks:
            out.append(Reading(when, node, "compactions_active", float(len(result.tables["active"]))))
        return out, []

    def parse_gc(self, node: str, when: pd.Timestamp, text: str) -> Parsed:
        if self.use_sjk:
            beans = mxdump_beans(text)
            count = sum(float(b["CollectionCount"]) for b in beans)
            time_ms = sum(float(b["CollectionTime"]) for b in beans)
            return [Reading(when, node, "gc_count", count), Reading(when, node, "gc_time_ms", time_ms)], []
        snap = parse_text(text, format="nodetool-gcstats").tables["gcstats"].iloc[-1]
        count0, time0 = self._gc_sums.get(node, (0.0, 0.0))
        count = count0 + float(snap["collections"])
        time_ms = time0 + float(0.0 if pd.isna(snap["total_gc_elapsed_ms"]) else snap["total_gc_elapsed_ms"])
        self._gc_sums[node] = (count, time_ms)
        return [Reading(when, node, "gc_count", count), Reading(when, node, "gc_time_ms", time_ms)], []

    def parse_timeouts(self, node: str, when: pd.Timestamp, text: str) -> Parsed:
        out = []
        for bean in mxdump_beans(text):
            scope = _bean_prop(str(bean.get("name", "")), "scope")
            metric = {"Read": "read_timeouts", "Write": "write_timeouts"}.get(scope or "")
            if metric:
                out.append(Reading(when, node, metric, float(bean["Count"])))
        return out, []

    def parse_tpstats(self, node: str, when: pd.Timestamp, text: str) -> Parsed:
        tables = parse_text(text, format="nodetool-tpstats").tables
        out = []
        if self.dropped and "dropped" in tables:
            out.append(Reading(when, node, "dropped_messages", float(tables["dropped"]["dropped"].fillna(0).sum())))
        if not self.pools:
            return out, []
        for row in tables["pools"].itertuples(index=False):
            for what in ("pending", "active", "blocked", "completed"):
                value = getattr(row, what)
                if pd.notna(value):
                    out.append(Reading(when, node, pool_metric(str(row.pool), what), float(value)))
        return out, []

    # -- running ----------------------------------------------------------------------------
    def _run(self, node: NodeRef, key: str, args: list[str]) -> tuple[str, pd.Timestamp, str | Exception]:
        when = utc_now()
        try:
            return key, when, self.cluster.nodetool_read(node.handle, *args, timeout=self.timeout_s)
        except CassperfError as exc:
            return key, when, exc

    def read(self, node: NodeRef) -> list[Reading]:
        cmds = self.commands()
        parsers: dict[str, Callable[[str, pd.Timestamp, str], Parsed]] = {
            "tablestats": self.parse_tablestats, "compactionstats": self.parse_compactionstats,
            "gc": self.parse_gc, "timeouts": self.parse_timeouts, "tpstats": self.parse_tpstats}
        results = list(self._pool.map(lambda kv: self._run(node, *kv), cmds.items()))
        readings: list[Reading] = []
        problems: list[str] = []
        failed: dict[str, Exception] = {}
        for key, when, text in results:
            if isinstance(text, Exception):
                failed[key] = text
                continue
            try:
                got, notes = parsers[key](node.name, when, text)
            except (CassperfError, KeyError, ValueError, TypeError, IndexError) as exc:
                failed[key] = exc
                continue
            readings += got
            problems += notes
        if self.use_sjk and "gc" in failed and "timeouts" in failed and "compactionstats" not in failed:
            # the node answers nodetool, but not `nodetool sjk`: an older nodetool
            self.use_sjk = False
            problems.append("nodetool has no working `sjk` (" + _short(failed.pop("gc")) + "): GC now comes from "
                            "`nodetool gcstats` (running sums from the sampler's first call) and read/write "
                            "timeouts are not sampled")
            failed.pop("timeouts")
        problems += [f"nodetool {' '.join(cmds[k])}: {_short(exc)}" for k, exc in failed.items()]
        if problems:
            raise PartialRead(readings, f"nodetool on {node.name}: " + "; ".join(problems))
        return readings

    def sample(self, nodes: Sequence[NodeRef]) -> list[Outcome]:
        return each_node(nodes, self.read)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _short(exc: Exception) -> str:
    if isinstance(exc, ToolError):
        lines = [ln for ln in (exc.stderr + "\n" + exc.stdout).splitlines() if ln.strip()]
        return f"exit {exc.returncode}" + (f": {lines[-1].strip()}" if lines else "")
    return f"{type(exc).__name__}: {exc}".splitlines()[0]
