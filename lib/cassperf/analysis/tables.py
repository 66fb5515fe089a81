"""Tables the studies publish, as DataFrames (the notebook decides how to show them).

`runs_frame`: one row per run (and op) with its labels and HDR-merged figures over its steady
window: the frame the sweep charts plot.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from cassperf.analysis.compare import rate_ci, stability
from cassperf.analysis.samples import op_samples
from cassperf.analysis.select import AnalysisError, ops_of, run_name
from cassperf.analysis.steady import steady_state
from cassperf.analysis.windows import run_window, stats_of
from cassperf.results.model import Run

RUN_FIGURES = ["op", "rate_ops_s", "rate_ci_ops_s", "row_rate_s", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms",
               "latency_p99_ms", "errors", "error_share", "cv", "unstable", "latency_type", "percentiles_merged",
               "window_start_s", "window_end_s", "window_note"]


def runs_frame(runs: Iterable[Run], op: str | None = None, steady: bool = True, rule: str = "mser5") -> pd.DataFrame:
    """One row per run (per run and op when op is None) with run_id, every label as a column
    (`label_<key>` where a label would clash with a figure's name), then RUN_FIGURES: figures
    over the run's steady window (whole run when steady=False), latency HDR-merged; cv and
    unstable from the op's interval throughput (compare.stability); rate_ci_ops_s the 95% CI
    half width of rate_ops_s from batch means (compare.rate_ci; NaN when the intervals allow
    none). A run without `op` has no row."""
    records: list[dict[str, Any]] = []
    label_keys: list[str] = []
    for run in runs:
        window = steady_state(run, rule) if steady else None
        win = window.window if window is not None else run_window(run)
        note = window.note if window is not None else "whole run"
        for key in run.labels:
            if key not in label_keys:
                label_keys.append(key)
        for name in ([op] if op is not None else ops_of(run)):
            try:
                s = op_samples(run, name, win.start_s, win.end_s)
            except AnalysisError:
                if op is not None:
                    continue
                raise
            figures = stats_of(s)
            cv, unstable = stability(s.rate_ops_s)
            records.append({"run_id": run_name(run), "labels": dict(run.labels), "op": name,
                            "rate_ops_s": figures["rate_ops_s"], "rate_ci_ops_s": rate_ci(s)[0], "row_rate_s": _row_rate(s.rows),
                            **{k: figures[k] for k in ("latency_mean_ms", "latency_p50_ms", "latency_p95_ms",
                                                       "latency_p99_ms", "errors", "error_share", "latency_type",
                                                       "percentiles_merged")},
                            "cv": cv, "unstable": unstable, "window_start_s": win.start_s,
                            "window_end_s": win.end_s, "window_note": note})
    reserved = {"run_id", *RUN_FIGURES}
    names = {k: (f"label_{k}" if k in reserved else k) for k in label_keys}
    out = pd.DataFrame([{"run_id": r["run_id"], **{names[k]: r["labels"].get(k) for k in label_keys},
                         **{k: r[k] for k in RUN_FIGURES}} for r in records],
                       columns=["run_id", *names.values(), *RUN_FIGURES])
    for k in names.values():
        out[k] = out[k].astype("string")
    out["errors"] = out["errors"].astype("Int64")
    return out


def _row_rate(rows: pd.DataFrame) -> float:
    """Rows per second over the window's interval rows (length-weighted), NaN when unknown."""
    if rows.empty or "row_rate_s" not in rows.columns:
        return float("nan")
    rate = rows["row_rate_s"].to_numpy(dtype="float64", na_value=np.nan)
    length = rows["end_s"].to_numpy(dtype="float64") - rows["start_s"].to_numpy(dtype="float64")
    ok = np.isfinite(rate) & (length > 0)
    return float(np.dot(rate[ok], length[ok]) / length[ok].sum()) if ok.any() else float("nan")
