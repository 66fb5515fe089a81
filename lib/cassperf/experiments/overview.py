"""The cluster overview: who is in the cluster, what runs there, and a round trip of real rows.

Latency here is service time per request (from send to response, no rate limit), measured on
the client and recorded into an HDR histogram (microsecond resolution, 3 significant digits).
"""

from __future__ import annotations

import os
import platform
import sys
import threading
import time
from dataclasses import dataclass

import cassandra
import pandas as pd
from cassandra.query import PreparedStatement
from hdrh.histogram import HdrHistogram

from cassperf.cluster.base import ClusterHandle
from cassperf.errors import ClusterError

COLUMNS = ("C0", "C1", "C2", "C3", "C4")


def versions_frame(cluster: ClusterHandle) -> pd.DataFrame:
    """Component / version rows: Cassandra (per node as the driver sees it), driver, Python, Java."""
    rows = [{"component": "Cassandra", "version": cluster.cassandra_version()}]
    topo = cluster.topology_frame()
    for _, r in topo.iterrows():
        rows.append({"component": f"Cassandra on {r['address']} ({r['datacenter']})", "version": str(r["release_version"])})
    rows.append({"component": "cassandra-driver (Python)", "version": cassandra.__version__})
    rows.append({"component": "Python", "version": sys.version.split()[0]})
    rows.append({"component": "OS", "version": f"{platform.system()} {platform.release()}"})
    java = getattr(cluster, "java", None)
    if callable(java):
        info = java()
        rows.append({"component": "Java (local nodes)", "version": f"{info.version} ({info.executable})"})
    return pd.DataFrame(rows)


def create_standard1(cluster: ClusterHandle, keyspace: str, replication: dict[str, int]) -> None:
    """cassandra-stress's schema: keyspace.standard1 (key blob, "C0".."C4" blob)."""
    repl = ", ".join(f"'{dc}': {rf}" for dc, rf in replication.items())
    s = cluster.session()
    s.execute(f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
              f"{{'class': 'NetworkTopologyStrategy', {repl}}}")
    cols = ", ".join(f'"{c}" blob' for c in COLUMNS)
    s.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.standard1 (key blob PRIMARY KEY, {cols})")


@dataclass
class _Bounded:
    """Run prepared statements asynchronously with at most `in_flight` outstanding, recording
    each request's service time (µs) into an HDR histogram."""

    in_flight: int

    def run(self, session, stmt: PreparedStatement, params: list[tuple], on_row=None) -> tuple[HdrHistogram, float, int]:
        hist = HdrHistogram(1, 60_000_000, 3)
        lock = threading.Lock()
        done = threading.Event()
        state = {"next": 0, "finished": 0, "errors": 0, "first_error": None}
        total = len(params)

        def launch() -> None:
            with lock:
                i = state["next"]
                if i >= total:
                    return
                state["next"] = i + 1
            t0 = time.perf_counter()
            fut = session.execute_async(stmt, params[i])
            fut.add_callbacks(finished, failed, callback_args=(t0,), errback_args=(t0,))

        def complete(t0: float) -> None:
            us = max(1, int((time.perf_counter() - t0) * 1e6))
            with lock:
                hist.record_value(us)
                state["finished"] += 1
                last = state["finished"] == total
            if last:
                done.set()
            else:
                launch()

        def finished(rows, t0: float) -> None:
            if on_row is not None:
                on_row(rows)
            complete(t0)

        def failed(exc, t0: float) -> None:
            with lock:
                state["errors"] += 1
                state["first_error"] = state["first_error"] or exc
            complete(t0)

        start = time.perf_counter()
        for _ in range(min(self.in_flight, total)):
            launch()
        if total and not done.wait(timeout=600):
            raise ClusterError(f"{total - state['finished']} of {total} requests did not finish within 600 s")
        elapsed = time.perf_counter() - start
        if state["errors"]:
            raise ClusterError(f"{state['errors']} of {total} requests failed; first error: {state['first_error']}")
        return hist, elapsed, state["finished"]


def _row(op: str, hist: HdrHistogram, elapsed_s: float, n: int) -> dict:
    ms = 1000.0
    return {"op": op, "rows": n, "duration_s": round(elapsed_s, 3), "rate_rows_s": round(n / elapsed_s, 1),
            "latency_mean_ms": hist.get_mean_value() / ms, "latency_p50_ms": hist.get_value_at_percentile(50) / ms,
            "latency_p95_ms": hist.get_value_at_percentile(95) / ms, "latency_p99_ms": hist.get_value_at_percentile(99) / ms,
            "latency_max_ms": hist.get_max_value() / ms}


def round_trip(cluster: ClusterHandle, keyspace: str, rows: int, column_bytes: int = 818,
               in_flight: int = 64, consistency: str = "LOCAL_QUORUM") -> pd.DataFrame:
    """Write `rows` rows (keys 0..rows-1, 5 columns of `column_bytes` random bytes each) and read
    every one back; check that what comes back is what was written. Returns one row per op
    with rate_rows_s and service-time latency in ms (HDR percentiles)."""
    from cassandra import ConsistencyLevel

    cl = ConsistencyLevel.name_to_value[consistency]
    s = cluster.session()
    cols = ", ".join(f'"{c}"' for c in COLUMNS)
    insert = s.prepare(f"INSERT INTO {keyspace}.standard1 (key, {cols}) VALUES (?, ?, ?, ?, ?, ?)")
    select = s.prepare(f"SELECT key, {cols} FROM {keyspace}.standard1 WHERE key = ?")
    insert.consistency_level = cl
    select.consistency_level = cl
    keys = [i.to_bytes(8, "big") for i in range(rows)]
    values = {k: tuple(os.urandom(column_bytes) for _ in COLUMNS) for k in keys}
    w_hist, w_s, w_n = _Bounded(in_flight).run(s, insert, [(k, *values[k]) for k in keys])
    mismatches = []

    def check(result) -> None:
        for r in result:
            if tuple(r[1:]) != values.get(r[0]):
                mismatches.append(r[0])

    seen = []
    r_hist, r_s, r_n = _Bounded(in_flight).run(s, select, [(k,) for k in keys],
                                               on_row=lambda res: (seen.append(1), check(res)))
    if mismatches:
        raise ClusterError(f"{len(mismatches)} rows read back differ from what was written")
    count = s.execute(f"SELECT count(*) FROM {keyspace}.standard1").one()[0]
    out = pd.DataFrame([_row("write", w_hist, w_s, w_n), _row("read", r_hist, r_s, r_n)])
    out.attrs["rows_in_table"] = int(count)
    out.attrs["latency_type"] = "service"
    return out


def status_table(nodetool_status_text: str) -> pd.DataFrame:
    """`nodetool status` output as one row per node (the nodetool-status parser)."""
    from cassperf.parsers.nodetool.status import parse

    return parse(nodetool_status_text, "nodetool status").tables["nodes"]
