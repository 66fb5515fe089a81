"""CPU profiles of the nodes during a run: Java Flight Recorder, started and stopped over JMX.

Each local node records stack samples and GC pauses (``cassperf.jfc`` beside this module:
jdk.ExecutionSample every 20 ms, jdk.GCPhasePause and jdk.GarbageCollection, nothing else) from
the start of a run's load (its unrecorded warm-up) to the load's end, and writes its recording
into the run folder then, ``raw/profiles/<node>.jfr`` (``cassperf.parsers.jfr`` reads them back on
the run's time axis; a report keeps the samples of each run's steady window). The recording
starts with the warm-up, not at t0, because JFR.start took 0.1-0.8 s on a loaded node: that
falls into the unrecorded warm-up, not into the measured load.

    with Profiler() as profiler:                  # one per study: it keeps its JMX sessions
        run_spec(spec, cluster, profile=profiler) # the engine starts it at t0, stops it at the load's end

The nodes are reached through the DiagnosticCommand MBean (``JFR.start`` / ``JFR.stop`` as
jfrStart / jfrStop) from a ``JmxSession`` (one JVM per DC, kept open): a Profiler opens one per
cluster at its first recording and keeps it until it is closed, so no JVM starts on a run's
path. Flight Recorder's first start in a node JVM costs far more than a recording: it
instruments JDK classes (file and socket I/O), which throws away compiled code that inlined
them: a warmed node then ran at a twentieth of its reads/s and took about four minutes of load
to recover. So ``prepare(cluster)`` starts and discards a recording on every node once, and a
study calls it first, before its loads and its warm-up (which runs until throughput stops
rising): on a node just started there is little compiled code to lose. A node JVM that started
since (a restart) is set up before its next run's load, and that run says so.

A profile never fails a run. Where one cannot be taken (a named cluster, whose JVMs the workbook
cannot reach; a container node, whose JVM writes inside its container; a Java without Flight
Recorder; a node that does not answer) the run gets one warning line saying why, and its
manifest's ``profile`` section the same lines (``notes``) beside what was recorded: the settings,
the files, and what starting and stopping took.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from cassperf.cluster.jmx_ops import JmxOp, JmxOpsUnavailable, JmxSession

DIAGNOSTIC_COMMAND = "com.sun.management:type=DiagnosticCommand"
JFC = Path(__file__).with_name("cassperf.jfc")
#: what the manifest says the recordings hold
SETTINGS = "cassperf.jfc: jdk.ExecutionSample every 20 ms, jdk.GCPhasePause and jdk.GarbageCollection (every pause)"
SAMPLE_PERIOD_MS = 20
#: a recording left running (its run was killed) stops keeping data past this size on the node
MAX_SIZE = "512m"
NS_PER_S = 1_000_000_000


def not_profiled(cluster: Any) -> str | None:
    """Why no profile can be taken on ``cluster`` (one line), or None when it can."""
    from cassperf.cluster.container import ContainerCluster
    from cassperf.cluster.local import LocalCluster

    if isinstance(cluster, ContainerCluster):
        return ("container nodes are not profiled: their JVMs write files inside their containers "
                "(profiles are taken on nodes this machine runs directly)")
    if not isinstance(cluster, LocalCluster):
        return ("a named cluster is not profiled: the workbook has no JMX session with its nodes' JVMs "
                "(profiles are taken on the embedded cluster)")
    if cluster.access() is None:
        return f"cluster {cluster.name} has no JMX credentials (made at its first start): it cannot be profiled"
    return None


class Profiler:
    """Records CPU profiles of a cluster's nodes, run after run (module doc). Keeps one
    JmxSession per cluster (keyed by the cluster object), opened at its first recording;
    ``close`` ends them."""

    def __init__(self) -> None:
        self._sessions: dict[int, JmxSession] = {}
        self._refused: dict[int, str] = {}
        self._prepared: set[tuple[int, str, int | None]] = set()   # cluster, node, pid
        self._lock = threading.Lock()

    def __enter__(self) -> Profiler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for session in self._sessions.values():
            session.close()
        self._sessions.clear()

    def session(self, cluster: Any) -> tuple[JmxSession | None, str | None]:
        """The cluster's session (opened on first use), or why there is none."""
        key = id(cluster)
        with self._lock:
            if key in self._sessions:
                return self._sessions[key], None
            if key in self._refused:
                return None, self._refused[key]
            why = not_profiled(cluster)
            if why is None and "," in str(JFC):
                why = f"the settings file's path has a ',' in it ({JFC}), which JFR.start's arguments cannot carry"
            if why is None:
                try:
                    self._sessions[key] = JmxSession(cluster).open()
                    return self._sessions[key], None
                except JmxOpsUnavailable as exc:
                    why = f"no JMX session with the nodes: {exc}"
            self._refused[key] = why
            return None, why

    def recording(self, cluster: Any, folder: Path, name: str) -> Recording:
        """A recording of every node of ``cluster`` for one run, into ``folder`` (the run's
        raw/profiles), named ``name`` on the nodes; prepared (the session open, each node's
        Flight Recorder set up) before this returns."""
        rec = Recording(self, cluster, folder, name)
        rec.prepare()
        return rec

    def prepare(self, cluster: Any) -> list[str]:
        """Open the cluster's session and set up Flight Recorder on its nodes now (a study calls
        it before its first measured run); the lines of what cannot be recorded."""
        return self.ready(cluster)[2]

    def ready(self, cluster: Any) -> tuple[JmxSession | None, list[str], list[str]]:
        """(the cluster's session, the nodes that can record, a line for each thing that cannot),
        the session opened and every node's Flight Recorder set up before this returns. Never
        raises."""
        try:
            session, why = self.session(cluster)
            if session is None:
                return None, [], [f"profile not recorded: {why}"]
            refused, fresh = self._prepare(cluster, session, list(cluster.nodes))
        except Exception as exc:  # noqa: BLE001 - a profile never fails a run: a note instead
            return None, [], [f"profile not recorded: {type(exc).__name__}: {exc}"]
        return (session, [n.name for n in cluster.nodes if n.name not in refused],
                [f"profile of {node} not recorded: {why}" for node, why in refused.items()] + fresh)

    def _prepare(self, cluster: Any, session: JmxSession, nodes: list[Any]) -> tuple[dict[str, str], list[str]]:
        """Set up Flight Recorder on each node JVM not yet seen (a node restarted is a new JVM):
        a recording started and discarded (module doc). Returns the nodes that refused, with why,
        and a line for each node set up again after a restart (its next run carries it)."""
        todo = [n for n in nodes if (id(cluster), n.name, _pid(n)) not in self._prepared]
        if not todo:
            return {}, []
        again = [n.name for n in todo if any(k[:2] == (id(cluster), n.name) for k in self._prepared)]
        name = "cassperf-prepare"
        started = session.run([_start(n.name, name) for n in todo], timeout_s=120)
        refused = {r.op.node: _why(r.output) for r in started if not r.ok}
        stop = [JmxOp(n.name, DIAGNOSTIC_COMMAND, "jfrStop", (f"name={name}",)) for n in todo if n.name not in refused]
        if stop:
            session.run(stop, timeout_s=120)
        self._prepared.update((id(cluster), n.name, _pid(n)) for n in todo if n.name not in refused)
        return refused, [f"Flight Recorder set up on {n} right before this run (its JVM started since the last "
                         f"one): the run's first seconds carry that set-up" for n in again if n not in refused]


