"""Who may talk to a local cluster: per-cluster credentials and policies.

Each node has two management listeners that reach into its JVM: the Jolokia agent (JMX over
HTTP, used by the sampler) and Cassandra's own JMX port (RMI on 127.0.0.1, used by nodetool).
Both can run code in the node's JVM when open (a JMX `invoke`, Jolokia `exec`), so both
require a credential made for the cluster at its first start; so does the CQL port, which
takes the cluster's own role (PasswordAuthenticator, see cluster.role_manager). They are kept in
`<cluster folder>/access/` (folder mode 0700, files 0600: only the owner can read them):

    cql.credentials      the CQL role `cassperf` (a superuser) and its password, in cqlsh's
                         credentials-file format ([plain_text_auth] username / password), which
                         Java's Properties also reads: the nodes' role manager creates the role
                         from it, every client of the workbook logs in with it, and
                         `cqlsh --credentials <file>` takes it as it is
    cqlshrc              cqlsh's settings for this cluster: the credentials file above, and with
                         TLS the cluster's CA (`cqlsh --cqlshrc <file> <address>`)

    jolokia.properties   the agent's options (user, password, authMode=basic, policyLocation);
                         the agent reads it through `config=<file>`, so no password is on a
                         command line `ps` shows
    jolokia-access.xml   the agent's policy: reads of the MBeans the sampler uses, nothing else
                         (no exec, write, list, search)
    jmxremote.password   JMX users: `cassperf_monitor` (read-only) and `cassperf_admin`;
                         also nodetool's `-pwf` file
    jmxremote.access     their access levels: readonly, readwrite

Passwords are 32 random URL-safe characters (`secrets.token_urlsafe`), made once and kept: a
node restarted later, and any client, reads the same files.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from cassperf.certs import write_private
from cassperf.errors import ConfigError

JOLOKIA_USER = "cassperf"
JMX_MONITOR_USER = "cassperf_monitor"   # readonly: attributes and MBean names, no operation
JMX_ADMIN_USER = "cassperf_admin"       # readwrite: nodetool's flush, compact, garbagecollect, ...
CQL_ROLE = "cassperf"                   # the CQL superuser role the nodes create at start
CQL_SECTION = "plain_text_auth"         # cqlsh's credentials-file section

#: What the Jolokia agent allows. `read` is not among <commands>, so a read passes only where
#: <allow> names the MBean and attribute; exec, write, list, search and notification are refused
#: (not listed, and no <operation> is allowed anywhere). Every <attribute> carries mode="read":
#: without it Jolokia would allow writing the attribute too. The patterns do not overlap (Jolokia
#: uses the first pattern that matches). What the sampler and JolokiaClient read:
#:   java.lang GarbageCollector           CollectionCount, CollectionTime
#:   metrics type=Compaction, ClientRequest, ThreadPools, Table, DroppedMessage   every attribute
#:                                        (numbers only: counts, gauges, latency percentiles)
#:   db type=Tables                       SSTableCountPerLevel
JOLOKIA_POLICY = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by cassperf (cluster/access.py): read-only access to the sampler's MBeans. -->
<restrict>
  <commands>
    <command>version</command>
  </commands>
  <allow>
    <mbean>
      <name>java.lang:type=GarbageCollector,*</name>
      <attribute mode="read">CollectionCount</attribute>
      <attribute mode="read">CollectionTime</attribute>
    </mbean>
    <mbean>
      <name>org.apache.cassandra.metrics:type=Compaction,*</name>
      <attribute mode="read">*</attribute>
    </mbean>
    <mbean>
      <name>org.apache.cassandra.metrics:type=ClientRequest,*</name>
      <attribute mode="read">*</attribute>
    </mbean>
    <mbean>
      <name>org.apache.cassandra.metrics:type=ThreadPools,*</name>
      <attribute mode="read">*</attribute>
    </mbean>
    <mbean>
      <name>org.apache.cassandra.metrics:type=Table,*</name>
      <attribute mode="read">*</attribute>
    </mbean>
    <mbean>
      <name>org.apache.cassandra.metrics:type=DroppedMessage,*</name>
      <attribute mode="read">*</attribute>
    </mbean>
    <mbean>
      <name>org.apache.cassandra.db:type=Tables,*</name>
      <attribute mode="read">SSTableCountPerLevel</attribute>
    </mbean>
  </allow>
</restrict>
"""


@dataclass(frozen=True)
class Credentials:
    """A user name and its password (the password never shows in repr)."""

    user: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class ClusterAccess:
    """The access files of one cluster (see the module docstring); `ensure_access` makes them."""

    folder: Path
    jolokia: Credentials
    jmx_monitor: Credentials
    jmx_admin: Credentials
    cql: Credentials

    @property
    def cql_credentials_file(self) -> Path:
        return self.folder / "cql.credentials"

    @property
    def cqlshrc(self) -> Path:
        return self.folder / "cqlshrc"

    @property
    def jolokia_properties(self) -> Path:
        return self.folder / "jolokia.properties"

    @property
    def jolokia_policy(self) -> Path:
        return self.folder / "jolokia-access.xml"

    @property
    def jmx_password_file(self) -> Path:
        return self.folder / "jmxremote.password"

    @property
    def jmx_access_file(self) -> Path:
        return self.folder / "jmxremote.access"

    def jmx_credentials(self, read_only: bool) -> Credentials:
        return self.jmx_monitor if read_only else self.jmx_admin


def _write_private(path: Path, text: str) -> None:
    """Create `path` with mode 0600 from the first byte (never wider, whatever the umask)."""
    write_private(path, text.encode())


