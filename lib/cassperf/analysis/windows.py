"""Time windows of a run and what happened inside them.

A `Window` is [start_s, end_s) in seconds since the run's start (the runs' `time_s`). An
interval belongs to a window when its midpoint does (`select.in_window`, the rule of
`cassperf.hdr.merge`), so adjacent windows never count an interval twice.

`window_stats` gives an op's count, throughput and latency in a window with the percentiles
**merged from the run's HDR histograms** (the sum of the window's interval histograms is the
histogram of all its samples), never averaged from per-interval percentiles. Latency is the
run's latency type (response time under a fixed rate: `-rt` tags; service time otherwise: `-st`).
A run without histograms (e.g. latte, a console log) falls back to its interval columns:
count-weighted means, exact for the mean, not for percentiles; `percentiles_merged` is then
False and `note` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from cassperf.analysis.samples import PERCENTILE_COLUMNS, OpSamples, op_samples
from cassperf.analysis.select import AnalysisError, histogram_bounds, in_window, interval_bounds, run_name
from cassperf.results.model import Run


@dataclass(frozen=True)
class Window:
    """[start_s, end_s) in seconds since the run's start. `unfinished`: the phase had no end
    event and the window stops at the run's last interval; `note` says anything else worth
    knowing (a shortened window, a phase that failed)."""

    start_s: float
    end_s: float
    name: str = ""
    unfinished: bool = False
    note: str = ""

    @property
    def length_s(self) -> float:
        return self.end_s - self.start_s

    def __post_init__(self) -> None:
        if not self.end_s >= self.start_s:
            raise AnalysisError(f"window {self.name!r}: end {self.end_s} s before start {self.start_s} s")


def _event_times(run: Run) -> pd.DataFrame:
    """Events with time_s filled from their UTC time where only that is known."""
    ev = run.events.copy()
    if ev.empty:
        return ev
    missing = ev["time_s"].isna() & ev["time"].notna()
    if missing.any():
        t0 = _started(run)
        ev.loc[missing, "time_s"] = (ev.loc[missing, "time"] - t0).dt.total_seconds()
    return ev


def _started(run: Run) -> pd.Timestamp:
    value = run.manifest.get("started_utc")
    if not value:
        raise AnalysisError(f"run {run_name(run)}: manifest has no started_utc, so UTC times cannot be "
                            f"placed on its time axis")
    ts = pd.Timestamp(value)
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def run_window(run: Run, name: str = "run") -> Window:
    """From the first interval's start to the last interval's end (histograms included)."""
    starts: list[float] = []
    ends: list[float] = []
    if not run.intervals.empty:
        s, e = interval_bounds(run.intervals)
        starts.append(float(np.nanmin(s)))
        ends.append(float(np.nanmax(e)))
    if not run.histograms.empty:
        s, e = histogram_bounds(run, run.histograms)
        starts.append(float(np.nanmin(s)))
        ends.append(float(np.nanmax(e)))
    if not starts:
        raise AnalysisError(f"run {run_name(run)}: no intervals and no histograms")
    return Window(min(starts), max(ends), name)


def phase_window(run: Run, name: str, occurrence: int = 0) -> Window:
    """The window between events '<name>:start' and '<name>:end' (the `occurrence`-th start,
    0 = first, and the first end after it). A phase without an end event ends at the run's last
    interval, with `unfinished=True`. Raises AnalysisError naming the run and the events it has
    when there is no such start event."""
    ev = _event_times(run)
    names = ev["name"].astype("string").fillna("") if not ev.empty else pd.Series(dtype="string")
    starts = ev[(names == f"{name}:start").to_numpy()].sort_values("time_s") if not ev.empty else ev
    if len(starts) <= occurrence:
        have = sorted(set(names.tolist())) if not ev.empty else []
        raise AnalysisError(f"run {run_name(run)}: no event '{name}:start'"
                            f"{f' number {occurrence + 1}' if occurrence else ''}; its events are "
                            f"{have or 'none'} (mark a phase with run.phase({name!r}) or sampler.phase)")
    start = float(starts["time_s"].iloc[occurrence])
    ends = ev[(names == f"{name}:end").to_numpy() & (ev["time_s"] >= start).to_numpy()].sort_values("time_s")
    if ends.empty:
        end = run_window(run).end_s
        return Window(start, max(end, start), name, unfinished=True,
                      note=f"no '{name}:end' event: the phase was still running when the run ended "
                           f"({end:.1f} s), the window stops there")
    detail = str(ends["detail"].iloc[0]) if pd.notna(ends["detail"].iloc[0]) else ""
    note = f"the phase failed: {detail}" if "[failed:" in detail else ""
    return Window(start, float(ends["time_s"].iloc[0]), name, note=note)


def window_before(window: Window, length_s: float | None = None, gap_s: float = 0.0,
                  name: str = "before") -> Window:
    """The window of `length_s` (default: the same length) ending `gap_s` before `window`
    starts. Shortened (and noted) where it would begin before the run's start (0 s)."""
    length = window.length_s if length_s is None else float(length_s)
    end = window.start_s - gap_s
    start = end - length
    if start < 0:
        return Window(0.0, max(end, 0.0), name, note=f"shortened to {max(end, 0.0):.1f} s of the {length:.1f} s "
                                                     f"asked: the run starts at 0 s")
    return Window(start, end, name)


