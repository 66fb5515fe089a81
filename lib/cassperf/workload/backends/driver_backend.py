"""cassandra-driver backend (also runs on scylla-driver, which installs the same ``cassandra``
package): the fallback hot path.

Prepared statements through ``session.execute_async``; token-aware over DC-aware round robin;
no retries (FallthroughRetryPolicy: an op is tried once, its failure counted by kind);
rows as plain tuples (``tuple_factory`` halves read CPU against named tuples). The driver's I/O
thread completes a ResponseFuture; its callback hands the outcome to the worker's event loop
with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import cassandra
from cassandra import ConsistencyLevel, ReadTimeout, Unavailable, WriteTimeout
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import DCAwareRoundRobinPolicy, FallthroughRetryPolicy, TokenAwarePolicy
from cassandra.query import tuple_factory

from cassperf.workload.backends.base import Backend, BackendError, Executor, Target

_KINDS: tuple[tuple[type[BaseException], str], ...] = (
    (WriteTimeout, "write_timeout"), (ReadTimeout, "read_timeout"), (Unavailable, "unavailable"),
)


class DriverBackend(Backend):
    name = "driver"
    paced_ops_s_per_process = 2_000
    error_kinds = _KINDS

    def __init__(self) -> None:
        self._cluster: Cluster | None = None
        self._session: Any = None

    @staticmethod
    def version() -> str:
        """The distribution that owns the imported ``cassandra`` package (scylla-driver and
        cassandra-driver install the same package name)."""
        from pathlib import Path
        site = Path(cassandra.__file__).resolve().parents[1]
        for dist in ("scylla_driver", "cassandra_driver"):
            if any(site.glob(f"{dist}-*.dist-info")):
                return f"{dist.replace('_', '-')} {cassandra.__version__}"
        return f"cassandra {cassandra.__version__}"

    async def connect(self, target: Target, cl: str, keyspace: str, concurrency: int,
                      connections_per_host: int | None = None) -> None:
        profile = ExecutionProfile(
            load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=target.local_dc)),
            consistency_level=ConsistencyLevel.name_to_value[cl],
            request_timeout=target.request_timeout_s, row_factory=tuple_factory,
            retry_policy=FallthroughRetryPolicy())  # tried once: failures counted as the server said
        kwargs: dict[str, Any] = {"contact_points": list(target.contact_points), "port": target.port,
                                  "execution_profiles": {EXEC_PROFILE_DEFAULT: profile}, "connect_timeout": 10}
        creds = target.credentials()
        if creds:
            kwargs["auth_provider"] = PlainTextAuthProvider(*creds)
        if target.tls is not None:
            kwargs["ssl_context"] = target.tls.context()
        # connections_per_host is not applied: with protocol v3+ the driver keeps one
        # connection per host (set_core_connections_per_host raises for v3+)
        self._cluster = Cluster(**kwargs)
        loop = asyncio.get_running_loop()
        try:
            self._session = await loop.run_in_executor(None, self._cluster.connect)
        except Exception as exc:  # noqa: BLE001 - NoHostAvailable and friends
            raise BackendError(f"cassandra-driver could not connect to {', '.join(target.contact_points)}:"
                               f"{target.port}: {type(exc).__name__}: {exc}") from exc

    async def prepare(self, cql: str) -> Executor:
        loop = asyncio.get_running_loop()
        prepared = await loop.run_in_executor(None, self._session.prepare, cql)
        execute_async = self._session.execute_async
        call_soon = loop.call_soon_threadsafe

        def _ok(rows: Any, fut: asyncio.Future) -> None:
            call_soon(_set_result, fut, rows)

        def _err(exc: BaseException, fut: asyncio.Future) -> None:
            call_soon(_set_exception, fut, exc)

        def execute(values: list[Any]) -> asyncio.Future:
            fut = loop.create_future()
            execute_async(prepared, values).add_callbacks(_ok, _err, callback_args=(fut,), errback_args=(fut,))
            return fut

        return execute

    @staticmethod
    def row_count(result: Any) -> int:
        return len(result) if result else 0     # the first page's rows (None for a write)

    async def close(self) -> None:
        if self._cluster is not None:
            self._cluster.shutdown()
            self._cluster = None


def _set_result(fut: asyncio.Future, rows: Any) -> None:
    if not fut.done():
        fut.set_result(rows)


def _set_exception(fut: asyncio.Future, exc: BaseException) -> None:
    if not fut.done():
        fut.set_exception(exc)


BACKEND = DriverBackend
