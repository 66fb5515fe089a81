"""Node CPU over a window, and what it costs per row.

The sampler's host source records ``process_cpu_pct`` for every local node: the node JVM's
CPU since that node's previous sample, in % of one core (psutil over /proc; no JMX needed, so
it is there on every local deployment). A sample at time t_i therefore covers (t_{i-1}, t_i]
at a constant level; the first sample of a node covers an unknown span and is not used.

``node_cpu_cores(run, window)``: the CPU the cluster's nodes used in the window, in cores
(CPU seconds per second, summed over nodes: 1.5 = one and a half cores busy), from the part of
each covered span that lies in the window. NaN when the run has no such samples or they cover
less than half of the window.

``cpu_ms_per_1k_rows(cores, row_rate_s)``: node CPU milliseconds per 1,000 rows, both rates
over the same window: cores / row_rate_s * 1e6.
"""

from __future__ import annotations

import math

import numpy as np

from cassperf.analysis.series import metric_series
from cassperf.analysis.windows import Window
from cassperf.results.model import Run

CPU_METRIC = "process_cpu_pct"
#: below this share of the window covered by a node's samples, its CPU is unknown
MIN_COVERAGE = 0.5


def node_cpu_cores(run: Run, window: Window) -> float:
    """Cores of node CPU in ``window``, summed over the run's nodes (module doc)."""
    s = metric_series(run, [CPU_METRIC])
    length = window.end_s - window.start_s
    if s.empty or not length > 0:
        return math.nan
    total = 0.0
    for _, node in s.groupby("node", sort=False):
        t = node["time_s"].to_numpy(dtype="float64")
        v = node["value"].to_numpy(dtype="float64") / 100.0
        if len(t) < 2:
            return math.nan
        start, end = t[:-1], t[1:]
        overlap = np.clip(np.minimum(end, window.end_s) - np.maximum(start, window.start_s), 0.0, None)
        ok = np.isfinite(v[1:])
        covered = float(overlap[ok].sum())
        if covered < MIN_COVERAGE * length:
            return math.nan
        total += float(np.dot(v[1:][ok], overlap[ok])) / covered
    return total


def cpu_ms_per_1k_rows(cores: float, row_rate_s: float) -> float:
    """Node CPU ms per 1,000 rows from cores busy and rows per second over one window."""
    if not (math.isfinite(cores) and math.isfinite(row_rate_s)) or row_rate_s <= 0:
        return math.nan
    return cores / row_rate_s * 1e6
