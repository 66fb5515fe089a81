"""CQL virtual tables (Cassandra 4.0+): what they have, read from each node over CQL.

    pool_<p>_pending / _active / _blocked / _completed
                          system_views.thread_pools  pending_tasks, active_tasks, blocked_tasks,
                          completed_tasks (one row per pool)
    compactions_active    system_views.sstable_tasks  number of rows (every running SSTable
                          operation: compaction, garbagecollect, cleanup, ...)

Virtual tables are node-local, so each query is sent to the node it is about (the driver's
`execute(..., host=)`), through a driver connection of the sampler's own whose load balancing
reaches every node in every DC. There is no GC metric and no per-table SSTable count among
them (Cassandra 5.0): those come from JMX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cassandra import DriverException, RequestExecutionException, RequestValidationException
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable, Session
from cassandra.policies import RoundRobinPolicy
from cassandra.protocol import ErrorMessage
from cassandra.query import tuple_factory

from cassperf.errors import ClusterError
from cassperf.sampler.base import NodeRef, Outcome, Reading, Source, each_node, utc_now
from cassperf.sampler.names import pool_metric

#: what the driver raises for a node down, a timeout, or an error the server sent
_DRIVER_ERRORS = (DriverException, RequestExecutionException, RequestValidationException, NoHostAvailable,
                  ErrorMessage)
POOLS_CQL = "SELECT name, pending_tasks, active_tasks, blocked_tasks, completed_tasks FROM system_views.thread_pools"
TASKS_CQL = "SELECT kind FROM system_views.sstable_tasks"
NEEDED_TABLES = ("thread_pools", "sstable_tasks")


class VirtualTablesSource(Source):
    """Thread pools and running SSTable tasks from system_views. `cluster` is any ClusterHandle
    (its driver_cluster() gives the connection); call `available()` before sampling."""

    name = "virtual_tables"

    def __init__(self, cluster: Any, pools: bool = True, tasks: bool = True, timeout_s: float = 5.0) -> None:
        self.cluster = cluster
        self.pools = pools
        self.tasks = tasks
        self.timeout_s = timeout_s
        self._driver: Cluster | None = None
        self._session: Session | None = None

    def session(self) -> Session:
        if self._session is None:
            profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=self.timeout_s,
                                       row_factory=tuple_factory)
            try:
                # it asks each node by host= and reads no table of the schema: without the schema and
                # token maps a connection cost 30 ms instead of 85-125 ms and a third of the CPU
                self._driver = self.cluster.driver_cluster(execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                                                           schema_metadata_enabled=False, token_metadata_enabled=False)
                self._session = self._driver.connect()
            except _DRIVER_ERRORS as exc:
                self.close()
                raise ClusterError(f"virtual tables: cannot connect: {exc}") from None
        return self._session

    def available(self) -> bool:
        """True when the cluster has the system_views tables this source reads (4.0+)."""
        try:
            rows = self.session().execute(
                "SELECT table_name FROM system_virtual_schema.tables WHERE keyspace_name = 'system_views'")
        except (ClusterError, *_DRIVER_ERRORS):
            return False
        names = {r[0] for r in rows}
        return all(t in names for t in NEEDED_TABLES)

    def _host(self, node: NodeRef) -> Any:
        assert self._driver is not None
        for host in self._driver.metadata.all_hosts():
            if str(host.address) == node.address:
                return host
        raise ClusterError(f"virtual tables: the driver knows no host {node.address} ({node.name})")

    def read(self, node: NodeRef) -> list[Reading]:
        session = self.session()
        host = self._host(node)
        out: list[Reading] = []
        try:
            if self.pools:
                when = utc_now()
                for name, pending, active, blocked, completed in session.execute(POOLS_CQL, host=host):
                    for what, value in (("pending", pending), ("active", active), ("blocked", blocked),
                                        ("completed", completed)):
                        if value is not None:
                            out.append(Reading(when, node.name, pool_metric(name, what), float(value)))
            if self.tasks:
                when = utc_now()
                running = len(list(session.execute(TASKS_CQL, host=host)))
                out.append(Reading(when, node.name, "compactions_active", float(running)))
        except _DRIVER_ERRORS as exc:
            raise ClusterError(f"virtual tables on {node.name}: {type(exc).__name__}: {exc}") from None
        return out

    def sample(self, nodes: Sequence[NodeRef]) -> list[Outcome]:
        return each_node(nodes, self.read)

    def close(self) -> None:
        if self._driver is not None:
            self._driver.shutdown()
        self._driver = None
        self._session = None
