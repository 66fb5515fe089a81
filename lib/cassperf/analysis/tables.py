"""Tables the studies publish, as DataFrames (the notebook decides how to show them).

`phase_table`: the garbagecollect study's table, steady window against a phase window, in its
published layout and units (throughput in ops/s as "1.5k/s", latency in microseconds as
"10.28k micros"), with the change, its 95% CI and a verdict from `compare` beside each row.
`runs_frame`: one row per run (and op) with its labels and HDR-merged figures over its steady
window: the frame the sweep charts plot.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cassperf.analysis.compare import compare_samples, rate_ci, stability
from cassperf.analysis.format import fmt_micros, fmt_rate
from cassperf.analysis.samples import group_samples, op_samples
from cassperf.analysis.select import AnalysisError, ops_of, run_name
from cassperf.analysis.steady import steady_state
from cassperf.analysis.windows import Window, run_window, stats_of
from cassperf.results.model import Run

#: (row title after the op name, metric, unit, scale from the metric's unit to the table's)
PHASE_ROWS: tuple[tuple[str, str, str, float], ...] = (
    ("Throughput", "rate_ops_s", "ops/s", 1.0),
    ("Latency avg.", "latency_mean_ms", "micros", 1000.0),
    ("Latency p95", "latency_p95_ms", "micros", 1000.0),
    ("Latency p99", "latency_p99_ms", "micros", 1000.0),
)
PHASE_COLUMNS = ["Metric", "Steady State", "With GarbageCollect", "steady_value", "phase_value", "unit",
                 "change_pct", "ci_low_pct", "ci_high_pct", "p_value", "significant", "verdict", "method"]


def phase_table(run: Run, steady: Window, phase: Window,
                ops: Sequence[str | tuple[str, Sequence[str]]] = ("read", "write"),
                phase_title: str = "With GarbageCollect", steady_title: str = "Steady State",
                reps: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per op (in `ops` order): Throughput, Latency avg., Latency p95, Latency p99 rows.
    Columns: Metric, <steady_title>, <phase_title> (formatted), steady_value, phase_value (in
    `unit`: ops/s or micros), unit, change_pct, ci_low_pct, ci_high_pct, p_value, significant,
    verdict, method (compare_windows of the phase against the steady window). An op may be
    ``(name, [ops])``: those ops combined (HDR histograms summed), e.g. ``("write", ["write",
    "delete"])`` for every mutation under one "Write" row."""
    rows: list[dict[str, Any]] = []
    for wanted in ops:
        op, sa = group_samples(run, wanted, steady.start_s, steady.end_s)
        _, sb = group_samples(run, wanted, phase.start_s, phase.end_s)
        fa, fb = stats_of(sa), stats_of(sb)
        for title, metric, unit, scale in PHASE_ROWS:
            c = compare_samples(sa, sb, metric, reps, seed)
            va, vb = fa[metric] * scale, fb[metric] * scale
            fmt = fmt_rate if unit == "ops/s" else fmt_micros
            rows.append({"Metric": f"{op.capitalize()} {title}", steady_title: fmt(va), phase_title: fmt(vb),
                         "steady_value": va, "phase_value": vb, "unit": unit, "change_pct": c.change_pct,
                         "ci_low_pct": c.ci_low_pct, "ci_high_pct": c.ci_high_pct, "p_value": c.p_value,
                         "significant": c.significant, "verdict": c.verdict, "method": c.method})
    columns = [steady_title if c == "Steady State" else phase_title if c == "With GarbageCollect" else c
               for c in PHASE_COLUMNS]
    return pd.DataFrame(rows, columns=columns)


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
