"""One way to run a workload: ``run_spec`` runs a WorkloadSpec with any tool into a stored Run.

    from cassperf.workload.run import run_spec
    run = run_spec(spec, cluster, tool="engine", labels={"rf": "3", "run": "a"},
                   sampler={"tables": [("ks_rf3", "standard1")], "interval_s": 2},
                   during=lambda w: ...)

The CLI (`cassperf run`), the study experiments and the tests all call it. Tools: the
Python engine (``engine``), ``cassandra-stress`` or ``latte`` as a subprocess. Around every
tool the same things happen, in this order:

1. Checks that create nothing: the tool is found (a missing cassandra-stress or latte is
   a ToolNotFoundError naming where it looked), the cluster answers CQL.
2. The schema (keyspace and standard1, as cassandra-stress makes them; a keyspace that
   exists with another schema is refused). Only then is a run folder created.
3. The load, with the cluster sampler beside it (``sampler``: ClusterSampler keyword
   arguments) and the ``during`` action in a thread (``with writer.phase(name):`` marks its
   window).
4. The verdict. A run in which the operations failed is a failed run, never a result: when
   no operation succeeded, or the share of failed operations passes ``max_error_share``, or
   the tool failed after it started, the stored run is marked ``failed: true`` with a
   one-line ``failure``, the catalog leaves it out unless asked, and RunFailedError is raised
   naming it (``raise_on_failure=False`` returns the Run instead; ``run.manifest['failed']``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import ExitStack, nullcontext
from pathlib import Path
from typing import Any

from cassperf.constraints import Real, Whole, check
from cassperf.errors import CassperfError, ClusterError, ConfigError
from cassperf.results.model import Run
from cassperf.results.store import RunWriter, load_run, mark_failed, run_folder
from cassperf.workload.during import DuringAction
from cassperf.workload.spec import TOOLS, WorkloadSpec


#: A run whose failed operations pass this share of all operations is a failed run.
MAX_ERROR_SHARE = 0.05


class RunFailedError(CassperfError):
    """The run was stored, marked failed; ``run_id`` and ``reason`` say which and why."""

    def __init__(self, run_id: str, reason: str, folder: Path) -> None:
        super().__init__(f"run {run_id} FAILED: {reason} (stored, marked failed, at {folder})")
        self.run_id, self.reason, self.folder = run_id, reason, folder


def check_tool(tool: str) -> Path | None:
    """The tool's executable (None for the engine); ToolNotFoundError when it is missing."""
    if tool not in TOOLS:
        raise ConfigError(f"tool {tool!r}: expected one of {', '.join(TOOLS)}")
    if tool == "cassandra-stress":
        from cassperf.workload.runners.stress_runner import locate_cassandra_stress

        return locate_cassandra_stress()
    if tool == "latte":
        from cassperf.workload.runners.latte_runner import locate_latte

        return locate_latte()
    return None


def check_cluster(cluster: Any) -> None:
    """The cluster answers CQL, or one ClusterError line saying which contact points did not."""
    try:
        cluster.session().execute("SELECT release_version FROM system.local", timeout=30)
    except CassperfError:
        raise
    except Exception as exc:  # noqa: BLE001 - the driver raises many kinds; one line for the user
        points = ", ".join(getattr(cluster, "contact_points", []) or ["?"])
        raise ClusterError(f"the cluster at {points} does not answer CQL ({type(exc).__name__}: {exc}); "
                           f"start it (`cassperf cluster start`) or check --hosts") from None


def failure_of(run: Run, max_error_share: float = MAX_ERROR_SHARE) -> str | None:
    """Why ``run`` is a failed run, or None: no operation succeeded, or failed operations are
    more than ``max_error_share`` of all."""
    summary = run.summary
    if summary.empty:
        return "the run recorded no operations"
    ok = int(summary["count"].fillna(0).sum())
    errors = int(summary["errors"].fillna(0).sum())
    if ok == 0:
        return f"no operation succeeded ({errors:,} failed)"
    share = errors / (ok + errors)
    if share > max_error_share:
        return (f"{errors:,} of {ok + errors:,} operations failed ({share:.1%}, more than "
                f"max_error_share={max_error_share:.0%})")
    return None


