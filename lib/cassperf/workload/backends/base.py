"""The engine's backend interface: connect, prepare, execute (awaitable), classify errors.

A backend lives inside one worker process and one asyncio event loop. ``prepare(cql)`` returns
an *executor*: a plain callable taking the bound values (a list) and returning an awaitable, so
the engine's hot loop is ``await execute(values)`` with no extra layer per op.
"""

from __future__ import annotations

import importlib
import os
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassperf.cluster.tls import TlsOptions
from cassperf.errors import CassperfError

#: Error kinds counted per interval (client-side timeouts, lost connections and anything
#: else are "other"; the first message of each exception type is kept as an example).
ERROR_KINDS: tuple[str, ...] = ("write_timeout", "read_timeout", "unavailable", "other")

Executor = Callable[[list[Any]], Awaitable[Any]]

#: name -> module; "auto" tries them in this order.
BACKENDS: dict[str, str] = {
    "acsylla": "cassperf.workload.backends.acsylla_backend",
    "driver": "cassperf.workload.backends.driver_backend",
}


class BackendError(CassperfError):
    """A backend that cannot be loaded or cannot connect."""


@dataclass(frozen=True)
class Target:
    """Where to send load: what a worker process needs of a ClusterHandle (picklable).

    Credentials are never carried: ``username_env``/``password_env`` name environment
    variables the worker reads itself (as RemoteCluster does), or ``credentials_file`` names the
    0600 file of an embedded cluster's role (LocalCluster.credentials_file). ``tls``: what the
    client trusts (the same TlsOptions for a user's cluster and an embedded one), None for
    plaintext."""

    contact_points: tuple[str, ...]
    port: int = 9042
    local_dc: str | None = None
    username_env: str | None = None
    password_env: str | None = None
    tls: TlsOptions | None = None
    request_timeout_s: float = 12.0
    credentials_file: str | None = None

    @classmethod
    def of(cls, handle: Any, local_dc: str | None = None) -> Target:
        """From a ClusterHandle (LocalCluster, RemoteCluster). ``local_dc`` (a WorkloadSpec's)
        overrides the handle's: the client routes DC-aware to that DC's nodes (token-aware
        within it) and, where the handle can say which nodes are in it (``dc_contact_points``),
        takes those as contact points, so that a client of dc2 never first connects across the
        inter-DC link."""
        dc = local_dc or handle.local_dc
        points = list(handle.contact_points)
        in_dc = getattr(handle, "dc_contact_points", None)
        if local_dc and callable(in_dc):
            points = list(in_dc(local_dc)) or points
        tls = getattr(handle, "tls", None)
        credentials_file = getattr(handle, "credentials_file", None)
        return cls(tuple(points), int(handle.port), dc,
                   getattr(handle, "username_env", None), getattr(handle, "password_env", None), tls,
                   credentials_file=str(credentials_file) if credentials_file is not None else None)

    def credentials(self) -> tuple[str, str] | None:
        """(user, password) to log in with: from credentials_file when set, else from the
        environment variables named; None when there are none."""
        if self.credentials_file is not None:
            from cassperf.cluster.access import read_cql_credentials

            role = read_cql_credentials(Path(self.credentials_file))
            return role.user, role.password
        user = os.environ.get(self.username_env) if self.username_env else None
        if not user:
            return None
        password = os.environ.get(self.password_env or "", "")
        return user, password


class Backend(ABC):
    """One connection pool to the cluster, in one worker process."""

    name: str = "?"
    #: (exception class, kind) pairs tried in order by ``error_kind``: the driver's server-side
    #: timeouts and unavailables; every other exception is "other".
    error_kinds: tuple[tuple[type[BaseException], str], ...] = ()
    #: How many paced (fixed/throttle) ops/s one worker process of this backend sustains
    #: cheaply here (bench/engine.py); the engine's default process count follows it.
    paced_ops_s_per_process: int = 2_000

    @abstractmethod
    async def connect(self, target: Target, cl: str, keyspace: str, concurrency: int,
                      connections_per_host: int | None = None) -> None:
        """Open sessions: token-aware, DC-aware (target.local_dc), at consistency level ``cl``;
        ``connections_per_host`` None keeps the backend's default (1 per host)."""

    @abstractmethod
    async def prepare(self, cql: str) -> Executor:
        """Prepare a statement; return the executor for its bound values."""

    def error_kind(self, exc: BaseException) -> str:
        """One of ERROR_KINDS: the kind of the first ``error_kinds`` class ``exc`` is an instance
        of, else "other"."""
        for cls, kind in self.error_kinds:
            if isinstance(exc, cls):
                return kind
        return "other"

    @staticmethod
    @abstractmethod
    def row_count(result: Any) -> int:
        """Rows in what an executor's awaitable returned (a read's first page; 0 for a write)."""

    @abstractmethod
    async def close(self) -> None: ...

    @staticmethod
    @abstractmethod
    def version() -> str:
        """'acsylla 1.2.0', 'cassandra-driver 3.30.1', ..."""


def load(name: str) -> type[Backend]:
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}; known: auto, {', '.join(BACKENDS)}")
    try:
        module = importlib.import_module(BACKENDS[name])
    except ImportError as exc:
        raise BackendError(f"backend {name} cannot be imported: {exc}") from exc
    return module.BACKEND  # type: ignore[no-any-return]


def available() -> list[str]:
    """Backends that import here, in preference order."""
    out = []
    for name in BACKENDS:
        try:
            load(name)
        except BackendError:
            continue
        out.append(name)
    return out


def resolve(name: str) -> str:
    """'auto' -> the first importable backend (acsylla, then driver); both speak TLS."""
    if name != "auto":
        load(name)
        return name
    for candidate in BACKENDS:
        try:
            load(candidate)
        except BackendError:
            continue
        return candidate
    raise BackendError("no backend can be imported (install acsylla or cassandra-driver)")


def create(name: str) -> Backend:
    return load(name)()