def intersect(a: Window, b: Window, name: str | None = None) -> Window:
    """The overlap of two windows (an empty window at a's start when they do not overlap)."""
    start, end = max(a.start_s, b.start_s), min(a.end_s, b.end_s)
    return replace(a, start_s=start, end_s=max(end, start), name=a.name if name is None else name)


def slice_intervals(run: Run, window: Window) -> pd.DataFrame:
    """The run's interval rows (every op) whose midpoint lies in the window, with start_s and
    end_s columns (see select.interval_bounds)."""
    rows = run.intervals
    if rows.empty:
        return rows.assign(start_s=pd.Series(dtype="float64"), end_s=pd.Series(dtype="float64"))
    start, end = interval_bounds(rows)
    out = rows.copy()
    out["start_s"], out["end_s"] = start, end
    return out[in_window(start, end, window.start_s, window.end_s)].reset_index(drop=True)


def slice_histograms(run: Run, window: Window, tag: str | None = None) -> pd.DataFrame:
    """The run's histogram rows (of `tag`, or all) whose midpoint lies in the window, with
    start_s and end_s on the run's clock (select.histogram_bounds)."""
    rows = run.histograms
    if tag is not None:
        rows = rows[(rows["tag"] == tag).fillna(False).to_numpy()]
    out = rows.copy()
    if out.empty:
        return out.reset_index(drop=True)
    out["start_s"], out["end_s"] = histogram_bounds(run, rows)
    return out[in_window(out["start_s"].to_numpy(), out["end_s"].to_numpy(), window.start_s, window.end_s)] \
        .reset_index(drop=True)


def slice_metrics(run: Run, window: Window) -> pd.DataFrame:
    """The run's metric samples taken in [start_s, end_s), with a `time_s` column (seconds since
    the manifest's started_utc; a source with only relative times keeps its own time_s)."""
    m = run.metrics.copy()
    if m.empty:
        return m.assign(time_s=pd.Series(dtype="float64"))
    rel = m["time_s"].astype("float64") if "time_s" in m.columns else pd.Series(np.nan, index=m.index)
    if m["time"].notna().any():
        rel = rel.where(rel.notna(), (m["time"] - _started(run)).dt.total_seconds())
    m["time_s"] = rel
    keep = (rel >= window.start_s) & (rel < window.end_s)
    return m[keep.fillna(False).to_numpy()].reset_index(drop=True)


def stats_of(samples: OpSamples) -> dict[str, Any]:
    """Aggregate one op's samples: see window_stats."""
    duration = float(np.nansum(samples.end_s - samples.start_s))
    count = float(np.nansum(samples.count))
    out: dict[str, Any] = {"op": samples.op, "tag": samples.tag, "latency_type": samples.latency_type,
                           "intervals": samples.n, "duration_s": duration,
                           "count": int(round(count)),
                           "rate_ops_s": count / duration if duration > 0 else math.nan}
    if samples.hist is not None:
        st = samples.hist.stats_ms(samples.hist.matrix.sum(axis=0), samples.unit)
        out.update({k: float(v) for k, v in st.items() if k != "count"})
        out["percentiles_merged"] = True
    else:
        weights = np.where(np.isnan(samples.count), 0.0, samples.count)
        out["latency_mean_ms"] = _weighted(samples.mean_ms, weights)
        pct = samples.pct if samples.pct is not None else pd.DataFrame()
        for col in PERCENTILE_COLUMNS.values():
            values = pct[col].to_numpy(dtype="float64") if col in pct.columns else np.full(samples.n, np.nan)
            out[col] = float(np.nanmax(values)) if col == "latency_max_ms" and np.isfinite(values).any() \
                else _weighted(values, weights)
        out["percentiles_merged"] = False
    errors = samples.rows["errors"] if "errors" in samples.rows.columns else None
    out["errors"] = int(errors.sum()) if errors is not None and errors.notna().any() else None
    total = out["count"] + (out["errors"] or 0)
    out["error_share"] = (out["errors"] / total) if out["errors"] is not None and total else \
        (0.0 if out["errors"] == 0 else math.nan)
    out["note"] = samples.note
    return out


def _weighted(values: np.ndarray, weights: np.ndarray) -> float:
    ok = np.isfinite(values) & (weights > 0)
    return float(np.dot(values[ok], weights[ok]) / weights[ok].sum()) if ok.any() else math.nan


def window_stats(run: Run, window: Window, op: str, latency_type: str | None = None) -> dict[str, Any]:
    """An op's figures in a window: count, rate_ops_s (count / the seconds its intervals cover),
    latency_{mean,p50,p95,p99,p999,max}_ms (merged from HDR histograms), errors, error_share,
    intervals, duration_s, latency_type, tag, percentiles_merged, note, window (its name),
    start_s, end_s. latency_type: "response" / "service" (default the manifest's)."""
    stats = stats_of(op_samples(run, op, window.start_s, window.end_s, latency_type))
    notes = [n for n in (stats["note"], window.note) if n]
    stats.update({"window": window.name, "start_s": window.start_s, "end_s": window.end_s,
                  "note": "; ".join(notes)})
    return stats


def started_at(run: Run) -> pd.Timestamp:
    """The UTC instant of the run's time_s 0 (manifest started_utc)."""
    return _started(run)
