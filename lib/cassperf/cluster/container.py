"""ContainerCluster: a LocalCluster whose nodes run in containers (rootful podman, ``--rootfs``), so
the same Cassandra and Java can be measured on the host and in a container.

    with ContainerCluster("ct", "dc1:1", java=17, first_address="127.0.50.1") as c:
        c.start()                                   # builds the root filesystem on first use
        c.session().execute("SELECT release_version FROM system.local")
        c.nodetool("node1", "status"); c.jolokia("node1").gc(); c.runtime_facts()

Everything but where the JVM runs is LocalCluster's: the node's configuration (nodeconf), its
credentials (``<cluster>/access/``), pid files, stop and clean-up. Each node is one container:

- root filesystem: Debian minbase plus the Java major's headless JRE (cassperf.cluster.rootfs),
  mounted as an overlay's read-only lower layer (podman ``--rootfs PATH:O``);
- the Cassandra jars, the Jolokia agent and the cluster's folder bind-mounted at their own
  paths (read-only but the cluster folder), so the node's command line is the host's, with the
  JRE of the root filesystem; data, commit log, hints and logs land in the node's folder;
- network: one network namespace of the cluster's own (``cassperf-<name>-<hash>-dc1``, as a
  one-DC ``inter_dc_rtt_ms`` cluster's), loopback only, joined with ``--network ns:``; the
  nodes listen on their 127.x addresses there. Nothing is added to the host's network: the
  workbook reaches the nodes by entering the namespace, as for DC namespaces (the driver
  sessions, the engine's workers, the sampler's Jolokia requests; ``in_dc``/``dc_command``);
- cgroups: one per container (as Docker), limits from ``limits`` (none by default);
- pid file: the JVM's pid as the host sees it, so the sampler's node CPU is the JVM's, and
  stop() signals the JVM itself (SIGTERM, then SIGKILL), as on the host;
- nodetool runs inside the node's container (``podman exec``).

stop() removes the containers, the namespace and the cgroup folders, also after a start that
failed; at interpreter exit a network whose nodes are gone is removed. Where the machine
refuses (no podman, not root, no such JRE in Debian, a runtime error), start() raises
podman.ContainerRefused with one line, the runtime's own error where there is one.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cassperf.cluster import netns, process
from cassperf.cluster import podman as pm
from cassperf.cluster import rootfs as rootfsmod
from cassperf.cluster.java import Java, check_java_for
from cassperf.cluster.jars import DEFAULT_VERSION
from cassperf.cluster.local import LocalCluster, LocalNode
from cassperf.errors import ConfigError

#: cassandra.yaml keys naming folders: bind-mounted too when an override puts them outside the cluster folder
_DIR_KEYS = ("data_file_directories", "commitlog_directory", "hints_directory", "saved_caches_directory",
             "cdc_raw_directory")


class ContainerNetwork:
    """The nodes' network: one namespace of the cluster's own, loopback only (module docstring).
    Offers what LocalCluster asks of a DC network (namespace, command, links, up, down)."""

    rtt_ms = None

    def __init__(self, cluster: str, state_dir: Path) -> None:
        self.cluster = cluster
        self.id = netns.network_id(cluster, state_dir)
        self.router = netns.dc_namespace(self.id, 1)        # the one namespace (named in messages as the router)
        self.links = [netns.DcLink("*", 1, self.router, ipaddress.IPv4Network("127.0.0.0/8"), "127.0.0.1", "lo")]
        self.state_dir = state_dir
        self.mode = "namespace"

    @property
    def podman_network(self) -> str:
        return f"ns:{netns.NETNS_DIR / self.router}"

    @property
    def cgroups_file(self) -> Path:
        return self.state_dir / "container-cgroups.json"

    def namespace(self, dc: str) -> str:
        return self.router

    def command(self, dc: str, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.router, *argv]

    def describe(self) -> dict[str, Any]:
        return {"mode": f"network namespace {self.router} of its own, loopback only (podman --network "
                        f"{self.podman_network}); clients enter it", "namespaces": {"*": self.router}}

    def check_support(self) -> None:
        pm.check_host()
        if shutil.which("ip") is None:
            raise pm.ContainerRefused("container nodes need iproute2's `ip` (apt-get install iproute2)")

    def healthy(self) -> bool:
        return self.router in netns.namespaces()

    def up(self) -> bool:
        """Make the namespace (and note the cgroup folders podman will make) unless it is there."""
        if self.healthy():
            return False
        self.down()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.cgroups_file.write_text(json.dumps([str(p) for p in pm.cgroups_to_make(self.id)]))
        try:
            netns.ip("netns", "add", self.router)
            netns.ip("-n", self.router, "link", "set", "lo", "up")
        except BaseException:
            self.down()
            raise
        return True

    def down(self) -> list[str]:
        """Remove the cluster's containers, its namespace (and what still runs there) and its
        cgroup folders, made now or left by a killed process. Returns what was removed."""
        removed = [f"container {name}" for name in pm.remove_containers(self.id)]
        removed += netns.remove_leftovers(self.id)
        try:
            made = [Path(p) for p in json.loads(self.cgroups_file.read_text())]
        except (OSError, ValueError):
            made = []
        removed += [f"cgroup {d}" for d in pm.remove_cgroups(self.id, made)]
        self.cgroups_file.unlink(missing_ok=True)
        return removed


class ContainerProcess:
    """A node's JVM in its container, as LocalCluster holds a Popen: pid (the host's) and poll()."""

    def __init__(self, container: str, pid: int, node_root: Path) -> None:
        self.container = container
        self.pid = pid
        self.node_root = node_root
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """None while the JVM runs; then the container's exit code (-1 when podman no longer knows it)."""
        if self.returncode is None and not (self.pid and process.is_ours(self.pid, self.node_root)):
            proc = pm.podman("inspect", "--format", "{{.State.Running}} {{.State.ExitCode}}", self.container,
                             check=False)
            running, _, code = proc.stdout.strip().partition(" ")
            if proc.returncode == 0 and running == "true" and self.pid:
                return None
            self.returncode = int(code) if proc.returncode == 0 and code.lstrip("-").isdigit() else -1
        return self.returncode