def check_private(path: Path, want_dir: bool) -> None:
    """ConfigError naming the fix when `path` is not this user's or others may read it."""
    st = path.stat()
    if st.st_uid != os.geteuid():
        raise ConfigError(f"{path} belongs to uid {st.st_uid}, not to this user (uid {os.geteuid()}); "
                          f"the cluster's credentials must be its own user's. Fix: remove {path.parent if not want_dir else path} "
                          "and start the cluster again (new credentials are made)")
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise ConfigError(f"{path} has mode {stat.S_IMODE(st.st_mode):04o}: other users could read the cluster's "
                          f"credentials. Fix: chmod {'700' if want_dir else '600'} {path} (and, if others may have "
                          f"read them, remove {path if want_dir else path.parent} and restart the cluster for new ones)")


def _read_pairs(path: Path, sep: str | None) -> dict[str, str]:
    """key<sep>value lines ('#' comments and blank lines skipped); sep None splits on whitespace."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(sep, 1)
        out[parts[0].strip()] = parts[1].strip() if len(parts) > 1 else ""
    return out


def _token() -> str:
    return secrets.token_urlsafe(24)   # 32 characters of [A-Za-z0-9_-]: safe in every file format here


def ensure_access(cluster_root: Path) -> ClusterAccess:
    """The cluster's access files under `cluster_root/access`, made on first use (random
    passwords; a cluster folder made here is 0700 too: its SSTables, commit log and logs are
    the owner's alone) and checked on every use (owned by this user, no group/other permission bits).
    ConfigError naming the file and the fix when a check fails."""
    folder = cluster_root / "access"
    cluster_root.mkdir(mode=0o700, parents=True, exist_ok=True)   # a new cluster's data, logs and conf: the owner's only
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    check_private(folder, want_dir=True)
    access = ClusterAccess(folder, Credentials(JOLOKIA_USER, ""), Credentials(JMX_MONITOR_USER, ""),
                           Credentials(JMX_ADMIN_USER, ""), Credentials(CQL_ROLE, ""))
    if not access.jolokia_properties.exists():
        _write_private(access.jolokia_properties,
                       "# Jolokia agent options (cassperf); the agent reads them through config=<this file>\n"
                       f"user={JOLOKIA_USER}\npassword={_token()}\nauthMode=basic\n"
                       f"policyLocation={access.jolokia_policy.as_uri()}\n"
                       "includeStackTrace=false\n")
    if not access.jolokia_policy.exists() or access.jolokia_policy.read_text() != JOLOKIA_POLICY:
        access.jolokia_policy.unlink(missing_ok=True)       # an older cassperf's policy: its nodes read this
        _write_private(access.jolokia_policy, JOLOKIA_POLICY)   # one at their next start
    if not access.jmx_password_file.exists():
        _write_private(access.jmx_password_file,
                       "# JMX users of this cluster (cassperf); nodetool reads it with -pwf\n"
                       f"{JMX_MONITOR_USER} {_token()}\n{JMX_ADMIN_USER} {_token()}\n")
    if not access.jmx_access_file.exists():
        _write_private(access.jmx_access_file, f"{JMX_MONITOR_USER} readonly\n{JMX_ADMIN_USER} readwrite\n")
    if not access.cql_credentials_file.exists():
        _write_private(access.cql_credentials_file, cql_credentials_text(Credentials(CQL_ROLE, _token())))
    for path in (access.jolokia_properties, access.jolokia_policy, access.jmx_password_file, access.jmx_access_file,
                 access.cql_credentials_file):
        check_private(path, want_dir=False)
    props = _read_pairs(access.jolokia_properties, "=")
    users = _read_pairs(access.jmx_password_file, None)
    missing = [f"{p.name}: {k}" for p, k, d in ((access.jolokia_properties, "password", props),
                                                (access.jmx_password_file, JMX_MONITOR_USER, users),
                                                (access.jmx_password_file, JMX_ADMIN_USER, users)) if not d.get(k)]
    if missing:
        raise ConfigError(f"{folder}: no {', '.join(missing)}. Fix: remove {folder} and start the cluster again "
                          "(new credentials are made; stop running nodes first)")
    return ClusterAccess(folder, Credentials(props.get("user", JOLOKIA_USER), props["password"]),
                         Credentials(JMX_MONITOR_USER, users[JMX_MONITOR_USER]),
                         Credentials(JMX_ADMIN_USER, users[JMX_ADMIN_USER]),
                         read_cql_credentials(access.cql_credentials_file))


def cql_credentials_text(credentials: Credentials) -> str:
    """The cql.credentials file: cqlsh's credentials-file format, readable by java.util.Properties
    too (the section line is a key without value there)."""
    return ("# CQL role of this cluster (cassperf): the nodes create it at start; cqlsh --credentials <this file>\n"
            f"[{CQL_SECTION}]\nusername = {credentials.user}\npassword = {credentials.password}\n")


def read_cql_credentials(path: Path) -> Credentials:
    """The role and password of a cql.credentials file, checked private first (owned by this
    user, no group/other bits). ConfigError naming the file and the fix otherwise."""
    try:
        check_private(path, want_dir=False)
        pairs = _read_pairs(path, "=")
    except FileNotFoundError:
        raise ConfigError(f"{path} does not exist: the cluster's CQL role has no credential here. Fix: start the "
                          "cluster once (it is made at the first start)") from None
    if not pairs.get("username") or not pairs.get("password"):
        raise ConfigError(f"{path}: expected [{CQL_SECTION}] with username and password lines. Fix: stop the cluster, "
                          "destroy it (`cassperf cluster destroy`) and start it again")
    return Credentials(pairs["username"], pairs["password"])
