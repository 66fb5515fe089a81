"""What experiments see of any cluster, local or remote: a driver session, the topology, the
Cassandra version, and nodetool where reachable.

Credentials exported for a cluster that does not ask for them (a remote one with
AllowAllAuthenticator) are not used, nor are they for an embedded cluster (it has a role of its
own); the first session of a handle says so once (UnusedCredentialsWarning). How it can tell: the driver makes an authenticator for
every connection, but asks it for a response only when the node answers STARTUP with
AUTHENTICATE; `CredentialsProvider` records whether that happened. The driver's own notice of
it (a WARNING log line per connection) is dropped in favour of that one warning.
"""

from __future__ import annotations

import logging
import os
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from cassandra import AuthenticationFailed, OperationTimedOut
from cassandra.auth import PlainTextAuthenticator, PlainTextAuthProvider
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable, Session
from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

from cassperf.cluster.jolokia import JolokiaEndpoint
from cassperf.errors import ClusterError

#: Where credentials are read from unless a handle names other variables (RemoteCluster can).
USERNAME_ENV = "CASSPERF_USERNAME"
PASSWORD_ENV = "CASSPERF_PASSWORD"

#: every driver_cluster's timeouts, s. The control connection's first queries (system.local, peers,
#: schema) took over the driver's 2 s on a node that had just become CQL-ready on 2 cores busy
#: starting more nodes: 03's and 04's notebook tests failed on it beside another node test. (The
#: engine's driver backend keeps connect_timeout alone: with this control-connection timeout there,
#: test_node_resources' RF-1 run counted 0.77 local writes per write instead of 1.0; cause not found.)
DRIVER_TIMEOUTS_S: dict[str, float] = {"connect_timeout": 10, "control_connection_timeout": 10}


class UnusedCredentialsWarning(UserWarning):
    """Credentials are exported, but the cluster did not ask for any: they are not used."""


class _DriverAuthNoticeFilter(logging.Filter):
    """Drops cassandra-driver's 'An authentication challenge was not sent, this is suspicious ...'
    (WARNING, once per connection: three for one node) that UnusedCredentialsWarning replaces."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("An authentication challenge was not sent")


logging.getLogger("cassandra.connection").addFilter(_DriverAuthNoticeFilter())


class _RecordedAuthenticator(PlainTextAuthenticator):
    def __init__(self, provider: "CredentialsProvider") -> None:
        super().__init__(provider.username, provider.password)
        self._provider = provider

    def initial_response(self) -> Any:
        self._provider.asked = True          # called only after the node sent AUTHENTICATE
        return super().initial_response()


class CredentialsProvider(PlainTextAuthProvider):
    """PlainTextAuthProvider that records (`asked`) whether any node asked for the credentials."""

    def __init__(self, username: str, password: str) -> None:
        super().__init__(username, password)
        self.asked = False

    def __repr__(self) -> str:               # never the password
        return f"CredentialsProvider(username={self.username!r}, asked={self.asked})"

    def new_authenticator(self, host: str) -> PlainTextAuthenticator:
        return _RecordedAuthenticator(self)


@dataclass(frozen=True)
class LocalNodeRef:
    """A node whose JVM runs on this machine: `pid()` gives its pid (None when not running);
    `storage` the folders it keeps its data and commit log in (the sampler watches their disks)."""

    name: str
    address: str
    pid: Callable[[], int | None]
    storage: tuple[str, ...] = ()


def _reason(err: BaseException | str) -> tuple[str, str]:
    """(kind, what happened) of one node's connection error: kind is auth, tls or network."""
    text = str(err)
    if "requires authentication" in text:
        return "auth", "the node asks for a username and password and none were given"
    if isinstance(err, AuthenticationFailed) or "Authentication" in text or "Bad credentials" in text:
        return "auth", "the node refused the username and password (bad credentials)"
    if "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text:
        return "tls", "its TLS certificate is not signed by a CA this client trusts (certificate verify failed)"
    if "IP address mismatch" in text or "doesn't match" in text or "Hostname mismatch" in text:
        return "tls", "its TLS certificate names another address (hostname mismatch)"
    if "SSL" in text or "WRONG_VERSION_NUMBER" in text:
        return "tls", f"the TLS handshake failed ({text.split(']', 1)[-1].strip().rstrip(')').strip() or text})"
    for known in ("connection refused", "no route to host", "network is unreachable"):
        if known in text.lower():
            return "network", known
    if isinstance(err, OperationTimedOut):      # its text is only "errors=None, last_host=None"
        return "network", "it took the connection but did not answer the driver's first queries in time (timed out)"
    if "timed out" in text.lower():
        return "network", "no answer (timed out)"
    return "network", (getattr(err, "strerror", None) or text).lower()


