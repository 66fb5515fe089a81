"""JMX over HTTP: one Jolokia bulk request per node per sample (about 25-40 ms per node here).

MBeans read (Cassandra 4.0-5.0 names):

    gc_count, gc_time_ms      java.lang:type=GarbageCollector,name=*  CollectionCount, CollectionTime
                              (summed over collectors)
    compactions_pending       org.apache.cassandra.metrics:type=Compaction,name=PendingTasks  Value
    compactions_completed     ...:type=Compaction,name=TotalCompactionsCompleted  Count
    bytes_compacted           ...:type=Compaction,name=BytesCompacted  Count
    read_timeouts             ...:type=ClientRequest,scope=Read,name=Timeouts  Count
    write_timeouts            ...:type=ClientRequest,scope=Write,name=Timeouts  Count
    dropped_messages          ...:type=DroppedMessage,scope=*,name=Dropped  Count (summed over
                              message types)
    live_sstables:ks.t        ...:type=Table,keyspace=ks,scope=t,name=LiveSSTableCount  Value
    local_writes:ks.t         ...:type=Table,keyspace=ks,scope=t,name=WriteLatency  Count
    local_reads:ks.t          ...:type=Table,keyspace=ks,scope=t,name=ReadLatency  Count
    sstables_level_N:ks.t     org.apache.cassandra.db:type=Tables,keyspace=ks,table=t  SSTableCountPerLevel
                              (null for non-leveled tables: no rows then)
    pool_<p>_pending/active/blocked/completed  (only with pools=True, when the node has no
                              virtual tables) ...:type=ThreadPools,path=*,scope=<p>,name=PendingTasks,
                              ActiveTasks, CompletedTasks (Value), CurrentlyBlockedTasks (Count)

A request the node answers with an error (a table that does not exist yet) gives no row and is
reported in the node's Outcome.error; the other values of that node are still written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cassperf.cluster.jolokia import JolokiaEndpoint
from cassperf.errors import ClusterError
from cassperf.sampler.base import NodeRef, Outcome, PartialRead, Reading, Source, each_node, utc_now
from cassperf.sampler.names import level_metric, pool_metric, table_metric

_METRICS = "org.apache.cassandra.metrics"
#: pool field -> (metric name, attribute): CurrentlyBlockedTasks is a counter (Count), the rest gauges
_POOL_MBEANS = {"pending": ("PendingTasks", "Value"), "active": ("ActiveTasks", "Value"),
                "blocked": ("CurrentlyBlockedTasks", "Count"), "completed": ("CompletedTasks", "Value")}

#: (metric, mbean, attribute) for node-wide single values.
_NODE_READS: list[tuple[str, str, str]] = [
    ("compactions_pending", f"{_METRICS}:type=Compaction,name=PendingTasks", "Value"),
    ("compactions_completed", f"{_METRICS}:type=Compaction,name=TotalCompactionsCompleted", "Count"),
    ("bytes_compacted", f"{_METRICS}:type=Compaction,name=BytesCompacted", "Count"),
    ("read_timeouts", f"{_METRICS}:type=ClientRequest,scope=Read,name=Timeouts", "Count"),
    ("write_timeouts", f"{_METRICS}:type=ClientRequest,scope=Write,name=Timeouts", "Count"),
]
_GC_MBEAN = "java.lang:type=GarbageCollector,name=*"
_DROPPED_MBEAN = f"{_METRICS}:type=DroppedMessage,scope=*,name=Dropped"
#: per table: (metric, Table metric name, attribute)
_TABLE_READS = [("live_sstables", "LiveSSTableCount", "Value"), ("local_writes", "WriteLatency", "Count"),
                ("local_reads", "ReadLatency", "Count")]


def _scalar(value: Any) -> float:
    """A Jolokia value as a float ({'Value': 3} or 3)."""
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not a number: {value!r}")
    return float(value)


def _prop(mbean: str, key: str) -> str | None:
    """The value of `key` in an MBean name: 'a:type=X,scope=ReadStage' -> 'ReadStage'."""
    for part in mbean.split(":", 1)[-1].split(","):
        k, _, v = part.partition("=")
        if k == key:
            return v
    return None


class JolokiaSource(Source):
    """Reads each node through its Jolokia agent. `endpoint_for(node)` gives the agent's base URL
    (e.g. http://127.0.0.1:8778/jolokia) and the credential it asks for."""

    name = "jolokia"

    def __init__(self, endpoint_for: Callable[[NodeRef], JolokiaEndpoint], tables: Sequence[tuple[str, str]] = (),
                 pools: bool = False, timeout_s: float = 5.0) -> None:
        self.endpoint_for = endpoint_for
        self.tables = list(tables)
        self.pools = pools
        self.timeout_s = timeout_s

    def requests(self) -> list[dict[str, Any]]:
        """The bulk request body, in the order `_readings` expects."""
        reqs: list[dict[str, Any]] = [{"type": "read", "mbean": _GC_MBEAN,
                                       "attribute": ["CollectionCount", "CollectionTime"]}]
        reqs += [{"type": "read", "mbean": mbean, "attribute": attr} for _, mbean, attr in _NODE_READS]
        reqs.append({"type": "read", "mbean": _DROPPED_MBEAN, "attribute": "Count"})
        for ks, t in self.tables:
            for _, name, attribute in _TABLE_READS:
                reqs.append({"type": "read", "mbean": f"{_METRICS}:type=Table,keyspace={ks},scope={t},name={name}",
                             "attribute": attribute})
            reqs.append({"type": "read", "mbean": f"org.apache.cassandra.db:type=Tables,keyspace={ks},table={t}",
                         "attribute": "SSTableCountPerLevel"})
        if self.pools:
            for mbean_name, attribute in _POOL_MBEANS.values():
                reqs.append({"type": "read", "mbean": f"{_METRICS}:type=ThreadPools,path=*,scope=*,name={mbean_name}",
                             "attribute": attribute})
        return reqs

    def _post(self, endpoint: JolokiaEndpoint, body: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answer = endpoint.request(body=body, timeout_s=self.timeout_s)
        if not isinstance(answer, list) or len(answer) != len(body):
            raise ClusterError(f"Jolokia at {endpoint.url} answered a bulk request of {len(body)} reads with "
                               f"{type(answer).__name__} {str(answer)[:200]}")
        return answer

    def _readings(self, node: str, when: Any, answers: list[dict[str, Any]]) -> tuple[list[Reading], list[str]]:
        out: list[Reading] = []
        problems: list[str] = []

        def ok(answer: dict[str, Any]) -> bool:
            if answer.get("status") == 200:
                return True
            mbean = (answer.get("request") or {}).get("mbean", "?")
            problems.append(f"{mbean}: {answer.get('error') or answer.get('status')}")
            return False

        it = iter(answers)
        gc = next(it)
        if ok(gc):
            collectors = gc["value"].values()
            out.append(Reading(when, node, "gc_count", float(sum(c["CollectionCount"] for c in collectors))))
            out.append(Reading(when, node, "gc_time_ms", float(sum(c["CollectionTime"] for c in collectors))))
        for metric, _, _ in _NODE_READS:
            answer = next(it)
            if ok(answer):
                out.append(Reading(when, node, metric, _scalar(answer["value"])))
        dropped = next(it)
        if ok(dropped):
            out.append(Reading(when, node, "dropped_messages",
                               float(sum(_scalar(v) for v in dropped["value"].values()))))
        for ks, t in self.tables:
            for metric, _, _ in _TABLE_READS:
                answer = next(it)
                if ok(answer):
                    out.append(Reading(when, node, table_metric(metric, ks, t), _scalar(answer["value"])))
            levels = next(it)
            if ok(levels) and levels["value"] is not None:
                for level, count in enumerate(levels["value"]):
                    out.append(Reading(when, node, level_metric(level, ks, t), float(count)))
        if self.pools:
            for what in _POOL_MBEANS:
                answer = next(it)
                if ok(answer):
                    for mbean, value in sorted(answer["value"].items()):
                        pool = _prop(mbean, "scope")
                        if pool:
                            out.append(Reading(when, node, pool_metric(pool, what), _scalar(value)))
        return out, problems

    def read(self, node: NodeRef) -> list[Reading]:
        """All of this source's metrics for one node: ClusterError when the agent cannot be read,
        PartialRead (with the values that were read) when single reads failed."""
        when = utc_now()
        answers = self._post(self.endpoint_for(node), self.requests())
        try:
            readings, problems = self._readings(node.name, when, answers)
        except (KeyError, TypeError, ValueError, AttributeError, StopIteration) as exc:
            raise ClusterError(f"Jolokia on {node.name} answered in a shape this sampler does not know "
                               f"({type(exc).__name__}: {exc})") from None
        if problems:
            raise PartialRead(readings, f"Jolokia on {node.name}: " + "; ".join(problems))
        return readings

    def sample(self, nodes: Sequence[NodeRef]) -> list[Outcome]:
        return each_node(nodes, self.read)