def run_spec(spec: WorkloadSpec, cluster: Any, *, tool: str = "engine", labels: Mapping[str, Any] | None = None,
             sampler: Mapping[str, Any] | None = None, during: Callable[[RunWriter], Any] | None = None,
             root: str | Path | None = None, run_id: str | None = None, progress: bool = True,
             processes: int | None = None, backend: str = "auto", stress_values: bool = False,
             warmup_s: float = 2.0, max_error_share: float = MAX_ERROR_SHARE,
             raise_on_failure: bool = True, ready: Callable[[], Any] | None = None, profile: Any = None,
             retries: int = 0) -> Run:
    """Run ``spec`` on ``cluster`` with ``tool`` and return the stored Run (module doc).

    labels: the run's labels (every sweep parameter); sampler: ClusterSampler keyword arguments
    (``tables``, ``interval_s``, ...), None for none; during: fn(writer) in a thread while the
    load runs. Engine options: processes, backend, stress_values, warmup_s, retries (times a
    failed op is sent again before it counts as an error; other tools retry by their own rules,
    cassandra-stress 9 times by default). ready: called
    right before the load starts (the engine: once its workers are connected; another tool:
    before it is started), so that clients started together begin together.
    profile: CPU profiles of the nodes during the measured load (Java Flight Recorder; stored as
    raw/profiles/<node>.jfr): a cassperf.cluster.profiler.Profiler (keeps its JMX sessions from
    run to run: a study opens one), True (one for this run alone: its session's JVM starts
    before the load), False or None: none. Only the engine's runs are profiled; a profile that
    cannot be taken is one warning line in the run, never a failed run.
    """
    if not 0 <= max_error_share < 1:
        raise ConfigError(f"max_error_share={max_error_share!r}: expected a share in [0, 1), e.g. 0.05")
    if processes is not None:
        check("processes", processes, Whole(1, note="or None: one per core"))
    if sampler is not None:
        check("sampler interval_s", sampler.get("interval_s", 5.0),
              Real(0, low_open=True, unit="seconds", note="no sampler: sampler=None"))
    exe = check_tool(tool)
    check_cluster(cluster)
    from cassperf.workload.engine import create_schema

    create_schema(spec, cluster)
    labels = dict(labels or {})
    error: BaseException | None = None
    stored: str | None = None
    own_profiler = None
    if profile is True:
        from cassperf.cluster.profiler import Profiler

        profile = own_profiler = Profiler()
    elif profile is False:
        profile = None
    try:
        if tool == "engine":
            from cassperf.workload.engine import EngineError, run_workload

            try:
                run = run_workload(spec, cluster, root=root, labels=labels, run_id=run_id, processes=processes,
                                   backend=backend, progress=progress, schema=False, warmup_s=warmup_s,
                                   sampler=sampler, during=during, stress_values=stress_values, ready=ready,
                                   profile=profile, retries=retries)
                stored = run.manifest["run_id"]
            except EngineError as exc:
                stored = _run_id_in(exc, root)
                raise
        else:
            if ready is not None:
                ready()
            try:
                stored = _run_tool(tool, exe, spec, cluster, labels, sampler, during, root, run_id, progress,
                                   profile is not None)
            except _Stored as exc:
                stored, error = exc.run_id, exc.cause
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - stored and marked failed below, then raised
        error = exc
    finally:
        if own_profiler is not None:
            own_profiler.close()
    if stored is None:           # it failed before a run folder existed: nothing was left behind
        assert error is not None
        raise error
    run = load_run(stored, root=root)
    reason = failure_of(run, max_error_share)
    if error is not None:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        reason = f"{type(error).__name__}: {first}" + (f"; {reason}" if reason else "")
    if reason is None:
        return run
    folder = run_folder(stored, root=root)
    mark_failed(folder, reason)
    run = load_run(stored, root=root)
    if raise_on_failure:
        raise RunFailedError(stored, reason, folder) from error
    return run


def _run_id_in(exc: BaseException, root: str | Path | None) -> str | None:
    """The run an EngineError names by its folder (the engine stores the run, then raises)."""
    text = str(exc)
    marker = " at "
    if marker in text:
        path = Path(text.rsplit(marker, 1)[1].rstrip(")").strip())
        if (path / "manifest.json").exists():
            return path.name
    return None


def _run_tool(tool: str, exe: Path | None, spec: WorkloadSpec, cluster: Any, labels: dict[str, Any],
              sampler: Mapping[str, Any] | None, during: Callable[[RunWriter], Any] | None,
              root: str | Path | None, run_id: str | None, progress: bool, profile: bool = False) -> str:
    """cassandra-stress or latte as a subprocess into a new run, the sampler and the during
    action beside it. Returns the run id; the writer is closed (complete or not) either way.
    ``profile``: a profile was asked for, which only the engine records (said in the run)."""
    from cassperf.sampler import ClusterSampler

    manifest: dict[str, Any] = {"tool": tool, "labels": labels}
    if run_id:
        manifest["run_id"] = run_id
    writer = RunWriter(root=root, **manifest).open()
    if profile:
        writer.manifest["profile"] = {"notes": [f"profile not recorded: only the engine's runs are profiled "
                                                f"(this run's tool: {tool})"]}
        writer.warn(writer.manifest["profile"]["notes"][0])
    try:
        with ExitStack() as opened:
            opened.push(writer)      # closed on the way out, complete or with the error (already open: no `with writer`)
            watch = ClusterSampler(cluster, writer=writer, **dict(sampler)) if sampler is not None else nullcontext()
            on_start = (lambda pid: watch.clients.add(tool, pid, tree=True)) if sampler is not None else None
            with watch:
                action = DuringAction(during, writer) if during is not None else None
                if action is not None:
                    action.start_at()
                try:
                    if tool == "cassandra-stress":
                        from cassperf.workload.runners.stress_runner import run_cassandra_stress

                        run_cassandra_stress(spec, writer, cluster=cluster, executable=exe, progress=progress,
                                             schema_precreated=True, on_start=on_start)
                    else:
                        from cassperf.workload.runners.latte_runner import run_latte

                        run_latte(spec, writer, cluster=cluster, executable=exe, progress=progress, schema=False,
                                  on_start=on_start)
                finally:
                    if action is not None:
                        action.join()
            if action is not None and action.error is not None:
                raise ClusterError(f"the during action failed: {type(action.error).__name__}: {action.error}")
    except KeyboardInterrupt:
        raise                        # the run is stored incomplete (interrupted), not failed
    except Exception as exc:  # noqa: BLE001 - run_spec marks the stored run failed
        raise _Stored(writer.run_id, exc) from exc
    return writer.run_id


class _Stored(Exception):
    """A tool run that failed after its folder existed (carries the run id to run_spec)."""

    def __init__(self, run_id: str, cause: BaseException) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.run_id, self.cause = run_id, cause