class ContainerCluster(LocalCluster):
    """LocalCluster whose nodes run in containers (module docstring).

    java        Java major of the nodes' JRE (a Debian headless JRE: 11, 17 or 21)
    limits      cgroup limits of each node's container (podman.Limits); None: none
    other keywords as LocalCluster (not inter_dc_rtt_ms, not java_home)
    """

    #: its JRE is the root filesystem's, and the archive's folder is not mounted
    uses_class_archive = False

    def __init__(self, name: str = "cassperf", topology: str = "dc1:1", version: str = DEFAULT_VERSION, *,
                 java: int = 17, limits: pm.Limits | None = None, **kwargs: Any) -> None:
        for key in ("inter_dc_rtt_ms", "java_home"):
            if kwargs.get(key) is not None:
                raise ConfigError(f"ContainerCluster: {key} is not for container nodes (java= picks the JRE of "
                                  "the root filesystem; the nodes share one namespace)")
        for key in ("page_cache_mb", "read_mb_s", "read_iops"):
            if kwargs.get(key) is not None:
                raise ConfigError(f"ContainerCluster: {key} is not for container nodes (their cgroups are podman's: "
                                  "limits=Limits(memory_mb=...) bounds a container's memory)")
        super().__init__(name, topology, version, **kwargs)
        self.java_major = java
        self.limits = limits or pm.Limits()
        self.network = ContainerNetwork(self.name, self.root)
        self._rootfs: rootfsmod.Rootfs | None = None
        self._runtime: pm.Runtime | None = None

    # -- what runs the nodes -----------------------------------------------------------------
    def rootfs(self) -> rootfsmod.Rootfs:
        """The nodes' root filesystem, built on first use (cassperf.cluster.rootfs)."""
        if self._rootfs is None:
            import os

            from cassperf.config import BATCH_ENV

            # under cassperf report the build's two lines would stand above the findings (ipykernel
            # forwards stderr into the page); the report's setting paragraph names the rootfs
            quiet = bool(os.environ.get(BATCH_ENV))
            self._rootfs = rootfsmod.ensure_rootfs(self.java_major, progress=None) if quiet else \
                rootfsmod.ensure_rootfs(self.java_major)
        return self._rootfs

    def runtime(self) -> pm.Runtime:
        """podman and the OCI runtime that starts containers here (tried once)."""
        if self._runtime is None:
            self._runtime = pm.runtime(self.rootfs().path, self.network.id, self.limits)
        return self._runtime

    def runtime_facts(self) -> dict[str, str]:
        """What ran the nodes, for a report: podman and OCI runtime versions, cgroup version and
        manager, network mode, storage, root filesystem and JRE, limits."""
        return {**self.runtime().describe(), "network": self.network.describe()["mode"], **self.rootfs().describe(),
                "limits": self.limits.label}

    def java(self) -> Java:
        """The JRE of the root filesystem (its path inside the containers)."""
        if self._java is None:
            fs = self.rootfs()
            java = Java(fs.java, fs.java_major, fs.java_version)
            check_java_for(self.version, java)
            self._java = java
        return self._java

    @property
    def description(self) -> dict[str, Any]:
        known = self._runtime is not None and self._rootfs is not None
        return {**super().description, "container": self.runtime_facts() if known else {"limits": self.limits.label}}

    def _state(self) -> dict[str, Any]:
        return {**super()._state(), "runtime": "container", "java": self.java_major}

    def container_name(self, node: str | int | LocalNode) -> str:
        return f"cassperf-{self.network.id}-{self.node(node).name}"

    # -- LocalCluster's hooks ----------------------------------------------------------------
    def _mounts(self) -> list[str]:
        """--volume options: the jars, the role manager's class and the Jolokia agent read-only, the
        cluster folder and any folder a yaml override puts outside it read-write, each at its own path."""
        ro = [self.jars().lib_dir] + ([self.auth_classes] if self.auth_classes else []) + \
            ([_jolokia_dir()] if self.use_jolokia else [])
        rw = [self.root]
        for key in _DIR_KEYS:
            value = self.yaml_overrides.get(key)
            for folder in (value if isinstance(value, list) else [value] if value else []):
                path = Path(folder)
                if not path.is_relative_to(self.root):
                    path.mkdir(parents=True, exist_ok=True)
                    rw.append(path)
        for path in ro + rw:
            if ":" in str(path) or "," in str(path):
                raise ConfigError(f"{path}: a ':' or ',' in a folder a container mounts; move it")
        return [f"--volume={p}:{p}:ro" for p in ro] + [f"--volume={p}:{p}" for p in rw]

    def _spawn(self, node: LocalNode, cmd: list[str]) -> ContainerProcess:
        runtime = self.runtime()
        name = self.container_name(node)
        options, root_arg = pm.run_options(self.rootfs().path, self.network.id, self.network.podman_network,
                                           self.limits)
        pm.podman("rm", "--force", "--time=0", name, check=False)       # an exited one of an earlier start
        pm.podman("--runtime", runtime.oci_runtime, "run", "--detach", f"--name={name}",
                  f"--hostname={node.name}", f"--add-host={node.name}:{node.address}",   # Cassandra resolves its host name
                  f"--workdir={node.layout.root}", "--log-driver=k8s-file", f"--log-opt=path={node.layout.stdout_log}",
                  *self._mounts(), *options, root_arg, *cmd)
        pid = int(pm.podman("inspect", "--format", "{{.State.Pid}}", name).stdout.strip() or 0)
        node.layout.pid_file.write_text(f"{pid}\n")
        return ContainerProcess(name, pid, node.layout.root)

    def _tool_command(self, node: LocalNode, argv: list[str]) -> list[str]:
        return [pm.PODMAN, "exec", self.container_name(node), *argv]


