"""Time series of a run on its own clock (seconds since the start of measurement): the
sampler's cluster metrics per node, counters turned into rates, and throughput per interval.

Counters (gc_count, gc_time_ms, bytes_compacted, compactions_completed, write_timeouts, ...)
grow while a node lives: ``metric_series(..., per_second=True)`` gives the increase per second
between two samples of the same node (a counter that fell, i.e. a restarted node, gives no
value for that step rather than a negative rate). Gauges are levels at the sample's time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cassperf.analysis.windows import started_at
from cassperf.results.model import Run

SERIES_COLUMNS = ["time_s", "node", "metric", "value"]


def metric_series(run: Run, metrics: Sequence[str], per_second: bool = False) -> pd.DataFrame:
    """Rows (time_s, node, metric, value) of the named metrics, sorted by node and time;
    ``per_second``: differences per second between a node's consecutive samples."""
    m = run.metrics
    m = m[m["metric"].isin(list(metrics)).fillna(False).to_numpy()]
    if m.empty:
        return pd.DataFrame(columns=SERIES_COLUMNS)
    t0 = started_at(run)
    out = pd.DataFrame({"time_s": (m["time"] - t0).dt.total_seconds().to_numpy(),
                        "node": m["node"].astype(str).to_numpy(), "metric": m["metric"].astype(str).to_numpy(),
                        "value": m["value"].to_numpy(dtype="float64")})
    out = out.sort_values(["metric", "node", "time_s"], kind="stable").reset_index(drop=True)
    if per_second:
        grouped = out.groupby(["metric", "node"], sort=False)
        dv = grouped["value"].diff()
        dt = grouped["time_s"].diff()
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = dv / dt
        out["value"] = rate.where((dt > 0) & (dv >= 0))
        out = out.dropna(subset=["value"]).reset_index(drop=True)
    return out[SERIES_COLUMNS]


def table_metric(base: str, keyspace: str, table: str) -> str:
    """The sampler's per-table metric name: live_sstables:ks.t."""
    return f"{base}:{keyspace}.{table}"


def throughput_series(run: Run, ops: Sequence[str] | None = None) -> pd.DataFrame:
    """Per interval and op: time_s (interval end), op, rate_ops_s, latency p50/p95/p99 (ms,
    the tool's per-interval figures), errors."""
    iv = run.intervals
    if ops is not None:
        iv = iv[iv["op"].astype(str).str.lower().isin([o.lower() for o in ops]).to_numpy()]
    cols = ["time_s", "op", "rate_ops_s", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
            "errors"]
    return iv[cols].astype({"op": str}).reset_index(drop=True)
