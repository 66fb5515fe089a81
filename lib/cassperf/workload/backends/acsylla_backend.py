"""acsylla (the DataStax C++ driver) backend: the fastest hot path measured here.

One C++ driver session per worker process with one I/O thread; prepared statements; token-aware
routing (the driver's default, with replica shuffling) over DC-aware load balancing when the
target names a local DC; the fall-through retry policy (an op is tried once). ``execute`` returns the driver's coroutine, awaited directly.
TLS from the target's TlsOptions (ssl_options): the CA file's certificates trusted, the node's
address checked against its certificate (PEER_IDENTITY) unless verification is off.
"""

from __future__ import annotations

import logging
from typing import Any

import acsylla
from acsylla import errors as acs_errors

from cassperf.cluster.tls import TlsOptions
from cassperf.workload.backends.base import Backend, BackendError, Executor, Target

_KINDS: tuple[tuple[type[BaseException], str], ...] = (
    (acs_errors.CassErrorServerWriteTimeout, "write_timeout"),
    (acs_errors.CassErrorServerReadTimeout, "read_timeout"),
    (acs_errors.CassErrorServerUnavailable, "unavailable"),
)


#: Apache Cassandra has no shards; the (ScyllaDB-maintained) C++ driver says so once per
#: connection: "Could not retrieve sharding info from connection to ... WITHOUT SHARD-AWARENESS."
_NOISE = "Could not retrieve sharding info"


#: The C++ driver's write-coalescing timer (its default is 200), see connect().
COALESCE_DELAY_US = 1000


class _DropShardNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return _NOISE not in record.getMessage()


class AcsyllaBackend(Backend):
    name = "acsylla"
    paced_ops_s_per_process = 10_000
    error_kinds = _KINDS

    def __init__(self) -> None:
        self._session: Any = None

    @staticmethod
    def version() -> str:
        return f"acsylla {acsylla.version.__version__}"

    async def connect(self, target: Target, cl: str, keyspace: str, concurrency: int,
                      connections_per_host: int | None = None) -> None:
        kwargs: dict[str, Any] = {
            "port": target.port, "consistency": cl, "token_aware_routing": True,
            "request_timeout": target.request_timeout_s, "connect_timeout": 10.0, "log_level": "error",
            "num_threads_io": 1, "queue_size_io": max(8192, 2 * concurrency),
            "core_connections_per_host": connections_per_host or 1,
            # the driver's I/O thread re-arms this timer while requests keep coming (six empty
            # rounds before it sleeps): at the default 200 us that is ~5,000 wake-ups/s at any
            # rate. 1000 us costs less client CPU per op and a lower service p50 at a fixed rate,
            # and as much throughput unlimited (measured alternately against 200 on one node:
            # docs/measurements.md).
            "coalesce_delay_us": COALESCE_DELAY_US,
            # no retries: every failure is counted as what the server said (the default policy
            # would retry an Unavailable on the next host and report "no hosts available")
            "retry_policy": "fallthrough",
        }
        if target.local_dc:
            kwargs["load_balance_dc_aware"] = target.local_dc
        creds = target.credentials()
        if creds:
            kwargs["username"], kwargs["password"] = creds
        if target.tls is not None:
            kwargs.update(ssl_options(target.tls))
        logger = logging.getLogger("acsylla")
        if not any(isinstance(f, _DropShardNotice) for f in logger.filters):
            logger.addFilter(_DropShardNotice())
        cluster = acsylla.create_cluster(list(target.contact_points), **kwargs)
        try:
            self._session = await cluster.create_session()
        except acs_errors.CassException as exc:
            raise BackendError(f"acsylla could not connect to {', '.join(target.contact_points)}:"
                               f"{target.port}: {type(exc).__name__}: {exc}") from exc

    async def prepare(self, cql: str) -> Executor:
        prepared = await self._session.create_prepared(cql)
        execute, bind = self._session.execute, prepared.bind
        return lambda values: execute(bind(values))

    @staticmethod
    def row_count(result: Any) -> int:
        return result.count()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def ssl_options(tls: TlsOptions) -> dict[str, Any]:
    """acsylla.create_cluster's SSL arguments for `tls`: PEM texts (the C++ driver takes the
    certificates themselves, not paths), identity checked unless tls.verify is off."""
    options: dict[str, Any] = {"ssl_enabled": True,
                               "ssl_verify_flags": acsylla.SSLVerifyFlags.PEER_IDENTITY if tls.verify
                               else acsylla.SSLVerifyFlags.NONE}
    for arg, which in (("ssl_trusted_cert", "ca_file"), ("ssl_cert", "cert_file"), ("ssl_private_key", "key_file")):
        text = tls.read(which)
        if text is not None:
            options[arg] = text
    return options


BACKEND = AcsyllaBackend
