"""The container runtime of container nodes: rootful podman with ``--rootfs`` (cassperf.cluster.rootfs),
an OCI runtime this machine accepts, a cgroup per container, and one line when it refuses.

Which OCI runtime: podman's own choice is tried first, then crun and runc: the first that starts
a container from the root filesystem here (``podman run --rm ... /bin/true`` with the node's own
options) is used for the life of the process (``runtime(rootfs)``). What each refused is kept
in ``Runtime.refused`` and shown in the facts. On the machine this was written on (cgroup v1
with a cgroup2 mount holding one controller), crun 1.8.1 refused ("cgroups in hybrid mode not
supported, drop all controllers from cgroupv2") and runc 1.1.5 ran.

Options every container gets (``base_options``):

- ``--rootfs PATH:O``: the cached root filesystem as a read-only lower layer under an overlay
  whose upper layer podman keeps per container and removes with it (the cache never changes).
- ``--ulimit nofile=...,nproc=...``: this process's own limits. Podman asks for 1048576 open
  files by default, which a root without CAP_SYS_RESOURCE cannot grant ("setrlimit
  RLIMIT_NOFILE: Operation not permitted"); podman lowers its own RLIMIT_NPROC to 32768 at start,
  so nproc is capped there.
- ``--cgroup-parent``: the container's cgroup sits under this process's own (cgroup v1: its
  memory cgroup's path, in every hierarchy) in a folder ``cassperf-<netid>``, so it stays inside
  the session that made it; ``remove_cgroups`` removes those folders after the container.
- ``--label cassperf.network=<netid>``: how ``remove_containers`` finds a cluster's containers,
  also after a killed process.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from cassperf.constraints import Whole
from cassperf.errors import ClusterError, ConfigError

PODMAN = "podman"
LABEL = "cassperf.network"
OCI_RUNTIMES = ("crun", "runc")
#: podman 4.3 lowers its own RLIMIT_NPROC to this at start (measured: its conmon runs with 32768)
PODMAN_NPROC = 32768
CGROUP_ROOT = Path("/sys/fs/cgroup")


class ContainerRefused(ClusterError):
    """This machine does not let cassperf run a container node; the message is one line, the
    runtime's own error where there is one."""


@dataclass(frozen=True)
class Limits:
    """cgroup limits of each container: none by default (as ``docker run`` without options)."""

    cpus: float | None = None           # CPU time, in cores (podman --cpus)
    memory_mb: int | None = None        # memory, MB (podman --memory)

    def __post_init__(self) -> None:
        if self.cpus is not None and (isinstance(self.cpus, bool) or not self.cpus > 0):
            raise ConfigError(f"container limits: cpus={self.cpus!r}: expected a number of cores > 0, or None")
        if self.memory_mb is not None and not Whole(1).accepts(self.memory_mb):
            raise ConfigError(f"container limits: memory_mb={self.memory_mb!r}: expected whole MB >= 1, or None")

    @property
    def label(self) -> str:
        """``none``, or e.g. ``cpus=1.5,memory_mb=4096`` (the runs' ``container_limits`` label)."""
        parts = [f"cpus={self.cpus:g}" if self.cpus is not None else "",
                 f"memory_mb={self.memory_mb}" if self.memory_mb is not None else ""]
        return ",".join(p for p in parts if p) or "none"

    def options(self) -> list[str]:
        return ([f"--cpus={self.cpus:g}"] if self.cpus is not None else []) + \
               ([f"--memory={self.memory_mb}m"] if self.memory_mb is not None else [])


@dataclass(frozen=True)
class Runtime:
    """What runs the containers here (the report's facts)."""

    podman_version: str
    oci_runtime: str                # crun | runc
    oci_version: str                # first line of `<runtime> --version`
    cgroup_version: str             # v1 | v2
    cgroup_manager: str             # cgroupfs | systemd
    storage: str                    # how the root filesystem is mounted
    refused: tuple[str, ...] = field(default=())   # "crun: <its error>" for each runtime that refused

    def describe(self) -> dict[str, str]:
        return {"podman": self.podman_version, "oci_runtime": f"{self.oci_runtime} {self.oci_version}",
                "cgroup": f"{self.cgroup_version} ({self.cgroup_manager})", "storage": self.storage,
                **({"refused": "; ".join(self.refused)} if self.refused else {})}


