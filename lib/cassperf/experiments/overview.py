"""The cluster overview: who is in the cluster, what runs there, and a round trip of real rows.

Latency here is service time per request (from send to response, no rate limit), measured on
the client and recorded into an HDR histogram (microsecond resolution, 3 significant digits).
"""

from __future__ import annotations

import platform
import sys

import cassandra
import pandas as pd

from cassperf.cluster.base import ClusterHandle
from cassperf.errors import ClusterError



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


def round_trip(cluster: ClusterHandle, keyspace: str, rows: int, column_bytes: int = 818,
               replication: dict[str, int] | None = None, concurrency: int = 64,
               cl: str = "LOCAL_QUORUM") -> pd.DataFrame:
    """Write `rows` rows (cassandra-stress keys of seq 1..rows, 5 columns of `column_bytes`)
    with the engine through run_spec, then read every one back; every read must find its row.
    Both runs are stored (labels study=overview, op). Returns one row per op: count, rows,
    rate_ops_s, row_rate_s and service-time latency in ms (HDR-merged); attrs rows_in_table,
    latency_type, run_ids."""
    from dataclasses import replace

    from cassperf.workload.run import run_spec
    from cassperf.workload.spec import Replication, WorkloadSpec

    local_dc = cluster.local_dc or next(iter(replication or {"dc1": 1}))
    spec = WorkloadSpec(op="write", n=rows, warmup=False, cl=cl, concurrency=concurrency,
                        population=f"seq=1..{rows}", column_size=column_bytes, keyspace=keyspace,
                        replication=Replication.network_topology(replication or {local_dc: 1}), local_dc=local_dc)
    runs = [run_spec(s, cluster, labels={"study": "overview", "op": s.op}, progress=False)
            for s in (spec, replace(spec, op="read"))]
    summary = pd.concat([r.summary for r in runs], ignore_index=True)
    found = int(summary.loc[summary["op"] == "read", "rows"].sum())
    if found < rows:
        raise ClusterError(f"{rows - found:,} of {rows:,} rows written were not found when read back "
                           f"(runs {', '.join(r.run_id for r in runs)})")
    count = cluster.session().execute(f"SELECT count(*) FROM {keyspace}.standard1").one()[0]
    cols = ["op", "count", "rows", "duration_s", "rate_ops_s", "row_rate_s", "latency_mean_ms", "latency_p50_ms",
            "latency_p95_ms", "latency_p99_ms", "latency_max_ms", "errors"]
    out = summary[[c for c in cols if c in summary.columns]].copy()
    out.attrs["rows_in_table"] = int(count)
    out.attrs["latency_type"] = runs[0].manifest["latency_type"]
    out.attrs["run_ids"] = [r.run_id for r in runs]
    return out


def status_table(nodetool_status_text: str) -> pd.DataFrame:
    """`nodetool status` output as one row per node (the nodetool-status parser)."""
    from cassperf.parsers.nodetool.status import parse

    return parse(nodetool_status_text, "nodetool status").tables["nodes"]