def _jolokia_dir() -> Path:
    from cassperf.cluster import jars

    return jars.resolve_jolokia().parent


def availability(java: int) -> tuple[bool, str]:
    """Whether a container node of that Java major can be made here, without starting one: podman
    answers as root, Debian has the JRE, and the root filesystem is cached or can be built.
    (False, the reason in one line) otherwise; the runtime's trial run comes at start."""
    try:
        suite = rootfsmod.suite_for(java)
        facts = pm.info()
    except pm.ContainerRefused as exc:          # RootfsRefused too
        return False, str(exc)
    host = facts.get("host", {})
    fs = rootfsmod.find(java)
    if fs is None and shutil.which("debootstrap") is None:
        return False, "debootstrap is not installed: run `make container` as root (apt-get install debootstrap)"
    where = f"root filesystem {fs.path}" if fs else f"root filesystem built at start (debootstrap {suite})"
    return True, (f"podman {facts.get('version', {}).get('Version', '?')}, cgroup {host.get('cgroupVersion', '?')}, "
                  f"{where}")


@contextlib.contextmanager
def container_node(name: str, version: str = DEFAULT_VERSION, java: int = 17, first_address: str = "127.0.0.1",
                   heap_mb: int = 768, root: Path | None = None, limits: pm.Limits | None = None,
                   **kwargs: Any) -> Iterator[ContainerCluster]:
    """A started one-node ContainerCluster; on leaving the block its node is stopped and its
    containers, namespace and cgroups removed (also when the start failed)."""
    cluster = ContainerCluster(name, "dc1:1", version, java=java, limits=limits, first_address=first_address,
                               heap_mb=heap_mb, root=root, **kwargs)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
