"""nodetool on every node at once, and the node-side steps the studies take with it:
emptying caches for a cold run "a", and ``nodetool garbagecollect`` on a live table.

Each nodetool call starts a JVM (about a second here), so every node's call runs in its own
thread and they wait together.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from cassperf.cluster.jmx_ops import (
    CACHES,
    COMPACTION_PENDING,
    STORAGE_SERVICE,
    JmxOp,
    JmxOpsUnavailable,
    JmxSession,
    run_ops,
)
from cassperf.errors import CassperfError, ToolError
from cassperf.sampler.base import cluster_nodes


@dataclass(frozen=True)
class NodeResult:
    node: str
    args: tuple[str, ...]
    ok: bool
    output: str
    seconds: float


def on_every_node(cluster: Any, *args: str, nodes: Sequence[str] | None = None,
                  timeout_s: float = 3600.0) -> list[NodeResult]:
    """``nodetool <args>`` on every node (or ``nodes``) concurrently; one NodeResult each,
    a failure kept as ok=False with nodetool's message (never raised here)."""
    names = list(nodes) if nodes is not None else [n.handle for n in cluster_nodes(cluster)]

    def one(node: str) -> NodeResult:
        t0 = time.monotonic()
        try:
            out = cluster.nodetool(node, *args, timeout=timeout_s)
            return NodeResult(str(node), tuple(args), True, out, time.monotonic() - t0)
        except (ToolError, CassperfError, OSError) as exc:
            return NodeResult(str(node), tuple(args), False, str(exc).strip().splitlines()[0] if str(exc) else
                              type(exc).__name__, time.monotonic() - t0)

    with ThreadPoolExecutor(max_workers=max(1, len(names))) as pool:
        return list(pool.map(one, names))


def _failures(results: Sequence[NodeResult]) -> str:
    return "; ".join(f"{r.node}: {r.output}" for r in results if not r.ok)


def drop_page_cache() -> str | None:
    """Write back dirty pages and drop the OS page cache (root only). None when done, else why not."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w", encoding="ascii") as f:
            f.write("3\n")
    except OSError as exc:
        return f"the OS page cache was not dropped ({exc.strerror}: needs root)"
    return None


def _flush_and_invalidate(cluster: Any, keyspace: str | None) -> tuple[list[NodeResult], list[NodeResult]]:
    """Flush ``keyspace`` (every keyspace when None) and invalidate the key and row caches on
    every node: (flush results, cache results). An embedded cluster does it from one JVM per DC
    (cassperf.cluster.jmx_ops, ~2 s); otherwise, or when that cannot run, nodetool per node
    and command (three JVM starts per node)."""
    if keyspace:
        names = [n.handle for n in cluster_nodes(cluster)]
        ops = [op for node in names for op in (
            JmxOp(node, STORAGE_SERVICE, "forceKeyspaceFlush", (keyspace, "")),
            JmxOp(node, CACHES, "invalidateKeyCache"), JmxOp(node, CACHES, "invalidateRowCache"))]
        t0 = time.monotonic()
        try:
            results = run_ops(cluster, ops)
        except JmxOpsUnavailable:
            pass
        else:
            took = time.monotonic() - t0
            rows = [NodeResult(str(r.op.node), (r.op.operation, *r.op.args), r.ok, r.output, took) for r in results]
            return ([r for r in rows if r.args[0] == "forceKeyspaceFlush"],
                    [r for r in rows if r.args[0] != "forceKeyspaceFlush"])
    flushed = on_every_node(cluster, "flush", *([keyspace] if keyspace else []))
    with ThreadPoolExecutor(max_workers=2) as pool:   # the two caches at once: one JVM start each per node
        key, row = pool.map(lambda what: on_every_node(cluster, what), ["invalidatekeycache", "invalidaterowcache"])
    return flushed, key + row


def make_cold(cluster: Any, *, restart: bool = False, keyspace: str | None = None) -> str:
    """Empty what caches reads before a cold run "a", and say exactly what was done.

    Always: the keyspace flushed (so reads come from SSTables, not memtables) and the key and
    row caches invalidated on every node (what ``nodetool flush``, ``invalidatekeycache`` and
    ``invalidaterowcache`` do), then the OS page cache
    dropped (root; stated when not permitted). A cluster nodetool cannot reach
    (``cluster.jmx_problem()``) gets no flush and no invalidation, and the note says why. ``restart=True`` (a LocalCluster) also restarts
    every node, which empties its buffer pools and its chunk cache where one is on
    (``file_cache_enabled``, off by default since 4.1) and leaves the JVM cold, as the published
    study's first runs had them; without it those stay warm (stated)."""
    done: list[str] = []
    problem = cluster.jmx_problem()
    if problem is not None:          # a named cluster nodetool cannot reach: said once, nothing tried
        done.append(f"memtables not flushed and key and row caches not invalidated (no JMX: {problem})")
    else:
        flushed, caches = _flush_and_invalidate(cluster, keyspace)
        done.append("memtables flushed" if all(r.ok for r in flushed) else f"flush failed on {_failures(flushed)}")
        done.append("key and row caches invalidated" if all(r.ok for r in caches)
                    else f"cache invalidation failed on {_failures(caches)}")
    if restart and hasattr(cluster, "stop") and hasattr(cluster, "start"):
        cluster.close()
        cluster.stop()
        cluster.start()
        done.append("nodes restarted")
    elif restart:
        done.append("nodes not restarted (not an embedded cluster)")
    else:
        done.append("nodes not restarted: the JVM stays warm (and a chunk cache, where file_cache_enabled turns "
                    "one on)")
    why_not = drop_page_cache()
    done.append(why_not or "OS page cache dropped")
    return "cold: " + ", ".join(done)