def error_line(text: str) -> str:
    """The runtime's own error in one line: podman's last ``Error: ...`` line, else the last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln.removeprefix("Error: ") for ln in lines if ln.startswith("Error: ")]
    return (errors or lines or ["no output"])[-1]


def podman(*args: str, timeout: float = 120.0, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``podman ARGS``; ContainerRefused with podman's own error line when it fails and ``check``."""
    try:
        proc = subprocess.run([PODMAN, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"`podman {' '.join(args[:2])} ...` did not answer within {timeout:.0f} s") from None
    if check and proc.returncode != 0:
        raise ContainerRefused(f"podman {args[0]}: {error_line(proc.stderr or proc.stdout)}")
    return proc


def check_host() -> None:
    """ContainerRefused (one line) unless podman can be asked here: installed, as root."""
    if shutil.which(PODMAN) is None:
        raise ContainerRefused("podman is not installed: run `make container` as root (Debian packages podman, runc, "
                               "debootstrap)")
    if os.geteuid() != 0:
        raise ContainerRefused(f"container nodes run under rootful podman, which needs root (running as uid "
                               f"{os.geteuid()})")
    if not Path("/proc/self/ns/net").exists():
        raise ContainerRefused("this kernel has no network namespaces (/proc/self/ns/net is missing)")


def info() -> dict:
    """``podman info`` as a dict (host: cgroup version and manager, OCI runtime; store: graph driver)."""
    check_host()
    return json.loads(podman("info", "--format", "json", timeout=60).stdout)


def ulimit_options() -> list[str]:
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    nproc = [min(v if v != resource.RLIM_INFINITY else PODMAN_NPROC, PODMAN_NPROC)
             for v in resource.getrlimit(resource.RLIMIT_NPROC)]
    return [f"--ulimit=nofile={nofile[0]}:{nofile[1]}", f"--ulimit=nproc={nproc[0]}:{nproc[1]}"]


def own_cgroup() -> tuple[str, str]:
    """(cgroup version, this process's cgroup path): v1 the memory hierarchy's path, v2 the unified one."""
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return "v1", path
    return "v2", next((ln.split(":", 2)[2] for ln in lines if ln.startswith("0::")), "/")


def cgroup_parent(netid: str) -> str:
    """The cgroup folder the cluster's containers go under (see the module docstring)."""
    return f"{own_cgroup()[1].rstrip('/')}/cassperf-{netid}"


def run_options(rootfs: Path, netid: str, network: str, limits: Limits) -> tuple[list[str], str]:
    """(podman run options, the rootfs argument that follows them: ``PATH:O``)."""
    return ([f"--network={network}", f"--cgroup-parent={cgroup_parent(netid)}", f"--label={LABEL}={netid}",
             *ulimit_options(), *limits.options(), "--rootfs"], f"{rootfs}:O")


_CHOSEN: dict[tuple[Path, Limits], Runtime] = {}


def runtime(rootfs: Path, netid: str, limits: Limits) -> Runtime:
    """The OCI runtime that starts a container here (module docstring), tried once per root
    filesystem, limits and process; ContainerRefused with each runtime's own error when none does."""
    if (rootfs, limits) in _CHOSEN:
        return _CHOSEN[(rootfs, limits)]
    facts = info()
    host = facts.get("host", {})
    default = (host.get("ociRuntime") or {}).get("name", "")
    refused = []
    trial = f"{netid}-trial"       # its own label and cgroup: the clean-up never touches the cluster's running nodes
    for name in dict.fromkeys([default, *OCI_RUNTIMES]):
        if not name or shutil.which(name) is None:
            continue
        options, root_arg = run_options(rootfs, trial, "none", limits)
        made = cgroups_to_make(trial)
        try:
            proc = podman("--runtime", name, "run", "--rm", *options, root_arg, "/bin/true", check=False)
        finally:
            remove_containers(trial)
            remove_cgroups(trial, made)
        if proc.returncode != 0:
            refused.append(f"{name}: {error_line(proc.stderr or proc.stdout)}")
            continue
        version = subprocess.run([name, "--version"], capture_output=True, text=True, timeout=30).stdout
        chosen = Runtime(str(facts.get("version", {}).get("Version", "?")), name,
                         (version.splitlines() or ["?"])[0].removeprefix(f"{name} version ").strip(),
                         str(host.get("cgroupVersion", "?")), str(host.get("cgroupManager", "?")),
                         f"{facts.get('store', {}).get('graphDriverName', '?')} over the root filesystem "
                         "(podman --rootfs PATH:O: read-only lower layer, upper layer per container)", tuple(refused))
        _CHOSEN[(rootfs, limits)] = chosen
        return chosen
    if not refused:
        raise ContainerRefused(f"no OCI runtime ({', '.join(OCI_RUNTIMES)}) is installed: run `make container` as root")
    raise ContainerRefused("no OCI runtime starts a container here: " + "; ".join(refused))


# -- clean-up ------------------------------------------------------------------------------------
def containers(netid: str) -> list[str]:
    """Names of the containers (any state) of the cluster ``netid``."""
    if shutil.which(PODMAN) is None:
        return []
    proc = podman("ps", "-a", "--filter", f"label={LABEL}={netid}", "--format", "{{.Names}}", check=False)
    return proc.stdout.split() if proc.returncode == 0 else []


def remove_containers(netid: str) -> list[str]:
    """Remove every container of the cluster ``netid`` (killing any still running). Returns their names."""
    names = containers(netid)
    if names:
        podman("rm", "--force", "--time=0", *names)
    return names


def _hierarchies() -> list[Path]:
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        return [CGROUP_ROOT]           # cgroup v2 alone: one hierarchy at the root
    return sorted(p for p in CGROUP_ROOT.iterdir() if p.is_dir() and not p.is_symlink()) \
        if CGROUP_ROOT.is_dir() else []


def cgroups_to_make(netid: str) -> list[Path]:
    """The cgroup folders podman will make for the cluster ``netid`` (its parent and the folders
    above it that do not exist yet, in every hierarchy): record them before the first container,
    give them to ``remove_cgroups`` after the last."""
    parts = Path(cgroup_parent(netid).lstrip("/")).parts
    return [top.joinpath(*parts[:k]) for top in _hierarchies() for k in range(1, len(parts) + 1)
            if not top.joinpath(*parts[:k]).exists()]


def remove_cgroups(netid: str, made: list[Path] | tuple[Path, ...] = (), wait_s: float = 10.0) -> list[Path]:
    """Remove the cluster's cgroup parent in every hierarchy (and what is left under it), then the
    folders in ``made`` (cgroups_to_make), deepest first. The parent's folders are retried for up
    to ``wait_s`` while busy: a conmon whose container failed leaves its cgroup a moment after
    podman returned. A folder in ``made`` that another process or cgroup uses stays (the kernel
    refuses it). Returns the folders removed."""
    leaves = [top / cgroup_parent(netid).lstrip("/") for top in _hierarchies()]
    removed = []

    def sweep(dirs: list[Path]) -> None:
        for d in sorted(dict.fromkeys(dirs), key=lambda p: len(p.parts), reverse=True):
            try:
                d.rmdir()
                removed.append(d)
            except OSError:
                pass

    deadline = time.monotonic() + wait_s
    while True:
        left = [d for leaf in leaves if leaf.is_dir() for d in [leaf, *leaf.glob("**/")]]
        sweep(left)
        if not any(leaf.is_dir() for leaf in leaves) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    sweep([d for d in made if d.is_dir()])
    return removed
