"""The embedded cluster's CQL role: authentication without a default superuser.

A node with PasswordAuthenticator and Cassandra's CassandraRoleManager creates the superuser
`cassandra` / `cassandra` some seconds after it starts (`superuser_setup_delay_ms`, 10 s by
default) whenever system_auth.roles is empty, and no system property turns that off (Cassandra
5.0.6, CassandraRoleManager.setupDefaultRole). Until someone drops it, every local user could
log in as a superuser and drop every keyspace. So the nodes run `CassperfRoleManager.java`
(beside this module): that task is never scheduled, and each node writes the cluster's own role
from `<cluster>/access/cql.credentials` before it serves CQL (see the Java file). The default
role never exists; there is no window to close.

The class is compiled once per Cassandra version and Java target with the JDK's javac (the
node's Java when it has one, else `javac` on PATH) into the cache
(`<cache>/cassandra/<version>/role-manager/<source hash>-java<N>/`), then put on the nodes'
classpath; cassandra.yaml names it as `role_manager`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from cassperf import config
from cassperf.cluster.java import Java
from cassperf.errors import ConfigError

SOURCE = Path(__file__).with_name("CassperfRoleManager.java")
CLASS_NAME = "cassperf.CassperfRoleManager"
CREDENTIALS_PROPERTY = "cassperf.cql_credentials"


def _javac(java: Java) -> Path:
    beside = java.executable.parent / "javac"
    if beside.exists():
        return beside
    found = shutil.which("javac")
    if found:
        return Path(found)
    raise ConfigError(f"the embedded cluster's role manager must be compiled once, and no javac was found (not beside "
                      f"{java.executable}, not on PATH). Fix: install a JDK (Debian: apt-get install "
                      "openjdk-17-jdk-headless) or set JAVA_HOME to one")


def compiled_classes(version: str, classpath: str, java: Java) -> Path:
    """The folder to put on the nodes' classpath (holds cassperf/CassperfRoleManager.class),
    compiled on first use for Cassandra `version` (against `classpath`) and the node's Java."""
    release = 8 if java.major <= 8 else 11
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    out = config.cache_dir() / "cassandra" / version / "role-manager" / f"{digest}-java{release}"
    if (out / "cassperf" / "CassperfRoleManager.class").exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".compile-", dir=out.parent))
    try:
        cmd = [str(_javac(java)), "--release", str(release), "-nowarn", "-cp", classpath, "-d", str(work), str(SOURCE)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise ConfigError(f"compiling {SOURCE.name} for Cassandra {version} failed (javac exit {proc.returncode}): "
                              f"{proc.stderr.strip()[-800:]}")
        try:
            os.rename(work, out)        # atomic: a concurrent start sees the whole folder or none
        except OSError:
            if not (out / "cassperf" / "CassperfRoleManager.class").exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def jvm_options(credentials_file: Path, nodes: int) -> list[str]:
    """System properties of every node: where the role's credential is, and system_auth's
    replication factor at creation (every node a replica: a login reads the role at LOCAL_ONE
    from the node it reached, which wrote the row itself, so a node that is down never blocks
    logins to the others)."""
    return [f"-D{CREDENTIALS_PROPERTY}={credentials_file}", f"-Dcassandra.system_auth.default_rf={nodes}"]


def auth_yaml() -> dict[str, str]:
    """cassandra.yaml keys of an authenticated embedded cluster."""
    return {"authenticator": "PasswordAuthenticator", "authorizer": "CassandraAuthorizer",
            "role_manager": CLASS_NAME, "auth_read_consistency_level": "LOCAL_ONE"}
