"""MBean operations on the nodes of an embedded cluster from one JVM per data center.

nodetool starts a JVM (the whole Cassandra classpath) for each command and node: the RF study's
cold-cache step (flush, invalidate key and row caches on six nodes) was 18 of them, 15-27 s on
two shared cores. ``run_ops`` sends every operation of a step to ``JmxOps.java`` (beside this
module, run in Java's source-file mode), which connects once per node with the cluster's JMX
admin credential, the same port and user nodetool uses, and runs them in order:

    ops = [JmxOp("node1", STORAGE_SERVICE, "forceKeyspaceFlush", ("ks", "")), ...]
    for result in run_ops(cluster, ops): ...

Nodes in DC namespaces (``inter_dc_rtt_ms``) are reached from a JVM started inside their DC's
namespace, one per DC, run concurrently. The password stays in the cluster's 0600 file.
``JmxOpsUnavailable`` when this cannot run at all (a remote cluster, no credentials, a Java
without its compiler module): callers fall back to nodetool.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassperf.errors import CassperfError

SOURCE = Path(__file__).with_name("JmxOps.java")
STORAGE_SERVICE = "org.apache.cassandra.db:type=StorageService"
CACHES = "org.apache.cassandra.db:type=Caches"


class JmxOpsUnavailable(CassperfError):
    """The one-JVM path cannot run for this cluster; use nodetool instead."""


@dataclass(frozen=True)
class JmxOp:
    """``operation`` of ``mbean`` on ``node`` with string ``args`` (typed by the operation's signature)."""

    node: str
    mbean: str
    operation: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class JmxResult:
    op: JmxOp
    ok: bool
    output: str


def _line(op: JmxOp, port: int) -> str:
    fields = ["127.0.0.1", str(port), op.mbean, op.operation, *op.args]
    if any("\t" in f or "\n" in f for f in fields):
        raise ValueError(f"{op}: a tab or newline in an argument")
    return "\t".join(fields)


def _jvm(cluster: Any, *mode: str) -> tuple[str, Callable[[str], list[str]]]:
    """(the java it runs on, the JmxOps.java command of a DC: run inside the DC's namespace, where
    it has one), with the cluster's JMX admin user and its 0600 password file; JmxOpsUnavailable
    when this cluster has none, before any node is looked up."""
    access = cluster.access() if hasattr(cluster, "access") and hasattr(cluster, "dc_command") else None
    if access is None:
        raise JmxOpsUnavailable("one-JVM JMX operations need an embedded cluster with JMX credentials")
    java = str(cluster.java().executable)
    args = [java, "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", str(SOURCE),
            access.jmx_credentials(False).user, str(access.jmx_password_file), *mode]
    return java, lambda dc: cluster.dc_command(dc, args)


def run_ops(cluster: Any, ops: Sequence[JmxOp], timeout_s: float = 600.0) -> list[JmxResult]:
    """Run ``ops`` (module doc) and return one JmxResult each, in the given order; an
    operation's failure is ok=False with its message. JmxOpsUnavailable when the JVM could not
    run them at all."""
    java, command = _jvm(cluster)
    by_dc: dict[str, list[int]] = {}
    lines: dict[int, str] = {}
    for k, op in enumerate(ops):
        node = cluster.node(op.node)
        by_dc.setdefault(node.spec.dc, []).append(k)
        lines[k] = _line(op, node.ports.jmx)

    def one_dc(dc: str) -> list[tuple[int, bool, str]]:
        indexes = by_dc[dc]
        try:
            proc = subprocess.run(command(dc), input="\n".join(lines[k] for k in indexes) + "\n", capture_output=True,
                                  text=True, timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise JmxOpsUnavailable(f"JmxOps.java did not run: {exc}") from None
        answers = {}
        for text in proc.stdout.splitlines():
            parts = text.split("\t", 2)
            if len(parts) == 3 and parts[0] in ("OK", "ERR") and parts[1].lstrip("-").isdigit():
                answers[int(parts[1])] = (parts[0] == "OK", parts[2])
        if not answers and proc.returncode != 0:
            why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[0]
            raise JmxOpsUnavailable(f"JmxOps.java did not run on {java}: {why}")
        return [(k, *answers.get(pos, (False, "no answer (the JVM ended early)"))) for pos, k in enumerate(indexes)]

    with ThreadPoolExecutor(max_workers=max(1, len(by_dc))) as pool:
        done = [row for rows in pool.map(one_dc, list(by_dc)) for row in rows]
    found = {k: (ok, out) for k, ok, out in done}
    return [JmxResult(op, *found[k]) for k, op in enumerate(ops)]


COMPACTION_PENDING = "org.apache.cassandra.metrics:type=Compaction,name=PendingTasks"


class JmxSession:
    """``JmxOps.java`` kept running (one JVM per DC, started once) for the operations of one
    run: its JVM start and its JMX connections come before the load, and an operation asked for
    during the load costs the nodes that operation alone, not a JVM start per node (nodetool on
    two shared cores took 6 s per node to garbagecollect an empty table). Each ``run(ops)``
    sends a batch, runs its operations concurrently and waits for every answer.

        with JmxSession(cluster) as jmx:
            jmx.run([JmxOp(n, STORAGE_SERVICE, "forceKeyspaceFlush", ("ks", "")) for n in nodes])

    JmxOpsUnavailable when it cannot run here (as ``run_ops``); ``close()`` ends the JVMs (they
    also end when this process does: their stdin closes)."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.procs: dict[str, subprocess.Popen[str]] = {}
        self.answers: dict[str, queue.Queue[str | None]] = {}
        self.sent: dict[str, int] = {}

    def open(self) -> JmxSession:
        _, command = _jvm(self.cluster, "parallel")
        for dc in sorted({n.spec.dc for n in self.cluster.nodes}):
            try:
                proc = subprocess.Popen(command(dc), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)
            except OSError as exc:
                self.close()
                raise JmxOpsUnavailable(f"JmxOps.java did not start: {exc}") from None
            lines: queue.Queue[str | None] = queue.Queue()
            threading.Thread(target=_pump, args=(proc, lines), daemon=True, name=f"jmx-session-{dc}").start()
            self.procs[dc], self.answers[dc], self.sent[dc] = proc, lines, 0
        return self

    def run(self, ops: Sequence[JmxOp], timeout_s: float = 600.0) -> list[JmxResult]:
        """Every op at once (module doc); one JmxResult each, in the given order."""
        if not self.procs:
            self.open()
        wanted: dict[str, dict[int, int]] = {}
        for k, op in enumerate(ops):
            node = self.cluster.node(op.node)
            dc = node.spec.dc
            proc = self.procs[dc]
            if proc.stdin is None or proc.poll() is not None:
                raise JmxOpsUnavailable(f"the JMX session of {dc} has ended (exit {proc.poll()})")
            try:
                proc.stdin.write(_line(op, node.ports.jmx) + "\n")
            except OSError as exc:
                raise JmxOpsUnavailable(f"the JMX session of {dc} has ended ({exc})") from None
            wanted.setdefault(dc, {})[self.sent[dc]] = k
            self.sent[dc] += 1
        for dc in wanted:
            try:
                self.procs[dc].stdin.flush()  # type: ignore[union-attr]
            except OSError as exc:
                raise JmxOpsUnavailable(f"the JMX session of {dc} has ended ({exc})") from None
        found: dict[int, tuple[bool, str]] = {}
        deadline = time.monotonic() + timeout_s
        for dc, indexes in wanted.items():
            while any(k not in found for k in indexes.values()):
                try:
                    text = self.answers[dc].get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    raise JmxOpsUnavailable(f"the JMX session of {dc} gave no answer in {timeout_s:.0f} s") from None
                if text is None:
                    if not found:
                        raise JmxOpsUnavailable(f"JmxOps.java ended on {dc} before it answered "
                                                f"(exit {self.procs[dc].wait()})")
                    break
                parts = text.split("\t", 2)
                if len(parts) == 3 and parts[0] in ("OK", "ERR") and parts[1].lstrip("-").isdigit():
                    at = int(parts[1])
                    if at in indexes:
                        found[indexes[at]] = (parts[0] == "OK", parts[2])
        return [JmxResult(op, *found.get(k, (False, "no answer (the JVM ended early)"))) for k, op in enumerate(ops)]

    def close(self) -> None:
        for proc in self.procs.values():
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        self.procs.clear()

    def __enter__(self) -> JmxSession:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pump(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    """The JVM's answers, line by line, then None at its end."""
    assert proc.stdout is not None
    for text in proc.stdout:
        lines.put(text.rstrip("\n"))
    lines.put(None)
