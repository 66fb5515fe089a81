"""A study's arms as rows: each arm's runs (repeats) summarised for charts and tables.

``arm_table(figures, runs)`` takes the run figures (one row per run and op, with the run's
steady window: cassperf.analysis.repeats.run_figures, the runs that count) and the Runs themselves, and gives one row per
arm and op: n runs, the mean of the runs' throughput with its 95% CI half width from the
run-to-run spread (Student's t), and the latency percentiles of the HDR merge of every run's
steady window (never an average of percentiles).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from cassperf import hdr
from cassperf.analysis.select import choose_tag
from cassperf.results.model import Run

PERCENTILES = {"latency_p50_ms": 50.0, "latency_p95_ms": 95.0, "latency_p99_ms": 99.0}


def _window_rows(run: Run, op: str, start_s: float, end_s: float) -> pd.DataFrame | None:
    """The run's histogram rows of ``op`` (its tag for the run's latency type) in the window,
    tagged ``op`` so that runs merge under one name."""
    h = run.histograms
    if h is None or h.empty:
        return None
    tag, _kind, _note = choose_tag(run, op)
    if tag is None:
        return None
    mid = (h["start_s"].astype("float64") + h["end_s"].astype("float64")) / 2
    return h[(h["tag"].astype("string") == tag).fillna(False) & (mid >= start_s) & (mid < end_s)].assign(tag=op)


def merged_latency(runs: Sequence[Run], windows: Sequence[tuple[float, float]], op: str) -> dict[str, float]:
    """p50/p95/p99/mean (ms) of the HDR merge of each run's window for ``op``; NaN without histograms."""
    frames = [f for run, (a, b) in zip(runs, windows, strict=True)
              if (f := _window_rows(run, op, a, b)) is not None and not f.empty]
    units = {str(r.manifest.get("histogram_unit") or "ns") for r in runs}
    merged = hdr.merge(frames).get(op) if frames and len(units) == 1 else None
    if merged is None or merged.get_total_count() == 0:
        return {k: math.nan for k in (*PERCENTILES, "latency_mean_ms")}
    unit = units.pop()
    return {**{k: hdr.percentile_ms(merged, p, unit) for k, p in PERCENTILES.items()},
            "latency_mean_ms": hdr.mean_ms(merged, unit)}


def arm_table(figures: pd.DataFrame, runs: Sequence[Run], keys: Sequence[str] = ("arm",)) -> pd.DataFrame:
    """One row per ``keys`` and op (module doc): n_runs, rate_ops_s (mean of runs), rate_ci_ops_s
    (95% CI half width; NaN under 2 runs), the merged latency percentiles, and the keys."""
    if figures.empty:
        return figures
    by_id = {r.run_id: r for r in runs}
    rows = []
    for key, part in figures.groupby([*keys, "op"], sort=False, dropna=False):
        rates = part["rate_ops_s"].astype("float64").to_numpy()
        n = int(np.isfinite(rates).sum())
        ci = float(sps.t.ppf(0.975, n - 1) * np.nanstd(rates, ddof=1) / math.sqrt(n)) if n >= 2 else math.nan
        picked = [by_id[r] for r in part["run_id"] if r in by_id]
        windows = [(float(a), float(b)) for rid, a, b in zip(part["run_id"], part["window_start_s"],
                                                              part["window_end_s"], strict=True) if rid in by_id]
        lat = merged_latency(picked, windows, str(key[-1]))
        first = part.iloc[0]
        figure_columns = {"run_id", "status", "reason", "histogram", "intervals", "count", "cv", "lag1", "drift_pct",
                          "drift_p", "window_note", "percentiles_merged", "unstable", "errors", "error_share"}
        rows.append({**{c: first[c] for c in part.columns if c not in figure_columns and not c.startswith(
            ("rate_", "latency_", "row_rate", "window_"))},
                     "n_runs": n, "rate_ops_s": float(np.nanmean(rates)) if n else math.nan, "rate_ci_ops_s": ci,
                     **lat})
    return pd.DataFrame(rows)
