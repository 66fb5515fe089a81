"""Clients placed where a study puts them, started together, each stored as a run.

    with ClientPlacement(cluster, locations(["dc1", "dc2"])) as place:
        group = place.run_together([ClientJob("dc1-c1", spec_dc1, labels), ClientJob("dc2-c1", spec_dc2, labels)])

The engine is Dask distributed: one Dask worker per client location (``dc1-c1``, ``dc2-c1``,
...), each running one client at a time. On this machine the workers are local processes
(a ``SpecCluster`` of Nannies) and a client's task enters its DC's network namespace before it
starts the load engine (``cluster.in_dc``: the engine's worker processes inherit it), so dc2's
client sends from dc2's side of the delay. With client hosts (``client_hosts``:
``"dc1=vm-a+vm-b,dc2=vm-c+vm-d"``) distributed's SSHCluster machinery (asyncssh) starts the
scheduler on ``scheduler_host`` and one worker on each host over SSH (cassperf.experiments.
ssh_hosts: keys, pinned host keys, the TLS files and the CQL role kept off command lines); the
tasks are the same, each run also labelled ``host``, and an embedded cluster is reached from the
hosts over the network as a user's cluster (each DC's node addresses).

Together: every job is submitted at once and runs ``run_spec`` with its own local DC
(token-aware, DC-aware routing to that DC's nodes) and its labels plus ``dc`` and ``client``.
Each client sets its load up (imports, connections, the engine's worker processes: seconds, and
not the same for every client on a busy machine), then meets the others (:func:`meeting`, a
Dask Event per client on the scheduler) and starts its warm-up and measured load when all are
ready; a tool other than the engine waits for one common start instant (``start_delay_s`` after
submission) instead. Each run's manifest records its ``t0_epoch_s``, so the overlap is known.

A client that dies (its worker process killed, a machine lost) fails only its own task: Dask
is told never to retry a task on another worker (``allowed-failures: 0``) and each task is
pinned to its location. The other clients' runs go on and are stored complete; the dead
client's run folder, when it has one, is marked failed; the group is recorded as partial in
``<runs>/.groups/<group>.json`` (a dot folder: the run catalog passes it by) and in the returned :class:`Group`.

Security: the scheduler and workers talk TLS with per-experiment certificates, mutual
authentication, encryption required (cassperf.experiments.dask_tls).
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cassperf.constraints import Whole, check
from cassperf.errors import ConfigError
from cassperf.experiments.cluster_recipe import handle_recipe, make_handle
from cassperf.workload.spec import WorkloadSpec

#: seconds between submitting a group and its common start instant (worker start-up, imports)
START_DELAY_S = 3.0
#: where group records are kept, in the runs folder (a dot folder: the run catalog passes it by)
GROUPS = ".groups"
#: seconds a client waits for the others of its group to be ready before it starts anyway
MEET_TIMEOUT_S = 60.0
#: seconds to wait for a lost client's worker to come back before the next job
RECOVER_S = 60.0
#: the Dask configuration of a placement: never retry a client's task elsewhere, no dashboard
DASK_CONFIG = {"distributed.scheduler.allowed-failures": 0, "distributed.worker.daemon": False,
               "distributed.scheduler.work-stealing": False}


@dataclass(frozen=True)
class Location:
    """Where one client runs: ``name`` (``dc1-c1``), its ``dc``, and ``host`` ("local": this
    machine, inside the DC's namespace when the cluster has one; else a client machine)."""

    name: str
    dc: str
    host: str = "local"


def locations(dcs: Sequence[str], clients_per_dc: int = 1, client_hosts: str | Mapping[str, Sequence[str]] = "") \
        -> list[Location]:
    """The client locations: ``clients_per_dc`` local ones per DC, or the hosts ``client_hosts``
    names per DC (``"dc1=vm-a+vm-b,dc2=vm-c"`` or ``{"dc1": ["vm-a", "vm-b"], ...}``)."""
    check("clients_per_dc", clients_per_dc, Whole(1))
    hosts = parse_client_hosts(client_hosts) if isinstance(client_hosts, str) else \
        {dc: list(h) for dc, h in client_hosts.items()}
    unknown = [dc for dc in hosts if dc not in dcs]
    if unknown:
        raise ConfigError(f"client_hosts names DC {unknown[0]!r}, which the study does not use; DCs: {', '.join(dcs)}")
    out = []
    for dc in dcs:
        names = hosts.get(dc) or ["local"] * clients_per_dc
        out += [Location(f"{dc}-c{i}", dc, host) for i, host in enumerate(names, start=1)]
    return out


def parse_client_hosts(text: str) -> dict[str, list[str]]:
    """``"dc1=vm-a+vm-b,dc2=vm-c"`` -> ``{"dc1": ["vm-a", "vm-b"], "dc2": ["vm-c"]}``; "" -> {}."""
    out: dict[str, list[str]] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        dc, sep, names = part.partition("=")
        hosts = [h.strip() for h in names.split("+") if h.strip()]
        if not sep or not dc.strip() or not hosts:
            raise ConfigError(f"client_hosts {part!r}: expected DC=HOST[+HOST...][,DC=HOST...], "
                              f"e.g. 'dc1=10.0.0.20+10.0.0.21,dc2=10.1.0.20'")
        out[dc.strip()] = hosts
    return out


@dataclass(frozen=True)
class ClientJob:
    """One client's run in a group: where (a location name), what, with which labels."""

    location: str
    spec: WorkloadSpec
    labels: Mapping[str, str]
    tool: str = "engine"
    options: Mapping[str, Any] = field(default_factory=dict)   # run_spec options of this client alone (sampler)


@dataclass
class ClientResult:
    location: str
    dc: str
    run_id: str
    status: str              # "ran", "failed" (stored, marked failed), "died" (the client was lost)
    note: str = ""


@dataclass
class Group:
    """A group of simultaneous client runs; ``partial`` when any client did not finish."""

    group: str
    labels: dict[str, str]
    results: list[ClientResult] = field(default_factory=list)
    traffic: list[dict[str, Any]] = field(default_factory=list)   # network rates per DC (watch_network)

    @property
    def partial(self) -> bool:
        return any(r.status != "ran" for r in self.results)

    def record(self) -> dict[str, Any]:
        return {"group": self.group, "labels": self.labels, "partial": self.partial,
                "clients": [asdict(r) for r in self.results], "traffic": self.traffic}


def cluster_role(cluster: Any) -> Any:
    """The CQL role the clients on client hosts log in with (ssh_hosts.Role), or None: an
    embedded cluster's own role (its access folder), a user's cluster's from the environment
    variables its handle names."""
    from cassperf.experiments.ssh_hosts import Role

    access = cluster.access(create=False) if getattr(cluster, "credentials_file", None) is not None else None
    if access is not None:
        return Role(access.cql.user, access.cql.password)
    names = cluster.credential_env() if hasattr(cluster, "credential_env") else None
    if names and os.environ.get(names[0]) and os.environ.get(names[1]) is not None:
        return Role(os.environ[names[0]], os.environ[names[1]])
    return None


def client_task(recipe: tuple[str, dict[str, Any]], dc: str, spec: WorkloadSpec, labels: dict[str, str], tool: str,
                root: str, run_id: str, start_epoch_s: float, options: dict[str, Any],
                meet: tuple[str, str, tuple[str, ...]] | None = None, role: Any = None) -> dict[str, Any]:
    """What a Dask worker runs for one client: enter the DC (on a namespaced local cluster),
    run_spec, return the run's id and verdict. ``meet`` = (group, this location, every location
    of the group): the client starts its load when every client of the group is ready
    (:func:`meeting`); without it, at ``start_epoch_s``. ``role`` (on client hosts): the CQL
    role, in this process's environment while the client runs (ssh_hosts.role_environment)."""
    from cassperf.experiments.ssh_hosts import role_environment

    with role_environment(role):
        return _client_run(recipe, dc, spec, labels, tool, root, run_id, start_epoch_s, options, meet)


def _client_run(recipe: tuple[str, dict[str, Any]], dc: str, spec: WorkloadSpec, labels: dict[str, str], tool: str,
                root: str, run_id: str, start_epoch_s: float, options: dict[str, Any],
                meet: tuple[str, str, tuple[str, ...]] | None) -> dict[str, Any]:
    from cassperf.workload.run import run_spec

    cluster = make_handle(recipe, dc)
    try:
        delay = start_epoch_s - time.time()
        if delay > 0 and meet is None:
            time.sleep(delay)
        place = cluster.in_dc(dc) if getattr(cluster, "network", None) is not None else nullcontext()
        with place:
            run = run_spec(spec, cluster, tool=tool, labels=labels, root=root, run_id=run_id, progress=False,
                           raise_on_failure=False, ready=meeting(*meet) if meet else None, **options)
        return {"run_id": run.run_id, "failed": bool(run.manifest.get("failed")),
                "failure": str(run.manifest.get("failure") or "")}
    finally:
        cluster.close()


def meeting(group: str, me: str, everyone: Sequence[str], timeout_s: float = MEET_TIMEOUT_S) -> Any:
    """A callable for run_spec's ``ready``: it tells the group that this client's load is ready
    to start (a Dask Event on the scheduler, ``<group>-<location>``), then waits until every
    client of the group has said so, at most ``timeout_s`` (a client lost before it was ready
    does not hold the others back longer). So the clients' measured loads start within the
    scheduler's round trips of each other, whatever their set-up took (imports, connections)."""
    def ready() -> None:
        from distributed import Event

        Event(f"{group}-{me}").set()
        deadline = time.monotonic() + timeout_s
        for name in everyone:
            Event(f"{group}-{name}").wait(timeout=max(0.0, deadline - time.monotonic()))
    return ready


# -- the placement --------------------------------------------------------------------------------
class ClientPlacement:
    """A Dask cluster with one worker per client location (module doc). A context manager:
    the workers, the scheduler and the certificates go on exit."""

    def __init__(self, cluster: Any, places: Sequence[Location], *, root: str | Path | None = None,
                 ssh_options: Mapping[str, Any] | None = None, scheduler_host: str = "127.0.0.1",
                 start_delay_s: float = START_DELAY_S) -> None:
        from cassperf import config

        if not places:
            raise ConfigError("no client locations: give at least one DC")
        names = [p.name for p in places]
        if len(set(names)) != len(names):
            raise ConfigError(f"client locations must have distinct names, got {names}")
        self.cluster, self.places = cluster, list(places)
        self.root = Path(root) if root is not None else config.runs_dir()
        self.ssh_options = dict(ssh_options or {})
        self.scheduler_host = scheduler_host
        self.start_delay_s = start_delay_s
        self.recipe = handle_recipe(cluster, over_network=self.remote)
        self.role = cluster_role(cluster) if self.remote else None
        self._stack: Any = None
        self.client: Any = None
        self.dask_cluster: Any = None
        self.workers: dict[str, str] = {}       # location name -> worker address
        self.scratch: str | None = None         # Dask's scratch folder (private, removed at exit)

    @property
    def remote(self) -> bool:
        return any(p.host != "local" for p in self.places)

    def __enter__(self) -> "ClientPlacement":
        from contextlib import ExitStack

        import dask
        from distributed import Client

        from cassperf.experiments.dask_tls import temporary_security

        stack = ExitStack()
        try:
            # Dask's scratch space (lock files, spilled data) in a private folder of this placement, not
            # the shared, predictable /tmp/dask-scratch-space another local user could create first
            self.scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="cassperf-dask-"))
            stack.enter_context(dask.config.set({**DASK_CONFIG, "temporary-directory": self.scratch}))
            stack.enter_context(_quiet("distributed"))
            hosts = ("127.0.0.1", "localhost", self.scheduler_host, *{p.host for p in self.places if p.host != "local"})
            security, _files = stack.enter_context(temporary_security(tuple(dict.fromkeys(hosts))))
            self.security = security
            self.dask_cluster = stack.enter_context(self._ssh(security, _files, stack) if self.remote
                                                    else self._local(security))
            self.client = stack.enter_context(Client(self.dask_cluster, security=security))
            self.client.wait_for_workers(len(self.places), timeout=120)
            self.workers = self._worker_of_location()
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None

    def _local(self, security: Any) -> Any:
        from distributed import Nanny, Scheduler, SpecCluster

        scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "protocol": "tls", "security": security,
                                                   "dashboard": False, "dashboard_address": None}}
        workers = {p.name: {"cls": Nanny, "options": {"name": p.name, "nthreads": 1, "host": "127.0.0.1",
                                                      "protocol": "tls", "security": security, "memory_limit": 0,
                                                      "silence_logs": 40, "local_directory": self.scratch,
                                                      "config": {**DASK_CONFIG, "temporary-directory": self.scratch}}}
                   for p in self.places}
        return SpecCluster(workers=workers, scheduler=scheduler, security=security, asynchronous=False,
                           silence_logs=40, name="cassperf-clients")

    def _ssh(self, security: Any, files: Any, stack: Any) -> Any:
        """One worker per client machine over SSH (distributed.deploy.ssh.SSHCluster), the
        scheduler on ``scheduler_host`` (an address this machine and every client host reach;
        started over SSH too). The TLS files go to each host first (ssh_hosts.push_files), and
        away when the placement ends (on `stack`)."""
        import dask
        from distributed import SpecCluster
        from distributed.deploy import ssh

        from cassperf.experiments import ssh_hosts

        options = ssh_hosts.connect_options(self.ssh_options.get("connect_options"))
        hosts = [self.scheduler_host, *[p.host for p in self.places]]
        pem = {p.name: p.read_bytes() for p in (files.ca_cert, files.cert, files.key)}
        stack.callback(ssh_hosts.remove_folder, hosts, options, files.folder)    # also after a partial push
        ssh_hosts.push_files(hosts, options, files.folder, pem)
        python = self.ssh_options.get("remote_python")
        # SSHCluster(hosts, ...) is this SpecCluster with one worker options for all; here each
        # worker is named after its location, so a location finds its worker whatever its address
        scheduler = {"cls": ssh.Scheduler, "options": {
            "address": self.scheduler_host, "connect_options": options, "remote_python": python,
            "kwargs": {"host": self.scheduler_host, "port": 0, "dashboard": False, "dashboard_address": None,
                       "protocol": "tls"}}}
        workers = {p.name: {"cls": ssh.Worker, "options": {
            "address": p.host, "connect_options": options, "remote_python": python,
            "worker_class": "distributed.Nanny", "kwargs": {"name": p.name, "nthreads": 1, "memory_limit": 0}}}
            for p in self.places}
        with dask.config.set(ssh_hosts.tls_config(files.ca_cert, files.cert, files.key)):
            return SpecCluster(workers, scheduler, name="SSHCluster", security=security)

    def _worker_of_location(self) -> dict[str, str]:
        """Location name -> its worker's address (a location whose worker is gone is left out)."""
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        by_name = {str(w.get("name")): addr for addr, w in info.items()}
        return {p.name: by_name[p.name] for p in self.places if p.name in by_name}

    def recover(self, timeout_s: float = RECOVER_S) -> None:
        """After a client was lost: wait (up to ``timeout_s``) for its worker to come back (a
        local Nanny restarts a killed worker at once, under a new address) and map the
        locations again; a location still without a worker fails its later jobs at once."""
        try:
            self.client.wait_for_workers(len(self.places), timeout=timeout_s)
        except (TimeoutError, OSError):
            pass
        self.workers = self._worker_of_location()

    def location(self, name: str) -> Location:
        for p in self.places:
            if p.name == name:
                return p
        raise ConfigError(f"no client location {name!r}; locations: {', '.join(p.name for p in self.places)}")

    def submit(self, location: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run fn(*args, **kwargs) on `location`'s worker only (a Dask future); ClusterError when
        the location's worker is gone."""
        if location not in self.workers:
            from cassperf.errors import ClusterError

            raise ClusterError(f"client location {location} has no worker (lost, and it did not come back)")
        return self.client.submit(fn, *args, workers=[self.workers[location]], allow_other_workers=False,
                                  pure=False, retries=0, **kwargs)

    def run_together(self, jobs: Sequence[ClientJob], group_labels: Mapping[str, str] | None = None, *,
                     root: str | Path | None = None, watch_network: bool = False, **run_options: Any) -> Group:
        """Start every job at one instant (a single job at once), each on its location's worker;
        wait for all. ``run_options`` go to every job's run_spec, a job's own ``options`` to it
        alone. ``watch_network``: each DC's interface counters are read at its first location
        before and after (cassperf.experiments.network), the rates kept in ``Group.traffic``.
        Returns the Group (also written to <runs>/.groups/<group>.json)."""
        from distributed import wait

        from cassperf.experiments import network
        from cassperf.results.manifest import new_run_id

        root_path = Path(root) if root is not None else self.root
        labels = {k: str(v) for k, v in (group_labels or {}).items()}
        group = Group(new_run_id("group"), labels)
        dcs = list(dict.fromkeys(self.location(j.location).dc for j in jobs))
        watched = {dc: loc for dc in dcs if (loc := next(p.name for p in self.places if p.dc == dc)) in self.workers} \
            if watch_network else {}
        before = {dc: self.submit(loc, network.counters_task, self.recipe, dc).result() for dc, loc in watched.items()}
        start = time.time() + (self.start_delay_s if len(jobs) > 1 else 0.0)
        names = tuple(j.location for j in jobs)
        futures = []
        for job in jobs:
            place = self.location(job.location)
            run_id = new_run_id("cassperf-engine" if job.tool == "engine" else job.tool)
            job_labels = {**{k: str(v) for k, v in job.labels.items()}, "dc": place.dc, "client": place.name,
                          **({"host": place.host} if place.host != "local" else {})}
            futures.append((job, place, run_id, self.submit(
                place.name, client_task, self.recipe, place.dc, job.spec, job_labels, job.tool,
                str(root_path), run_id, start, {**run_options, **job.options},
                (group.group, job.location, names) if len(jobs) > 1 else None, self.role)
                if place.name in self.workers
                else None))
        wait([f for *_, f in futures if f is not None])
        for job, place, run_id, future in futures:
            group.results.append(self._result(job, place, run_id, future, root_path) if future is not None else
                                 ClientResult(place.name, place.dc, run_id, "died", "no worker at this location: "
                                              "lost before, and it did not come back"))
        if group.partial:
            self.recover()
            watched = {dc: loc for dc, loc in watched.items() if loc in self.workers}
        for dc, loc in watched.items():
            try:
                after = self.submit(loc, network.counters_task, self.recipe, dc).result()
            except Exception:  # noqa: BLE001 - a lost location has no counters; its run says why
                continue
            group.traffic.append({"dc": dc, "where": f"{dc} ({loc})",
                                  "how": network.counters_how(self.cluster, self.remote, dc),
                                  **network.rates(before[dc], after)})
        self._store(group, root_path)
        return group

    def _result(self, job: ClientJob, place: Location, run_id: str, future: Any, root: Path) -> ClientResult:
        from cassperf.results.store import mark_failed, run_folder

        if future.status == "finished":
            out = future.result()
            return ClientResult(place.name, place.dc, out["run_id"], "failed" if out["failed"] else "ran",
                                out["failure"])
        exc = future.exception()
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        # distributed's KilledWorker says it in four sentences naming the task and the worker's address
        note = f"{type(exc).__name__}: " + ("its worker process died" if type(exc).__name__ == "KilledWorker"
                                            else first[:200])
        folder = run_folder(run_id, root=root)
        if (folder / "manifest.json").exists():
            mark_failed(folder, f"client {place.name} did not finish: {note}")
        return ClientResult(place.name, place.dc, run_id, "died", note)

    def _store(self, group: Group, root: Path) -> None:
        folder = root / GROUPS
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{group.group}.json").write_text(json.dumps(group.record(), indent=2))


@contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """The in-process scheduler's INFO lines (every worker and client connecting) left out:
    in a report they would show as stderr. Warnings and errors still show."""
    log = logging.getLogger(logger)
    old = log.level
    log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        log.setLevel(old)


def group_records(root: str | Path | None = None) -> list[dict[str, Any]]:
    """Every stored group record (oldest first)."""
    from cassperf import config

    folder = (Path(root) if root is not None else config.runs_dir()) / GROUPS
    if not folder.is_dir():
        return []
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def overlap_s(runs: Sequence[Any]) -> float:
    """Seconds during which every run's measured load ran at once (from manifests' t0_epoch_s
    and their intervals' last end), NaN when unknown."""
    spans = []
    for run in runs:
        t0 = run.manifest.get("t0_epoch_s")
        if t0 is None or run.intervals.empty:
            return math.nan
        spans.append((float(t0), float(t0) + float(run.intervals["time_s"].max())))
    return max(0.0, min(e for _, e in spans) - max(s for s, _ in spans)) if spans else math.nan
