"""Charts of what the log explorer read: per-interval throughput and latency of every run, and
the GC pauses of every GC log. Each takes the log explorer's tidy frame and returns go.Figure."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go


def throughput_over_time(intervals: pd.DataFrame) -> go.Figure:
    """ops/s per interval (`rate_ops_s` against `time_s`), one line per run and op type."""
    fig = go.Figure()
    if not intervals.empty:
        for (run, op), g in intervals.groupby(["run", "op"], sort=False):
            fig.add_scatter(x=g["time_s"], y=g["rate_ops_s"], mode="lines", name=f"{run} {op}")
    fig.update_layout(title="Throughput over time", xaxis_title="time since start (s)", yaxis_title="ops/s")
    return fig


def latency_over_time(intervals: pd.DataFrame, percentile: str = "p99") -> go.Figure:
    """Per-interval latency percentile in ms (`latency_<percentile>_ms`) as each tool reported
    it, one line per run and op type; runs without that column are left out."""
    col = f"latency_{percentile}_ms"
    fig = go.Figure()
    if not intervals.empty and col in intervals:
        for (run, op), g in intervals.groupby(["run", "op"], sort=False):
            if g[col].notna().any():
                fig.add_scatter(x=g["time_s"], y=g[col], mode="lines", name=f"{run} {op}")
    fig.update_layout(title=f"Latency {percentile} over time (per interval, as each tool reported it)",
                      xaxis_title="time since start (s)", yaxis_title=f"{percentile} latency (ms)")
    return fig


def gc_pauses_over_time(pauses: pd.DataFrame) -> go.Figure:
    """Each stop-the-world pause as a point: JVM uptime (s) against pause length (ms), one
    series per GC log file, the cause on hover."""
    fig = go.Figure()
    if not pauses.empty:
        for file, g in pauses.groupby("file", sort=False):
            fig.add_scatter(x=g["uptime_s"], y=g["pause_ms"], mode="markers", name=file,
                            text=g.get("cause"), hovertemplate="%{text}<br>%{y:.1f} ms at %{x:.0f} s")
    fig.update_layout(title="GC pauses", xaxis_title="JVM uptime (s)", yaxis_title="pause (ms)")
    return fig
