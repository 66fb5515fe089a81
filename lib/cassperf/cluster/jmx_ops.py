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

import subprocess
from collections.abc import Sequence
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


def run_ops(cluster: Any, ops: Sequence[JmxOp], timeout_s: float = 600.0) -> list[JmxResult]:
    """Run ``ops`` (module doc) and return one JmxResult each, in the given order; an
    operation's failure is ok=False with its message. JmxOpsUnavailable when the JVM could not
    run them at all."""
    access = cluster.access() if hasattr(cluster, "access") and hasattr(cluster, "dc_command") else None
    if access is None:
        raise JmxOpsUnavailable("one-JVM JMX operations need an embedded cluster with JMX credentials")
    by_dc: dict[str, list[int]] = {}
    lines: dict[int, str] = {}
    for k, op in enumerate(ops):
        node = cluster.node(op.node)
        by_dc.setdefault(node.spec.dc, []).append(k)
        lines[k] = _line(op, node.ports.jmx)
    user = access.jmx_credentials(False).user
    java = str(cluster.java().executable)

    def one_dc(dc: str) -> list[tuple[int, bool, str]]:
        indexes = by_dc[dc]
        cmd = cluster.dc_command(dc, [java, "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                                      str(SOURCE), user, str(access.jmx_password_file)])
        try:
            proc = subprocess.run(cmd, input="\n".join(lines[k] for k in indexes) + "\n", capture_output=True,
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
