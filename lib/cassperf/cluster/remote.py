"""A cluster the user names: contact points, port, local DC, credentials from environment
variables (never from notebook parameters), TLS options.

Environment:
  CASSPERF_USERNAME / CASSPERF_PASSWORD   credentials (names overridable per cluster); a cluster
                                          that does not ask for them gets a warning, once
                                          (ClusterHandle: UnusedCredentialsWarning)
  CASSPERF_SSL_CA, CASSPERF_SSL_CERT, CASSPERF_SSL_KEY   TLS files (optional)

nodetool is reached through $CASSANDRA_HOME/bin/nodetool or `nodetool` on PATH, against the
node's address and JMX port (7199); a ToolError says so when neither exists. `jmx_problem()`
says in one line why nodetool cannot reach the nodes (no nodetool here, or the first node's JMX
port not answering from here), so what needs JMX says what it did without (the sampler, the
cold-cache step) or refuses before it starts (03's garbagecollect). No Jolokia agent is assumed
on a user's cluster (ClusterSampler(jolokia_url=...) names one).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from cassperf.cluster.base import ClusterHandle, CredentialsProvider
from cassperf.cluster.tls import TlsOptions
from cassperf.errors import ConfigError, ToolError


class RemoteCluster(ClusterHandle):
    def __init__(self, contact_points: list[str] | str, port: int = 9042, local_dc: str | None = None,
                 username_env: str = "CASSPERF_USERNAME", password_env: str = "CASSPERF_PASSWORD",
                 tls: TlsOptions | None = None, jmx_port: int = 7199) -> None:
        super().__init__()
        points = [p.strip() for p in (contact_points.split(",") if isinstance(contact_points, str) else contact_points)]
        points = [p for p in points if p]
        if not points:
            raise ConfigError("contact_points is empty; name at least one node address, e.g. '10.0.0.5,10.0.0.6'")
        self._contact_points = points
        self._port = int(port)
        self._local_dc = local_dc
        self.username_env = username_env
        self.password_env = password_env
        self.tls = tls if tls is not None else TlsOptions.from_env()
        self.jmx_port = jmx_port
        self._jmx_problem: tuple[str | None] | None = None       # (answer,) once asked

    @property
    def contact_points(self) -> list[str]:
        return list(self._contact_points)

    @property
    def port(self) -> int:
        return self._port

    @property
    def local_dc(self) -> str | None:
        return self._local_dc

    @property
    def description(self) -> dict[str, Any]:
        # credentials are never described; only which variables hold them
        return {**super().description, "auth_from_env": [self.username_env, self.password_env]
                if os.environ.get(self.username_env) else None, "tls": self.tls is not None}

    def credential_env(self) -> tuple[str, str]:
        return self.username_env, self.password_env

    def _driver_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        user = os.environ.get(self.username_env)
        if user:
            password = os.environ.get(self.password_env)
            if password is None:
                raise ConfigError(f"{self.username_env} is set but {self.password_env} is not; export both")
            kwargs["auth_provider"] = CredentialsProvider(user, password)
        if self.tls is not None:
            kwargs["ssl_context"] = self.tls.context()
        return kwargs

    def _nodetool_exe(self) -> str:
        home = os.environ.get("CASSANDRA_HOME")
        if home and (Path(home) / "bin" / "nodetool").exists():
            return str(Path(home) / "bin" / "nodetool")
        found = shutil.which("nodetool")
        if not found:
            raise ToolError(["nodetool"], None, "", "",
                            hint="no nodetool for this remote cluster: set CASSANDRA_HOME to a Cassandra install "
                                 "or put nodetool on PATH")
        return found

    def jmx_problem(self, timeout_s: float = 3.0) -> str | None:
        """Why nodetool cannot reach the nodes from here (no nodetool; the first contact point's
        JMX port refusing or silent within `timeout_s`), one line; None when it can. Asked once."""
        if self._jmx_problem is None:
            self._jmx_problem = (self._find_jmx_problem(timeout_s),)
        return self._jmx_problem[0]

    def _find_jmx_problem(self, timeout_s: float) -> str | None:
        try:
            self._nodetool_exe()
        except ToolError:
            return "no nodetool here (CASSANDRA_HOME unset and none on PATH)"
        host = self.contact_points[0]
        try:
            with socket.create_connection((host, self.jmx_port), timeout=timeout_s):
                return None
        except TimeoutError:
            return f"JMX port {self.jmx_port} of {host} did not answer within {timeout_s:g} s"
        except OSError as exc:
            return f"JMX port {self.jmx_port} of {host}: {(exc.strerror or str(exc)).lower()}"

    def nodetool(self, node: str | int, *args: str, timeout: float = 120.0) -> str:
        """nodetool against `node`. JMX credentials (CASSPERF_JMX_USERNAME / _PASSWORD) go in a
        password file readable only by this user (`-pwf`), never on the command line, where any
        local user would see them in the process list."""
        host = node if isinstance(node, str) else self.contact_points[int(node) - 1]
        cmd = [self._nodetool_exe(), "-h", host, "-p", str(self.jmx_port)]
        user = os.environ.get("CASSPERF_JMX_USERNAME")
        with tempfile.TemporaryDirectory(prefix="cassperf-jmx-") as private:   # mode 0700
            if user:
                pwf = Path(private) / "jmx.password"
                fd = os.open(pwf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(f"{user} {os.environ.get('CASSPERF_JMX_PASSWORD', '')}\n")
                cmd += ["-u", user, "-pwf", str(pwf)]
            cmd += list(args)
            shown = [c if not c.startswith(private) else "<private password file>" for c in cmd]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise ToolError(shown, None, hint=f"nodetool did not answer within {timeout:.0f} s") from None
        if proc.returncode != 0:
            raise ToolError(shown, proc.returncode, proc.stdout, proc.stderr)
        return proc.stdout

def connect(contact_points: str | list[str] | None = None, *, topology: str = "dc1:1", name: str = "cassperf",
            **kwargs: Any) -> ClusterHandle:
    """The cluster an experiment runs against: the named one, or (naming none) the embedded
    LocalCluster `name` with `topology`, started (or reused) here."""
    if contact_points:
        return RemoteCluster(contact_points, **kwargs)
    from cassperf.cluster.local import LocalCluster
    return LocalCluster(name, topology, **kwargs).start()
