"""Run figures over repeats: one row per run and op, the input of every comparison across runs.

    run_figures(runs, ops=None, rule="mser5", *, window=None, op_groups=None, keep_drift=None)
                                                               one row per (run, op), FIGURE_COLUMNS; the hooks
                                                               are a study analysis's (experiments.analysis)
    samples_row(samples, manifest, steady) -> dict             one row from one op's samples (the path
                                                               simulated runs take; run_figures uses it too)
    left_out(frame) -> DataFrame                               the runs that left, and why

Each row holds the run's labels (`arm`, `block` as an Int64, every other label as a string
column; a label named like a figure becomes `label_<name>`), the op, its steady window
(analysis.steady, MSER-5 by default) and its figures over that window: rate_ops_s, row_rate_s,
latency_mean_ms and latency_p50/p95/p99/p999_ms merged from the window's HDR histograms
(analysis.windows.stats_of), the number of intervals and ops. The `histogram` column keeps the
window-merged histogram (a WindowHistogram; None without histograms)
for percentile comparisons across runs; drop it before storing the frame.

Diagnostics are columns, never a silent veto: `cv` (stdev / mean of the interval throughput),
`lag1` (its lag-1 autocorrelation) and `drift_pct`, the linear trend of the interval throughput
over the window as the % change from the window's start to its end, with `drift_p`, the
p-value of that trend (t-test of the slope on batch means: batches of 1, 2, 4, ... intervals,
the first whose residuals around the line have lag-1 autocorrelation <= 0.2 with 5 or more
batches; NaN when none does).

A run leaves comparisons only for a stated reason, in `status` ("ok" or "excluded") and
`reason`, the first of:
  failed           the manifest says failed: true ("failed: <its failure line>")
  incomplete       the manifest says complete: false (killed or cut short)
  no steady state  no intervals, or fewer than 10 after the cool-down trim (MSER-5 needs 10
                   to find the end of a warm-up, so the figure would include it)
  no ops           the op had no operations in the steady window
  drift            |drift_pct| > DRIFT_BOUND_PCT (25%) and drift_p < DRIFT_ALPHA (0.001)
The drift bound is two-part because the interval noise on this machine is large (interval CV
40-80% on 0.25 s intervals): a fixed % bound alone would drop noisy stationary runs, a test
alone would drop stable runs over trends too small to matter. On the simulated studies
(tests/unit/test_analysis_calibration.py) it drops under 0.5% of stationary runs. Keeping a
drifting run does not bias a comparison of randomized blocks, it widens the run-to-run spread
the comparison measures; so the bound only removes runs that were plainly not steady. It was
10% until make report's 6 s runs at saturation (05's reads at 128 in flight) showed trends of
±15-20% in runs whose figures sat among their arm's others: at 10% the rule dropped two of three
A/A runs there and left the control without a test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special as spf

from cassperf.analysis.format import fmt_p
from cassperf.analysis.compare import MAX_LAG1, MIN_BATCHES, lag1, stability
from cassperf.analysis.samples import HistCounts, OpSamples, group_samples, op_samples
from cassperf.analysis.select import AnalysisError, ops_of, run_name
from cassperf.analysis.steady import SteadyState, steady_state
from cassperf.analysis.windows import Window, stats_of
from cassperf.results.model import Run

ARM, BLOCK = "arm", "block"
OK, EXCLUDED = "ok", "excluded"
DRIFT_BOUND_PCT = 25.0
DRIFT_ALPHA = 0.001
FIGURES = ("rate_ops_s", "row_rate_s", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
           "latency_p999_ms")
FIGURE_COLUMNS = ["op", "status", "reason", "window_start_s", "window_end_s", "intervals", "count", *FIGURES,
                  "latency_type", "percentiles_merged", "cv", "lag1", "drift_pct", "drift_p", "window_note",
                  "histogram"]


@dataclass(frozen=True, eq=False)
class WindowHistogram:
    """One run's histogram of one op merged over its steady window: `counts` a HistCounts with
    one row, `unit` what one recorded integer means ("ns", "us", "ms")."""

    counts: HistCounts
    unit: str

    @property
    def total(self) -> int:
        return int(self.counts.matrix.sum())

    def __repr__(self) -> str:
        return f"WindowHistogram({self.total:,} values in {self.unit})"


def drift(samples: OpSamples) -> tuple[float, float]:
    """(drift_pct, drift_p) of the interval throughput, as the module docstring says: the % from
    the least-squares line over the intervals, the p-value from the batch means."""
    length = samples.end_s - samples.start_s
    ok = np.isfinite(samples.count) & (length > 0)
    count, length = samples.count[ok], length[ok]
    mid = ((samples.start_s + samples.end_s) / 2)[ok]
    if len(count) < 3 or count.sum() <= 0:
        return math.nan, math.nan
    slope = _line(mid, count / length)[0]
    pct = 100 * slope * float(samples.end_s[ok][-1] - samples.start_s[ok][0]) / (count.sum() / length.sum())
    b = 1
    while len(count) // b >= MIN_BATCHES:
        m = len(count) // b
        rate = count[: m * b].reshape(m, b).sum(axis=1) / length[: m * b].reshape(m, b).sum(axis=1)
        t = mid[: m * b].reshape(m, b).mean(axis=1)
        slope_b, resid, se = _line(t, rate)
        if lag1(resid) <= MAX_LAG1:
            p = 2 * float(spf.stdtr(m - 2, -abs(slope_b) / se)) if se > 0 else float(slope_b == 0)
            return pct, p
        b *= 2
    return pct, math.nan


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray, float]:
    """(slope, residuals, standard error of the slope) of the least-squares line of y on x."""
    xc = x - x.mean()
    sxx = float(xc @ xc)
    slope = float(xc @ (y - y.mean())) / sxx if sxx > 0 else 0.0
    resid = y - y.mean() - slope * xc
    dof = len(x) - 2
    se = math.sqrt(float(resid @ resid) / dof / sxx) if dof > 0 and sxx > 0 else math.nan
    return slope, resid, se


def _exclusion(manifest: dict[str, Any], figures: dict[str, Any], steady: SteadyState | None, why: str) -> str:
    if manifest.get("failed"):
        return f"failed: {manifest.get('failure') or 'marked failed'}"
    if manifest.get("complete") is False:
        return "incomplete: the run was killed or cut short"
    if steady is None or why:
        return why
    if not steady.searched:
        return f"no steady state: {steady.note.split(':')[0]}, so a warm-up could not be told apart"
    if not figures.get("count"):
        return "no ops in the steady window"
    d, p = figures["drift_pct"], figures["drift_p"]
    if math.isfinite(d) and abs(d) > DRIFT_BOUND_PCT and math.isfinite(p) and p < DRIFT_ALPHA:
        return (f"drift: throughput trends {d:+.0f}% across the steady window ({fmt_p(p)}; the bound is "
                f"±{DRIFT_BOUND_PCT:g}% at p < {DRIFT_ALPHA:g})")
    return ""


def samples_row(samples: OpSamples | None, manifest: dict[str, Any], steady: SteadyState | None,
                why: str = "") -> dict[str, Any]:
    """The FIGURE_COLUMNS of one op of one run from its samples in the steady window; samples None
    with `why` (the reason it leaves) when the run has no steady window or not the op."""
    row: dict[str, Any] = {k: math.nan for k in (*FIGURES, "cv", "lag1", "drift_pct", "drift_p", "window_start_s",
                                                  "window_end_s")}
    row.update(op=samples.op if samples is not None else None, intervals=0, count=0, latency_type=None,
               percentiles_merged=False, histogram=None, window_note=steady.note if steady else why)
    if samples is not None and steady is not None:
        stats = stats_of(samples)
        row.update({k: stats[k] for k in FIGURES if k in stats})
        row["row_rate_s"] = _row_rate(samples)
        row.update(intervals=samples.n, count=stats["count"], latency_type=stats["latency_type"],
                   percentiles_merged=stats["percentiles_merged"], window_start_s=steady.window.start_s,
                   window_end_s=steady.window.end_s, cv=stability(samples.rate_ops_s)[0],
                   lag1=lag1(samples.rate_ops_s[np.isfinite(samples.rate_ops_s)]))
        row["drift_pct"], row["drift_p"] = drift(samples)
        if samples.hist is not None:
            h = samples.hist
            row["histogram"] = WindowHistogram(HistCounts(h.layout, h.index, h.matrix.sum(axis=0, keepdims=True)),
                                               samples.unit)
    reason = _exclusion(manifest, row, steady, why)
    row.update(status=EXCLUDED if reason else OK, reason=reason)
    return row


def kept_despite_drift(figures: pd.DataFrame) -> pd.DataFrame:
    """``figures`` with the rows left out for drift alone kept (status ok), the drift said in their
    window_note: for windows whose trend is what they measure (an emptied cache filling, an
    operation's effect building up), where a drift rule would hide the effect it should show."""
    out = figures.copy()
    if out.empty:
        return out
    drift = ((out["status"] == EXCLUDED) & out["reason"].astype(str).str.startswith("drift")).to_numpy(dtype=bool)
    if drift.any():
        out.loc[drift, "window_note"] = (out.loc[drift, "window_note"].astype(str) + "; kept despite "
                                         + out.loc[drift, "reason"].astype(str))
        out.loc[drift, "status"] = OK
        out.loc[drift, "reason"] = ""
    return out


def _row_rate(samples: OpSamples) -> float:
    """Rows per second over the window (length-weighted over the interval rows), NaN when unknown."""
    rows = samples.rows
    if rows.empty or "row_rate_s" not in rows.columns:
        return math.nan
    rate = rows["row_rate_s"].to_numpy(dtype="float64", na_value=np.nan)
    length = rows["end_s"].to_numpy(dtype="float64") - rows["start_s"].to_numpy(dtype="float64")
    ok = np.isfinite(rate) & (length > 0)
    return float(np.dot(rate[ok], length[ok]) / length[ok].sum()) if ok.any() else math.nan


#: how a run's figures window is found: a rule of analysis.steady ("mser5", "trim") or a fixed Window
WindowChoice = str | Window


def _steady(run: Run, how: WindowChoice) -> SteadyState:
    """The run's window: a fixed Window (no search inside it), else ``steady_state(run, how)``."""
    if isinstance(how, Window):
        return SteadyState(how, 0.0, 0.0, "fixed", f"the {how.name or 'fixed'} window "
                                                   f"{how.start_s:.1f}-{how.end_s:.1f} s"
                           + (f" ({how.note})" if how.note else ""))
    return steady_state(run, how)


def run_figures(runs: Iterable[Run], ops: Sequence[str] | None = None, rule: str = "mser5", *,
                window: Callable[[Run], WindowChoice] | None = None,
                op_groups: Mapping[str, Sequence[str]] | None = None,
                keep_drift: Callable[[Run], bool] | None = None) -> pd.DataFrame:
    """One row per run and op (the ops in `ops` the run has, or all its ops), as the module
    docstring says. A run with none of them (or no intervals at all) still gets one row, op
    missing, status excluded, so that every comparison of its arm lists it.

    The hooks of a study's analysis (cassperf.experiments.analysis.Analysis):
    ``window(run)``: the rule for this run ("mser5", "trim") or a fixed Window (its figures over it,
    nothing searched; an AnalysisError leaves the run with that reason); ``op_groups``: figures per
    named group of ops merged (``{"write": ("write", "delete")}``: every mutation), one row per group
    whether or not the run has its ops; ``keep_drift(run)``: True where the run's trend is what it
    measures (an emptied cache filling, an operation's effect building up): kept despite drift, said
    in its window_note."""
    records: list[tuple[dict[str, str], dict[str, Any]]] = []
    kept: set[str] = set()
    for run in runs:
        steady: SteadyState | None
        try:
            how = window(run) if window is not None else rule
        except AnalysisError as exc:                       # a study's window the run lacks (a phase never marked)
            how, steady, why = None, None, f"no figures window: {exc}"
        if how is not None:
            try:
                steady, why = _steady(run, how), ""
            except AnalysisError as exc:
                text = str(exc)
                steady, why = None, "no steady state: " + ("no intervals" if "no intervals" in text else text)
        rows = []
        if op_groups is not None:
            for name, parts in op_groups.items():
                samples = None
                if steady is not None:
                    samples = group_samples(run, (name, list(parts)), steady.window.start_s, steady.window.end_s)[1]
                rows.append(samples_row(samples, run.manifest, steady, why) | {"op": name})
        else:
            have = ops_of(run)
            for op in [op for op in (ops if ops is not None else have) if op in have]:
                samples = op_samples(run, op, steady.window.start_s, steady.window.end_s) if steady else None
                rows.append(samples_row(samples, run.manifest, steady, why) | {"op": op})
            if not rows:
                wanted = ", ".join(ops) if ops else "any op"
                rows = [samples_row(None, run.manifest, steady, why or f"no intervals for {wanted}")]
        if keep_drift is not None and keep_drift(run):
            kept.add(run_name(run))
        records += [({"run_id": run_name(run), **{k: str(v) for k, v in run.labels.items()}}, r) for r in rows]
    frame = figures_frame(records)
    if kept:
        mine = frame["run_id"].isin(kept).to_numpy(dtype=bool)
        frame = pd.concat([frame[~mine], kept_despite_drift(frame[mine])]).sort_index()
    return frame


def figures_frame(records: Sequence[tuple[dict[str, str], dict[str, Any]]]) -> pd.DataFrame:
    """The frame of (labels incl. run_id, figures row) pairs: run_id, arm, block, the other labels,
    then FIGURE_COLUMNS."""
    keys = list(dict.fromkeys(k for labels, _ in records for k in labels if k not in ("run_id", ARM, BLOCK)))
    reserved = {"run_id", ARM, BLOCK, *FIGURE_COLUMNS}
    names = {k: f"label_{k}" if k in reserved else k for k in keys}
    data: dict[str, Any] = {"run_id": pd.array([lab.get("run_id") for lab, _ in records], dtype="string"),
                            ARM: pd.array([lab.get(ARM) for lab, _ in records], dtype="string"),
                            BLOCK: pd.array([_block(lab.get(BLOCK)) for lab, _ in records], dtype="Int64")}
    for k, name in names.items():
        data[name] = pd.array([lab.get(k) for lab, _ in records], dtype="string")
    for col in FIGURE_COLUMNS:
        data[col] = [row[col] for _, row in records]
    out = pd.DataFrame(data)
    for col in ("intervals", "count"):
        out[col] = out[col].astype("int64")
    for col in (*FIGURES, "cv", "lag1", "drift_pct", "drift_p", "window_start_s", "window_end_s"):
        out[col] = out[col].astype("float64")
    for col in ("op", "status", "reason", "latency_type", "window_note"):
        out[col] = out[col].astype("string")
    out["percentiles_merged"] = out["percentiles_merged"].astype(bool)
    return out


def _block(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise AnalysisError(f"label block={value!r}: expected a block number (1, 2, ...), as the executor "
                            f"writes it") from None


def left_out(frame: pd.DataFrame) -> pd.DataFrame:
    """The excluded rows: run_id, arm, block, op, reason (the report's list of runs that left)."""
    out = frame[frame["status"] == EXCLUDED]
    return out[["run_id", ARM, BLOCK, "op", "reason"]].reset_index(drop=True)
