"""LocalCluster: real Cassandra nodes on loopback, started by the workbook from Maven Central jars.

    with LocalCluster("demo", topology="dc1:2,dc2:1") as c:
        c.start()
        c.session().execute("SELECT release_version FROM system.local")
        print(c.nodetool("node1", "status"))

One working folder per cluster (`data/clusters/<name>/`, git-ignored) holds cluster.json and one
folder per node: conf, data, commitlog, hints, saved_caches, logs (system.log, gc.log in JDK
unified-logging form, stdout.log). `start()` reuses nodes of the same cluster that are already
running (pid files checked against live processes). Exiting the `with` block stops the nodes;
`destroy()` also removes the data.

Every start records its owner (cassperf.cluster.owners: this process, pid and start time) before
the first node is spawned; `stop()` removes the record. A start that finds the nodes of a dead
owner's record running takes them over (`adopted` says so); `keep()` hands the cluster to the
user, so no later run reaps it (cassperf.cluster.reaper).

Every client logs in with the cluster's own CQL role (PasswordAuthenticator, CassandraAuthorizer;
cluster.role_manager: the default superuser `cassandra` never exists), whose credential is made
at the first start in `<cluster>/access/` (cluster.access). `tls=True` also makes a CA and node
certificates for the cluster (cluster.tls) and takes CQL connections over TLS only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import yaml

from cassperf import config
from cassperf.cluster import jars as jarmod
from cassperf.cluster import cgroups, class_archive, netns, owners, process, role_manager, state_file
from cassperf.certs import write_private
from cassperf.cluster.access import ClusterAccess, ensure_access
from cassperf.cluster.base import ClusterHandle, CredentialsProvider, LocalNodeRef
from cassperf.cluster.java import Java, check_java_for, java_info
from cassperf.cluster.jolokia import JolokiaClient, JolokiaEndpoint
from cassperf.cluster.node_bounds import NodeBounds
from cassperf.cluster.nodeconf import (
    CLIENT_JPMS,
    JvmSettings,
    NodeLayout,
    NodePorts,
    cassandra_yaml,
    env_jvm_options,
    server_command,
    write_node_conf,
)
from cassperf.cluster.preflight import PortUse, check_memory, check_ports, port_free
from cassperf.cluster.tls import ClusterTls, TlsOptions, encryption_yaml, ensure_cluster_tls
from cassperf.cluster.topology import NodeSpec, Topology, parse_topology
from cassperf.errors import ClusterError, ConfigError, ToolError

#: system.log line that says a node serves CQL:
#: INFO  [main] 2026-11-21 23:40:01,123 PipelineConfigurator.java:129 - Starting listening for CQL clients on /127.0.0.1:9042 (unencrypted)...
READY_MARK = "Starting listening for CQL clients"


@dataclass(frozen=True)
class NodeStatus:
    name: str
    address: str
    dc: str
    rack: str
    pid: int | None
    up: bool


class LocalNode:
    def __init__(self, spec: NodeSpec, layout: NodeLayout, ports: NodePorts) -> None:
        self.spec = spec
        self.layout = layout
        self.ports = ports
        self.popen: subprocess.Popen | Any = None   # anything with pid and poll() (a container's node: container.py)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def address(self) -> str:
        return self.spec.address

    def pid(self) -> int | None:
        if self.popen is not None:
            self.popen.poll()  # reap a child that exited, so it is not a zombie
        return process.live_pid(self.layout.pid_file, self.layout.root)

    def is_running(self) -> bool:
        return self.pid() is not None

    def port_uses(self) -> list[PortUse]:
        n = self.name
        return [PortUse(self.address, self.ports.storage, f"storage_port of {n}"),
                PortUse(self.address, self.ports.native, f"native_transport_port of {n}"),
                PortUse("127.0.0.1", self.ports.jmx, f"JMX port of {n}"),
                PortUse(self.address, self.ports.jolokia, f"Jolokia port of {n}")]

    def storage_folders(self) -> list[Path]:
        """The folders the node keeps its data and commit log in: as its cassandra.yaml says (the
        user's overrides included), else the node folder's defaults."""
        try:
            conf = yaml.safe_load((self.layout.conf / "cassandra.yaml").read_text()) or {}
        except (OSError, yaml.YAMLError):
            conf = {}
        return _storage_folders(conf) or [self.layout.data, self.layout.commitlog]

    def log_tail(self, lines: int = 30) -> str:
        out = []
        for path in (self.layout.system_log, self.layout.stdout_log):
            t = process.tail(path, lines)
            if t:
                out.append(f"--- last {len(t)} lines of {path}:")
                out += t
        return "\n".join(out)


def start_waves(nodes: Sequence[LocalNode]) -> list[list[LocalNode]]:
    """The nodes to start, in the groups that start together: first every DC's seed (a seed
    starts without the others, and a DC's first node allocates its tokens from its own DC's ring,
    which is empty), then each other node alone, in topology order (a node that joins allocates
    its tokens from the ring it sees, allocate_tokens_for_local_replication_factor: it waits
    for the node before it to be up). One DC: one node at a time, as before."""
    seeds = [n for n in nodes if n.spec.seed]
    return ([seeds] if seeds else []) + [[n] for n in nodes if not n.spec.seed]


class LocalCluster(ClusterHandle):
    """Real Cassandra nodes on 127.0.0.x, started from Maven Central jars.

    name            the cluster's name and working folder (data/clusters/<name>)
    topology        "dc1:3" or "dc1:3,dc2:3" (nodes on first_address, +1, ...)
    version         Cassandra version from Maven Central (5.0.x on Java 11/17; 4.1.x on Java 8/11)
    heap_mb         heap per node, MB
    yaml_overrides  merged into every node's cassandra.yaml
    jvm_options     extra JVM options for every node
    first_address   address of node1; other clusters can live beside on e.g. 127.0.1.1
    jolokia         attach the Jolokia JVM agent (JMX over HTTP on <address>:8778)
    start_timeout_s per node, until CQL-ready
    inter_dc_rtt_ms round-trip time between data centers, ms (None: all nodes on loopback). Each
                    DC's nodes then live in a network namespace of their own, on 10.<o3>.<dc>.x
                    (cassperf.cluster.netns); needs root. nodetool, cqlsh and clients reach them
                    through `in_dc(dc)` / `dc_command(dc, argv)`.
    java_home       the Java the nodes (and nodetool) run on, a folder with bin/java; None:
                    $JAVA_HOME, else the java on PATH (e.g. a Java 11 for 4.1 beside 5.0 on 17)
    scratch         a folder outside the cluster's folder that its data lives in (yaml_overrides, e.g.
                    on tmpfs), named cassperf-*: stop() keeps it (a restart needs the data), its owner
                    removes it; when the owner died, the reaper deletes it with the cluster
    tls             CQL over TLS only, with a CA and node certificates made for the cluster
                    (cluster.tls); with inter_dc_rtt_ms the traffic between DCs is TLS too.
                    Fixed at the first start, like the topology.
    node_addresses  the nodes' addresses, one per node in topology order, instead of loopback
                    from first_address (which still sets the JMX ports): a site on a network of
                    its own, e.g. a network namespace this process runs in (`ip netns exec`)
                    whose interface carries them. Not with inter_dc_rtt_ms.
    page_cache_mb   bound each node's page cache to this many MiB: every node runs in a memory
                    cgroup of its own whose limit follows its own memory plus the bound
                    (cluster.cgroups: heap resident from the start, no OOM kill); None: no bound.
                    Needs root and cgroups; where the machine refuses, `bounds.problem` says why in
                    one line and the nodes run unbounded. `bounds_line()` is what a report states,
                    `node_bounds()` each node's limit, own memory and page cache now.
    read_mb_s, read_iops  throttle each node's reads of the disk under its data and commit log
                    folders (block I/O cgroup: a slower disk); None: no throttle.

    CQL asks for the cluster's role (`cassperf`, a superuser; its password in
    <cluster>/access/cql.credentials); every client of the workbook uses it by itself.
    yaml_overrides={"authenticator": "AllowAllAuthenticator", "authorizer": "AllowAllAuthorizer"}
    runs the nodes without authentication (then clients send no credentials).
    """

    #: whether the nodes map a class-data archive (cassperf.cluster.class_archive)
    uses_class_archive = True

    def __init__(self, name: str = "cassperf", topology: str | Topology = "dc1:1",
                 version: str = jarmod.DEFAULT_VERSION, heap_mb: int = 1024,
                 yaml_overrides: dict[str, Any] | None = None, jvm_options: list[str] | None = None, first_address: str = "127.0.0.1", jolokia: bool = True,
                 root: Path | None = None, start_timeout_s: float = 180.0,
                 inter_dc_rtt_ms: float | None = None, java_home: Path | str | None = None,
                 scratch: Path | str | None = None, tls: bool = False,
                 node_addresses: list[str] | None = None, page_cache_mb: int | None = None,
                 read_mb_s: float | None = None, read_iops: int | None = None) -> None:
        super().__init__()
        if not name or not all(c.isalnum() or c in "-_" for c in name):
            raise ConfigError(f"cluster name {name!r}: use letters, digits, '-' and '_'")
        self.name = name
        self.topology = topology if isinstance(topology, Topology) else parse_topology(topology)
        self.version = version
        if heap_mb < 256:
            raise ConfigError(f"heap_mb={heap_mb}: a Cassandra node needs at least 256 MB of heap")
        self.heap_mb = heap_mb
        self.yaml_overrides = dict(yaml_overrides or {})
        self.jvm_options = list(jvm_options or [])
        self.first_address = first_address
        self.use_jolokia = jolokia
        self.java_home = Path(java_home) if java_home else None   # None: JAVA_HOME, else java on PATH
        self.scratch = Path(scratch) if scratch else None
        if self.scratch is not None and not self.scratch.name.startswith("cassperf-"):
            raise ConfigError(f"scratch={str(scratch)!r}: a scratch folder's name starts with 'cassperf-' (it is "
                              f"deleted with the cluster of a dead owner), e.g. /dev/shm/cassperf-{name}")
        self.start_timeout_s = start_timeout_s
        self.root = (root or config.clusters_dir()) / name
        self.tls_enabled = bool(tls)
        #: the folder of the role manager's class on the nodes' classpath (cluster.role_manager); set by start()
        self.auth_classes: Path | None = None
        #: what clients trust (the cluster's CA), as for a user's cluster (RemoteCluster.tls); None without TLS
        self.tls: TlsOptions | None = ClusterTls(self.root / "tls").client_options() if tls else None
        offset = int(ipaddress.IPv4Address(first_address)) - int(ipaddress.IPv4Address("127.0.0.1"))
        self.nodes: list[LocalNode] = []
        for spec in self.topology.nodes(first_address):
            ports = NodePorts(jmx=7199 + offset + spec.index - 1)
            self.nodes.append(LocalNode(spec, NodeLayout(self.root / spec.name), ports))
        self._java: Java | None = None
        self._jars: jarmod.CassandraJars | None = None
        self.network: netns.DcNetwork | None = None
        self.node_addresses = self._place_on(node_addresses) if node_addresses else None
        if inter_dc_rtt_ms is not None:
            if self.node_addresses:
                raise ConfigError("node_addresses and inter_dc_rtt_ms: give one (inter_dc_rtt_ms places the nodes "
                                  "in namespaces of its own)")
            self._place_in_namespaces(inter_dc_rtt_ms)
        #: where the cluster says what it took over from a dead owner (one line); stderr by default
        self.say: Callable[[str], None] = owners.say
        #: that line, when start() adopted this cluster from a dead owner; else None
        self.adopted: str | None = None
        #: each node's page-cache bound and read throttle (cluster.node_bounds)
        self.bounds = NodeBounds(self.owner_key, page_cache_mb, read_mb_s, read_iops, say=lambda line: self.say(line))

    # -- ClusterHandle -------------------------------------------------------------------------
    @property
    def contact_points(self) -> list[str]:
        return [n.address for n in self.nodes if n.spec.seed] or [self.nodes[0].address]

    @property
    def port(self) -> int:
        return self.nodes[0].ports.native

    @property
    def local_dc(self) -> str | None:
        return self.topology.datacenters[0].name

    def dc_contact_points(self, dc: str) -> list[str]:
        """Contact points of DC `dc`: its seeds, else its first node (a client placed in `dc`
        connects to them; ConfigError for a DC the topology does not have)."""
        nodes = [n for n in self.nodes if n.spec.dc == dc]
        if not nodes:
            raise ConfigError(f"cluster {self.name} has no data center {dc!r}; DCs: "
                              f"{', '.join(d.name for d in self.topology.datacenters)}")
        return [n.address for n in nodes if n.spec.seed] or [nodes[0].address]

    def _driver_kwargs(self) -> dict[str, Any]:
        return self._client_kwargs()

    def _client_kwargs(self, dc: str | None = None) -> dict[str, Any]:
        """Driver Cluster(...) arguments of every connection to the nodes: the DC namespace's
        sockets (see _netns_driver_kwargs), the cluster's role, TLS with the cluster's CA."""
        kwargs = self._netns_driver_kwargs(dc)
        if self.credentials_file is not None:
            role = self.access(create=False)
            if role is not None:
                kwargs["auth_provider"] = CredentialsProvider(role.cql.user, role.cql.password)
        if self.tls is not None:
            kwargs["ssl_context"] = self.tls.context()
        return kwargs

    @property
    def authenticated(self) -> bool:
        """The nodes ask CQL clients for a role (PasswordAuthenticator, unless yaml_overrides
        names another authenticator)."""
        chosen = self.yaml_overrides.get("authenticator", "PasswordAuthenticator")
        name = chosen.get("class_name", "") if isinstance(chosen, dict) else str(chosen)
        return name.rsplit(".", 1)[-1] == "PasswordAuthenticator"

    @property
    def credentials_file(self) -> Path | None:
        """The 0600 file holding the cluster's CQL role and password (cqlsh's credentials-file
        format), which every client reads itself; None when the nodes ask for none."""
        return self.root / "access" / "cql.credentials" if self.authenticated else None

    def _unused_credentials_note(self, user_env: str) -> str | None:
        """Credentials exported for a user's cluster are never sent to an embedded one."""
        if not self.authenticated:
            return super()._unused_credentials_note(user_env)
        return (f"{user_env} is set, but cluster {self.name} is an embedded cluster, whose clients log in with its "
                f"own role ({self.credentials_file}), so they are not used")

    @property
    def description(self) -> dict[str, Any]:
        return {**super().description, "name": self.name, "topology": self.topology.spec(),
                "cassandra_version": self.version, "heap_mb": self.heap_mb, "yaml_overrides": self.yaml_overrides,
                "authentication": "PasswordAuthenticator" if self.authenticated else "none",
                "tls": self.tls_enabled, "snitch": "GossipingPropertyFileSnitch",
                "nodes": [{"name": n.name, "address": n.address, "dc": n.spec.dc, "rack": n.spec.rack} for n in self.nodes],
                **({"network": self.network.describe()} if self.network is not None else {}),
                **self.bounds_state()}

    # -- lookup --------------------------------------------------------------------------------
    def node(self, node: str | int | LocalNode) -> LocalNode:
        if isinstance(node, LocalNode):
            return node
        for n in self.nodes:
            if node in (n.name, n.address, n.spec.index):
                return n
        raise ConfigError(f"cluster {self.name} has no node {node!r}; nodes: {', '.join(n.name for n in self.nodes)}")

    def status(self) -> list[NodeStatus]:
        """Which nodes are up (a live process of ours), per node."""
        return [NodeStatus(n.name, n.address, n.spec.dc, n.spec.rack, n.pid(), n.is_running()) for n in self.nodes]

    def status_frame(self) -> pd.DataFrame:
        return pd.DataFrame([asdict(s) for s in self.status()])

    # -- start ---------------------------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        return {"name": self.name, "topology": self.topology.spec(), "version": self.version,
                "first_address": self.first_address,
                **({"inter_dc_rtt_ms": self.network.rtt_ms} if self.network is not None else {}),
                **({"node_addresses": self.node_addresses} if self.node_addresses else {}),
                **({"tls": True} if self.tls_enabled else {})}

    def _check_state_file(self) -> None:
        """Raise if cluster.json describes a different cluster of the same name, or one made
        before the embedded cluster asked for a role (its data may hold the default superuser)."""
        path = state_file.path(self.root)
        if not path.exists():
            return
        if not (self.root / "access" / "cql.credentials").exists():
            raise ConfigError(f"cluster {self.name!r} at {self.root} was made before embedded clusters asked for a "
                              f"password (any local user could use it, and its data may hold the superuser cassandra/"
                              f"cassandra); destroy it and start it again: `cassperf cluster destroy --name {self.name}`")
        old = state_file.read(self.root)
        if old is None:
            raise ConfigError(f"{path}: not a cluster's state (it does not parse as a JSON object); destroy the "
                              f"cluster and start it again: `cassperf cluster destroy --name {self.name}`")
        mine = self._state()
        if {k: old.get(k) for k in mine} != mine or bool(old.get("tls")) != self.tls_enabled:
            def shown(state: dict[str, Any]) -> str:
                return (f"{state.get('topology')} Cassandra {state.get('version')} on {state.get('first_address')}"
                        + (" with TLS" if state.get("tls") else ""))
            raise ConfigError(f"cluster {self.name!r} already exists at {self.root} as {shown(old)}; asked for "
                              f"{shown(mine)}. Destroy it first (`cassperf cluster destroy --name {self.name}`) or "
                              f"choose another name")

    def java(self) -> Java:
        if self._java is None:
            self._java = java_info(self.java_home / "bin" / "java" if self.java_home else None)
            check_java_for(self.version, self._java)
        return self._java

    def jars(self) -> jarmod.CassandraJars:
        if self._jars is None:
            self._jars = jarmod.resolve_cassandra(self.version)
        return self._jars

    def start(self, timeout_s: float | None = None) -> "LocalCluster":
        """Start every node that is not running until it is CQL-ready: every DC's seed at once,
        then the others one after another (start_waves). Nodes already running (same cluster,
        same topology) are reused. Chainable.
        With inter_dc_rtt_ms: the DC network first; a start that fails or is interrupted
        stops the nodes it started and removes the network."""
        if self.network is not None:
            return self._start_with_network(timeout_s)
        return self._start(timeout_s)

    def _start(self, timeout_s: float | None = None) -> "LocalCluster":
        self._check_state_file()
        to_start = [n for n in self.nodes if not n.is_running()]
        if not to_start:
            self._adopt_running()
            return self
        java = self.java()
        check_memory(len(to_start), self.heap_mb, self.topology.spec())
        self._check_ports(to_start)
        jars = self.jars()
        jolokia = jarmod.resolve_jolokia() if self.use_jolokia else None
        access = self.access(create=True)
        assert access is not None
        self.auth_classes = auth_classes = role_manager.compiled_classes(self.version, jars.classpath(), java)
        tls = ensure_cluster_tls(self.root, [(n.name, n.address) for n in self.nodes]) if self.tls_enabled else None
        self._write_cqlshrc(access)
        self.root.mkdir(parents=True, exist_ok=True)
        self._write_cluster_json()
        self._take_over(self._claim())
        seeds = [n.address for n in self.nodes if n.spec.seed]
        classpath = jars.classpath()
        jvm = JvmSettings(self.heap_mb, self.jvm_options, classpath=[auth_classes],
                          cluster=role_manager.jvm_options(access.cql_credentials_file, len(self.nodes)))
        archive = self._class_archive(java, classpath)
        for wave in start_waves(to_start):
            launched: list[tuple[LocalNode, tuple[int, float]]] = []
            lists: dict[str, Path] = {}            # node -> the class list it writes (class_archive), if any
            try:
                for node in wave:
                    security = {**role_manager.auth_yaml(),
                                **(encryption_yaml(tls, node.name, internode=self.network is not None) if tls else {})}
                    yaml_conf = cassandra_yaml(self.name, node.spec, seeds, node.layout, node.ports,
                                               self.yaml_overrides, security=security)
                    write_node_conf(node.layout, yaml_conf, node.spec)
                    self.bounds.prepare({node.name: _storage_folders(yaml_conf)})
                    self._claim()                  # its cgroups are in the owner record before it starts
                    shared, writing = class_archive.node_options(archive, node.name) if archive else ([], None)
                    if writing is not None:
                        lists[node.name] = writing
                    node_jvm = dataclasses.replace(jvm, cluster=[*jvm.cluster, *self.bounds.jvm_options(), *shared])
                    cmd = server_command(java.executable, classpath, jars.jamm, jolokia, node.spec, node.layout,
                                         node.ports, node_jvm, access)
                    launched.append((node, self._launch_node(node, cmd)))
                for node, (log_offset, at) in launched:
                    self._await_node(node, log_offset, at, timeout_s or self.start_timeout_s)
                    if node.name in lists:
                        class_archive.keep_class_list(archive, lists.pop(node.name))
            except BaseException:
                # a node of a wave that fails leaves none of its wave running (they started as one)
                process.terminate({n.popen.pid: n.layout.root for n, _ in launched
                                   if n.popen is not None and n.popen.poll() is None}, timeout_s=10)
                for written in lists.values():
                    written.unlink(missing_ok=True)
                raise
            for node, _ in launched:
                self.bounds.govern(node.name)
                self._claim()
        if self.bounds.asked:
            self._write_cluster_json()             # with what the bounds came to
        if len(self.nodes) > 1:
            self._wait_for_ring(timeout_s or self.start_timeout_s)
        return self

    def _class_archive(self, java: Java, classpath: str) -> class_archive.ClassArchive | None:
        """The class-data archive the nodes map (cassperf.cluster.class_archive), None where they
        start without one: bounded nodes (its pages would be page cache inside their bound), a
        container's nodes, CASSPERF_CLASS_ARCHIVE=0."""
        if not self.uses_class_archive or self.bounds.asked:
            return None
        return class_archive.for_nodes(self.version, java.executable, java.version, classpath)

    def _write_cluster_json(self) -> None:
        state_file.write(self.root, {**self._state(), "heap_mb": self.heap_mb, "yaml_overrides": self.yaml_overrides,
                                     "jvm_options": self.jvm_options, "env_jvm_options": env_jvm_options(),
                                     **self.bounds.describe()})

    def recorded_state(self) -> dict[str, Any]:
        """cluster.json as the cluster's starter wrote it ({} when there is none or it does not parse)."""
        return state_file.read(self.root) or {}

    def bounds_state(self) -> dict[str, Any]:
        """The nodes' bounds as their starter recorded them (cluster.json: page_cache_mb, read_mb_s,
        read_iops, the line a report states, a problem), else as this handle asks them."""
        if not self.bounds.cgroups and self.bounds.problem is None:
            recorded = self.recorded_state()
            if "bounds" in recorded and any(n.is_running() for n in self.nodes):
                return {k: recorded.get(k) for k in ("page_cache_mb", "read_mb_s", "read_iops", "bounds",
                                                     "bounds_problem", "throttled_disks") if k in recorded}
        return self.bounds.describe()

    def bounds_line(self) -> str:
        """What a report states of the nodes' page cache and disk, one line (cgroups.bound_line):
        "page cache bound 64 MiB per node (memory cgroup)", or what could not be bounded and why."""
        state = self.bounds_state()
        return str(state.get("bounds") or self.bounds.line())

    def node_bounds(self) -> list[cgroups.NodeBound]:
        """Each running node's page-cache bound now (limit, own memory, page cache, room), read
        from its cgroup; [] for nodes without a bound."""
        bound = self.bounds_state().get("page_cache_mb")
        reader = self.bounds if bound == self.bounds.page_cache_mb else NodeBounds(self.owner_key, bound)
        return reader.node_bounds({n.name: n.pid() for n in self.nodes})

    def _wait_for_ring(self, timeout_s: float) -> None:
        """Wait until every node knows every other node with its DC and tokens (system.peers_v2):
        a node that serves CQL may not yet know a DC that joined last, and would refuse a
        NetworkTopologyStrategy keyspace naming it."""
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
        from cassandra.policies import WhiteListRoundRobinPolicy

        want = len(self.nodes) - 1
        deadline = time.monotonic() + timeout_s
        for node in self.nodes:
            profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([node.address]))
            # the handle's own driver (its timeouts, role, TLS), on this node alone, from its DC's namespace
            driver = self.driver_cluster(contact_points=[node.address], port=node.ports.native,
                                         execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                                         **self._netns_driver_kwargs(node.spec.dc))
            try:
                session = driver.connect()
                while True:
                    rows = session.execute("SELECT data_center, tokens FROM system.peers_v2")
                    known = sum(1 for r in rows if r.data_center and r.tokens)
                    if known >= want:
                        break
                    if time.monotonic() > deadline:
                        raise ClusterError(f"{node.name} of cluster {self.name} knows {known} of its {want} peers "
                                           f"after {timeout_s:.0f} s.\n{node.log_tail()}")
                    time.sleep(0.5)
            finally:
                driver.shutdown()

    def _launch_node(self, node: LocalNode, cmd: list[str]) -> tuple[int, float]:
        """Start the node's process: (the size of its system.log before, where this start's lines
        begin; the monotonic time it was started)."""
        log = node.layout.system_log
        offset = log.stat().st_size if log.exists() else 0
        node.popen = self._spawn(node, cmd)
        return offset, time.monotonic()

    def _await_node(self, node: LocalNode, log_offset: int, started: float, timeout_s: float) -> None:
        """Wait until the launched node serves CQL; ClusterError (the node stopped) when it dies or
        is not ready `timeout_s` after this call."""
        log = node.layout.system_log
        alive = lambda: node.popen.poll() is None  # noqa: E731
        try:
            # the log mark is written just before the CQL port is bound: wait for both
            ready = process.wait_for_log(log, log_offset, READY_MARK, alive, timeout_s) and \
                self._wait_for_port(node, alive, 30)
        except TimeoutError:
            process.terminate({node.popen.pid: node.layout.root}, timeout_s=10)
            raise ClusterError(f"{node.name} of cluster {self.name} was not CQL-ready after {timeout_s:.0f} s; "
                               f"stopped it.\n{node.log_tail()}") from None
        if not ready:
            rc = node.popen.poll()
            raise ClusterError(f"{node.name} of cluster {self.name} died during start (exit code {rc}) after "
                               f"{time.monotonic() - started:.1f} s.\n{node.log_tail()}")

    def _spawn(self, node: LocalNode, cmd: list[str]) -> subprocess.Popen | Any:
        """Start the node's server command (in its DC's namespace, if any); the handle has pid and poll()."""
        return process.spawn(self.dc_command(node.spec.dc, self.bounds.command(node.name, cmd)), node.layout.root,
                             node.layout.stdout_log, node.layout.pid_file)

    # -- stop ----------------------------------------------------------------------------------
    def stop(self, timeout_s: float = 60.0, kill: bool = False) -> list[str]:
        """SIGTERM every node of ours, SIGKILL after `timeout_s` (at once with `kill`: for a
        cluster whose data goes next). Returns the names of nodes that had to be killed. Never
        signals a process that is not this cluster's."""
        self.close()
        pids = {}
        names = {}
        stopped = []
        for n in self.nodes:
            pid = n.pid()
            if pid is not None:
                pids[pid], names[pid] = n.layout.root, n.name
                stopped.append(n)
        node_cgroups = self._cgroup_folders(pids)
        killed = process.terminate(pids, 0 if kill else timeout_s)
        self.bounds.release(node_cgroups)
        for n in self.nodes:
            if n.popen is not None:
                n.popen.poll()
                n.popen = None
            n.layout.pid_file.unlink(missing_ok=True)
        if self.network is None:
            self._wait_ports_free(stopped, timeout_s)
        self._network_down()
        if not any(n.is_running() for n in self.nodes):
            owners.remove("cluster", self.owner_key)
        return [names[pid] for pid in killed if pid in names]   # read before the pid files went

    @staticmethod
    def _wait_ports_free(nodes: list[LocalNode], timeout_s: float, poll_s: float = 0.2) -> None:
        """After the nodes exited: wait until the kernel has let go of their ports (a socket of an
        exited node can hold its JMX port for a while), so a start right after a stop (a cold
        restart) does not find them taken. Gives up silently after `timeout_s`: start() then
        names the port and who holds it."""
        uses = [u for n in nodes for u in n.port_uses()]
        deadline = time.monotonic() + timeout_s
        while uses and time.monotonic() < deadline:
            uses = [u for u in uses if not port_free(u.address, u.port)]
            if uses:
                time.sleep(poll_s)

    def destroy(self, timeout_s: float = 60.0) -> None:
        """Kill every node and remove the cluster's working folder (data, logs, conf). No
        graceful stop: its flushes and its shutdown announcement are for data that is removed
        next (3 idle nodes took 12.7 s to stop gracefully)."""
        self.stop(timeout_s, kill=True)
        if self.root.exists():
            shutil.rmtree(self.root)

    def __enter__(self) -> "LocalCluster":
        return self

    # -- owner record (cassperf.cluster.owners) ------------------------------------------------
    @property
    def owner_key(self) -> str:
        """The key of this cluster's owner record: <name>-<6 hex digits of its folder's path>."""
        return netns.network_id(self.name, self.root)

    def running_text(self) -> str:
        """`node1 pid 4242, node2 pid 4243` for the nodes that run, else `no node running`."""
        up = [f"{s.name} pid {s.pid}" for s in self.status() if s.up]
        return ", ".join(up) or "no node running"

    def _record_data(self) -> dict[str, Any]:
        nodes = []
        for n in self.nodes:
            pid, started = n.pid(), None
            if pid is not None:
                with contextlib.suppress(psutil.Error):
                    started = psutil.Process(pid).create_time()
            nodes.append({"name": n.name, "address": n.address, "folder": str(n.layout.root),
                          "pid_file": str(n.layout.pid_file), "pid": pid, "started": started})
        old = owners.read("cluster", self.owner_key)
        folders = sorted({*(old.data.get("cgroups") or [] if old is not None else []), *self.bounds.folders()})
        return {"name": self.name, "folder": str(self.root), "state": {**self._state(), "heap_mb": self.heap_mb},
                "network": self.network.id if self.network is not None else None, "nodes": nodes,
                "scratch": str(self.scratch) if self.scratch is not None else None,
                **({"cgroups": folders} if folders else {})}

    def _cgroup_folders(self, pids: dict[int, Path]) -> list[str]:
        """The node cgroups of this cluster's nodes: those the running nodes are in, and those its
        owner record names (a node that died left its cgroup behind)."""
        names = {pid: n.name for n in self.nodes if (pid := n.pid()) is not None}
        found = [str(f) for pid in pids if (c := cgroups.of_process(pid, names.get(pid, ""))) is not None
                 for f in c.folders]
        record = owners.read("cluster", self.owner_key)
        return found + list(record.data.get("cgroups") or [] if record is not None else [])

    def _claim(self) -> owners.Owner | None:
        """Record this cluster as this process's (or refresh the pids of a live owner's); the dead
        owner it was taken from, if any."""
        return owners.claim("cluster", self.owner_key, self._record_data())[1]

    def _take_over(self, taken: owners.Owner | None) -> None:
        """Say that this process took over running nodes from the dead owner `taken` (nothing when
        none of them runs: then only a record was left, and this start makes the cluster anew)."""
        running = self.running_text()
        if taken is None or running == "no node running":
            return
        self.adopted = owners.found(f"cluster {self.name} ({running})", taken, f"adopted by {owners.me().describe()}")
        self.say(self.adopted)

    def _adopt_running(self) -> None:
        """Every node runs: take the cluster (and its DC network) over when its owner is dead;
        a live owner's, a kept one and one without a record stay as they are."""
        record = owners.read("cluster", self.owner_key)
        if record is None or record.owner.alive():
            return
        taken = self._claim()
        if self.network is not None:
            self.network.claim()
        self._take_over(taken)
        for n in self.nodes:                      # its bounded nodes are governed from here on
            pid = n.pid()
            found = cgroups.of_process(pid, n.name) if pid is not None else None
            if found is not None:
                self.bounds.govern(n.name, found)

    def keep(self, by: str) -> None:
        """Hand the cluster and its DC network to the user (`by`: what did, e.g. "cassperf cluster
        start"): no run reaps them; they run until `stop()` / `cassperf cluster stop`. A page-cache
        bound is lifted (no process would follow the nodes' memory any more), and said."""
        lifted = self.bounds.lift()
        if lifted:
            self.say(f"cluster {self.name} is kept ({by}): the page-cache limits of {', '.join(lifted)} are lifted, "
                     "since no process follows their memory any more")
        owners.keep("cluster", self.owner_key, by)
        if self.network is not None:
            owners.keep("network", self.network.id, by)

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- tools ---------------------------------------------------------------------------------
    def access(self, create: bool = False) -> ClusterAccess | None:
        """The cluster's credentials for its management ports (cluster.access), made on the first
        start (`create`); None for a cluster never started with them (its nodes ask none)."""
        if not create and not (self.root / "access").exists():
            return None
        return ensure_access(self.root)

    def _write_cqlshrc(self, access: ClusterAccess) -> None:
        """access/cqlshrc (0600): cqlsh logs in with the cluster's role, over TLS with its CA."""
        lines = ["# cqlsh settings of this cluster (cassperf): cqlsh --cqlshrc <this file> <address> <port>"]
        if self.credentials_file is not None:
            lines += ["[authentication]", f"credentials = {access.cql_credentials_file}"]
        if self.tls is not None:
            lines += ["[connection]", "ssl = true", "[ssl]", f"certfile = {self.tls.ca_file}", "validate = true"]
        text = "\n".join(lines) + "\n"
        if not access.cqlshrc.exists() or access.cqlshrc.read_text() != text:
            access.cqlshrc.unlink(missing_ok=True)
            write_private(access.cqlshrc, text.encode())

    def cqlsh_command(self, node: str | int | LocalNode, *args: str, cqlsh: str | Path | None = None) -> list[str]:
        """cqlsh against `node` as the cluster's role (over TLS on a TLS cluster), through the
        cluster's cqlshrc (no password on the line), inside the node's DC namespace when it has
        one: subprocess.run(cluster.cqlsh_command(1, "-e", "SELECT ...")). `cqlsh`: the
        executable (default: the one beside this Python, else cqlsh on PATH)."""
        n = self.node(node)
        access = self.access()
        if access is None:
            raise ConfigError(f"cluster {self.name} has not been started here (no {self.root / 'access'})")
        exe = cqlsh or _cqlsh_executable()
        return self.dc_command(n.spec.dc, [str(exe), "--cqlshrc", str(access.cqlshrc), n.address,
                                           str(n.ports.native), *args])

    def nodetool_command(self, node: str | int | LocalNode, *args: str, read_only: bool = False) -> list[str]:
        """The java command line of nodetool against `node`, as the cluster's JMX admin user
        (`read_only`: its read-only user); the password stays in a file (-pwf), not on the line."""
        n = self.node(node)
        home = self.root / "nodetool-home"
        home.mkdir(parents=True, exist_ok=True)
        access = self.access()
        login = [] if access is None else ["-u", access.jmx_credentials(read_only).user,
                                           "-pwf", str(access.jmx_password_file)]
        return self._tool_command(n, [str(self.java().executable), "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                *CLIENT_JPMS, f"-Duser.home={home}",
                f"-Dlogback.configurationFile=file://{n.layout.conf / 'logback-tools.xml'}",
                "-cp", self.jars().classpath(n.layout.conf), "org.apache.cassandra.tools.NodeTool",
                "-h", "127.0.0.1", "-p", str(n.ports.jmx), *login, *args])

    def _tool_command(self, node: LocalNode, argv: list[str]) -> list[str]:
        """`argv` (a JVM tool such as nodetool) as a command that reaches `node`'s JMX port on 127.0.0.1."""
        return self.dc_command(node.spec.dc, argv)

    def nodetool(self, node: str | int | LocalNode, *args: str, timeout: float = 120.0) -> str:
        """Run nodetool against `node` and return its stdout; ToolError on failure or timeout."""
        return self._run_nodetool(self.nodetool_command(node, *args), args, timeout)

    def nodetool_read(self, node: str | int | LocalNode, *args: str, timeout: float = 120.0) -> str:
        """nodetool as the cluster's read-only JMX user (commands that only read: tablestats,
        compactionstats, tpstats, sjk mxdump); an operation is refused by the node."""
        return self._run_nodetool(self.nodetool_command(node, *args, read_only=True), args, timeout)

    def _run_nodetool(self, cmd: list[str], args: tuple[str, ...], timeout: float) -> str:
        shown = ["nodetool", "-p", cmd[cmd.index("-p") + 1], *args]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise ToolError(shown, None, exc.stdout or "", exc.stderr or "",
                            hint=f"nodetool did not answer within {timeout:.0f} s") from None
        if proc.returncode != 0:
            raise ToolError(shown, proc.returncode, proc.stdout, proc.stderr, hint=self._nodetool_hint(proc.stderr))
        return proc.stdout

    def _nodetool_hint(self, stderr: str) -> str:
        """What a refusal by the node's JMX means (the line sits high in a long Java trace)."""
        if "Access denied! Invalid access level" in stderr:
            return ("the node refused an operation to the read-only JMX user (nodetool_read is for commands "
                    "that only read); run it with nodetool()")
        if "Authentication failed!" in stderr:
            return (f"the node refused the JMX credential; its nodes take the users in {self.root / 'access'}"
                    "/jmxremote.password as they were when the nodes started (restart them after a change)")
        return ""

    def nodetool_process(self, node: str | int | LocalNode, *args: str) -> subprocess.Popen:
        """Start nodetool and return the handle (for long commands such as garbagecollect)."""
        return subprocess.Popen(self.nodetool_command(node, *args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def jolokia_endpoint(self, node: str | int | LocalNode) -> JolokiaEndpoint | None:
        """The node's Jolokia agent and the cluster's credential for it; None with jolokia=False."""
        if not self.use_jolokia:
            return None
        n = self.node(node)
        access = self.access()
        url, credentials = f"http://{n.address}:{n.ports.jolokia}/jolokia", None if access is None else access.jolokia
        if self.network is not None:
            return netns.NamespacedJolokiaEndpoint(url, credentials, namespace=self.network.namespace(n.spec.dc))
        return JolokiaEndpoint(url, credentials)

    def jolokia(self, node: str | int | LocalNode) -> JolokiaClient:
        """JMX over HTTP for one node (no JVM start per sample), with the cluster's credential."""
        endpoint = self.jolokia_endpoint(node)
        if endpoint is None:
            raise ConfigError(f"cluster {self.name} was created with jolokia=False")
        return JolokiaClient(endpoint)

    def local_nodes(self) -> list[LocalNodeRef]:
        return [LocalNodeRef(n.name, n.address, n.pid, tuple(str(f) for f in n.storage_folders())) for n in self.nodes]

    # -- distance between data centers (inter_dc_rtt_ms; cassperf.cluster.netns) ---------------
    def _place_on(self, addresses: list[str]) -> list[str]:
        """Give the nodes `addresses` (one each, topology order, IPv4); the list as placed."""
        placed = [str(a).strip() for a in addresses]
        if len(placed) != len(self.nodes) or len(set(placed)) != len(placed):
            raise ConfigError(f"node_addresses={placed!r}: expected {len(self.nodes)} distinct addresses, one per node "
                              f"of {self.topology.spec()}")
        for node, address in zip(self.nodes, placed, strict=True):
            try:
                ipaddress.IPv4Address(address)
            except ValueError:
                raise ConfigError(f"node_addresses: {address!r} is not an IPv4 address") from None
            node.spec = dataclasses.replace(node.spec, address=address)
        return placed

    def _place_in_namespaces(self, rtt_ms: float) -> None:
        """Give each node its address inside its DC's namespace and describe the network."""
        index = {dc.name: k for k, dc in enumerate(self.topology.datacenters, start=1)}
        position: dict[str, int] = {}
        for node in self.nodes:
            dc = node.spec.dc
            address = netns.node_address(self.first_address, index[dc], position.get(dc, 0))
            position[dc] = position.get(dc, 0) + 1
            node.spec = dataclasses.replace(node.spec, address=address)
        self.network = netns.DcNetwork(self.name, [dc.name for dc in self.topology.datacenters],
                                       [(n.spec.dc, n.address) for n in self.nodes], self.first_address,
                                       rtt_ms, self.root)

    def _start_with_network(self, timeout_s: float | None) -> "LocalCluster":
        assert self.network is not None
        self.network.check_support()
        to_start = [n for n in self.nodes if not n.is_running()]
        if len(to_start) < len(self.nodes) and not self.network.healthy():
            raise ClusterError(f"cluster {self.name}: nodes run but its DC network ({self.network.router}) is gone "
                               f"or its delay router died; stop the cluster and start it again")
        if not to_start:
            self._adopt_running()
            return self
        self._check_state_file()
        self.network.up()
        netns.watch_nodes(self.network, lambda: any(n.is_running() for n in self.nodes))
        try:
            with _signals_interrupt():
                return self._start(timeout_s)
        except BaseException:
            # stop what this start started; the network goes when no node of the cluster is left
            process.terminate({pid: n.layout.root for n in to_start if (pid := n.pid()) is not None}, timeout_s=30)
            if not any(n.is_running() for n in self.nodes):
                self.network.down()
            raise

    def _network_down(self) -> list[str]:
        """After stop: remove the DC network and any leftover of this cluster (namespaces
        cassperf-<name>-<folder hash>-*, router processes), also when this handle was made
        without the option."""
        if self.network is not None:
            return self.network.down()
        return netns.remove_leftovers(netns.network_id(self.name, self.root))

    def _check_ports(self, nodes: list[LocalNode]) -> None:
        for dc in dict.fromkeys(n.spec.dc for n in nodes):
            with self.in_dc(dc):
                check_ports([u for n in nodes if n.spec.dc == dc for u in n.port_uses()])

    def _wait_for_port(self, node: LocalNode, alive: Any, timeout_s: float) -> bool:
        with self.in_dc(node.spec.dc):
            return process.wait_for_port(node.address, node.ports.native, alive, timeout_s)

    def _netns_driver_kwargs(self, dc: str | None = None) -> dict[str, Any]:
        """Driver Cluster(...) arguments that open its sockets inside a DC's namespace: `dc`, else
        the DC namespace this thread is in (an in_dc() block, or a thread started in one), else
        the first DC's."""
        if self.network is None:
            return {}
        if dc is not None:
            namespace = self.network.namespace(dc)
        else:
            namespace = netns.current([lk.namespace for lk in self.network.links]) or self.network.links[0].namespace
        return {"connection_class": netns.connection_class(namespace)}

    @contextlib.contextmanager
    def in_dc(self, dc: str) -> Iterator[None]:
        """Run the block inside DC `dc`'s network namespace (this thread; threads and processes
        started in the block inherit it: `with cluster.in_dc("dc2"): run_workload(spec, cluster)`).
        Without inter_dc_rtt_ms every DC is on the host's loopback and the block runs as it is."""
        if dc not in {d.name for d in self.topology.datacenters}:
            raise ConfigError(f"cluster {self.name} has no data center {dc!r}; DCs: "
                              f"{', '.join(d.name for d in self.topology.datacenters)}")
        if self.network is None:
            yield
            return
        with netns.entered(self.network.namespace(dc)):
            yield

    def dc_command(self, dc: str, argv: list[str]) -> list[str]:
        """`argv` as a command that runs inside DC `dc`'s namespace (unchanged without one):
        subprocess.run(cluster.dc_command("dc2", ["cqlsh", address]))."""
        if self.network is None:
            return list(argv)
        return self.network.command(dc, argv)


def _storage_folders(yaml_conf: dict[str, Any]) -> list[Path]:
    """The folders a node reads and writes its data in (data_file_directories, commit log)."""
    folders = [Path(p) for p in yaml_conf.get("data_file_directories") or []]
    if yaml_conf.get("commitlog_directory"):
        folders.append(Path(yaml_conf["commitlog_directory"]))
    return folders


def _cqlsh_executable() -> str:
    """cqlsh beside this Python (the .venv's, from the test extras), else cqlsh on PATH."""
    beside = Path(sys.executable).with_name("cqlsh")
    if beside.exists():
        return str(beside)
    found = shutil.which("cqlsh")
    if not found:
        raise ConfigError("no cqlsh beside this Python nor on PATH; install it (pip install cqlsh==6.2.2, part of "
                          "cassperf's test extras)")
    return found


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt in the block (as Ctrl-C does), so a start
    they interrupt cleans up; on the main thread only (elsewhere signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    old = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
