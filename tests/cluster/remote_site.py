"""A Cassandra site the workbook reaches only over a network, for the tests of a named cluster.

Two network namespaces joined by one veth pair (no router, nothing on the host's interfaces):

    cpsite-<tag>   the site: 3 nodes (LocalCluster(tls=True), PasswordAuthenticator) listening
                   on 10.60.0.1-3 of its link `wan`; their JMX on the namespace's own loopback
    cpwb-<tag>     the workbook: 10.60.0.100 on its link `wan`; `cassperf report` runs here
                   (`ip netns exec`) and knows the site only by its addresses, a CA file and a
                   role's name and password, as a user knows their own cluster

The site's owner is a Python process started inside the site namespace (its cluster folder and
owner records under its own CASSPERF_DATA, kept until `stop()`); the workbook's data is another
folder. `stop()` stops the nodes from inside the site, ends whatever still runs in either
namespace and deletes both: it runs in the fixture's teardown, also when a test failed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cassperf.cluster.access import read_cql_credentials

NODES = ("10.60.0.1", "10.60.0.2", "10.60.0.3")
WORKBOOK = "10.60.0.100"
#: an address on the site's link that no node has (the unreachable contact point)
NOBODY = "10.60.0.9"
PREFIX_LEN = 24
NAME = "site"
#: first_address only sets the nodes' JMX ports (7199 + 60*256 + k) on the site's own loopback
JMX_BASE = "127.0.60.1"

_CLUSTER = (f"LocalCluster({NAME!r}, 'dc1:3', heap_mb=512, first_address={JMX_BASE!r}, node_addresses={list(NODES)!r}, "
            f"tls=True, jolokia=False, start_timeout_s=240)")
_START = ("from cassperf.cluster.local import LocalCluster\n"
          f"c = {_CLUSTER}\nc.start()\nc.keep('the remote-site test fixture')\nprint(c.root)\n")
_STOP = f"from cassperf.cluster.local import LocalCluster\n{_CLUSTER}.stop(kill=True)\n"


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


@dataclass
class RemoteSite:
    """The site and the workbook's namespace (module doc); `tag` keeps two test runs apart."""

    data: Path                       # the site's CASSPERF_DATA
    tag: str = field(default_factory=lambda: str(os.getpid()))

    @property
    def site_ns(self) -> str:
        return f"cpsite-{self.tag}"

    @property
    def workbook_ns(self) -> str:
        return f"cpwb-{self.tag}"

    @property
    def root(self) -> Path:
        return self.data / "clusters" / NAME

    @property
    def ca_file(self) -> Path:
        return self.root / "tls" / "ca.pem"

    def role(self) -> tuple[str, str]:
        """The CQL role the site's administrator hands the user: (name, password)."""
        cred = read_cql_credentials(self.root / "access" / "cql.credentials")
        return cred.user, cred.password

    def _python(self, code: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "CASSPERF_DATA": str(self.data)}
        for key in ("CASSPERF_USERNAME", "CASSPERF_PASSWORD", "CASSPERF_SSL_CA"):
            env.pop(key, None)
        return subprocess.run(["ip", "netns", "exec", self.site_ns, sys.executable, "-c", code], capture_output=True,
                              text=True, env=env, timeout=timeout_s)

    def start(self) -> "RemoteSite":
        """Make both namespaces and the link, then start the nodes inside the site."""
        self.stop()                                      # what a killed run of this tag left
        for ns in (self.site_ns, self.workbook_ns):
            ip("netns", "add", ns)
            ip("-n", ns, "link", "set", "lo", "up")
        ip("-n", self.site_ns, "link", "add", "wan", "type", "veth", "peer", "name", "wan", "netns", self.workbook_ns)
        for address in NODES:
            ip("-n", self.site_ns, "addr", "add", f"{address}/{PREFIX_LEN}", "dev", "wan")
        ip("-n", self.workbook_ns, "addr", "add", f"{WORKBOOK}/{PREFIX_LEN}", "dev", "wan")
        for ns in (self.site_ns, self.workbook_ns):
            ip("-n", ns, "link", "set", "wan", "up")
        proc = self._python(_START, timeout_s=900)
        if proc.returncode != 0:
            raise RuntimeError(f"the site did not start:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return self

    def workbook(self, argv: list[str]) -> list[str]:
        """`argv` run in the workbook's namespace."""
        return ["ip", "netns", "exec", self.workbook_ns, *argv]

    def stop(self) -> list[str]:
        """Stop the nodes, end every process left in either namespace, delete the namespaces;
        what was removed."""
        have = set(ip("netns", "list").stdout.split())
        removed = []
        if self.site_ns in have and (self.root / "cluster.json").exists():
            self._python(_STOP, timeout_s=120)
        for ns in (self.site_ns, self.workbook_ns):
            if ns not in have:
                continue
            pids = [int(p) for p in ip("netns", "pids", ns, check=False).stdout.split()]
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 10
            while pids and time.monotonic() < deadline and ip("netns", "pids", ns, check=False).stdout.split():
                time.sleep(0.1)
            ip("netns", "del", ns, check=False)
            removed.append(ns)
        return removed