def make_warm(cluster: Any, keyspace: str) -> str:
    """Fill the OS page cache with ``keyspace``'s files on every node of an embedded cluster
    (every file under each node's data folder for it, read through once) before a full-cache
    run, and say what was read. A named cluster's disks are not this machine's: said, nothing read."""
    nodes = getattr(cluster, "nodes", None)
    if not nodes or not hasattr(nodes[0], "layout"):
        return "warm: the servers' page cache was not filled (a named cluster's disks are not this machine's)"
    files, size = 0, 0
    for node in nodes:
        folder = node.layout.data / keyspace
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            if not path.is_file():
                continue
            with open(path, "rb", buffering=0) as f:
                while chunk := f.read(1 << 20):
                    size += len(chunk)
            files += 1
    return f"warm: {files} files of {keyspace} ({size / 2**20:.1f} MiB) read into the page cache"


def read_keys(cluster: Any, keyspace: str, keys: int, concurrency: int = 32) -> str:
    """Read rows 1..``keys`` of ``keyspace``.standard1 once each (the engine's key bytes, as
    cassandra-stress's simple mode writes them) through CQL, so that the chunks holding them are in
    the nodes' page caches before a full-cache run; say what was read."""
    from cassandra.concurrent import execute_concurrent_with_args

    import numpy as np

    from cassperf.workload.keys import keys_for

    t0 = time.monotonic()
    session = cluster.session()
    select = session.prepare(f'SELECT key FROM "{keyspace}"."standard1" WHERE key = ?')
    results = execute_concurrent_with_args(session, select, [(k,) for k in keys_for(np.arange(1, keys + 1))],
                                           concurrency=concurrency, raise_on_first_error=False)
    failed = sum(1 for ok, _ in results if not ok)
    return (f"warm: rows 1..{keys:,} of {keyspace} read once ({time.monotonic() - t0:.1f} s"
            + (f", {failed} failed" if failed else "") + ")")


def _names(cluster: Any, nodes: Sequence[str] | None = None) -> list[str]:
    return list(nodes) if nodes is not None else [str(n.handle) for n in cluster_nodes(cluster)]