HINTS = {"auth": "check CASSPERF_USERNAME / CASSPERF_PASSWORD (docs/guides/your-cluster.md)",
         "tls": "check that CASSPERF_SSL_CA names the CA that signed the nodes' certificates",
         "network": "check that the nodes are up and the contact points and port are right"}


def connect_error_line(contact_points: list[str], port: int, errors: Mapping[Any, BaseException | str]) -> str:
    """One line for a failed first connection: which node said what, and the one fix that
    matters (credentials before TLS before the network: a node that answered tells most)."""
    reasons = [(str(getattr(host, "address", host)).split(":")[0], *_reason(err)) for host, err in errors.items()]
    if not reasons:
        reasons = [(", ".join(contact_points), "network", "no node answered")]
    kinds = {kind for _, kind, _ in reasons}
    kind = next(k for k in ("auth", "tls", "network") if k in kinds)
    said = "; ".join(f"{host}: {text}" for host, k, text in reasons if k == kind)
    return f"cannot connect to {', '.join(contact_points)} port {port}: {said}; {HINTS[kind]}"


class ClusterHandle(ABC):
    """Common interface of LocalCluster and RemoteCluster."""

    def __init__(self) -> None:
        self._driver: Cluster | None = None
        self._sessions: dict[str | None, Session] = {}
        self._credentials_checked = False

    # -- what a subclass provides ------------------------------------------------------------
    @property
    @abstractmethod
    def contact_points(self) -> list[str]: ...

    @property
    @abstractmethod
    def port(self) -> int: ...

    @property
    @abstractmethod
    def local_dc(self) -> str | None: ...

    @abstractmethod
    def _driver_kwargs(self) -> dict[str, Any]:
        """Extra Cluster(...) arguments: auth provider, SSL context."""

    @abstractmethod
    def nodetool(self, node: str | int, *args: str, timeout: float = 120.0) -> str:
        """Run nodetool against one node; raise ToolError on failure."""

    def credential_env(self) -> tuple[str, str]:
        """Names of the environment variables credentials for this cluster would come from.
        A handle that passes none to the driver (LocalCluster) still names the defaults, so
        exported ones are reported as unused."""
        return USERNAME_ENV, PASSWORD_ENV

    # -- capabilities a subclass may have (the defaults: it has none) -------------------------
    def jolokia_endpoint(self, node: str | int) -> JolokiaEndpoint | None:
        """Where `node`'s Jolokia agent answers and the credential it asks for; None when the
        workbook knows of no agent on this cluster's nodes."""
        return None

    def local_nodes(self) -> list[LocalNodeRef] | None:
        """The nodes, when their JVMs run on this machine (names, addresses, pids); None when
        they run elsewhere (then the driver's hosts are the nodes)."""
        return None

    def jmx_problem(self) -> str | None:
        """Why nodetool (JMX) cannot reach this cluster's nodes, one line; None when it can.
        What needs JMX (nodetool garbagecollect, flushes, node metrics) asks this first and
        says what it did without, instead of failing once per node and call."""
        return None

    def nodetool_read(self, node: str | int, *args: str, timeout: float = 120.0) -> str:
        """nodetool for a command that only reads (the sampler's): run with read-only JMX
        access where the cluster has such a user, else as `nodetool()`."""
        return self.nodetool(node, *args, timeout=timeout)

    @property
    def description(self) -> dict[str, Any]:
        """What a manifest records of this cluster (never credentials)."""
        return {"kind": type(self).__name__, "contact_points": self.contact_points, "port": self.port,
                "local_dc": self.local_dc}

    # -- shared --------------------------------------------------------------------------------
    def driver_cluster(self, **overrides: Any) -> Cluster:
        """A new driver Cluster for this cluster (token-aware, DC-aware); the caller shuts it down."""
        kwargs: dict[str, Any] = {
            "contact_points": self.contact_points,
            "port": self.port,
            "execution_profiles": {EXEC_PROFILE_DEFAULT: ExecutionProfile(
                load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=self.local_dc)))},
            **DRIVER_TIMEOUTS_S,
        }
        kwargs.update(self._driver_kwargs())
        kwargs.update(overrides)
        return Cluster(**kwargs)

    def session(self, keyspace: str | None = None) -> Session:
        """A cached driver session (one driver Cluster per handle). A connection that fails leaves
        no driver behind: the driver shuts itself down when its control connection cannot connect,
        and a cached one would answer every later call "Cluster is already shut down"."""
        if self._driver is not None and self._driver.is_shutdown:
            self.close()
        if self._driver is None:
            self._driver = self.driver_cluster()
        if keyspace not in self._sessions:
            try:
                self._sessions[keyspace] = self._driver.connect(keyspace)
            except NoHostAvailable as exc:
                self.close()
                raise ClusterError(connect_error_line(self.contact_points, self.port, exc.errors)) from None
            except Exception:
                self.close()
                raise
            self._warn_if_credentials_unused()
        return self._sessions[keyspace]

    def _warn_if_credentials_unused(self) -> None:
        """Once per handle: an UnusedCredentialsWarning when credentials are exported but no node
        asked for them."""
        if self._credentials_checked or self._driver is None:
            return
        self._credentials_checked = True
        user_env, _ = self.credential_env()
        if not os.environ.get(user_env):
            return
        note = self._unused_credentials_note(user_env)
        if note:
            warnings.warn(note, UnusedCredentialsWarning, stacklevel=3)

    def _unused_credentials_note(self, user_env: str) -> str | None:
        """Why credentials exported in `user_env` were not used, or None when they were."""
        provider = self._driver.auth_provider if self._driver is not None else None
        if isinstance(provider, CredentialsProvider) and provider.asked:
            return None
        return (f"{user_env} is set, but {', '.join(self.contact_points)} port {self.port} did not ask for "
                f"credentials (the cluster runs without authentication), so they are not used")

    def close(self) -> None:
        """Close driver connections (does not stop any node)."""
        if self._driver is not None:
            self._driver.shutdown()
        self._driver = None
        self._sessions = {}

    def cassandra_version(self) -> str:
        row = self.session().execute("SELECT release_version FROM system.local").one()
        return str(row[0])

    def topology_frame(self) -> pd.DataFrame:
        """One row per node as the driver sees it: address, dc, rack, version, up, host_id."""
        self.session()
        assert self._driver is not None
        rows = []
        for host in self._driver.metadata.all_hosts():
            rows.append({"address": host.address, "datacenter": host.datacenter, "rack": host.rack,
                         "release_version": host.release_version, "up": bool(host.is_up),
                         "host_id": str(host.host_id)})
        return pd.DataFrame(rows).sort_values(["datacenter", "address"]).reset_index(drop=True)

    def schema_frame(self, include_system: bool = False) -> pd.DataFrame:
        """One row per table: keyspace, table, replication, compaction, compression."""
        self.session()
        assert self._driver is not None
        rows = []
        for ks_name, ks in sorted(self._driver.metadata.keyspaces.items()):
            if not include_system and ks_name.startswith("system"):
                continue
            replication = ks.replication_strategy.export_for_schema()  # e.g. "{'class': '...', 'dc1': '3'}"
            for table_name, table in sorted(ks.tables.items()):
                rows.append({"keyspace": ks_name, "table": table_name, "replication": replication,
                             "compaction": str(table.options.get("compaction", {}).get("class", "")),
                             "compression": str(table.options.get("compression", {}).get("class", "")),
                             "columns": len(table.columns)})
        return pd.DataFrame(rows, columns=["keyspace", "table", "replication", "compaction", "compression", "columns"])

    def __enter__(self) -> "ClusterHandle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
