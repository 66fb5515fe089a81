"""Client hosts reached over SSH (``client_hosts``): how this machine logs in to them, and how
the Dask processes distributed's ``SSHCluster`` starts there get their TLS material and the
cluster's role without either appearing on a command line.

SSH (asyncssh, which SSHCluster uses): keys only, host keys pinned. The options are OpenSSH
client configuration: ``CASSPERF_SSH_CONFIG`` names a config file (``Host``, ``HostName``,
``Port``, ``User``, ``IdentityFile``, ``UserKnownHostsFile``); without it asyncssh reads
``~/.ssh/config``, ``~/.ssh/known_hosts`` and ``~/.ssh/id_*`` (or the agent). A host whose key is
not in a known_hosts file is refused ("Host key is not trusted"): nothing here accepts any host key.

Dask's TLS on the hosts: SSHCluster passes the notebook's Dask configuration to each remote
process on its command line (``DASK_INTERNAL_INHERIT_CONFIG``). So that configuration carries
only *paths*: :func:`push_files` writes the experiment's certificate, key and CA over the SSH
channel's stdin into a 0700 folder (files 0600) at the same path on every host, and
:func:`tls_config` points the remote scheduler and workers at them. :func:`remove_folder` takes
them away when the placement ends.

The cluster's CQL role travels as a task argument (:class:`Role`) over Dask's mutual TLS, and is
put in the worker's environment (``CASSPERF_USERNAME`` / ``CASSPERF_PASSWORD``) only while its
client runs (:func:`role_environment`); its repr hides the password, so a failed task's log line
does not show it.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cassperf.errors import ClusterError, ConfigError

#: environment variable naming the OpenSSH client config file for the client hosts
CONFIG_ENV = "CASSPERF_SSH_CONFIG"
#: seconds to wait for an SSH login to a client host
CONNECT_TIMEOUT_S = 20


@dataclass(frozen=True)
class Role:
    """A CQL role for the clients on the hosts (the password is left out of repr)."""

    user: str
    password: str = field(repr=False)


def connect_options(extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """asyncssh.connect options for the client hosts: the config file of ``CASSPERF_SSH_CONFIG``
    when set (ConfigError when it is missing), then ``extra``. ``known_hosts=None`` (any host
    key) is refused."""
    options: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S}
    path = os.environ.get(CONFIG_ENV)
    if path:
        if not Path(path).is_file():
            raise ConfigError(f"{CONFIG_ENV}={path}: no such file; expected an OpenSSH client config "
                              f"(Host, HostName, User, IdentityFile, UserKnownHostsFile), or unset it for ~/.ssh/config")
        options["config"] = [path]
    options.update(extra or {})
    if "known_hosts" in options and options["known_hosts"] is None:
        raise ConfigError("ssh connect_options known_hosts=None would accept any host key; give the client hosts' "
                          "keys in a known_hosts file (UserKnownHostsFile)")
    return options


def _run(coro: Any) -> Any:
    """Run a coroutine to its end from synchronous code, also inside a running event loop (a
    Jupyter kernel's): in a thread of its own."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def _each(hosts: Sequence[str], options: Mapping[str, Any], command: str, stdin: str | None = None) -> None:
    import asyncssh

    async def one(host: str) -> None:
        try:
            async with asyncssh.connect(host, **options) as conn:
                done = await conn.run(command, input=stdin, check=False)
        except (OSError, asyncssh.Error) as exc:
            raise ClusterError(f"client host {host}: ssh failed: {exc}; check {CONFIG_ENV} or ~/.ssh/config (User, "
                               f"IdentityFile, the host's key in a known_hosts file)") from None
        if done.exit_status != 0:
            raise ClusterError(f"client host {host}: `{command.split(';')[0]} ...` exited {done.exit_status}: "
                               f"{str(done.stderr).strip()[:200]}")
    await asyncio.gather(*(one(h) for h in dict.fromkeys(hosts)))


def push_files(hosts: Sequence[str], options: Mapping[str, Any], folder: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` (name -> content) into ``folder`` (0700, made when missing, ours) on every
    host, each file 0600; the content goes over the SSH channel's stdin, never a command line."""
    q = shlex.quote(str(folder))
    for name, data in files.items():
        target = shlex.quote(str(folder / name))
        command = (f"umask 077; mkdir -p {q} && test -O {q} && chmod 700 {q} && cat > {target}.part && "
                   f"mv -f {target}.part {target}")
        _run(_each(hosts, options, command, data.decode()))


def remove_folder(hosts: Sequence[str], options: Mapping[str, Any], folder: Path) -> None:
    """Remove ``folder`` on every host that can be reached (what :func:`push_files` wrote; a
    host that refused the login has none)."""
    async def each() -> None:
        await asyncio.gather(*(_each([h], options, f"rm -rf {shlex.quote(str(folder))}") for h in dict.fromkeys(hosts)),
                             return_exceptions=True)
    _run(each())


def tls_config(ca: Path, cert: Path, key: Path) -> dict[str, Any]:
    """Dask configuration pointing every role (scheduler, worker, client) at these PEM paths,
    encryption required: what the remote processes read at start."""
    out: dict[str, Any] = {"distributed.comm.require-encryption": True, "distributed.comm.tls.ca-file": str(ca)}
    for role in ("scheduler", "worker", "client"):
        out[f"distributed.comm.tls.{role}.cert"] = str(cert)
        out[f"distributed.comm.tls.{role}.key"] = str(key)
    return out


@contextmanager
def role_environment(role: Role | None, names: tuple[str, str] = ("CASSPERF_USERNAME", "CASSPERF_PASSWORD")) \
        -> Iterator[None]:
    """The role in this process's environment for the block (the clients and their worker
    processes read it there), the previous values back after."""
    if role is None:
        yield
        return
    old = {n: os.environ.get(n) for n in names}
    os.environ[names[0]], os.environ[names[1]] = role.user, role.password
    try:
        yield
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
