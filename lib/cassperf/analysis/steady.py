"""The steady-state window of a run: warm-up and cool-down dropped by a stated rule.

Rule "mser5" (default), applied to the run's total throughput per interval (the sum of the
op rows' rate_ops_s at each interval end; `total`/`all` aggregate rows only when there is
nothing else):

1. Cool-down: the last interval is always dropped. It is the one most likely partial: a run
   stopped by duration or op count ends mid-interval, the engine drains its in-flight requests
   there, and cassandra-stress prints a last short row. One interval is a fixed, predictable
   cost (1 s of a 60 s run with the default 1 s intervals).
2. Warm-up: MSER-5 (White 1997; White, Cobb & Spratt 2000). The remaining n intervals are cut
   into m = n // 5 batches of 5 (a leftover of fewer than 5 at the end is not batched) and for
   each truncation d = 0 .. m // 2 batches the marginal standard error
   MSER(d) = sum_{j>d} (b_j - mean(b_{d..m}))^2 / (m - d)^2 is computed; the first d that
   minimises it is dropped (5 d intervals). Only the first half is searched: beyond it the
   statistic rewards throwing data away and is known to mis-fire. Fewer than 10 intervals
   (2 batches) are too few: nothing is dropped and the note says so. On a run that was steady
   from the start MSER-5 may still drop a few batches where noise happens to make the rest
   look tighter: that costs precision, not bias, and never more than half the run.

Why MSER-5: it needs no parameter tuned per run (a fixed trim must guess how long a JIT, the
page cache and compaction take to settle, which depends on the machine and the data size),
it is the detection rule that comparative studies of warm-up deletion rules recommend
(Hoad, Robinson & Davies 2010), and it is cheap. Under a fixed rate throughput is flat by
design and warm-up shows in latency instead: pass `column="latency_mean_ms"` (the mean over
ops, count-weighted) to run the same rule on it. Rule "trim" drops fixed `head_s` and `tail_s`
seconds instead (intervals whose midpoint lies within them), for a rule decided up front.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from cassperf.analysis.select import TOTAL_OPS, AnalysisError, canonical_op, interval_bounds, run_name, split_tag
from cassperf.analysis.windows import Window
from cassperf.results.model import Run

BATCH = 5
MIN_BATCHES = 2


@dataclass(frozen=True)
class SteadyState:
    """The kept window, seconds dropped before and after it, the rule and what it did."""

    window: Window
    dropped_head_s: float
    dropped_tail_s: float
    rule: str
    note: str
    searched: bool = True   # False: too few intervals for MSER-5 to look for a warm-up


def throughput_series(run_or_intervals: Run | pd.DataFrame, column: str = "rate_ops_s") -> pd.DataFrame:
    """One row per interval end: start_s, end_s and `column` summed over ops (rate_ops_s) or
    count-weighted over ops (latency columns). Rows of a `-wt` tag and aggregate rows are left
    out (aggregates are used when they are all there is)."""
    rows = run_or_intervals.intervals if isinstance(run_or_intervals, Run) else run_or_intervals
    if rows.empty:
        return pd.DataFrame({"start_s": [], "end_s": [], column: []}, dtype="float64")
    names = rows["op"].astype("string").fillna("").map(canonical_op)
    keep = ~names.isin(TOTAL_OPS)
    if not keep.any():
        keep = ~keep
    if "tag" in rows.columns:
        tags = rows["tag"].astype("string")
        kinds = tags.map(lambda t: split_tag(str(t))[1] if pd.notna(t) else "")
        first = kinds[keep & (kinds != "wait")]
        if len(first):
            keep &= kinds == first.iloc[0]
    rows = rows[keep.to_numpy()].reset_index(drop=True)
    start, end = interval_bounds(rows)
    frame = pd.DataFrame({"start_s": start, "end_s": np.round(end, 6),
                          "value": rows[column].to_numpy(dtype="float64", na_value=np.nan),
                          "weight": rows["count"].to_numpy(dtype="float64", na_value=np.nan)
                          if "count" in rows.columns else 1.0})
    grouped = frame.groupby("end_s", sort=True)
    if column == "rate_ops_s":
        value = grouped["value"].sum(min_count=1)
    else:
        frame["vw"] = frame["value"] * frame["weight"]
        value = grouped["vw"].sum(min_count=1) / grouped["weight"].sum(min_count=1)
    return pd.DataFrame({"start_s": grouped["start_s"].min(), "end_s": value.index.to_numpy(),
                         column: value.to_numpy()}).reset_index(drop=True)


def mser5_truncation(values: np.ndarray, batch: int = BATCH) -> int:
    """How many leading observations MSER-5 drops (a multiple of `batch`; 0 when there are
    fewer than two batches). NaN values count as missing from their batch's mean."""
    m = len(values) // batch
    if m < MIN_BATCHES:
        return 0
    means = np.nanmean(np.asarray(values[: m * batch], dtype="float64").reshape(m, batch), axis=1)
    best_d, best = 0, np.inf
    for d in range(m // 2 + 1):
        tail = means[d:]
        tail = tail[np.isfinite(tail)]
        if len(tail) == 0:
            break
        stat = float(((tail - tail.mean()) ** 2).sum()) / len(tail) ** 2
        if stat < best:
            best_d, best = d, stat
    return best_d * batch


def steady_state(run_or_intervals: Run | pd.DataFrame, rule: str = "mser5", head_s: float = 0.0,
                 tail_s: float = 0.0, column: str = "rate_ops_s") -> SteadyState:
    """The steady window of a run (or of an intervals frame) by `rule` ("mser5" or "trim"),
    as the module docstring says."""
    name = run_name(run_or_intervals) if isinstance(run_or_intervals, Run) else "<intervals>"
    series = throughput_series(run_or_intervals, column)
    if series.empty:
        raise AnalysisError(f"run {name}: no intervals, so no steady state")
    first, last = float(series["start_s"].iloc[0]), float(series["end_s"].iloc[-1])
    if rule == "trim":
        mid = (series["start_s"] + series["end_s"]) / 2
        kept = series[((mid >= first + head_s) & (mid < last - tail_s)).to_numpy()]
        note = f"fixed trim: {head_s:g} s head, {tail_s:g} s tail"
        if kept.empty:
            raise AnalysisError(f"run {name}: trimming {head_s:g} s and {tail_s:g} s leaves no interval "
                                f"of its {last - first:.1f} s")
    elif rule == "mser5":
        return mser5_steady(series["start_s"].to_numpy(dtype="float64"), series["end_s"].to_numpy(dtype="float64"),
                            series[column].to_numpy(dtype="float64"), column)
    else:
        raise AnalysisError(f"steady_state: rule must be 'mser5' or 'trim', got {rule!r}")
    start, end = float(kept["start_s"].iloc[0]), float(kept["end_s"].iloc[-1])
    return SteadyState(Window(start, end, "steady"), start - first, last - end, rule, note)


def mser5_steady(start_s: np.ndarray, end_s: np.ndarray, values: np.ndarray,
                 column: str = "rate_ops_s") -> SteadyState:
    """Rule "mser5" on one series of intervals in time order (start_s, end_s, values aligned, at
    least one): the last interval always dropped, the warm-up by MSER-5. `searched` is False when
    there were too few intervals for MSER-5 to look for a warm-up."""
    hi = len(values) - 1 if len(values) > 1 else len(values)
    lo = mser5_truncation(np.asarray(values[:hi]))
    searched = hi >= BATCH * MIN_BATCHES
    note = (f"MSER-5 on {column} over {hi} intervals: dropped the first {lo} and the last 1 (cool-down)"
            if searched else
            f"too few intervals for MSER-5 ({hi} after the cool-down trim, {BATCH * MIN_BATCHES} needed): "
            f"no warm-up dropped; dropped the last 1 (cool-down)")
    start, end = float(start_s[lo]), float(end_s[hi - 1])
    return SteadyState(Window(start, end, "steady"), start - float(start_s[0]), float(end_s[-1]) - end, "mser5",
                       note, searched)