def _pid(node: Any) -> int | None:
    """The node's JVM pid (a restart makes a new JVM), None where the node object has none."""
    pid = getattr(node, "pid", None)
    return pid() if callable(pid) else pid


def _start(node: str, name: str) -> JmxOp:
    args = [f"name={name}", f"settings={JFC}", f"maxsize={MAX_SIZE}"]
    return JmxOp(node, DIAGNOSTIC_COMMAND, "jfrStart", (",".join(args),))


def _why(output: str) -> str:
    """A node's refusal in words: a Java without Flight Recorder has no jfrStart operation."""
    if "no operation jfrStart" in output:
        return "its Java has no Flight Recorder (the DiagnosticCommand MBean has no jfrStart)"
    return output.strip() or "no reason given"


class Recording:
    """One run's recording on the nodes of a cluster (Profiler.recording). ``start_at(t0_ns)``
    starts it in a thread at a monotonic instant; ``stop()`` stops it, each node writing its
    file, and returns the manifest's ``profile`` section; ``notes`` are the warning lines.
    Neither raises: what failed is a note."""

    def __init__(self, profiler: Profiler, cluster: Any, folder: Path, name: str) -> None:
        self.profiler, self.cluster, self.folder, self.name = profiler, cluster, folder, name
        self.session: JmxSession | None = None
        self.nodes: list[str] = []
        self.notes: list[str] = []
        self.running: list[str] = []
        self.timing: dict[str, float] = {}
        self.started_at_ns: int | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    def prepare(self) -> None:
        if "," in str(self.folder.resolve()):
            self.notes.append(f"profile not recorded: the run folder's path has a ',' in it ({self.folder}), which "
                              f"JFR.stop's arguments cannot carry")
            return
        t = time.monotonic()
        self.session, self.nodes, notes = self.profiler.ready(self.cluster)
        self.timing["prepare_s"] = time.monotonic() - t
        self.notes.extend(notes)

    def start_at(self, t0_ns: int, origin_ns: int | None = None) -> None:
        """Start the recording on every node at the monotonic instant ``t0_ns`` (in a thread);
        ``origin_ns``: the instant of the run's time_s = 0 (default ``t0_ns``), against which
        ``timing_s.started_at_s`` is given."""
        if self.session is None or not self.nodes:
            return

        def body() -> None:
            delay = (t0_ns - time.monotonic_ns()) / NS_PER_S
            if delay > 0:
                time.sleep(delay)
            self.started_at_ns = time.monotonic_ns()
            self._start()
            self.timing["start_s"] = (time.monotonic_ns() - self.started_at_ns) / NS_PER_S
            self.timing["started_at_s"] = (self.started_at_ns - (t0_ns if origin_ns is None else origin_ns)) / NS_PER_S

        self._thread = threading.Thread(target=body, name="cassperf-profile-start", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        assert self.session is not None
        try:
            results = self.session.run([_start(n, self.name) for n in self.nodes], timeout_s=60)
        except Exception as exc:  # noqa: BLE001 - a profile never fails a run: a note instead
            self.notes.append(f"profile not recorded: JFR.start failed: {type(exc).__name__}: {exc}")
            return
        for r in results:
            if r.ok:
                self.running.append(r.op.node)
            else:
                self.notes.append(f"profile of {r.op.node} not recorded: JFR.start failed: {_why(r.output)}")

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> dict[str, Any]:
        """Stop the recording (each node writes ``<folder>/<node>.jfr``) and say what was
        recorded: the manifest's ``profile`` section. Stops once; a second call only says it."""
        if not self._stopped:
            self._stopped = True
            if self._thread is not None:
                self._thread.join()
            if self.session is not None and self.running:
                try:
                    self._stop()
                except Exception as exc:  # noqa: BLE001 - a profile never fails a run: a note instead
                    self.notes.append(f"profile not kept: JFR.stop failed: {type(exc).__name__}: {exc}")
        return {"recorder": "jfr", "settings": SETTINGS, "sample_period_ms": SAMPLE_PERIOD_MS,
                "files": {n: f"raw/profiles/{n}.jfr" for n in self.running if (self.folder / f"{n}.jfr").exists()},
                "timing_s": {k: round(v, 4) for k, v in self.timing.items()}, "notes": list(self.notes)}

    def stop_into(self, writer: Any) -> None:
        """Stop, and put what was recorded into the run ``writer`` writes: the manifest's
        ``profile`` section and one warning line per note."""
        writer.manifest["profile"] = self.stop()
        for note in self.notes:
            writer.warn(note)

    def _stop(self) -> None:
        assert self.session is not None
        t = time.monotonic()
        ops = [JmxOp(n, DIAGNOSTIC_COMMAND, "jfrStop", (f"name={self.name},filename={self.folder / (n + '.jfr')}",))
               for n in self.running]
        try:
            results = self.session.run(ops, timeout_s=120)
        except JmxOpsUnavailable as exc:
            self.notes.append(f"profile not kept: JFR.stop failed: {exc}")
            return
        self.timing["stop_s"] = time.monotonic() - t
        for r in results:
            if not r.ok:
                self.notes.append(f"profile of {r.op.node} not kept: JFR.stop failed: {_why(r.output)}")
            elif not (self.folder / f"{r.op.node}.jfr").exists():
                self.notes.append(f"profile of {r.op.node} not kept: JFR.stop wrote no {self.folder / r.op.node}.jfr "
                                  f"({r.output.strip()})")