def _on_every_node_jmx(jmx: JmxSession, ops: Sequence[JmxOp]) -> list[NodeResult]:
    """``ops`` (one per node) at once through an open session, as NodeResults."""
    t0 = time.monotonic()
    results = jmx.run(ops)
    took = time.monotonic() - t0
    return [NodeResult(r.op.node, (r.op.operation, *r.op.args), r.ok, r.output, took) for r in results]


def flush(cluster: Any, keyspace: str, jmx: JmxSession | None = None) -> list[NodeResult]:
    """``nodetool flush keyspace`` on every node; through ``jmx`` (an open JmxSession) when given."""
    if jmx is not None:
        return _on_every_node_jmx(jmx, [JmxOp(n, STORAGE_SERVICE, "forceKeyspaceFlush", (keyspace, ""))
                                        for n in _names(cluster)])
    return on_every_node(cluster, "flush", keyspace)


def set_compaction_throughput(cluster: Any, mib_per_s: int, jmx: JmxSession | None = None) -> list[NodeResult]:
    """``nodetool setcompactionthroughput`` on every node (0 = unthrottled); through ``jmx``
    when given (the attribute nodetool sets)."""
    if jmx is not None:
        return _on_every_node_jmx(jmx, [JmxOp(n, STORAGE_SERVICE, "set:CompactionThroughputMbPerSec",
                                              (str(int(mib_per_s)),)) for n in _names(cluster)])
    return on_every_node(cluster, "setcompactionthroughput", str(int(mib_per_s)))


def _pending_compactions(cluster: Any, jmx: JmxSession | None) -> int:
    if jmx is not None:
        return sum(int(r.output) for r in _on_every_node_jmx(jmx, [JmxOp(n, COMPACTION_PENDING, "get:Value")
                                                                  for n in _names(cluster)])
                   if r.ok and r.output.strip().isdigit())
    from cassperf.parsers import parse_text

    pending = 0
    for r in on_every_node(cluster, "compactionstats"):
        if r.ok:
            summary = parse_text(r.output, format="nodetool-compactionstats").tables.get("summary")
            if summary is not None and not summary.empty:
                pending += int(summary["pending_tasks"].fillna(0).sum())
    return pending


def wait_for_compactions(cluster: Any, timeout_s: float = 300.0, poll_s: float = 2.0,
                         jmx: JmxSession | None = None) -> float:
    """Wait until no node has pending compactions (nodetool compactionstats, or the
    PendingTasks metric through ``jmx``); seconds waited."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if _pending_compactions(cluster, jmx) == 0:
            break
        time.sleep(poll_s if jmx is None else min(poll_s, 0.25))
    return time.monotonic() - t0


def garbagecollect(cluster: Any, keyspace: str, table: str, nodes: Sequence[str] | None = None,
                   jobs: int = 1, jmx: JmxSession | None = None) -> list[NodeResult]:
    """``nodetool garbagecollect -j jobs keyspace table`` on every node (or ``nodes``) at
    once, waiting for all; through ``jmx`` (StorageService.garbageCollect, nodetool's default
    granularity ROW) when given. Raises ToolError naming the nodes where it failed."""
    if jmx is not None:
        results = _on_every_node_jmx(jmx, [JmxOp(n, STORAGE_SERVICE, "garbageCollect", ("ROW", str(jobs), keyspace,
                                                                                      table))
                                           for n in _names(cluster, nodes)])
        results = [r if not r.ok or r.output.strip() == "0" else   # garbageCollect answers its status, 0: done
                   NodeResult(r.node, r.args, False, f"garbagecollect ended with status {r.output.strip()}", r.seconds)
                   for r in results]
    else:
        results = on_every_node(cluster, "garbagecollect", "-j", str(jobs), keyspace, table, nodes=nodes)
    if not all(r.ok for r in results):
        raise ToolError(["nodetool", "garbagecollect", keyspace, table], 1, "", _failures(results),
                        hint="garbagecollect failed on some nodes")
    return results

